#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# frame_selfcheck: end-to-end check of the virtual Frame (virtual_frame.py) on bzworld.py, with a
# dbus-fast central on hci0 acting as the host: refused before pairing, pairs (NoInputNoOutput
# agent), Lua REPL, app upload and main.lua, data both ways, tap, audio, photo, display, a link
# drop mid-stream, power off/on, and after RemoveDevice refused again until ResetBond.
#   .venv/bin/python Tests/World/frame_selfcheck.py [-v]        (about 20 s)
# Exit status 0 when every check passed; a summary with timings at the end.
import asyncio
import io
import math
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import wave

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, method

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
HOST, FRAME = "00:00:00:00:00:01", "00:00:00:00:00:02"
DEV = "/org/bluez/hci0/dev_" + FRAME.replace(":", "_")
BASE = "-5475-a6a4-654c-8431f6ad49c4"
SERVICE, RX, TX = (f"7a23000{i}{BASE}" for i in (1, 2, 3))
VF, VF_PATH, VF_IFACE = "org.glassd.test.VirtualFrame.hci1", "/org/glassd/vframe/hci1", "org.glassd.test.VirtualFrame1"
VERBOSE = "-v" in sys.argv
APP = """-- glassd selfcheck app: echoes data, counts taps
local taps = 0
frame.bluetooth.receive_callback(function(d) frame.bluetooth.send('echo:' .. d) end)
frame.imu.tap_callback(function() taps = taps + 1 frame.bluetooth.send('tap ' .. taps) end)
print("app ready 'single' \\"double\\" back\\\\slash\ttab")
while true do frame.sleep(0.02) end
"""
RESULTS = []


class Failed(Exception):
    pass


def check(cond, text):
    if not cond:
        raise Failed(text)
    if VERBOSE:
        print(f"  ok  {text}")


class Agent(ServiceInterface):
    """org.bluez.Agent1 with NoInputNoOutput: Just Works never asks it anything."""

    def __init__(self):
        super().__init__("org.bluez.Agent1")

    @method()
    def Release(self):
        pass

    @method()
    def RequestAuthorization(self, device: "o"):
        pass

    @method()
    def RequestConfirmation(self, device: "o", passkey: "u"):
        pass

    @method()
    def AuthorizeService(self, device: "o", uuid: "s"):
        pass

    @method()
    def Cancel(self):
        pass


class DBusFail(Exception):
    def __init__(self, name, text):
        super().__init__(f"{name}: {text}")
        self.name = name


class Host:
    """The central: one dbus-fast connection to the private bus."""

    def __init__(self, bus):
        self.bus = bus
        self.tx_path = self.rx_path = None
        self.inbox = asyncio.Queue()     # notifications on TX
        self.booted = asyncio.Queue()    # VirtualFrame1.Booted: registered and advertising again
        bus.add_message_handler(self.on_message)

    async def call(self, dest, path, iface, member, sig="", body=()):
        reply = await asyncio.wait_for(self.bus.call(Message(
            destination=dest, path=path, interface=iface, member=member, signature=sig,
            body=list(body))), 15)
        if reply.message_type == MessageType.ERROR:
            raise DBusFail(reply.error_name, reply.body[0] if reply.body else "")
        return reply.body

    async def bluez(self, path, iface, member, sig="", body=()):
        return await self.call("org.bluez", path, iface, member, sig, body)

    async def vf(self, member, sig="", body=()):
        return await self.call(VF, VF_PATH, VF_IFACE, member, sig, body)

    async def prop(self, path, iface, name):
        return (await self.bluez(path, "org.freedesktop.DBus.Properties", "Get", "ss", [iface, name]))[0].value

    def on_message(self, msg):
        if msg.message_type == MessageType.SIGNAL and msg.path == VF_PATH and msg.member == "Booted":
            self.booted.put_nowait(msg.body[0])
        if (msg.message_type == MessageType.SIGNAL and msg.member == "PropertiesChanged"
                and msg.path == self.tx_path and "Value" in msg.body[1]):
            self.inbox.put_nowait(bytes(msg.body[1]["Value"].value))

    async def wait_for(self, pred, timeout=5.0, what="condition"):
        t_end = time.monotonic() + timeout
        while time.monotonic() < t_end:
            if await pred():
                return
            await asyncio.sleep(0.05)
        raise Failed(f"timed out waiting for {what}")

    async def boot_by(self, member, timeout=5.0):
        """Calls `member` on the Frame and waits for the Booted signal it causes: the Frame
        registered and advertises again (an earlier boot's signal is dropped first)."""
        while not self.booted.empty():
            self.booted.get_nowait()
        await self.vf(member)
        try:
            await asyncio.wait_for(self.booted.get(), timeout)
        except asyncio.TimeoutError:
            raise Failed(f"no Booted signal within {timeout} s of {member}()")

    async def find_chars(self):
        objects = (await self.bluez("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"))[0]
        for path, ifaces in objects.items():
            char = ifaces.get("org.bluez.GattCharacteristic1")
            if char is None or not path.startswith(DEV + "/"):
                continue
            if char["UUID"].value == RX:
                self.rx_path = path
            elif char["UUID"].value == TX:
                self.tx_path = path
        check(self.rx_path and self.tx_path, "RX and TX found by UUID under the device")

    async def connect(self):
        await self.bluez(DEV, "org.bluez.Device1", "Connect")
        await self.find_chars()

    async def write(self, data, kind="request"):
        await self.bluez(self.rx_path, "org.bluez.GattCharacteristic1", "WriteValue", "aya{sv}",
                         [data, {"type": Variant("s", kind)}])

    async def start_notify(self):
        await self.bluez(self.tx_path, "org.bluez.GattCharacteristic1", "StartNotify")

    def drain(self):
        while not self.inbox.empty():
            self.inbox.get_nowait()

    async def next(self, timeout=5.0):
        try:
            return await asyncio.wait_for(self.inbox.get(), timeout)
        except asyncio.TimeoutError:
            raise Failed("no notification within %.1f s" % timeout)

    async def lua(self, code, timeout=5.0):
        """Runs a chunk and returns its first print (text) notification."""
        self.drain()
        await self.write(code.encode())
        while True:
            value = await self.next(timeout)
            if value[:1] != b"\x01":
                return value.decode()

    async def data(self, timeout=5.0):
        while True:
            value = await self.next(timeout)
            if value[:1] == b"\x01":
                return value[1:]

    async def control(self, byte):
        await self.write(bytes([byte]), "command")
        await asyncio.sleep(0.2)        # as brilliant_ble does after 0x03 / 0x04

    async def expect_refused(self, what):
        try:
            await self.write(b"print(1)")
        except DBusFail as e:
            check(e.name == "org.bluez.Error.NotPermitted", f"{what}: write refused with {e.name}")
        else:
            raise Failed(f"{what}: a write was accepted")
        try:
            await self.start_notify()
        except DBusFail as e:
            check(e.name == "org.bluez.Error.NotPermitted", f"{what}: StartNotify refused with {e.name}")
        else:
            raise Failed(f"{what}: StartNotify was accepted")


def escape(text):
    """frame-protocol.md: strip \\r; escape backslash, newline, tab, quotes."""
    text = text.replace("\r", "")
    for a, b in (("\\", "\\\\"), ("\n", "\\n"), ("\t", "\\t"), ("'", "\\'"), ('"', '\\"')):
        text = text.replace(a, b)
    return text


def chunks_of(escaped, size):
    """Pieces of at most `size` characters that never split an escape."""
    out, i = [], 0
    while i < len(escaped):
        j = min(len(escaped), i + size)
        if escaped[j - 1] == "\\" and (j - i) > 1 and not escaped[i:j].endswith("\\\\"):
            j -= 1
        out.append(escaped[i:j])
        i = j
    return out


def make_wav(path, seconds=1.5, rate=16000):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(struct.pack("<h", int(12000 * math.sin(2 * math.pi * 440 * i / rate)))
                               for i in range(int(seconds * rate))))


async def step(name, coro):
    t0 = time.monotonic()
    try:
        await coro
    except (Failed, DBusFail, asyncio.TimeoutError) as e:
        RESULTS.append((name, False, time.monotonic() - t0, str(e)))
        raise
    RESULTS.append((name, True, time.monotonic() - t0, ""))
    print(f"PASS {name} ({time.monotonic() - t0:.2f} s)", flush=True)


async def run(tmp, procs):
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    host = Host(bus)
    for rule in ("type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties'",
                 f"type='signal',interface='{VF_IFACE}',member='Booted'"):
        await host.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                        "AddMatch", "s", [rule])
    fs = os.path.join(tmp, "flash")

    async def discover():
        await host.bluez("/org/bluez/hci0", "org.bluez.Adapter1", "SetDiscoveryFilter", "a{sv}",
                         [{"Transport": Variant("s", "le"), "UUIDs": Variant("as", [SERVICE])}])
        try:
            await host.bluez("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        except DBusFail as e:
            if e.name != "org.bluez.Error.InProgress":
                raise

        async def seen():
            try:
                return await host.prop(DEV, "org.bluez.Device1", "Name") == "Frame 02"
            except DBusFail:
                return False
        await host.wait_for(seen, 5, "the Frame in a scan")

    async def unpaired():
        await discover()
        check(True, "advertised as 'Frame 02' with service 7a230001-…")
        await host.connect()
        await host.expect_refused("before pairing")
        check(not (await host.vf("Bonded"))[0], "Bonded() is false")

    async def pair():
        agent = Agent()
        bus.export("/test/agent", agent)
        await host.bluez("/org/bluez", "org.bluez.AgentManager1", "RegisterAgent", "os",
                         ["/test/agent", "NoInputNoOutput"])
        await host.bluez("/org/bluez", "org.bluez.AgentManager1", "RequestDefaultAgent", "o", ["/test/agent"])
        await host.bluez(DEV, "org.bluez.Device1", "Pair")
        check(await host.prop(DEV, "org.bluez.Device1", "Paired"), "host: Paired")
        check(await host.prop(DEV, "org.bluez.Device1", "Bonded"), "host: Bonded")
        check((await host.vf("Bonded"))[0], "Frame: Bonded() is true")
        try:
            await host.bluez(DEV, "org.bluez.Device1", "Pair")
            raise Failed("a second Pair succeeded")
        except DBusFail as e:
            check(e.name == "org.bluez.Error.AlreadyExists", f"second Pair: {e.name}")
        await host.start_notify()
        await host.control(3)
        await host.control(4)
        await host.control(3)
        version = await host.lua("print(frame.FIRMWARE_VERSION, frame.HARDWARE_VERSION)")
        check(version == "v25.080.0838\tFrame", f"REPL answers: {version!r}")
        err = await host.lua("frame.no_such_thing()")
        check("attempt to call a nil value (field 'no_such_thing')" in err, f"unknown API: {err!r}")
        mx = await host.lua("print(frame.bluetooth.max_length())")
        check(mx == "243", f"max_length() = MTU 247 - 4: {mx}")

    async def upload():
        size = 247 - 3 - 22
        t0 = time.monotonic()
        check(await host.lua("f=frame.file.open('main.lua','w');print(1)") == "1", "open for write")
        pieces = chunks_of(escape(APP), size)
        for piece in pieces:
            check(await host.lua(f'f:write("{piece}");print(1)') == "1", "write chunk")
        check(await host.lua("f:close();print(nil)") == "nil", "close")
        with open(os.path.join(fs, "main.lua")) as f:
            check(f.read() == APP.replace("\r", ""), f"flash holds the app byte for byte "
                  f"({len(APP)} bytes in {len(pieces)} writes, {time.monotonic() - t0:.2f} s)")
        files = (await host.vf("Files"))[0]
        check("main.lua" in files, f"Files() = {files}")
        host.drain()
        await host.write(b"\x04", "command")
        first = (await host.next()).decode()
        check(first == "app ready 'single' \"double\" back\\slash\ttab", f"main.lua ran after 0x04: {first!r}")
        stats = dict((k, v.value) for k, v in (await host.vf("Stats"))[0].items())
        check(stats["running"], "the app's loop keeps running")

    async def data_and_tap():
        host.drain()
        await host.write(b"\x01hello frame", "command")
        check(await host.data() == b"echo:hello frame", "0x01 data in, 0x01 data out")
        await host.vf("Tap")
        check(await host.data() == b"tap 1", "Tap() -> tap_callback -> data")
        await host.write(b"\x01" + b"z" * 243, "command")     # the longest data write
        while True:
            value = await host.next()
            if value[:1] != b"\x01":
                break
        check(b"too long" in value, f"the app's echo of it is too long to send: {value.decode()!r}")
        await host.write(b"\x01again", "command")
        check(await host.data() == b"echo:again", "the app runs on after the callback's error")

    async def too_long():
        await host.control(3)       # stop the app's loop: chunks wait while it runs
        err = await host.lua("print(pcall(frame.bluetooth.send, string.rep('x', 244)))")
        check(err.startswith("false") and "too long" in err, f"send(244 bytes): {err!r}")

    async def audio():
        await host.control(3)
        wav = os.path.join(tmp, "speech.wav")
        make_wav(wav)
        await host.vf("FeedAudio", "s", [wav])
        await host.vf("SetSendBusy", "u", [3])
        # chunks are single writes of at most MTU-3 bytes: define helpers first (globals stay)
        for helper in ("busy = 0 function snd(d) while not pcall(frame.bluetooth.send, d) do "
                       "busy = busy + 1 frame.sleep(0.005) end end print(1)",
                       "function pump() local d = frame.microphone.read(240) while d ~= nil and "
                       "d ~= '' do snd(d) d = frame.microphone.read(240) end return d end print(1)"):
            check(await host.lua(helper) == "1", "helper defined")
        code = ("frame.microphone.start{sample_rate=8000, bit_depth=16} local t = 0 "
                "while t < 0.5 do frame.sleep(0.05) t = t + 0.05 pump() end "
                "frame.microphone.stop() while pump() ~= nil do end print('done', busy)")
        host.drain()
        t0 = time.monotonic()
        await host.write(code.encode())
        audio = bytearray()
        while True:
            value = await host.next(5)
            if value[:1] == b"\x01":
                audio += value[1:]
            else:
                done = value.decode()
                break
        took = time.monotonic() - t0
        check(done.startswith("done") and int(done.split()[1]) >= 3, f"retries on a busy send: {done!r}")
        with wave.open(wav) as w:
            src = w.readframes(w.getnframes())
        expect = b"".join(src[4 * i:4 * i + 2] for i in range(len(audio) // 2))   # 16 k -> 8 k
        check(7000 <= len(audio) <= 16000 * took + 400, f"{len(audio)} bytes of 8 kHz 16-bit audio in {took:.2f} s")
        check(bytes(audio) == expect, "samples are the fed clip, resampled, little-endian")

    async def photo():
        code = ("frame.camera.capture{resolution=256, quality='HIGH'} "
                "while not frame.camera.image_ready() do frame.sleep(0.01) end local n = 0 "
                "while true do local d = frame.camera.read(243) "
                "if d == nil then break end snd(d) n = n + #d end print(n)")
        host.drain()
        await host.write(code.encode())
        jpeg = bytearray()
        while True:
            value = await host.next(5)
            if value[:1] == b"\x01":
                jpeg += value[1:]
            else:
                n = int(value.decode())
                break
        check(n == len(jpeg) and jpeg[:2] == b"\xff\xd8" and jpeg[-2:] == b"\xff\xd9",
              f"a {len(jpeg)}-byte JPEG")
        from PIL import Image
        check(Image.open(io.BytesIO(bytes(jpeg))).size == (256, 256), "256×256 as asked")

    async def display():
        out = await host.lua("frame.display.text('Hello', 50, 100, {color='YELLOW'}) "
                             "frame.display.text('world', 50, 160) frame.display.show() print(1)")
        check(out == "1", "display chunk ran")
        text = (await host.vf("DisplayText"))[0]
        check(text == "[yellow] Hello\nworld", f"DisplayText() = {text!r}")
        items = [list(i) for i in (await host.vf("DisplayItems"))[0]]
        check(items == [[50, 100, "YELLOW", "Hello"], [50, 160, "WHITE", "world"]], f"DisplayItems() = {items}")
        png = os.path.join(tmp, "display.png")
        await host.vf("DisplayPNG", "s", [png])
        check(os.path.getsize(png) > 0, "DisplayPNG() wrote a PNG")

    async def link_drop():
        host.drain()
        await host.write(b"local i = 0 while true do i = i + 1 "
                         b"pcall(frame.bluetooth.send, 'tick ' .. i) frame.sleep(0.01) end")
        for _ in range(5):
            await host.data()
        t0 = time.monotonic()
        await host.call("org.bluez", "/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", [FRAME])

        async def down():
            return not await host.prop(DEV, "org.bluez.Device1", "Connected")
        await host.wait_for(down, 3, "Connected=false")
        stats = dict((k, v.value) for k, v in (await host.vf("Stats"))[0].items())
        check(stats["running"], "the script runs on after the link loss")
        await host.connect()
        await host.start_notify()
        await host.control(3)
        check(await host.lua("print(frame.bluetooth.is_connected())") == "true",
              f"reconnected, broke the script, REPL answers ({time.monotonic() - t0:.2f} s)")

    async def power():
        await host.vf("PowerOff")

        async def down():
            return not await host.prop(DEV, "org.bluez.Device1", "Connected")
        await host.wait_for(down, 3, "Connected=false after PowerOff")
        await host.boot_by("PowerOn")
        await host.connect()
        await host.start_notify()
        # main.lua ran at power-on; its print went nowhere (no host was listening yet)
        stats = dict((k, v.value) for k, v in (await host.vf("Stats"))[0].items())
        check(stats["running"] and stats["boots"] >= 3, f"PowerOn booted ({stats['boots']} boots) "
              "and main.lua's loop runs")
        await host.control(3)
        check(await host.lua("print(2)") == "2", "REPL after power-on")

    async def remove_and_rebond():
        await host.bluez("/org/bluez/hci0", "org.bluez.Adapter1", "RemoveDevice", "o", [DEV])
        await discover()
        await host.connect()
        await host.expect_refused("after RemoveDevice")
        try:
            await host.bluez(DEV, "org.bluez.Device1", "Pair")
            raise Failed("Pair succeeded while the Frame keeps the old bond")
        except DBusFail as e:
            check(e.name == "org.bluez.Error.AuthenticationFailed", f"re-pair without reset: {e.name}")
        check((await host.vf("Bonded"))[0], "the Frame still holds its bond")
        await host.vf("ResetBond")
        check(not (await host.vf("Bonded"))[0], "ResetBond(): Bonded() false")
        await host.bluez(DEV, "org.bluez.Device1", "Pair")      # connects again first
        await host.find_chars()
        await host.start_notify()
        await host.control(3)
        check(await host.lua("print(3)") == "3", "paired again after ResetBond(): REPL answers")
        check("main.lua" in (await host.vf("Files"))[0], "the flash kept main.lua")

    async def deep_sleep():
        await host.control(3)
        await host.write(b"frame.sleep()")

        async def asleep():
            return (await host.vf("Mode"))[0] == "asleep" and \
                not await host.prop(DEV, "org.bluez.Device1", "Connected")
        await host.wait_for(asleep, 3, "the Frame asleep, link dropped")
        await host.boot_by("Tap")
        check((await host.vf("Mode"))[0] == "app", "Tap() wakes it")
        await host.connect()
        await host.start_notify()
        await host.control(3)
        check(await host.lua("print(4)") == "4", "REPL after waking")

    async def update():
        await host.write(b"frame.update()")

        async def dfu():
            return (await host.vf("Mode"))[0] == "dfu"
        await host.wait_for(dfu, 3, "DFU mode")
        boot = "/org/bluez/hci0/dev_00_00_00_00_00_03"
        await host.bluez("/org/bluez/hci0", "org.bluez.Adapter1", "SetDiscoveryFilter", "a{sv}",
                         [{"Transport": Variant("s", "le")}])

        async def seen():
            try:
                return await host.prop(boot, "org.bluez.Device1", "Name") == "Frame Update"
            except DBusFail:
                return False
        await host.wait_for(seen, 5, "'Frame Update' on hci2")
        check(True, "frame.update(): the bootloader advertises 'Frame Update' on hci2")
        await host.vf("PowerOn")        # leaves the bootloader (nothing was written)
        check((await host.vf("Mode"))[0] == "app", "PowerOn: back to the app")

    for name, coro in (("refused before pairing", unpaired), ("pair + REPL", pair),
                       ("upload app + reset", upload), ("data both ways + tap", data_and_tap),
                       ("send too long", too_long), ("audio", audio), ("photo", photo),
                       ("display", display), ("link drop + reconnect", link_drop),
                       ("power off/on", power), ("remove device + rebond", remove_and_rebond),
                       ("frame.sleep() + Tap wakes", deep_sleep),
                       ("frame.update() -> Frame Update", update)):
        await step(name, coro())
    bus.disconnect()


def start(tmp, env, name, argv, ready="READY"):
    """Starts a world process; returns once it printed `ready` (a thread copies its output to
    NAME.out and says when the line came: no polling)."""
    err = open(os.path.join(tmp, name + ".err"), "w")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, env=env, text=True)
    seen = threading.Event()

    def copy():
        with open(os.path.join(tmp, name + ".out"), "w") as out:
            for line in proc.stdout:
                out.write(line)
                out.flush()
                if ready in line:
                    seen.set()
        seen.set()  # the output ended: the process is gone

    threading.Thread(target=copy, daemon=True).start()
    if seen.wait(15) and proc.poll() is None:
        return proc
    with open(os.path.join(tmp, name + ".err")) as f:
        raise SystemExit(f"{name} did not start:\n{f.read()}")


def main():
    t_start = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="frame-check.")
    bus = os.path.join(tmp, "bus")
    out = subprocess.run(["dbus-daemon", "--session", f"--address=unix:path={bus}", "--fork",
                          "--print-pid=1"], capture_output=True, text=True, check=True)
    bus_pid = int(out.stdout.split()[0])
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={bus}")
    os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = env["DBUS_SYSTEM_BUS_ADDRESS"]
    os.makedirs(os.path.join(tmp, "flash"))
    procs = []
    status = 1
    try:
        procs.append(start(tmp, env, "bz", [PY, os.path.join(HERE, "bzworld.py"), "-q", "--auto-enable",
                                            "--scan-interval", "1", "-a", HOST, "-a", FRAME,
                                            "-a", "00:00:00:00:00:03"]))
        procs.append(start(tmp, env, "frame", [PY, os.path.join(HERE, "virtual_frame.py"), "--adapter",
                                               "hci1", "--fs", os.path.join(tmp, "flash"),
                                               "--record", os.path.join(tmp, "frame.jsonl")]))
        try:
            asyncio.run(run(tmp, procs))
            status = 0
        except (Failed, DBusFail, asyncio.TimeoutError) as e:
            print(f"FAIL {RESULTS[-1][0] if RESULTS else '?'}: {e}", flush=True)
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        os.kill(bus_pid, signal.SIGTERM)
        for name in ("bz", "frame"):
            path = os.path.join(tmp, name + ".err")
            text = open(path).read() if os.path.exists(path) else ""
            if "Traceback" in text or (status and text):
                print(f"--- {name} stderr:\n{text}")
                status = status or ("Traceback" in text)
    passed = sum(1 for r in RESULTS if r[1])
    print(f"\nframe_selfcheck: {passed}/{len(RESULTS)} steps passed in {time.monotonic() - t_start:.1f} s")
    for name, good, took, why in RESULTS:
        print(f"  {'PASS' if good else 'FAIL'}  {took:6.2f} s  {name}{'  ' + why if why else ''}")
    if status == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"logs kept in {tmp}")
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
