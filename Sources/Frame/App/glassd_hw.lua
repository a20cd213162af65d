-- SPDX-License-Identifier: GPL-2.0-or-later
-- glassd's app: what is the Frame's own (glassd_app.lua holds the rest). The display is 640x400,
-- double buffered (show() swaps, and the next frame starts empty); its font is proportional, so
-- CHARS is a safe count per line. Colours are the palette's names.
local HW = {}

HW.LINE_H, HW.CHARS, HW.ROWS = 60, 24, 6
HW.HEADING, HW.ANSWER, HW.FAILURE, HW.WARNING, HW.STATUS = 'SKYBLUE', 'WHITE', 'RED', 'YELLOW', 'GREY'

-- A question at 16 kHz 8-bit linear: 16 kB/s, what one 251-byte notification per 15 ms connection
-- event carries (the firmware queues one at a time); 16-bit would need twice that. Companding to
-- mu-law would cost Lua string work on every sample, so the microphone's own 8-bit it is. The wake
-- phrase's listening stays 8 kHz 8-bit.
HW.QUESTION_MIC = { sample_rate = 16000, bit_depth = 8 }
HW.LISTEN_MIC = { sample_rate = 8000, bit_depth = 8 }

function HW.start() end
function HW.clear() end
function HW.text(s, x, y, color) frame.display.text(s, x, y, { color = color }) end
function HW.show() frame.display.show() end
function HW.step(at, idle) end

return HW
