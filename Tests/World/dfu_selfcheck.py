#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# dfu_selfcheck: end-to-end check of the virtual Monocle's DFU target mode (vdfu.py). Run it
# with the world's venv python:  .venv/bin/python Tests/World/dfu_selfcheck.py [-v]
# It starts a private bus, bzworld.py with hci0..hci2 and one virtual Monocle on hci1, then,
# as a BLE central on hci0 over BlueZ's D-Bus API (dbus-fast, no glassd): enters DFU through
# the friendly REPL (`import update;update.micropython()`), finds DfuTarg (address + 1, FE59),
# checks the protocol's refusals, sends a synthetic init packet and a 20 KB image (5 data
# objects, PRN 4), drops the link mid-object and resumes from Select, power-cycles in DFU mode
# and resumes from the last executed object, and checks the device boots as itself with the
# version the image carries. Test-only tool.

import asyncio
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vdfu  # noqa: E402  (for make_init_packet and the UUIDs)

from dbus_fast import BusType, Message, MessageType, Variant  # noqa: E402
from dbus_fast.aio import MessageBus  # noqa: E402

PY = sys.executable
VERBOSE = "-v" in sys.argv
SERIAL_RX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
SERIAL_TX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
HCI0 = "/org/bluez/hci0"
APP_ADDR, DFU_ADDR = "00:00:00:00:00:02", "00:00:00:00:00:03"
VM = ("org.glassd.test.VirtualMonocle.hci1", "/org/glassd/vmonocle/hci1",
      "org.glassd.test.VirtualMonocle1")
NEW_VERSION = "v99.001.0001"
CHUNK = 244          # packet writes (MTU 247 - 3, as the real bootloader's)


def ok(text):
    print(f"ok   {text}", flush=True)


class CheckFailed(Exception):
    pass


def fail(text):
    print(f"FAIL {text}", flush=True)
    raise CheckFailed(text)


def check(cond, text):
    if not cond:
        fail(text)
    ok(text)


def dev_path(addr):
    return f"{HCI0}/dev_" + addr.replace(":", "_")


class Central:
    def __init__(self, bus):
        self.bus = bus
        self.values = {}      # char path -> asyncio.Queue of notified values
        self.props = []       # (path, iface, changed)
        bus.add_message_handler(self.on_message)

    def on_message(self, msg):
        if msg.message_type == MessageType.SIGNAL and msg.member == "PropertiesChanged":
            iface, changed = msg.body[0], msg.body[1]
            self.props.append((msg.path, iface, {k: v.value for k, v in changed.items()}))
            if iface == "org.bluez.GattCharacteristic1" and "Value" in changed \
                    and msg.path in self.values:
                self.values[msg.path].put_nowait(bytes(changed["Value"].value))

    async def call(self, dest, path, iface, member, sig="", body=(), check_error=True):
        r = await asyncio.wait_for(self.bus.call(Message(
            destination=dest, path=path, interface=iface, member=member, signature=sig,
            body=list(body))), 15)
        if r.message_type == MessageType.ERROR:
            if check_error:
                fail(f"{member} on {path}: {r.error_name} {r.body}")
            return r
        return r.body

    async def bluez(self, path, iface, member, sig="", body=(), check_error=True):
        return await self.call("org.bluez", path, iface, member, sig, body, check_error)

    async def vm(self, member, sig="", body=()):
        return await self.call(VM[0], VM[1], VM[2], member, sig, body)

    async def objects(self):
        return (await self.bluez("/", "org.freedesktop.DBus.ObjectManager",
                                 "GetManagedObjects"))[0]

    async def wait(self, pred, timeout, what):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if await pred():
                return
            await asyncio.sleep(0.1)
        fail(f"timed out ({timeout}s) waiting for {what}")

    async def device(self, addr):
        return (await self.objects()).get(dev_path(addr), {}).get("org.bluez.Device1")

    async def connect(self, addr):
        path = dev_path(addr)

        async def resolved():
            d = await self.device(addr)
            return d is not None and d.get("ServicesResolved") and d["ServicesResolved"].value
        await self.bluez(path, "org.bluez.Device1", "Connect")
        await self.wait(resolved, 10, f"{addr} ServicesResolved")
        chars = {}
        for p, ifaces in (await self.objects()).items():
            c = ifaces.get("org.bluez.GattCharacteristic1")
            if c is not None and p.startswith(path + "/"):
                chars[c["UUID"].value] = p
        return chars

    async def start_notify(self, char):
        self.values[char] = asyncio.Queue()
        await self.bluez(char, "org.bluez.GattCharacteristic1", "StartNotify")

    async def write(self, char, data, kind="request", check_error=True):
        return await self.bluez(char, "org.bluez.GattCharacteristic1", "WriteValue", "aya{sv}",
                                [bytes(data), {"type": Variant("s", kind)}], check_error)


class DfuHost:
    """The host side of the object protocol, as a phone app does it."""

    def __init__(self, central, chars):
        self.c = central
        self.cp = chars[vdfu.DFU_CONTROL]
        self.pk = chars[vdfu.DFU_PACKET]
        self.prns = []

    async def start(self):
        await self.c.start_notify(self.cp)

    async def next_value(self):
        return await asyncio.wait_for(self.c.values[self.cp].get(), 5)

    async def request(self, req):
        await self.c.write(self.cp, req)
        while True:
            v = await self.next_value()
            if v[:2] == bytes([0x60, 0x03]) and req[0] != 0x03:
                self.prns.append(struct.unpack("<II", v[3:11]))   # a late PRN
                continue
            if v[:2] != bytes([0x60, req[0]]):
                fail(f"response {v.hex()} to {bytes(req).hex()}")
            return v[2], v[3:]

    async def expect(self, req, result=0x01, text=None):
        r, payload = await self.request(req)
        if r != result:
            fail(f"{text or bytes(req).hex()}: result {r:#04x}, expected {result:#04x} "
                 f"({payload.hex()})")
        if text:
            ok(text)
        return payload

    async def select(self, kind):
        return struct.unpack("<III", await self.expect(bytes([0x06, kind])))

    async def crc(self):
        return struct.unpack("<II", await self.expect(b"\x03"))

    async def send(self, data, stop_after=None):
        """Packet writes of data; returns the bytes sent (stop_after: stop early)."""
        sent = 0
        for i in range(0, len(data), CHUNK):
            if stop_after is not None and sent >= stop_after:
                break
            await self.c.write(self.pk, data[i:i + CHUNK], "command")
            sent += len(data[i:i + CHUNK])
        # PRNs arrive as notifications; drain what is there
        await asyncio.sleep(0.05)
        while not self.c.values[self.cp].empty():
            v = self.c.values[self.cp].get_nowait()
            if v[:3] == bytes([0x60, 0x03, 0x01]):
                self.prns.append(struct.unpack("<II", v[3:11]))
        return sent


class World:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="dfu-check.")
        self.bus = os.path.join(self.dir, "bus")
        out = subprocess.run(["dbus-daemon", "--session", f"--address=unix:path={self.bus}",
                              "--fork", "--print-pid=1"], capture_output=True, text=True,
                             check=True)
        self.bus_pid = int(out.stdout.split()[0])
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={self.bus}")
        self.procs = []
        self.fs = os.path.join(self.dir, "fs1")
        self.fs2 = os.path.join(self.dir, "fs2")
        os.makedirs(self.fs)
        os.makedirs(self.fs2)
        self.m1 = None

    def spawn(self, name, argv, ready):
        out = os.path.join(self.dir, name + ".out")
        err = os.path.join(self.dir, name + ".err")
        p = subprocess.Popen(argv, stdout=open(out, "w"), stderr=open(err, "w"), env=self.env)
        self.procs.append(p)
        end = time.monotonic() + 15
        while time.monotonic() < end:
            if ready in open(out).read():
                return p
            time.sleep(0.05)
        fail(f"{name} not ready:\n" + open(err).read())

    def start_monocle(self, ready="READY"):
        self.m1 = self.spawn("m1", [PY, os.path.join(HERE, "virtual_monocle.py"), "--adapter",
                                    "hci1", "--fs", self.fs, "--record",
                                    os.path.join(self.dir, "m1.jsonl")], ready)

    def restart_monocle(self):
        self.m1.send_signal(signal.SIGTERM)
        self.m1.wait(5)
        self.procs.remove(self.m1)
        self.start_monocle("DFU READY")

    def out(self, name):
        return open(os.path.join(self.dir, name + ".out")).read()

    def log(self, name):
        return open(os.path.join(self.dir, name + ".err")).read()

    def shutdown(self):
        for p in reversed(self.procs):
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        os.kill(self.bus_pid, signal.SIGTERM)
        if not VERBOSE:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            print("world left in", self.dir)


async def repl(c, chars, line, until, timeout=10):
    """Types line into the friendly REPL; returns the serial output once it contains until."""
    tx = chars[SERIAL_TX]
    if tx not in c.values:
        await c.start_notify(tx)
    await c.write(chars[SERIAL_RX], line.encode() + b"\r", "command")
    out = b""
    end = time.monotonic() + timeout
    while until.encode() not in out:
        left = end - time.monotonic()
        if left <= 0:
            fail(f"REPL: no {until!r} in {out!r}")
        try:
            out += await asyncio.wait_for(c.values[tx].get(), left)
        except asyncio.TimeoutError:
            pass
    return out.decode(errors="replace")


async def check_world(w):
    bus = await MessageBus(bus_type=BusType.SYSTEM,
                           bus_address=f"unix:path={w.bus}").connect()
    c = Central(bus)
    await c.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                  "AddMatch", "s", ["type='signal',sender='org.bluez',"
                                    "interface='org.freedesktop.DBus.Properties'"])
    await c.bluez(HCI0, "org.bluez.Adapter1", "StartDiscovery")

    async def seen(addr, name=None):
        d = await c.device(addr)
        return d is not None and "RSSI" in d and (name is None or (
            "Name" in d and d["Name"].value == name))

    await c.wait(lambda: seen(APP_ADDR), 10, "the Monocle in a scan")
    chars = await c.connect(APP_ADDR)
    check((await c.vm("Mode"))[0] == "app", "Mode() is app after power-on")
    out = await repl(c, chars, "import device;print(device.VERSION)", ">>> ")
    old_version = out.split("\r\n")[1]
    ok(f"device.VERSION before: {old_version}")

    # --- enter DFU through the REPL
    out = await repl(c, chars, "import update;update.micropython()", "update mode...")
    check("Monocle will reset if not updated within 5 minutes." in out
          and "If an update fails, simply connect to DFUTarg again to retry." in out,
          "update.micropython() printed the device's messages")

    async def app_gone():
        d = await c.device(APP_ADDR)
        return d is None or not d["Connected"].value
    await c.wait(app_gone, 10, "the app link to drop")
    ok("the Monocle's link dropped (reset into the bootloader)")
    check((await c.vm("Mode"))[0] == "dfu", "Mode() is dfu")
    await c.wait(lambda: seen(DFU_ADDR, "DfuTarg"), 10, "DfuTarg on address + 1")
    d = await c.device(DFU_ADDR)
    check(vdfu.DFU_SERVICE in [u for u in d["UUIDs"].value], "DfuTarg advertises FE59")
    # the Monocle is no longer reported by scans: its RSSI goes away
    await c.wait(lambda: _not(seen(APP_ADDR)), 5, "the Monocle to leave the scans")
    ok("the Monocle is no longer advertised")

    chars = await c.connect(DFU_ADDR)
    check(vdfu.DFU_CONTROL in chars and vdfu.DFU_PACKET in chars,
          "DfuTarg has the control point and packet characteristics")
    h = DfuHost(c, chars)
    await h.start()

    image = bytearray(os.urandom(20 * 1024))
    marker = vdfu.VERSION_MARKER + NEW_VERSION.encode()
    image[100:100 + len(marker)] = marker
    image = bytes(image)
    init = vdfu.make_init_packet(len(image))
    check(vdfu.init_app_size(init) == len(image), f"synthetic init packet ({len(init)} B) "
          "parses back to the image size")

    # --- refusals
    await h.expect(bytes([0x01, 0x02]) + struct.pack("<I", 4096), 0x08,
                   "Create data before the init packet was executed -> 08")
    await h.expect(bytes([0x01, 0x01]) + struct.pack("<I", 257), 0x04,
                   "Create command of 257 bytes -> 04")
    await h.expect(bytes([0x06, 0x05]), 0x07, "Select type 5 -> 07")
    await h.expect(b"\x0a", 0x02, "unknown opcode -> 02")

    # --- init packet
    mx, off, crc = await h.select(1)
    check(mx == 256 and off == 0, f"Select command: max {mx}, offset {off}")
    await h.expect(bytes([0x01, 0x01]) + struct.pack("<I", len(init)))
    await h.send(init)
    off, crc = await h.crc()
    check(off == len(init) and crc == zlib.crc32(init), "command CRC matches")
    await h.expect(b"\x04", 0x01, "Execute init packet")
    await h.expect(bytes([0x02]) + struct.pack("<H", 4), 0x01, "Set PRN 4")

    # --- data: objects 0 and 1, then part of 2, then a link drop
    mx, off, crc = await h.select(2)
    check(mx == 4096 and off == 0, f"Select data: max {mx}, offset {off}")

    async def send_object(i, start=0, stop_after=None):
        obj = image[i * 4096:(i + 1) * 4096]
        if start == 0:
            await h.expect(bytes([0x01, 0x02]) + struct.pack("<I", len(obj)))
        return await h.send(obj[start:], stop_after)

    for i in range(2):
        h.prns.clear()
        await send_object(i)
        off, crc = await h.crc()
        check(off == (i + 1) * 4096 and crc == zlib.crc32(image[:off]),
              f"object {i}: CRC over all {off} bytes matches")
        want = [4 * 244 * k for k in range(1, 5)]
        got = [o - i * 4096 for o, _ in h.prns]
        check(got == want and all(cr == zlib.crc32(image[:o]) for o, cr in h.prns),
              f"object {i}: PRN every 4 packets at {got}")
        await h.expect(b"\x04", 0x01, f"Execute object {i}")
    await h.expect(b"\x04", 0x08, "Execute of an already executed data object -> 08")

    partial = await send_object(2, stop_after=1400)
    await c.bluez("/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", [DFU_ADDR])
    ok("link dropped in the middle of object 2")
    check((await c.vm("Mode"))[0] == "dfu", "still DfuTarg after the link loss")

    chars = await c.connect(DFU_ADDR)
    h = DfuHost(c, chars)
    await h.start()
    mx, off, crc = await h.select(1)
    check(off == len(init) and crc == zlib.crc32(init), "resume: Select command shows the init")
    await h.expect(b"\x04", 0x01, "resume: Execute init again (harmless)")
    await h.expect(bytes([0x02]) + struct.pack("<H", 4), 0x01, "resume: Set PRN 4")
    mx, off, crc = await h.select(2)
    check(off == 8192 + partial and crc == zlib.crc32(image[:off]),
          f"resume: Select data reports offset {off} and its CRC")
    await send_object(2, start=off - 8192)     # go on with the current object
    off, crc = await h.crc()
    check(off == 3 * 4096 and crc == zlib.crc32(image[:off]), "object 2 completed after resume")
    await h.expect(b"\x04", 0x01, "Execute object 2")

    # --- a reset in DFU mode: back as DfuTarg, rolled back to the last executed object
    await send_object(3, stop_after=1000)
    await c.vm("PowerCycle")
    check((await c.vm("Mode"))[0] == "dfu", "PowerCycle in DFU mode: still dfu")

    async def dfu_down():
        d = await c.device(DFU_ADDR)
        return d is None or not d["Connected"].value
    await c.wait(dfu_down, 5, "the DfuTarg link to drop at PowerCycle")
    chars = await c.connect(DFU_ADDR)
    h = DfuHost(c, chars)
    await h.start()
    mx, off, crc = await h.select(1)
    await h.expect(b"\x04", 0x01, "after PowerCycle: Execute init again")
    await h.expect(bytes([0x02]) + struct.pack("<H", 4), 0x01)
    mx, off, crc = await h.select(2)
    check(off == 3 * 4096 and crc == zlib.crc32(image[:off]),
          f"after PowerCycle: Select data at the last executed object ({off})")
    await h.expect(b"\x04", 0x08, "at an object boundary Execute -> 08 (already executed)")
    for i in (3, 4):
        await send_object(i)
        off, crc = await h.crc()
        check(off == (i + 1) * 4096 and crc == zlib.crc32(image[:off]), f"object {i} CRC")
        await h.expect(b"\x04", 0x01, f"Execute object {i}")

    # --- the new image boots
    async def app_mode():
        return (await c.vm("Mode"))[0] == "app"
    await c.wait(app_mode, 5, "Mode() app after the last Execute")
    ok("the target booted the new image")
    await c.wait(lambda: seen(APP_ADDR, "monocle"), 10, "the Monocle back on its address")
    ok("the Monocle advertises again on its own address")
    chars = await c.connect(APP_ADDR)
    out = await repl(c, chars, "import device;print(device.VERSION)", ">>> ")
    check(out.split("\r\n")[1] == NEW_VERSION, f"device.VERSION is now {NEW_VERSION}")
    stats = (await c.vm("Stats"))[0]
    s = {k: v.value for k, v in stats.items()}
    for k in ("ring_dropped", "boots", "dfu_requests"):
        check(k in s, f"Stats still has {k}")
    check(s["dfu_requests"] == 1 and s["dfu_executes"] >= 8 and s["dfu_objects_created"] >= 6
          and s["dfu_bytes_received"] >= len(image) + len(init) and s["dfu_crc_requests"] >= 5,
          "Stats: " + ", ".join(f"{k}={v}" for k, v in sorted(s.items()) if k.startswith("dfu")))
    check(not os.path.exists(os.path.join(w.fs, "dfu_bank.bin")), "the bank file is gone")
    check("no such" not in w.log("m1").lower(), "no errors in the virtual Monocle's log")
    await c.bluez(dev_path(APP_ADDR), "org.bluez.Device1", "Disconnect")

    # --- EnterDFU(), refused init packets, and a restart of the process in DFU mode
    await c.vm("EnterDFU")
    check((await c.vm("Mode"))[0] == "dfu", "EnterDFU(): Mode() is dfu")
    chars = await c.connect(DFU_ADDR)
    h = DfuHost(c, chars)
    await h.start()
    await c.vm("RefuseNextInit")
    for data, want, text in ((init, bytes([0x0B, 0x04]), "RefuseNextInit: Execute -> 0B 04"),
                             (b"\x0a\xff", bytes([0x0B, 0x02]), "malformed init -> 0B 02"),
                             (init, bytes([0x01]), "valid init -> 01")):
        await h.expect(bytes([0x01, 0x01]) + struct.pack("<I", len(data)))
        await h.send(data)
        r, payload = await h.request(b"\x04")
        check(bytes([r]) + payload[:1] == want[:2] if len(want) == 2 else r == want[0], text)
    await h.expect(bytes([0x01, 0x02]) + struct.pack("<I", 4096))
    half = await h.send(image[:2048])
    w.restart_monocle()
    ok("virtual_monocle.py restarted while in DFU mode")
    check((await c.vm("Mode"))[0] == "dfu", "restarted process comes up as dfu")
    await c.wait(lambda: seen(DFU_ADDR, "DfuTarg"), 10, "DfuTarg after the restart")
    chars = await c.connect(DFU_ADDR)
    h = DfuHost(c, chars)
    await h.start()
    mx, off, crc = await h.select(1)
    check(off == len(init) and crc == zlib.crc32(init), "restart: the executed init is kept")
    mx, off, crc = await h.select(2)
    check(off == 0 and half == 2048, "restart: the unexecuted object is rolled back (offset 0)")
    bus.disconnect()

    # --- a Monocle whose hci(N+1) does not exist stays down and says so
    w.spawn("m2", [PY, os.path.join(HERE, "virtual_monocle.py"), "--adapter", "hci2",
                   "--fs", w.fs2], "READY")
    bus = await MessageBus(bus_type=BusType.SYSTEM, bus_address=f"unix:path={w.bus}").connect()
    r = await bus.call(Message(destination="org.glassd.test.VirtualMonocle.hci2",
                               path="/org/glassd/vmonocle/hci2",
                               interface="org.glassd.test.VirtualMonocle1", member="EnterDFU"))
    check(r.message_type != MessageType.ERROR, "hci2: EnterDFU()")
    time.sleep(0.5)
    check("hci3 does not exist" in w.log("m2"), "hci2 without hci3: " +
          [ln for ln in w.log("m2").splitlines() if "hci3" in ln][0])
    r = await bus.call(Message(destination="org.glassd.test.VirtualMonocle.hci2",
                               path="/org/glassd/vmonocle/hci2",
                               interface="org.glassd.test.VirtualMonocle1", member="PowerCycle"))
    r = await bus.call(Message(destination="org.glassd.test.VirtualMonocle.hci2",
                               path="/org/glassd/vmonocle/hci2",
                               interface="org.glassd.test.VirtualMonocle1", member="Mode"))
    check(r.body == ["app"], "PowerCycle in DFU mode with the app untouched boots the app")
    end = time.monotonic() + 10
    while w.out("m2").splitlines().count("READY") < 2 and time.monotonic() < end:
        await asyncio.sleep(0.1)
    check(w.out("m2").splitlines().count("READY") == 2, "hci2: the app registered again")
    check("Traceback" not in w.log("m1") + w.log("m2"), "no traceback in the monocles' stderr")
    bus.disconnect()


async def _not(coro):
    return not await coro


def main():
    w = World()
    try:
        w.spawn("bz", [PY, os.path.join(HERE, "bzworld.py"), "-q", "--auto-enable",
                       "--scan-interval", "1", "-a", "00:00:00:00:00:01", "-a", APP_ADDR,
                       "-a", DFU_ADDR], "READY")
        w.start_monocle()
        asyncio.run(asyncio.wait_for(check_world(w), 120))
        if VERBOSE:
            print(w.log("m1"))
        print("ALL DFU CHECKS PASSED")
    except Exception as e:
        if not isinstance(e, CheckFailed):
            import traceback
            traceback.print_exc()
        print("--- virtual monocle stderr\n" + w.log("m1"))
        w.shutdown()
        raise SystemExit(1)
    w.shutdown()


if __name__ == "__main__":
    main()
