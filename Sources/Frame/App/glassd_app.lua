GLASSD_APP_VERSION = '-'
-- SPDX-License-Identifier: GPL-2.0-or-later
-- glassd's app on a Brilliant Frame or Halo. The first line is the version: the host replaces
-- it on upload (FrameApp.uploaded). main.lua loads this file and calls glassd_run(); after a
-- break the host calls glassd_run() again, no reset needed (the globals survive a break). What
-- differs between the two (display, colours, microphone, taps) is in glassd_hw.lua, one per kind.
--
-- Messages (Sources/Frame/AppMessage.swift): [code, payload...] after the firmware's 0x01
-- prefix. A tap while idle records a question (two taps, each within 0.3 s of the last: a photo
-- first; three: the glance, GLANCE, and no question); a tap while recording ends it; a tap while
-- the answer comes cancels it. The host's text shows as a heading (DISPLAY), answer (RESPONSE)
-- and errors in red (ERROR), an alert line on top. A laid-out answer comes as pages
-- (PAGE_TEXT..., form feeds between pages, then PAGES_SHOW): a tap turns the page, and the last
-- page's tap is an ordinary tap again. With the wake phrase on
-- (LISTEN), idle glasses stream what they hear (LISTENING); WAKE starts a question as a tap would.
-- While the speaker plays an answer (SPEAK_START...SPEAK_STOP, Halo), a tap stops it at once
-- (SPEECH_CUT) and asks the next question; where the microphone has an echo canceller the app
-- also streams what it hears meanwhile (OVERHEARD), and BARGE_IN (the host heard the wearer
-- speak over the answer) stops it as the tap would.
--
-- Callbacks run in the firmware's hooks, between any two instructions: they only queue. Every
-- handler runs under pcall so one bad message cannot stop the app, but the firmware's "break
-- signal" is raised again: it is how the host stops the app.

local M = {
  DISPLAY = 0x10, RESPONSE = 0x11, ERROR = 0x12, ANSWER_END = 0x13, ALERT = 0x14, STOP = 0x15,
  CAPTURE = 0x16, PHOTO_SETTINGS = 0x17, PAGE_TEXT = 0x18, PAGES_SHOW = 0x19, LISTEN = 0x1A, WAKE = 0x1B,
  SPEAK_START = 0x1C, SPEAK_STOP = 0x1D, BARGE_IN = 0x1E,
  READY = 0x81, AUDIO_START = 0x82, AUDIO_DATA = 0x83, AUDIO_END = 0x84, PHOTO_START = 0x85,
  PHOTO_DATA = 0x86, PHOTO_END = 0x87, SCENE_START = 0x88, SCENE_END = 0x89, CANCELLED = 0x8A,
  BATTERY = 0x8B, TAP = 0x8C, LISTENING = 0x8D, CHARGING = 0x8E, SPEAKING = 0x8F, SPEAKER_STATS = 0x90,
  SPEECH_CUT = 0x91, OVERHEARD = 0x92, GLANCE = 0x93,
}

local HW = require('glassd_hw')

-- Taps on idle glasses count while each comes within this of the last: one or two are a
-- question once it passes (two: with a photo), three the glance at once.
local MULTI_TAP_S = 0.3
local DEBOUNCE_S = 0.04
local RECORD_MAX_S = 30
local BATTERY_EVERY_S = 5
-- frame.bluetooth.send raises while the link's buffers are full: retry every 10 ms, for 1 s.
local SEND_TRIES = 100
local CAPTURE_WAIT_S = 3
local INBOX_MAX = 64
local TEXT_MAX = 4000
-- A heading waits this long for its text (a notification's body is the next message), so the two
-- are drawn as one; a streamed answer's first words may take longer, and then the heading shows alone.
local HEADING_WAIT_S = 0.25

local LINE_H, CHARS, ROWS = HW.LINE_H, HW.CHARS, HW.ROWS
local HEADING, ANSWER, FAILURE, WARNING, STATUS_COLOR = HW.HEADING, HW.ANSWER, HW.FAILURE, HW.WARNING, HW.STATUS
local QUALITIES = { [0] = 'VERY_LOW', 'LOW', 'MEDIUM', 'HIGH', 'VERY_HIGH' }

local IDLE, RECORDING, ANSWERING, PAGED = 'idle', 'recording', 'answering', 'paged'
local STATUS = { idle = 'Tap to ask', recording = 'Listening - tap to stop' }

local inbox, taps = {}, {}
local S = { photo = { quality = 2, resolution = 512 } }

-- The last error a handler raised, for a look from the REPL.
GLASSD_LAST_ERROR = nil

-- Frame raises "break signal" (again and again); Halo "interrupted" (once).
local function is_break(err)
  return type(err) == 'string' and (err:find('break signal', 1, true) ~= nil or err:find('interrupted', 1, true) ~= nil)
end

-- Runs f(...) under pcall; a break goes on up, anything else is noted.
local function guard(f, ...)
  local ok, err = pcall(f, ...)
  if not ok then
    if is_break(err) then error(err, 0) end
    GLASSD_LAST_ERROR = tostring(err)
  end
  return ok
end

local function now() return frame.time.utc() end

-- The most one message may carry after its code byte.
local function max_payload() return frame.bluetooth.max_length() - 1 end

local function send(code, payload)
  local message = string.char(code) .. (payload or '')
  for _ = 1, SEND_TRIES do
    local ok, err = pcall(frame.bluetooth.send, message)
    if ok then return true end
    if is_break(err) then error(err, 0) end
    if not frame.bluetooth.is_connected() then return false end
    frame.sleep(0.01)
  end
  return false
end

-- Text ----------------------------------------------------------------------------------------

local function ulen(s)
  local _, n = s:gsub('[^\128-\191]', '')
  return n
end

-- Words longer than a line, cut at character boundaries.
local function pieces(word)
  local out, piece, n = {}, '', 0
  for ch in word:gmatch('[^\128-\191][\128-\191]*') do
    if n == CHARS then
      out[#out + 1] = piece
      piece, n = '', 0
    end
    piece, n = piece .. ch, n + 1
  end
  out[#out + 1] = piece
  return out
end

-- The lines of text wrapped at word boundaries, appended to out as {text, color}.
local function wrap(text, color, out)
  for paragraph in (text .. '\n'):gmatch('([^\n]*)\n') do
    local line = ''
    for word in paragraph:gmatch('%S+') do
      for _, piece in ipairs(pieces(word)) do
        if line == '' then
          line = piece
        elseif ulen(line) + 1 + ulen(piece) <= CHARS then
          line = line .. ' ' .. piece
        else
          out[#out + 1] = { line, color }
          line = piece
        end
      end
    end
    out[#out + 1] = { line, color }
  end
  return out
end

-- Appends text in a colour; a new colour starts a new line. The oldest text goes past TEXT_MAX.
local function append(text, color)
  local last = S.segments[#S.segments]
  if last and last.color == color then
    last.text = last.text .. text
  else
    S.segments[#S.segments + 1] = { text = text, color = color }
  end
  local total = 0
  for _, segment in ipairs(S.segments) do total = total + #segment.text end
  while total > TEXT_MAX and #S.segments > 1 do
    total = total - #table.remove(S.segments, 1).text
  end
  local only = S.segments[1]
  if #only.text > TEXT_MAX then
    only.text = only.text:sub(-TEXT_MAX):gsub('^[\128-\191]+', '')
  end
  S.dirty = true
end

-- A page as glassd laid it out (its lines as they are), the status below it.
local function render_page()
  HW.clear()
  local page = S.pages[S.page] or ''
  local row = 1
  for line in (page .. '\n'):gmatch('([^\n]*)\n') do
    if row > ROWS - 1 then break end
    if line:find('%S') then HW.text(line, 1, 1 + (row - 1) * LINE_H, ANSWER) end
    row = row + 1
  end
  local status = S.page < #S.pages and 'Tap for more' or STATUS[IDLE]
  HW.text(status, 1, 1 + (ROWS - 1) * LINE_H, STATUS_COLOR)
  HW.show()
end

-- Alert on top, status at the bottom, the last lines of the text between.
local function render()
  S.dirty = false
  if S.state == PAGED then return render_page() end
  HW.clear()
  local lines = {}
  for _, segment in ipairs(S.segments) do wrap(segment.text, segment.color, lines) end
  local rows, top = ROWS, 1
  if S.alert ~= '' then
    HW.text(wrap(S.alert, WARNING, {})[1][1], 1, 1, WARNING)
    rows, top = rows - 1, 2
  end
  local status = STATUS[S.state]
  if status then
    HW.text(status, 1, 1 + (ROWS - 1) * LINE_H, STATUS_COLOR)
    rows = rows - 1
  end
  local first = math.max(1, #lines - rows + 1)
  for i = first, #lines do
    if lines[i][1] ~= '' then
      HW.text(lines[i][1], 1, 1 + (top - 1 + i - first) * LINE_H, lines[i][2])
    end
  end
  HW.show()
end

-- Camera and microphone --------------------------------------------------------------------

-- PhotoSettings: [quality 0..4, resolution high, low], resolution 256..720 and even.
local function photo_settings(payload)
  if #payload ~= 3 then return nil end
  local quality, resolution = payload:byte(1), payload:byte(2) * 256 + payload:byte(3)
  if quality > 4 or resolution < 256 or resolution > 720 or resolution % 2 ~= 0 then return nil end
  return { quality = quality, resolution = resolution }
end

-- Takes a photo and streams its JPEG as PHOTO_DATA; false if the camera failed.
local function take_photo(settings)
  return guard(function()
    frame.camera.capture { resolution = settings.resolution, quality = QUALITIES[settings.quality] }
    if frame.camera.image_ready then
      local deadline = now() + CAPTURE_WAIT_S
      while not frame.camera.image_ready() do
        if now() > deadline then error('the camera took too long') end
        frame.sleep(0.01)
      end
    else
      frame.sleep(0.5)
    end
    local size = max_payload()
    while true do
      local chunk = frame.camera.read(size)
      if chunk == nil or #chunk == 0 then break end
      if not send(M.PHOTO_DATA, chunk) then error('the link dropped the photo') end
    end
  end)
end

-- Audio reads: even sizes (16-bit samples), one message each.
local function audio_size()
  local size = max_payload()
  return size - size % 2
end

-- Starts the microphone as `mic` says. LC3 reads are a byte FIFO: what is read is sent in whole
-- frames (the rest waits for the next read), so a message the link loses takes whole frames with
-- it and the host's decoder stays aligned.
local function mic_start(mic)
  S.mic_frame, S.mic_rest = nil, ''
  if not guard(frame.microphone.start, mic) then return false end
  if mic.encoder == 'lc3' then S.mic_frame = mic.bitrate * mic.duration // 800000 end
  return true
end

-- Up to `size` bytes of what the microphone has: "" when nothing yet, nil once stopped and empty.
local function mic_read(size)
  local unit = S.mic_frame
  if not unit then return frame.microphone.read(size) end
  local n = size - size % unit - #S.mic_rest
  local got = frame.microphone.read(math.max(2, n - n % 2))
  if got == nil then return nil end
  local all = S.mic_rest .. got
  local whole = #all - #all % unit
  S.mic_rest = all:sub(whole + 1)
  return all:sub(1, whole)
end

-- Sends what the microphone has as `code` messages (at most `limit`); false once it is stopped
-- and empty.
local function pump(code, limit)
  local size = audio_size()
  for _ = 1, limit do
    local samples = mic_read(size)
    if samples == nil then return false end
    if #samples == 0 then return true end
    send(code, samples)
  end
  return true
end

local function pump_audio(limit) return pump(M.AUDIO_DATA, limit) end

-- Listening for the wake phrase (the host asked, 0x1A): while idle (or showing pages), the microphone
-- as HW.LISTEN_MIC says (8 kHz 8-bit: half the radio time of a question's 16 kHz), streamed as LISTENING.
local function listen_stop()
  if S.hearing then pcall(frame.microphone.stop) end
  S.hearing = false
end

local function listen_pump()
  if not S.hearing then
    pcall(frame.microphone.stop)
    S.hearing = mic_start(HW.LISTEN_MIC)
    if not S.hearing then return end
  end
  if not pump(M.LISTENING, 8) then S.hearing = false end
end

-- A microphone setting as the host reads it: PCM [kHz, bits]; LC3 [kHz, 0, frame bytes, frame
-- duration / 100 us] (the setting's duration is in 10 us).
local function mic_format(mic)
  local khz = mic.sample_rate // 1000
  if mic.encoder == 'lc3' then
    return string.char(khz, 0, mic.bitrate * mic.duration // 800000, mic.duration // 10)
  end
  return string.char(khz, mic.bit_depth)
end

local function start_recording()
  S.hearing, S.overhearing = false, false
  pcall(frame.microphone.stop)
  local mic = HW.QUESTION_MIC
  if not mic_start(mic) then
    S.state = IDLE
    append('\nThe microphone failed', FAILURE)
    return
  end
  send(M.AUDIO_START, mic_format(mic))
  S.state, S.recording_since, S.dirty = RECORDING, now(), true
end

local function stop_recording()
  pcall(frame.microphone.stop)
  pump_audio(400)
  send(M.AUDIO_END)
  S.state, S.dirty = ANSWERING, true
end

-- A question: a photo first when asked for, then the recording.
local function question(with_photo)
  if with_photo then
    send(M.PHOTO_START)
    take_photo(S.photo)
    send(M.PHOTO_END)
  end
  start_recording()
end

-- Speaker (Halo) ------------------------------------------------------------------------------
-- The host sends the audio on its own characteristic, paced to the playback rate; the app only
-- starts and stops the speaker, and stops it at once on a tap or BARGE_IN. Asked to listen, it
-- keeps the microphone open behind the echo canceller (HW.OVERHEAR_MIC) while the speaker plays.

-- Sends what the microphone overhears (at most 8 messages a turn); stops once it is stopped.
local function overhear_pump()
  if not pump(M.OVERHEARD, 8) then S.overhearing = false end
end

local function overhear_stop()
  if S.overhearing then pcall(frame.microphone.stop) end
  S.overhearing = false
end

-- The speaker stops at once; the host writes no more once it reads SPEECH_CUT.
local function cut_speech()
  overhear_stop()
  if not S.speaking then return false end
  pcall(frame.speaker.stop)
  S.speaking = false
  send(M.SPEECH_CUT)
  return true
end

local SPEAKER_KEYS = { 'ble_rejected_bytes', 'silence_blocks', 'ble_bytes', 'blocks_played', 'ring_peak',
  'frames_plc', 'decode_errors' }

-- The firmware's counters as 'key=value ...' (firmware without stats(): empty).
local function speaker_stats()
  if not (frame.speaker and frame.speaker.stats) then return '' end
  local ok, stats = pcall(frame.speaker.stats)
  if not ok or type(stats) ~= 'table' then return '' end
  local parts = {}
  for _, key in ipairs(SPEAKER_KEYS) do
    if stats[key] ~= nil then parts[#parts + 1] = key .. '=' .. tostring(stats[key]) end
  end
  return table.concat(parts, ' ')
end

-- SpeakStart: [codec 0 pcm / 1 lc3, kHz, volume] (+ LC3 [frame bytes, frame duration / 100 us]),
-- then listen (0/1). SPEAKING says whether it plays, and the format of what it will overhear.
local function speak_start(payload)
  overhear_stop()
  if not frame.speaker or #payload < 4 then
    send(M.SPEAKING, '\0')
    return
  end
  local codec, khz, volume = payload:byte(1), payload:byte(2), payload:byte(3)
  local opts = { encoder = codec == 1 and 'lc3' or 'pcm', sample_rate = khz * 1000, bit_depth = 16, channels = 1,
    volume = volume }
  if codec == 1 and #payload >= 5 then
    local bytes, tenths = payload:byte(4), payload:byte(5)
    opts.duration = tenths * 10
    opts.bitrate = bytes * 8 * 10000 // tenths
  end
  -- Audio written after an earlier stop waits in the buffer for the next start: drop it.
  pcall(frame.speaker.stop)
  if frame.speaker.stats then pcall(frame.speaker.stats, true) end
  S.speaking = guard(frame.speaker.start, opts)
  local listen, heard = payload:byte(#payload) == 1, ''
  if S.speaking and listen and HW.OVERHEAR_MIC and S.state ~= RECORDING then
    -- The same microphone: the wake phrase's listening gives way until the speaker stops.
    S.hearing = false
    pcall(frame.microphone.stop)
    if mic_start(HW.OVERHEAR_MIC) then
      S.overhearing, heard = true, mic_format(HW.OVERHEAR_MIC)
    end
  end
  send(M.SPEAKING, (S.speaking and '\1' or '\0') .. heard)
end

-- Stops the speaker; the host waits for its counters whether or not it still played.
local function speak_stop()
  overhear_stop()
  if S.speaking then pcall(frame.speaker.stop) end
  S.speaking = false
  send(M.SPEAKER_STATS, speaker_stats():sub(1, max_payload()))
end

-- Taps and host messages ---------------------------------------------------------------------

-- `kind` is the firmware's own ('single', 'double', 'triple': Halo, after its multi-tap window);
-- nil on a Frame, whose taps the app times itself.
local function tapped(at, kind)
  send(M.TAP)
  local cut = cut_speech()
  if S.state == PAGED then
    if S.page < #S.pages then
      S.page, S.dirty = S.page + 1, true
      return
    end
    -- The last page says "Tap to ask": this tap is an ordinary one.
    S.state, S.pages, S.segments, S.dirty = IDLE, {}, {}, true
  end
  if S.state == RECORDING then
    stop_recording()
  elseif S.state == ANSWERING then
    send(M.CANCELLED)
    S.state, S.dirty = IDLE, true
    -- Barge-in: the tap that cut the speech asks the next question.
    if cut then question(false) end
  elseif kind == 'triple' then
    send(M.GLANCE)
  elseif kind == 'double' then
    question(true)
  elseif kind then
    question(false)
  elseif S.tap_count > 0 and at - S.tap_at <= MULTI_TAP_S then
    S.tap_count, S.tap_at = S.tap_count + 1, at
    if S.tap_count == 3 then
      S.tap_count = 0
      send(M.GLANCE)
    end
  else
    S.tap_count, S.tap_at = 1, at
  end
end

-- The host heard the wearer speak over the answer: as a tap that cuts the speech, whatever shows.
local function barge_in()
  if S.state == RECORDING then return end
  cut_speech()
  if S.state == ANSWERING then send(M.CANCELLED) end
  S.state, S.pages, S.dirty = IDLE, {}, true
  question(false)
end

local function handle(data)
  local code, payload = data:byte(1), data:sub(2)
  if S.state == PAGED and (code == M.DISPLAY or code == M.RESPONSE or code == M.ERROR) then
    S.state, S.pages, S.segments = IDLE, {}, {}
  end
  if code == M.PAGE_TEXT then
    S.page_text = (S.page_text .. payload):sub(1, TEXT_MAX)
  elseif code == M.PAGES_SHOW then
    local pages = {}
    for page in (S.page_text .. '\f'):gmatch('([^\f]*)\f') do pages[#pages + 1] = page end
    S.page_text = ''
    if S.state ~= RECORDING and #pages > 0 then
      S.pages, S.page, S.state, S.dirty = pages, 1, PAGED, true
    end
  elseif code == M.DISPLAY then
    S.segments, S.heading_at = {}, now()
    append(payload, HEADING)
  elseif code == M.RESPONSE then
    S.heading_at = nil
    append(payload, ANSWER)
  elseif code == M.ERROR then
    S.heading_at = nil
    append(payload, FAILURE)
  elseif code == M.ANSWER_END then
    if S.state == ANSWERING then S.state = IDLE end
    S.dirty, S.heading_at = true, nil
  elseif code == M.ALERT then
    S.alert, S.dirty = payload, true
  elseif code == M.STOP then
    if S.state == RECORDING then stop_recording() end
  elseif code == M.CAPTURE then
    local settings = photo_settings(payload)
    if settings then
      send(M.SCENE_START)
      take_photo(settings)
      send(M.SCENE_END)
    end
  elseif code == M.PHOTO_SETTINGS then
    S.photo = photo_settings(payload) or S.photo
  elseif code == M.LISTEN then
    S.listen = payload == '\1'
    if not S.listen then listen_stop() end
  elseif code == M.SPEAK_START then
    speak_start(payload)
  elseif code == M.SPEAK_STOP then
    speak_stop()
  elseif code == M.BARGE_IN then
    barge_in()
  elseif code == M.WAKE then
    -- The host heard the wake phrase: a question, as if tapped, saying so (pages being read give way).
    if S.state == IDLE or S.state == PAGED then
      S.pages = {}
      start_recording()
      S.segments = {}
      append(payload, HEADING)
    end
  end
end

local function poll_battery(at)
  if S.battery_at and at - S.battery_at < BATTERY_EVERY_S then return end
  S.battery_at = at
  local level = math.floor(frame.battery_level() + 0.5)
  level = math.max(0, math.min(100, level))
  if level ~= S.battery and send(M.BATTERY, string.char(level)) then S.battery = level end
  if frame.battery_charging then
    local charging = frame.battery_charging() and 1 or 0
    if charging ~= S.charging and send(M.CHARGING, string.char(charging)) then S.charging = charging end
  end
end

-- One turn of the main loop.
local function step()
  local messages = inbox
  inbox = {}
  for _, data in ipairs(messages) do
    if #data > 0 then guard(handle, data) end
  end
  local tapped_at = taps
  taps = {}
  for _, tap in ipairs(tapped_at) do
    if tap.at - (S.last_tap or -1) >= DEBOUNCE_S then
      S.last_tap = tap.at
      guard(tapped, tap.at, tap.kind)
    end
  end
  local at = now()
  if S.tap_count > 0 and at - S.tap_at > MULTI_TAP_S then
    local photo = S.tap_count == 2
    S.tap_count = 0
    guard(question, photo)
  end
  if S.state == RECORDING then
    if at - S.recording_since > RECORD_MAX_S or not guard(pump_audio, 8) then guard(stop_recording) end
  elseif S.overhearing then
    guard(overhear_pump)
  elseif S.listen and (S.state == IDLE or S.state == PAGED) then
    guard(listen_pump)
  elseif S.hearing then
    guard(listen_stop)   -- busy: what it hears meanwhile is not for the wake phrase
  end
  guard(poll_battery, at)
  local heading_waits = S.heading_at and S.state ~= RECORDING and at - S.heading_at < HEADING_WAIT_S
  if S.dirty and not heading_waits then guard(render) end
  guard(HW.step, at, S.state == IDLE)
end

local function on_data(data)
  if #inbox < INBOX_MAX then inbox[#inbox + 1] = data end
end

local function on_tap(kind)
  taps[#taps + 1] = { at = frame.time.utc(), kind = kind }
end

-- Runs the app until the host breaks it; safe to call again after a break.
function glassd_run()
  pcall(frame.microphone.stop)
  if frame.speaker then pcall(frame.speaker.stop) end
  inbox, taps = {}, {}
  S = { photo = S.photo, segments = {}, alert = '', state = IDLE, dirty = true, pages = {}, page = 1, page_text = '',
    tap_count = 0 }
  guard(HW.start)
  frame.bluetooth.receive_callback(on_data)
  frame.imu.tap_callback(on_tap)
  send(M.READY, GLASSD_APP_VERSION)
  while true do
    guard(step)
    frame.sleep((S.state == RECORDING or S.hearing or S.overhearing) and 0.005 or 0.02)
  end
end
