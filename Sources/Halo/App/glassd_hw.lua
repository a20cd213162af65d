-- SPDX-License-Identifier: GPL-2.0-or-later
-- glassd's app: what is the Halo's own (the Frame's glassd_app.lua holds the rest). The display
-- is 256x256 and draws at once (no double buffer: show() is a no-op), so a frame starts with a
-- clear. Text is the 8-px Dogica font: 30 columns, 21 lines at a 12-px pitch. Colours are RGB.
-- Idle for IDLE_SAVE_S, the panel is blanked (power_save) until the next draw.
local HW = {}

HW.LINE_H, HW.CHARS, HW.ROWS = 12, 30, 21
HW.HEADING, HW.ANSWER, HW.FAILURE, HW.WARNING, HW.STATUS = 0x87CEEB, 0xFFFFFF, 0xFF0000, 0xFFFF00, 0x808080

-- A question at 16 kHz coded as LC3, 10 ms frames at 48 kbps (60 bytes): 6,000 bytes a second,
-- words wrong 1.20x clean 16-bit PCM's against 32 kbps' 1.31x (Scripts/bench-audio-paths), and
-- the link carries 1.6 times that; the wake phrase's listening at 8-bit PCM.
HW.QUESTION_MIC = { encoder = 'lc3', sample_rate = 16000, bitrate = 48000, duration = 1000 }
HW.LISTEN_MIC = { sample_rate = 8000, bit_depth = 8 }
-- While the speaker plays: the question's format behind the echo canceller, so that what the host
-- hears is the wearer, not the answer (the voice band filter is left off: what is heard here
-- begins the question when the wearer speaks over the answer).
HW.OVERHEAR_MIC = { encoder = 'lc3', sample_rate = 16000, bitrate = 48000, duration = 1000, aec = true }

local IDLE_SAVE_S = 30
local saving, drawn_at = false, nil

local function awake()
  drawn_at = frame.time.utc()
  if saving then
    saving = false
    pcall(frame.display.power_save, false)
  end
end

function HW.start()
  saving, drawn_at = false, frame.time.utc()
  pcall(frame.display.power_save, false)
  frame.display.set_font(0, 8, 1)
end

function HW.clear()
  awake()
  frame.display.clear()
end

function HW.text(s, x, y, color)
  awake()
  frame.display.text(s, x, y, color)
end

function HW.show() end

function HW.step(at, idle)
  if idle and not saving and drawn_at and at - drawn_at > IDLE_SAVE_S then
    saving = true
    frame.display.power_save(true)
  end
end

return HW
