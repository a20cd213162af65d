-- SPDX-License-Identifier: GPL-2.0-or-later
-- The virtual Frame's firmware side in Lua: builds the `frame` table from the host functions
-- (vframe/lua_vm.py passes them in `H`), installs print and the break hook, and hides what the
-- device has not (io, os, debug, lupa's python). Run once per Lua VM (power-on or 0x04 reset).
local H, FAIL, FIRMWARE_VERSION, HARDWARE_VERSION = ...

-- Host functions return FAIL, message for an error: raise it at the caller's line, as a C
-- function's luaL_error does on the device.
local function checked(f)
  return function(...)
    local r = table.pack(f(...))
    if r[1] == FAIL then error(r[2], 2) end
    return table.unpack(r, 1, r.n)
  end
end

local sethook = debug.sethook
-- 0x03 / 0x04: the host sets the break flag; this hook raises in whatever Lua code runs, and
-- keeps raising (a pcall cannot swallow it) until the chunk has ended.
sethook(function()
  if H.broken() then error("break signal", 2) end
end, "", 1000)

print = function(...)
  local parts = table.pack(...)
  for i = 1, parts.n do parts[i] = tostring(parts[i]) end
  H.print(table.concat(parts, "\t", 1, parts.n))
end

local frame = {}
frame.FIRMWARE_VERSION = FIRMWARE_VERSION
frame.HARDWARE_VERSION = HARDWARE_VERSION

function frame.sleep(seconds)
  local r = H.sleep(seconds)
  if r == "break" then error("break signal", 2) end
  if r == "deep" then error("sleeping", 0) end
end

frame.battery_level = checked(H.battery_level)
frame.update = checked(H.update)
frame.stay_awake = checked(H.stay_awake)

frame.time = {utc = checked(H.utc), zone = checked(H.zone)}

frame.bluetooth = {
  send = checked(H.send),
  max_length = checked(H.max_length),
  is_connected = checked(H.is_connected),
  address = checked(H.address),
  receive_callback = checked(H.receive_callback),
}

frame.imu = {tap_callback = checked(H.tap_callback)}

local function options(t)
  if t ~= nil and type(t) ~= "table" then error("expected a table of options", 3) end
  return t or {}
end

frame.display = {
  text = function(s, x, y, opts)
    opts = options(opts)
    if type(s) ~= "string" then error("bad argument #1 to 'text' (string expected)", 2) end
    local r, m = H.display_text(s, math.tointeger(x or 1) or 1, math.tointeger(y or 1) or 1,
      opts.color, opts.spacing or 4)
    if r == FAIL then error(m, 2) end
  end,
  show = checked(H.display_show),
}

frame.microphone = {
  start = function(opts)
    opts = options(opts)
    local r, m = H.mic_start(opts.sample_rate or 8000, opts.bit_depth or 8)
    if r == FAIL then error(m, 2) end
  end,
  read = checked(H.mic_read),
  stop = checked(H.mic_stop),
}

frame.camera = {
  capture = function(opts)
    opts = options(opts)
    local r, m = H.cam_capture(opts.resolution or 512, opts.quality_factor, opts.quality)
    if r == FAIL then error(m, 2) end
  end,
  image_ready = checked(H.cam_ready),
  read = checked(H.cam_read),
}

-- f = frame.file.open(name, mode): f:read([n]), f:write(s), f:close().
local File = {}
File.__index = File
function File:read(n)
  local r, m = H.file_read(self.handle, n)
  if r == FAIL then error(m, 2) end
  return r
end
function File:write(s)
  local r, m = H.file_write(self.handle, tostring(s))
  if r == FAIL then error(m, 2) end
end
function File:close()
  H.file_close(self.handle)
end

frame.file = {
  open = function(name, mode)
    local h, m = H.file_open(name, mode)
    if h == FAIL then error(m, 2) end
    return setmetatable({handle = h}, File)
  end,
  remove = checked(H.file_remove),
  rename = checked(H.file_rename),
  mkdir = checked(H.file_mkdir),
  listdir = function(dir)
    local r, m = H.file_listdir(dir or "")
    if r == FAIL then error(m, 2) end
    local out = {}
    for i = 1, #r, 3 do out[#out + 1] = {name = r[i], size = r[i + 1], type = r[i + 2]} end
    return out
  end,
}

local function missing_now(name)
  return function() error(name .. " is not emulated by the virtual Frame", 2) end
end

-- Halo (halo-firmware PROTOCOL.md §7): a display without a double buffer, 256x256, colours as
-- 0xRRGGBB; the 8-px font; power_save; battery_charging; the microphone's Halo options.
if HARDWARE_VERSION == "halo" then
  frame.display.text = function(s, x, y, color)
    if type(s) ~= "string" then error("bad argument #1 to 'text' (string expected)", 2) end
    if color ~= nil and math.type(color) ~= "integer" then error("bad argument #4 to 'text' (integer expected)", 2) end
    local r, m = H.display_draw(s, math.tointeger(x or 1) or 1, math.tointeger(y or 1) or 1, color or 0xFFFFFF)
    if r == FAIL then error(m, 2) end
  end
  frame.display.clear = checked(H.display_clear)
  frame.display.show = function() end
  frame.display.set_font = function(face, size, scale)
    if (face ~= 0 and face ~= 1) or math.type(size) ~= "integer" or size < 8 or size % 8 ~= 0 then
      error("bad font: face 0 or 1, size a multiple of 8", 2)
    end
  end
  frame.display.power_save = checked(H.display_power_save)
  frame.display.width = function() return 256 end
  frame.display.height = function() return 256 end
  frame.battery_charging = checked(H.battery_charging)
  frame.speaker = {
    start = function(opts)
      opts = options(opts)
      local r, m = H.speaker_start(opts.encoder or "pcm", opts.sample_rate or 16000, opts.bit_depth or 16,
        opts.volume or 50, opts.bitrate)
      if r == FAIL then error(m, 2) end
    end,
    stop = checked(H.speaker_stop),
    play = missing_now("frame.speaker.play"),
  }
  if H.speaker_has_stats() then
    frame.speaker.stats = function(reset)
      local flat = H.speaker_stats(reset and true or false)
      local out = {}
      for i = 1, #flat, 2 do out[flat[i]] = flat[i + 1] end
      return out
    end
  end
  -- The options halo-protocol.md lists, with their types: any other key, or another type, is a
  -- Lua error (a misspelt `aec` must not pass as a recording without the echo canceller). `voice`
  -- (the 300-3400 Hz band) and `gain` are kept, not modelled: the clip is heard as it is.
  local MIC_OPTIONS = {encoder = "string", sample_rate = "integer", bit_depth = "integer", channels = "integer",
    duration = "integer", bitrate = "integer", gain = "integer", aec = "boolean", voice = "boolean"}
  frame.microphone.start = function(opts)
    opts = options(opts)
    for k, v in pairs(opts) do
      local want = MIC_OPTIONS[k]
      if want == nil then error("unknown microphone option: " .. tostring(k), 2) end
      local got = want == "integer" and math.type(v) or type(v)
      if got ~= want then error("microphone option " .. k .. ": " .. want .. " expected, got " .. tostring(got or type(v)), 2) end
    end
    if opts.channels ~= nil and opts.channels ~= 1 then error("channels: only 1 is emulated by the virtual Halo", 2) end
    local r, m = H.mic_start(opts.sample_rate or 16000, opts.bit_depth or 16, opts.encoder or "pcm", opts.bitrate,
      opts.duration, opts.aec or false, opts.voice or false, opts.gain or 0)
    if r == FAIL then error(m, 2) end
  end
  -- aec([on]) and voice([on]): set when given (also while recording), the current setting returned.
  local function switch(name, set)
    return function(on)
      if on ~= nil and type(on) ~= "boolean" then error("bad argument #1 to '" .. name .. "' (boolean expected)", 2) end
      local r, m = set(on)
      if r == FAIL then error(m, 2) end
      return r
    end
  end
  frame.microphone.aec = switch("aec", H.mic_aec)
  frame.microphone.voice = switch("voice", H.mic_voice)
  frame.microphone.status = checked(H.mic_status)
end

-- Real API functions this emulation leaves out: a Lua error says so (not silent success).
local function missing(name)
  return function() error(name .. " is not emulated by the virtual Frame", 2) end
end
frame.display.bitmap = missing("frame.display.bitmap")
frame.display.assign_color = missing("frame.display.assign_color")
if frame.display.power_save == nil then frame.display.power_save = missing("frame.display.power_save") end
frame.display.write_register = missing("frame.display.write_register")
frame.camera.auto = missing("frame.camera.auto")
frame.camera.power_save = missing("frame.camera.power_save")
frame.imu.direction = missing("frame.imu.direction")
frame.imu.raw = missing("frame.imu.raw")
frame.compression = {decompress = missing("frame.compression.decompress")}
frame.led = {set_color = missing("frame.led.set_color")}
frame.fpga_read = missing("frame.fpga_read")
frame.fpga_write = missing("frame.fpga_write")

_G.frame = frame
_G.io, _G.os, _G.debug, _G.python = nil, nil, nil, nil
_G.dofile, _G.loadfile = nil, nil
package.cpath = ""
package.path = H.flash_root() .. "/?.lua"
package.loaded.io, package.loaded.os, package.loaded.debug = nil, nil, nil
