-- SPDX-License-Identifier: GPL-2.0-or-later
-- glassd's app: what is the Frame's own (glassd_app.lua holds the rest). The display is 640x400,
-- double buffered (show() swaps, and the next frame starts empty); its font is proportional, so
-- CHARS is a safe count per line. Colours are the palette's names.
local HW = {}

HW.LINE_H, HW.CHARS, HW.ROWS = 60, 24, 6
HW.HEADING, HW.ANSWER, HW.FAILURE, HW.WARNING, HW.STATUS = 'SKYBLUE', 'WHITE', 'RED', 'YELLOW', 'GREY'

-- A question at 8 kHz 16-bit; the wake phrase's listening at 8-bit.
HW.QUESTION_MIC = { sample_rate = 8000, bit_depth = 16 }
HW.LISTEN_MIC = { sample_rate = 8000, bit_depth = 8 }

function HW.start() end
function HW.clear() end
function HW.text(s, x, y, color) frame.display.text(s, x, y, { color = color }) end
function HW.show() frame.display.show() end
function HW.step(at, idle) end

return HW
