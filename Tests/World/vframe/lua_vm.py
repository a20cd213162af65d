# SPDX-License-Identifier: GPL-2.0-or-later
"""The virtual Frame's Lua: a real Lua 5.4 (lupa.lua54) in its own thread, so a chunk that runs
forever (an app's main loop) never blocks the GATT server.

- Every RX write is an event in `inbox`. Chunks run one after another, each to its end: a
  chunk written while another runs waits. `frame.bluetooth.receive_callback` and
  `frame.imu.tap_callback` functions run between chunks (when idle) and inside `frame.sleep`,
  never while other Lua code runs (the emulation's stand-in for the firmware's callbacks).
- 0x03 (break) and 0x04 (reset) set the break flag at once: a debug hook (every 1000 VM
  instructions) and frame.sleep raise "break signal" in the running chunk until it ends.
  Chunks that were waiting are dropped. The flag clears when the queue reaches the break's
  own marker. A reset then starts a fresh VM and runs main.lua.
- Output: print() lines and error messages go to `host.output(bytes)`; the host splits them into
  notifications.

The host (virtual_frame.py) gives output(data), send(data) -> None or error text, connected(),
max_length(), battery_level(), address(), firmware_version(), hardware(), request_dfu(),
request_deep_sleep(), display_changed(text), note(dict).
"""
import os
import queue
import threading
import time
from collections import deque

import lupa.lua54 as lupa

from vframe.devices import Fail

PRELUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "prelude.lua")
FAIL = b"\0vframe-fail\0"      # first result of a host function that raises a Lua error


class Stop(Exception):
    pass


class LuaVM:
    def __init__(self, host, flash, mic, camera, display, stats):
        self.host, self.flash, self.mic, self.camera, self.display = host, flash, mic, camera, display
        self.stats = stats
        self.inbox = queue.Queue()
        self.deferred = deque()       # events taken out during frame.sleep that wait for idle
        self.broken = threading.Event()
        self.running = False          # a chunk runs (for Stats and tests)
        self.lua = None
        self.rx_callback = None
        self.tap_callback = None
        self.in_callback = False
        self.tap_at = None  # while a tap's callback runs: when the tap was made
        self.sleeping = False         # frame.sleep() without seconds: the device sleeps
        self.powered = False
        self.time_offset = 0.0
        self.boot_time = time.monotonic()
        self.thread = threading.Thread(target=self._main, name="vframe-lua", daemon=True)

    # --- called from the asyncio side (any thread)
    def start(self):
        self.thread.start()

    def chunk(self, data):
        self.inbox.put(("chunk", data))

    def data(self, data):
        self.inbox.put(("data", data))

    def tap(self, kind=None, at=None):
        """A tap made at `at` (time.monotonic(); now by default): the firmware runs the callback
        as the tap comes, so frame.time.utc() inside it says when the tap was, however late this
        VM's thread gets to it."""
        self.inbox.put(("tap", (kind, time.monotonic() if at is None else at)))

    def interrupt(self):
        """0x03."""
        self.broken.set()
        self.inbox.put(("break", None))

    def reset(self):
        """0x04, power-on, or the end of a DFU: a fresh VM, then main.lua."""
        self.broken.set()
        self.inbox.put(("reset", None))

    def power_off(self):
        self.broken.set()
        self.inbox.put(("off", None))

    def stop(self):
        self.broken.set()
        self.inbox.put(("stop", None))
        self.thread.join(3)

    # --- the Lua thread
    def _next(self, timeout=None):
        if self.deferred:
            return self.deferred.popleft()
        return self.inbox.get(timeout=timeout)

    def _main(self):
        while True:
            kind, value = self._next()
            try:
                if kind == "stop":
                    return
                if kind in ("break", "reset", "off"):
                    self.broken.clear()
                    if kind == "break":
                        continue
                    self._new_vm(kind == "reset")
                    continue
                if not self.powered:
                    continue            # the device is off: nothing runs
                if kind == "chunk":
                    if not self.broken.is_set():
                        self._run_chunk(value)
                else:
                    self._callback(kind, value)
            except Stop:
                return
            except Exception as e:      # a test tool: keep the VM alive, say why
                self.host.note({"lua_internal_error": repr(e)})

    def _new_vm(self, power_on):
        self.flash.close_all()
        self.rx_callback = self.tap_callback = None
        self.lua = None
        self.mic.stop()
        self.powered = power_on
        self.sleeping = False
        if not power_on:
            return
        self.stats["boots"] += 1
        self.boot_time = time.monotonic()
        self.lua = lupa.LuaRuntime(encoding=None, unpack_returned_tuples=True,
                                   register_eval=False, register_builtins=False)
        with open(PRELUDE, "rb") as f:
            prelude = self.lua.execute(b"return load(...)", f.read(), b"=prelude")
        prelude(self._host_table(), FAIL, self.host.firmware_version().encode(), self.host.hardware().encode())
        if os.path.isfile(os.path.join(self.flash.root, "main.lua")):
            self._run_chunk(b"require('main')", count=False)

    def _run_chunk(self, code, count=True):
        if count:
            self.stats["chunks"] += 1
        self.running = True
        try:
            error = self.lua.execute(
                b"local code = ... local f, err = load(code) if not f then return err end "
                b"local ok, e = pcall(f) if not ok then return tostring(e) end", code)
        except lupa.LuaError as e:      # raised outside the pcall (the break hook, mostly)
            error = str(e).encode()
        finally:
            self.running = False
        if error is not None and not self.sleeping:
            text = error if isinstance(error, bytes) else str(error).encode()
            # A break stops a running script with an error, as on the real firmware; counted
            # apart, so "errors" counts only what a script did wrong.
            self.stats["broken" if b"break signal" in text else "errors"] += 1
            self.host.output(text)
        if self.sleeping:
            self.host.request_deep_sleep()

    def _callback(self, kind, value):
        fn = self.rx_callback if kind == "data" else self.tap_callback
        if fn is None or self.in_callback:
            if fn is None:
                self.stats["callbacks_dropped"] += 1
            return
        self.in_callback = True
        try:
            if kind == "data":
                fn(value)
            else:
                tap_kind, self.tap_at = value
                if tap_kind is not None:
                    # A Halo's ('single', 'double', 'triple'), as a Lua string: this runtime has no
                    # encoding, and a str would reach Lua as a Python object no string equals.
                    fn(tap_kind.encode())
                else:
                    fn()
        except lupa.LuaError as e:
            if not self.broken.is_set():
                self.stats["errors"] += 1
                self.host.output(str(e).encode())
        finally:
            self.in_callback = False
            self.tap_at = None
        if self.sleeping:
            self.host.request_deep_sleep()

    def _sleep(self, seconds):
        """frame.sleep: callbacks run here (queued data and taps first, then as they come);
        chunks, breaks and resets taken out meanwhile wait for the idle loop."""
        if seconds is None:
            self.sleeping = True
            self.broken.set()
            self.inbox.put(("break", None))
            return b"deep"
        deadline = time.monotonic() + max(0.0, float(seconds))
        while True:
            if self.broken.is_set():
                return b"break"
            left = deadline - time.monotonic()
            try:
                kind, value = self.inbox.get(timeout=left) if left > 0 else self.inbox.get_nowait()
            except queue.Empty:
                return None
            if kind in ("data", "tap") and not self.in_callback:
                self._callback(kind, value)
            else:
                self.deferred.append((kind, value))

    # --- host functions for the prelude
    def _host_table(self):
        def guard(fn):
            def call(*args):
                try:
                    return fn(*args)
                except Fail as e:
                    return FAIL, str(e).encode()
                except (TypeError, ValueError) as e:
                    return FAIL, f"bad argument: {e}".encode()
            return call

        def send(data):
            if not isinstance(data, bytes):
                raise Fail("bad argument #1 to 'send' (string expected)")
            err = self.host.send(data)
            if err:
                raise Fail(err)

        def receive_callback(fn):
            self.rx_callback = fn

        def tap_callback(fn):
            self.tap_callback = fn

        def utc(t=None):
            if t is not None:
                self.time_offset = float(t) - (time.monotonic() - self.boot_time)
                return None
            # The firmware counts milliseconds and returns seconds as a float (lua_time_utc).
            at = time.monotonic() if self.tap_at is None else self.tap_at
            return round(at - self.boot_time + self.time_offset, 3)

        def mic_start(rate, bits, encoder=b"pcm", bitrate=None, duration=None, aec=False, voice=False, gain=0):
            encoder = encoder.decode() if isinstance(encoder, bytes) else str(encoder)
            self.mic.start(int(rate), int(bits), encoder, int(bitrate) if bitrate else None,
                           int(duration) if duration else None, aec=bool(aec), voice=bool(voice), gain=int(gain))

        def mic_switch(set_it, current):
            def switch(on=None):
                if on is not None:
                    set_it(bool(on))
                return current()
            return switch

        def cam_capture(resolution, quality_factor, quality):
            if quality is not None:
                from vframe.devices import QUALITY
                name = quality.decode().upper() if isinstance(quality, bytes) else str(quality)
                if name not in QUALITY:
                    raise Fail(f"invalid quality: {name}")
                q = QUALITY[name]
            else:
                q = int(quality_factor) if quality_factor is not None else 50
            self.stats["captures"] += 1
            self.camera.capture(int(resolution), max(1, min(95, q)))

        def file_listdir(d):
            flat = []
            for name, size, kind in self.flash.listdir(d):
                flat += [name.encode(), size, kind]
            return self.lua.table(*flat)

        def speaker_start(encoder, rate, bits, volume, bitrate):
            try:
                self.host.speaker_start(encoder.decode() if isinstance(encoder, bytes) else str(encoder),
                                        int(rate), int(bits), int(volume), int(bitrate) if bitrate else None)
            except ValueError as e:
                raise Fail(str(e))

        def speaker_stats(reset=False):
            flat = []
            for k, v in self.host.speaker.stats(bool(reset)).items():
                flat += [k.encode(), v]
            return self.lua.table(*flat)

        def display_power_save(on):
            self.stats["power_save"] = 1 if on else 0
            self.stats["power_saves"] += 1 if on else 0

        def display_show():
            self.host.display_changed(self.display.show())

        def update():
            self.host.request_dfu()
            self.broken.set()
            self.inbox.put(("off", None))

        funcs = {
            "broken": lambda: self.broken.is_set(),
            "print": lambda s: self.host.output(s),
            "sleep": self._sleep,
            "battery_level": lambda: self.host.battery_level(),
            "update": update,
            "stay_awake": lambda on=True: None,
            "utc": utc,
            "zone": lambda z=None: None if z is not None else b"0:00",
            "send": send,
            "max_length": lambda: self.host.max_length(),
            "is_connected": lambda: self.host.connected(),
            "address": lambda: self.host.address().encode(),
            "receive_callback": receive_callback,
            "tap_callback": tap_callback,
            "display_text": lambda s, x, y, c, sp: self.display.text(s, x, y, c, sp),
            "display_show": display_show,
            "display_draw": lambda s, x, y, rgb: self.host.display_changed(self.display.draw(s, int(x), int(y), int(rgb))),
            "display_clear": lambda: self.host.display_changed(self.display.blank()),
            "display_power_save": display_power_save,
            "battery_charging": lambda: bool(self.host.charging),
            "speaker_start": speaker_start,
            "speaker_stop": lambda: self.host.speaker_stop(),
            "speaker_stats": speaker_stats,
            "speaker_has_stats": lambda: bool(self.host.speaker_stats),
            "mic_start": mic_start,
            "mic_read": lambda n: self.mic.read(n),
            "mic_stop": lambda: self.mic.stop(),
            "mic_aec": mic_switch(self.mic.set_aec, lambda: self.mic.aec),
            "mic_voice": mic_switch(self.mic.set_voice, lambda: self.mic.voice),
            "mic_status": lambda: self.mic.status().encode(),
            "cam_capture": cam_capture,
            "cam_ready": lambda: self.camera.image_ready(),
            "cam_read": lambda n: self.camera.read(n),
            "file_open": lambda name, mode=None: self.flash.open(name, mode),
            "file_read": lambda h, n=None: self.flash.read(h, n),
            "file_write": lambda h, s: self.flash.write(h, s),
            "file_close": lambda h: self.flash.close(h),
            "file_remove": lambda name: self.flash.remove(name),
            "file_rename": lambda a, b: self.flash.rename(a, b),
            "file_mkdir": lambda name: self.flash.mkdir(name),
            "file_listdir": file_listdir,
            "flash_root": lambda: self.flash.root.encode(),
        }
        return self.lua.table_from({k.encode(): guard(v) for k, v in funcs.items()})
