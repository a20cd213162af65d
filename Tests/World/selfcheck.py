#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# selfcheck: end-to-end check of the BLE test world, with busctl as the
# central. Run it with the world's venv python (Tests/World/setup first):
#     .venv/bin/python Tests/World/selfcheck.py [-v]
# It starts a private bus, bzworld.py with hci0..hci3 and three virtual
# Monocles (hci1..hci3, TxPower -70/-45/-80), then checks discovery, RSSI,
# connect, the REPL and data channel of the virtual Monocle's MicroPython,
# its test-control interface, MTU and every link-loss path (DropLink, Disconnect,
# peripheral kill -9, Powered off, bzworld restart) followed by a reconnect.
# Last it restarts bzworld with --temporary-timeout 3 and checks RSSI presence
# (P15) and the expiry of temporary devices (P14). Test-only tool.
#
# busctl exits after each call, and BlueZ ends a client's discovery and
# notify sessions when the client leaves the bus. So the sessions that must
# outlive one call (StartNotify, StartDiscovery) are made by a tiny holder
# process (HOLDER below) that stays on the bus.

import json
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

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
VERBOSE = "-v" in sys.argv

SERIAL = ("6e400001-b5a3-f393-e0a9-e50e24dcca9e", "6e400002-b5a3-f393-e0a9-e50e24dcca9e",
          "6e400003-b5a3-f393-e0a9-e50e24dcca9e")
DATA = ("e5700001-7bac-429a-b4ce-57ff900f479d", "e5700002-7bac-429a-b4ce-57ff900f479d",
        "e5700003-7bac-429a-b4ce-57ff900f479d")
ADDRS = ["00:00:00:00:00:0%d" % i for i in range(1, 5)]
TX_POWER = {1: -70, 2: -45, 3: -80}          # hciN -> advertised TxPower
HCI0 = "/org/bluez/hci0"

HOLDER = r'''
import asyncio, sys, signal
from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus
IFACE = {"StartDiscovery": "org.bluez.Adapter1", "StartNotify": "org.bluez.GattCharacteristic1"}
async def main():
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    for spec in sys.argv[1:]:
        path, member = spec.rsplit(":", 1)
        r = await bus.call(Message(destination="org.bluez", path=path,
                                   interface=IFACE[member], member=member))
        ok = r.message_type != MessageType.ERROR
        print(spec, "ok" if ok else "ERROR " + r.error_name, flush=True)
    print("HOLDING", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
asyncio.run(main())
'''

ACQUIRER = r'''
import asyncio, os, socket, sys
from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus
async def main():
    rx, tx, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    bus = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
    async def call(path, member, sig="", body=()):
        r = await bus.call(Message(destination="org.bluez", path=path, signature=sig, body=list(body),
                                   interface="org.bluez.GattCharacteristic1", member=member))
        if r.message_type == MessageType.ERROR:
            raise SystemExit(f"{member}: {r.error_name}")
        return r
    async def prop(path, name):
        r = await bus.call(Message(destination="org.bluez", path=path, signature="ss",
                                   interface="org.freedesktop.DBus.Properties", member="Get",
                                   body=["org.bluez.GattCharacteristic1", name]))
        return r.body[0].value
    r = await call(rx, "AcquireWrite", "a{sv}", [{}])
    w = socket.socket(fileno=r.unix_fds[r.body[0]]); wmtu = r.body[1]
    r = await call(tx, "AcquireNotify", "a{sv}", [{}])
    n = socket.socket(fileno=r.unix_fds[r.body[0]]); nmtu = r.body[1]
    sent = [i.to_bytes(4, "big") + os.urandom(wmtu - 7) for i in range(count)]
    got = []
    loop = asyncio.get_running_loop()
    n.setblocking(False)
    done = asyncio.Event()
    def readable():
        got.append(n.recv(1024))
        done.set()
    loop.add_reader(n.fileno(), readable)
    for p in sent:   # one at a time: the device's scheduler queue holds 4 messages
        done.clear()
        w.send(p)
        await asyncio.wait_for(done.wait(), 10)
    acquired = await prop(rx, "WriteAcquired"), await prop(tx, "NotifyAcquired")
    w.close(); n.close()
    await asyncio.sleep(0.3)
    released = await prop(rx, "WriteAcquired"), await prop(tx, "NotifyAcquired")
    print("MTU", wmtu, nmtu, "INORDER", got == sent, "ACQUIRED", *acquired, "RELEASED", *released)
asyncio.run(main())
'''

passed = 0


def ok(text):
    global passed
    passed += 1
    print(f"ok {passed} - {text}", flush=True)


def fail(text):
    print(f"FAILED: {text}", flush=True)
    raise SystemExit(1)


def check(cond, text):
    if not cond:
        fail(text)
    ok(text)


def wait_until(pred, timeout=5.0, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(step)
    return pred()


class World:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="bzworld-check.")
        self.bus = os.path.join(self.dir, "bus")
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={self.bus}")
        out = subprocess.run(["dbus-daemon", "--session", f"--address=unix:path={self.bus}",
                              "--fork", "--print-pid=1"], capture_output=True, text=True, check=True)
        self.bus_pid = int(out.stdout.split()[0])
        self.procs = {}
        self.vm_names = {n: f"org.glassd.test.VirtualMonocle.hci{n}" for n in (1, 2, 3)}

    # --- processes
    def spawn(self, name, argv):
        out = open(os.path.join(self.dir, name + ".out"), "a")
        err = open(os.path.join(self.dir, name + ".err"), "a")
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=self.env)
        self.procs[name] = proc
        return proc

    def out(self, name):
        with open(os.path.join(self.dir, name + ".out")) as f:
            return f.read()

    def err(self, name):
        path = os.path.join(self.dir, name + ".err")
        return open(path).read() if os.path.exists(path) else ""

    def ready_count(self, name):
        return self.out(name).splitlines().count("READY")

    def start_bzworld(self, *extra):
        before = self.ready_count("bz") if os.path.exists(os.path.join(self.dir, "bz.out")) else 0
        argv = [PY, os.path.join(HERE, "bzworld.py"), "-q", "--auto-enable", "--scan-interval", "1",
                *extra]
        for a in ADDRS:
            argv += ["-a", a]
        self.spawn("bz", argv)
        if not wait_until(lambda: self.ready_count("bz") > before, 10):
            fail("bzworld did not print READY:\n" + self.err("bz"))

    def start_monocle(self, n):
        name = f"m{n}"
        before = self.ready_count(name) if os.path.exists(os.path.join(self.dir, name + ".out")) else 0
        fs = os.path.join(self.dir, f"fs{n}")
        os.makedirs(fs, exist_ok=True)
        self.spawn(name, [PY, os.path.join(HERE, "virtual_monocle.py"), "--adapter", f"hci{n}",
                          "--tx-power", str(TX_POWER[n]), "--record", self.record(n), "--fs", fs])
        if not wait_until(lambda: self.ready_count(name) > before, 10):
            fail(f"virtual monocle hci{n} did not print READY:\n" + self.err(name))

    def record(self, n):
        return os.path.join(self.dir, f"rec{n}.jsonl")

    def stop(self, name, sig=signal.SIGTERM, timeout=5):
        proc = self.procs.pop(name)
        t0 = time.monotonic()
        proc.send_signal(sig)
        try:
            rc = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
            fail(f"{name} did not exit within {timeout}s")
        return rc, time.monotonic() - t0

    def hold(self, *specs):
        name = f"hold{len(self.procs)}_{time.monotonic_ns()}"
        self.spawn(name, [PY, "-c", HOLDER, *specs])
        if not wait_until(lambda: "HOLDING" in self.out(name), 10):
            fail("holder did not start: " + self.out(name) + self.err(name))
        return name, self.out(name)

    def shutdown(self):
        for name in list(self.procs):
            try:
                self.stop(name)
            except SystemExit:
                pass
        os.kill(self.bus_pid, signal.SIGTERM)

    # --- busctl
    def busctl(self, *args, check=True):
        r = subprocess.run(["busctl", "--system", "--json=short", *args],
                           capture_output=True, text=True, env=self.env)
        if VERBOSE:
            print("  $ busctl", " ".join(args), "->", r.returncode, r.stdout.strip()[:200],
                  r.stderr.strip())
        if check and r.returncode != 0:
            fail(f"busctl {' '.join(args)}: {r.stderr.strip()}")
        return r

    def call(self, path, iface, member, *sig_args, check=True):
        return self.busctl("--", "call", "org.bluez", path, iface, member, *map(str, sig_args),
                           check=check)

    def get(self, path, iface, prop):
        r = self.busctl("get-property", "org.bluez", path, iface, prop, check=False)
        if r.returncode != 0:
            return None
        return json.loads(r.stdout)["data"]

    def objects(self):
        r = self.busctl("call", "org.bluez", "/", "org.freedesktop.DBus.ObjectManager",
                        "GetManagedObjects")
        return json.loads(r.stdout)["data"][0]

    def set_powered(self, path, value):
        self.busctl("set-property", "org.bluez", path, "org.bluez.Adapter1", "Powered", "b",
                    "true" if value else "false")


class Monitor:
    """busctl monitor org.bluez, parsed (--json=short)."""

    def __init__(self, world):
        self.msgs = []
        self.proc = subprocess.Popen(["busctl", "--system", "--json=short", "monitor", "org.bluez"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                     env=world.env)
        threading.Thread(target=self._read, daemon=True).start()
        time.sleep(0.3)

    def _read(self):
        for line in self.proc.stdout:
            if line.startswith("{"):
                try:
                    self.msgs.append(json.loads(line))
                except ValueError:
                    pass    # a message busctl cut short; none the checks look for

    def changed(self, path, iface, prop):
        """Values of prop in PropertiesChanged signals on path, in order."""
        values = []
        for m in list(self.msgs):
            if (m.get("type") == "signal" and m.get("member") == "PropertiesChanged"
                    and m.get("path") == path and m["payload"]["data"][0] == iface):
                props = m["payload"]["data"][1]
                if prop in props:
                    values.append(props[prop]["data"])
        return values

    def removed(self):
        return [m["payload"]["data"][0] for m in list(self.msgs)
                if m.get("type") == "signal" and m.get("member") == "InterfacesRemoved"]

    def signals(self, member, path=None):
        return [m for m in list(self.msgs) if m.get("type") == "signal"
                and m.get("member") == member and (path is None or m.get("path") == path)]

    def added_device(self, path):
        """(Device1 properties, time in s) of each InterfacesAdded of path."""
        return [({k: v["data"] for k, v in m["payload"]["data"][1]["org.bluez.Device1"].items()},
                 m["timestamp-realtime"] / 1e6)
                for m in self.signals("InterfacesAdded")
                if m["payload"]["data"][0] == path
                and "org.bluez.Device1" in m["payload"]["data"][1]]

    def removed_at(self, path):
        """Times (s) of the InterfacesRemoved of path."""
        return [m["timestamp-realtime"] / 1e6 for m in self.signals("InterfacesRemoved")
                if m["payload"]["data"][0] == path]

    def invalidated_at(self, path, iface, prop):
        """Times (s) of the PropertiesChanged on path that invalidate prop."""
        return [m["timestamp-realtime"] / 1e6 for m in self.signals("PropertiesChanged", path)
                if m["payload"]["data"][0] == iface and prop in m["payload"]["data"][2]]

    def errors(self, name):
        return [m for m in list(self.msgs) if m.get("type") == "error"
                and m.get("error_name") == name]

    def close(self):
        self.proc.terminate()
        self.proc.wait()


# ---------------------------------------------------------------- scenarios

def dev_path(addr):
    return f"{HCI0}/dev_{addr.replace(':', '_')}"


def set_filter(w, uuids=(SERIAL[0],)):
    w.call(HCI0, "org.bluez.Adapter1", "SetDiscoveryFilter", "a{sv}", 2,
           "Transport", "s", "le", "UUIDs", "as", len(uuids), *uuids)


def hci0_devices(w):
    devices = {}
    for path, ifaces in w.objects().items():
        d = ifaces.get("org.bluez.Device1")
        if d and path.startswith(HCI0 + "/"):
            devices[path] = {k: v["data"] for k, v in d.items()}
    return devices


def discover(w, uuids=(SERIAL[0],)):
    """The devices after the first scan tick, read while discovery runs (RSSI
    is present only then, as in BlueZ); discovery is stopped again."""
    set_filter(w, uuids)
    holder, _ = w.hold(HCI0 + ":StartDiscovery")   # 1st tick done when it returns
    devices = hci0_devices(w)
    w.stop(holder)
    return devices


def find_chars(w, device):
    chars = {}
    for path, ifaces in w.objects().items():
        c = ifaces.get("org.bluez.GattCharacteristic1")
        if c and path.startswith(device + "/"):
            chars[c["UUID"]["data"]] = path
    return chars


def serial_stream(mon, path):
    """Everything notified on path (a TX characteristic) so far, as bytes."""
    return b"".join(bytes(v) for v in mon.changed(path, "org.bluez.GattCharacteristic1", "Value"))


def write(w, path, payload, kind="command"):
    w.call(path, "org.bluez.GattCharacteristic1", "WriteValue", "aya{sv}", len(payload), *payload,
           1, "type", "s", kind)


def connect_and_repl(w, addr, n, label):
    """Connect to addr (monocle on hciN), resolve, notify, use the REPL and the data channel."""
    device = dev_path(addr)
    t0 = time.monotonic()
    w.call(device, "org.bluez.Device1", "Connect")
    dt = (time.monotonic() - t0) * 1000
    check(w.get(device, "org.bluez.Device1", "Connected") is True, f"{label}: Connected=true ({dt:.0f} ms)")
    check(wait_until(lambda: w.get(device, "org.bluez.Device1", "ServicesResolved") is True),
          f"{label}: ServicesResolved=true")
    chars = find_chars(w, device)
    check(all(u in chars for u in (SERIAL[1], SERIAL[2], DATA[1], DATA[2])),
          f"{label}: 4 characteristics found by UUID")
    holder, out = w.hold(chars[SERIAL[2]] + ":StartNotify", chars[DATA[2]] + ":StartNotify")
    check(out.count(" ok") == 2, f"{label}: StartNotify on both TX")
    check(w.get(chars[SERIAL[2]], "org.bluez.GattCharacteristic1", "Notifying") is True,
          f"{label}: Notifying=true")
    mon = Monitor(w)
    rec_before = open(w.record(n)).read().splitlines() if os.path.exists(w.record(n)) else []
    stx, dtx = chars[SERIAL[2]], chars[DATA[2]]
    write(w, chars[SERIAL[1]], b"\x03\x01")
    check(wait_until(lambda: serial_stream(mon, stx).endswith(b"raw REPL; CTRL-B to exit\r\n>")),
          f"{label}: Ctrl-C Ctrl-A -> raw REPL banner: {serial_stream(mon, stx)[-60:]!r}")
    mark = len(serial_stream(mon, stx))
    write(w, chars[SERIAL[1]], b"import bluetooth;bluetooth.receive_callback("
          b"lambda m: bluetooth.send(b'echo:'+m));print(6*7)\x04")
    check(wait_until(lambda: serial_stream(mon, stx)[mark:] == b"OK42\r\n\x04\x04>"),
          f"{label}: raw REPL command answered: {serial_stream(mon, stx)[mark:]!r}")
    mark = len(serial_stream(mon, stx))
    write(w, chars[SERIAL[1]], b"x\x04")
    check(wait_until(lambda: serial_stream(mon, stx)[mark:].endswith(
        b"NameError: name 'x' isn't defined\r\n\x04>")),
        f"{label}: traceback after the first EOF: {serial_stream(mon, stx)[mark:]!r}")
    p = os.urandom(200)
    write(w, chars[DATA[1]], p)
    check(wait_until(lambda: list(b"echo:" + p) in mon.changed(dtx, "org.bluez.GattCharacteristic1",
                                                          "Value")),
          f"{label}: data message -> receive_callback -> bluetooth.send notification")
    # The record also holds data notifications and display frames, each stamped with "t".
    writes = [{k: v for k, v in json.loads(x).items() if k != "t"}
              for x in open(w.record(n)).read().splitlines()[len(rec_before):]]
    writes = [x for x in writes if x.get("type") == "command"]
    check([x["service"] for x in writes] == ["serial"] * 3 + ["data"]
          and writes[-1] == {"service": "data", "hex": p.hex(), "type": "command"},
          f"{label}: all writes in the --record file")
    mon.close()
    return chars, holder


def raw(w, mon, chars, code, timeout=5.0):
    """Runs code in the raw REPL; returns (stdout, traceback)."""
    stx = chars[SERIAL[2]]
    mark = len(serial_stream(mon, stx))
    code += b"\x04"
    for i in range(0, len(code), 253):
        write(w, chars[SERIAL[1]], code[i:i + 253])
    wait_until(lambda: serial_stream(mon, stx)[mark:].endswith(b"\x04>"), timeout)
    reply = serial_stream(mon, stx)[mark:]
    if not (reply.startswith(b"OK") and reply.count(b"\x04") >= 2):
        fail(f"raw REPL {code!r}: {reply!r}")
    body = reply[2:].split(b"\x04")
    return body[0], body[1]


def virtual_device_checks(w, n, chars):
    """The virtual Monocle's MicroPython and its test-control interface."""
    mon = Monitor(w)
    stx = chars[SERIAL[2]]
    out, err = raw(w, mon, chars, b"import device,fpga;print(device.VERSION, fpga.read(2,12), "
                   b"fpga.read(1,4), device.battery_level())")
    check(out == b"v23.248.0754 b'v23.230.0808' b'Mncl' 100\r\n" and not err,
          f"device.VERSION, FPGA registers, battery: {out!r}")
    vm_call(w, n, "SetBattery", "y", 42)
    out, _ = raw(w, mon, chars, b"print(device.battery_level())")
    check(out == b"42\r\n", f"SetBattery -> device.battery_level(): {out!r}")
    out, _ = raw(w, mon, chars, b"import os;print(sorted(os.listdir()))")
    check(out == b"[]\r\n", f"the device filesystem holds no stub module: {out!r}")

    # The ring: bytes written while code runs pile up; past 1024 they are lost.
    before = stats(w, n)["ring_dropped"]
    write(w, chars[SERIAL[1]], b"import time;time.sleep(1.5);print('slept')\x04")
    time.sleep(0.3)
    for _ in range(5):
        write(w, chars[SERIAL[1]], b"#" * 250)
    check(wait_until(lambda: serial_stream(mon, stx).endswith(b"slept\r\n\x04\x04>"), 5),
          "sleep 1.5 s in the raw REPL")
    dropped = stats(w, n)["ring_dropped"] - before
    check(dropped == 5 * 250 - 1024, f"ring of 1024: {dropped} bytes dropped")
    write(w, chars[SERIAL[1]], b"\x03")      # Ctrl-C clears the pile of '#'

    # main.py, soft reboot, Ctrl-C into the raw REPL with main.py's globals kept.
    main_py = (b"import display,touch,time\nTAPS=[]\n"
               b"def tapped(b):\n TAPS.append(b)\n"
               b" display.show(display.Text('tap %d'%len(TAPS),0,0,display.WHITE),"
               b"display.Text('prompt',320,400,display.YELLOW,justify=display.BOTTOM_CENTER))\n"
               b"touch.callback(touch.EITHER,tapped)\n"
               b"display.show(display.Text('hello',0,0,display.WHITE))\n"
               b"while True:\n time.sleep_ms(20)\n")
    out, err = raw(w, mon, chars, b"f=open('main.py','wb');f.write(%r);f.close()" % main_py)
    check(not err, f"main.py written through the REPL {err!r}")
    reboots = stats(w, n)["soft_reboots"]
    mark = len(serial_stream(mon, stx))
    write(w, chars[SERIAL[1]], b"\x04")
    check(wait_until(lambda: serial_stream(mon, stx)[mark:] == b"OK\r\nMPY: soft reboot\r\n"),
          f"Ctrl-D on an empty raw line: soft reboot {serial_stream(mon, stx)[mark:]!r}")
    check(wait_until(lambda: display_text(w, n) == "hello"), "main.py ran: DisplayText 'hello'")
    check(stats(w, n)["soft_reboots"] == reboots + 1, "Stats soft_reboots counted")
    vm_call(w, n, "Tap")
    check(wait_until(lambda: display_text(w, n) == "tap 1\n[yellow] prompt"),
          f"Tap -> touch callback -> display: {display_text(w, n)!r}")
    png = os.path.join(w.dir, "display.png")
    vm_call(w, n, "DisplayPNG", "s", png)
    with open(png, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n" and head[16:24] == bytes([0, 0, 2, 128, 0, 0, 1, 144]),
          "DisplayPNG writes a 640x400 PNG")
    mark = len(serial_stream(mon, stx))
    write(w, chars[SERIAL[1]], b"\x03")
    check(wait_until(lambda: serial_stream(mon, stx)[mark:].endswith(
        b"KeyboardInterrupt: \r\nraw REPL; CTRL-B to exit\r\n>")),
        f"Ctrl-C interrupts main.py; the raw REPL comes back by itself "
        f"{serial_stream(mon, stx)[mark:]!r}")
    out, _ = raw(w, mon, chars, b"print(TAPS)")
    check(out == b"['A']\r\n", f"main.py's globals survive in the REPL: {out!r}")

    # Ctrl-C also stops code that never calls a Monocle module (delivered as SIGINT).
    mark = len(serial_stream(mon, stx))
    write(w, chars[SERIAL[1]], b"while True: pass\x04")
    time.sleep(0.3)
    write(w, chars[SERIAL[1]], b"\x03")
    check(wait_until(lambda: serial_stream(mon, stx)[mark:].endswith(
        b"KeyboardInterrupt: \r\n\x04>"), 5),
        f"Ctrl-C stops a busy loop: {serial_stream(mon, stx)[mark:]!r}")
    out, _ = raw(w, mon, chars, b"print('after')")
    check(out == b"after\r\n", "the REPL goes on after it")

    # Audio from a WAV: 8-bit mode gives the high byte of each 16-bit sample.
    wav = os.path.join(w.dir, "a.wav")
    with wave.open(wav, "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(8000)
        f.writeframes(b"".join(struct.pack("<h", (i % 200 - 100) * 256) for i in range(4000)))
    vm_call(w, n, "FeedAudio", "s", wav)
    out, err = raw(w, mon, chars, b"import microphone\nmicrophone.record(seconds=0.5,"
                   b"sample_rate=8000,bit_depth=8)\nb=b''\nwhile len(b)<4000:\n"
                   b" s=microphone.read(127)\n if s is None: time.sleep_ms(5)\n else: b+=s\n"
                   b"print(len(b), b[:3], microphone.read(10))")
    check(out == b"4000 b'\\x9c\\x9d\\x9e' None\r\n", f"microphone fed from the WAV: {out!r} {err!r}")

    # Data messages in a burst: the scheduler queue holds 4.
    before = stats(w, n)["callbacks_dropped"]
    raw(w, mon, chars, b"import bluetooth\nGOT=[]\nbluetooth.receive_callback(GOT.append)")
    write(w, chars[SERIAL[1]], b"x=0\nfor i in range(3000000): x+=1\n\x04")
    for i in range(6):
        write(w, chars[DATA[1]], b"res:%d" % i)
    time.sleep(1.0)
    out, _ = raw(w, mon, chars, b"time.sleep_ms(100);print(GOT)", timeout=15)
    check(out == b"[b'res:0', b'res:1', b'res:2', b'res:3']\r\n"
          and stats(w, n)["callbacks_dropped"] - before == 2,
          f"6 data messages while busy: 4 reach the callback, 2 counted in callbacks_dropped ({out!r})")

    # 0x1C: safe mode; a power cycle runs main.py again.
    m = Monitor(w)
    device = dev_path(ADDRS[n - 1])
    write(w, chars[SERIAL[1]], b"\x1c")
    check(wait_until(lambda: w.get(device, "org.bluez.Device1", "Connected") is False),
          "0x1C: the device resets (link drops)")
    check(stats(w, n)["safe_mode"] == 1, "Stats safe_mode counted")
    m.close()
    mon.close()


def stats(w, n):
    r = vm_call(w, n, "Stats")
    return {k: v["data"] for k, v in json.loads(r.stdout)["data"][0].items()}


def display_text(w, n):
    r = vm_call(w, n, "DisplayText")
    return json.loads(r.stdout)["data"][0]


def vm_call(w, n, member, *sig_args, check=True):
    return w.busctl("--", "call", w.vm_names[n], f"/org/glassd/vmonocle/hci{n}",
                    "org.glassd.test.VirtualMonocle1", member, *map(str, sig_args), check=check)


def expect_dropped(w, addr, mon, label, chars):
    device = dev_path(addr)
    check(wait_until(lambda: w.get(device, "org.bluez.Device1", "Connected") is False),
          f"{label}: Connected=false")
    check(False in mon.changed(device, "org.bluez.Device1", "Connected"),
          f"{label}: PropertiesChanged Connected=false")
    check(w.get(device, "org.bluez.Device1", "ServicesResolved") is False
          and False in mon.changed(device, "org.bluez.Device1", "ServicesResolved"),
          f"{label}: ServicesResolved=false (signalled)")
    check(not find_chars(w, device) and set(chars.values()) <= set(mon.removed()),
          f"{label}: GATT objects removed (InterfacesRemoved)")


def main():
    w = World()
    try:
        run(w)
    except BaseException:
        print(f"logs kept in {w.dir}", flush=True)
        raise
    finally:
        w.shutdown()
    shutil.rmtree(w.dir, ignore_errors=True)
    print(f"all {passed} checks passed", flush=True)


def run(w):
    w.start_bzworld()
    ok("bzworld READY")
    for n in (1, 2, 3):
        w.start_monocle(n)
    ok("3 virtual monocles READY")

    # P5: a filter on the data service UUID (not advertised) finds nothing.
    devices = discover(w, uuids=(DATA[0],))
    check(not devices, "UUIDs filter honoured (data-service filter: no device)")

    devices = discover(w)
    check(len(devices) == 3 and all(d["Name"] == "monocle" for d in devices.values()),
          "discovery: 3 Device1 named monocle under hci0")
    rssi = {d["Address"]: d["RSSI"] for d in devices.values()}
    check(rssi == {ADDRS[1]: -70, ADDRS[2]: -45, ADDRS[3]: -80}, f"RSSI from TxPower: {rssi}")
    strongest = max(rssi, key=rssi.get)
    check(strongest == ADDRS[2], f"strongest is {strongest} (hci2)")
    n = 2

    # SetRSSI / ClearRSSI and the per-tick resync (needs a discovery that lasts).
    holder, out = w.hold(HCI0 + ":StartDiscovery", HCI0 + ":StartDiscovery")
    check("ERROR org.bluez.Error.InProgress" in out, "second StartDiscovery of a client: InProgress")
    mon = Monitor(w)
    dev3 = dev_path(ADDRS[3])
    w.call("/org/bluezoo", "org.bluezoo.Test1", "SetRSSI", "sn", ADDRS[3], -20)
    check(wait_until(lambda: -20 in mon.changed(dev3, "org.bluez.Device1", "RSSI")),
          "SetRSSI: PropertiesChanged RSSI=-20")
    time.sleep(1.5)   # a scan tick or two must keep the override
    check(w.get(dev3, "org.bluez.Device1", "RSSI") == -20, "SetRSSI survives scan ticks")
    w.call("/org/bluezoo", "org.bluezoo.Test1", "ClearRSSI", "s", ADDRS[3])
    check(wait_until(lambda: -80 in mon.changed(dev3, "org.bluez.Device1", "RSSI")),
          "ClearRSSI: back to TxPower -80")
    mon.close()
    w.stop(holder)
    check(wait_until(lambda: w.get(HCI0, "org.bluez.Adapter1", "Discovering") is False),
          "discovery stops when its client leaves the bus")

    addr = strongest
    device = dev_path(addr)
    chars, holder = connect_and_repl(w, addr, n, "first connect")

    virtual_device_checks(w, n, chars)
    w.stop(holder)
    chars, holder = connect_and_repl(w, addr, n, "connect after safe mode")

    # P12: AcquireWrite/AcquireNotify on the data service (bzworld serves them).
    mon = Monitor(w)
    mark = len(serial_stream(mon, chars[SERIAL[2]]))
    write(w, chars[SERIAL[1]], b"\x03import time\ndef echo(m):\n while True:\n  try:\n"
          b"   return bluetooth.send(m)\n  except OSError:\n   time.sleep_ms(1)\n"
          b"bluetooth.receive_callback(echo)\x04")
    check(wait_until(lambda: serial_stream(mon, chars[SERIAL[2]])[mark:] == b"OK\x04\x04>"),
          "echo callback (retrying on OSError busy) set through the REPL")
    mon.close()
    r = subprocess.run([PY, "-c", ACQUIRER, chars[DATA[1]], chars[DATA[2]], "300"],
                       capture_output=True, text=True, env=w.env, timeout=30)
    check(r.stdout.split() == ["MTU", "256", "256", "INORDER", "True", "ACQUIRED", "True", "True",
                               "RELEASED", "False", "False"],
          f"AcquireWrite/AcquireNotify: 300 packets echoed in order by the device: {r.stdout.strip()} {r.stderr.strip()}")

    # P7
    w.call(device, "org.bluez.Device1", "Connect")
    check(w.get(device, "org.bluez.Device1", "Connected") is True, "Connect while connected: no-op")

    # MTU: 253 accepted, 254 rejected.
    rx = chars[SERIAL[1]]
    w.call(rx, "org.bluez.GattCharacteristic1", "WriteValue", "aya{sv}", 253, *([65] * 253), 0)
    r = w.call(rx, "org.bluez.GattCharacteristic1", "WriteValue", "aya{sv}", 254, *([65] * 254), 0,
               check=False)
    check(r.returncode != 0 and "Invalid value length" in r.stderr,
          f"254-byte write rejected: {r.stderr.strip()}")
    last = json.loads(open(w.record(n)).read().splitlines()[-1])
    check(last["type"] == "request" and len(last["hex"]) == 506,
          "253-byte write (no type option) recorded as request")

    # (a) DropLink
    mon = Monitor(w)
    w.call("/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", addr)
    expect_dropped(w, addr, mon, "(a) DropLink", chars)
    check(wait_until(lambda: "Disconnected" in [m.get("member") for m in mon.msgs]),
          "(a) Device1.Disconnected signal")
    mon.close()
    w.stop(holder)
    chars, holder = connect_and_repl(w, addr, n, "(a) reconnect")

    # (a2) DropLinks: the device drops its link itself, at a point of its own progress.
    r = vm_call(w, n, "DropLinks", "as", 1, "serial 0", check=False)
    check(r.returncode != 0 and "at least 1" in r.stderr, f"DropLinks refuses a bad point: {r.stderr.strip()}")
    mon = Monitor(w)
    vm_call(w, n, "DropLinks", "as", 1, "serial 3")
    write(w, chars[SERIAL[1]], b"\x03\x03")
    check(w.get(device, "org.bluez.Device1", "Connected") is True, "(a2) DropLinks serial 3: 2 bytes, still connected")
    write(w, chars[SERIAL[1]], b"\x03")
    expect_dropped(w, addr, mon, "(a2) DropLinks serial 3: the third byte", chars)
    check("DropLink" in [m.get("member") for m in mon.msgs], "(a2) by Test1.DropLink (a lost link)")
    drops = json.loads(vm_call(w, n, "LinkDrops").stdout)["data"][0]
    check(drops == [["serial 3"], []], f"(a2) LinkDrops: {drops}")
    mon.close()
    w.stop(holder)
    chars, holder = connect_and_repl(w, addr, n, "(a2) reconnect")

    # (b) Disconnect from the central
    mon = Monitor(w)
    w.call(device, "org.bluez.Device1", "Disconnect")
    expect_dropped(w, addr, mon, "(b) Device1.Disconnect", chars)
    mon.close()
    w.stop(holder)
    chars, holder = connect_and_repl(w, addr, n, "(b) reconnect")

    # (c) peripheral kill -9, Connect fails while gone, works once it is back.
    mon = Monitor(w)
    rc, _ = w.stop(f"m{n}", signal.SIGKILL)
    expect_dropped(w, addr, mon, "(c) kill -9 monocle", chars)
    mon.close()
    t0 = time.monotonic()
    r = w.call(device, "org.bluez.Device1", "Connect", check=False)
    dt = time.monotonic() - t0
    check(r.returncode != 0 and "le-connection-abort-by-local" in r.stderr,
          f"(c) Connect while gone fails ({dt:.2f} s): {r.stderr.strip()}")
    w.stop(holder)
    w.start_monocle(n)
    ok("(c) monocle restarted, READY")
    chars, holder = connect_and_repl(w, addr, n, "(c) reconnect")

    # (d) Powered=false on the central adapter, then true.
    mon = Monitor(w)
    h2, _ = w.hold(HCI0 + ":StartDiscovery")
    check(w.get(HCI0, "org.bluez.Adapter1", "Discovering") is True, "(d) discovering before power off")
    w.set_powered(HCI0, False)
    expect_dropped(w, addr, mon, "(d) Powered=false", chars)
    check(w.get(HCI0, "org.bluez.Adapter1", "Discovering") is False, "(d) discovery stopped")
    r = w.call(device, "org.bluez.Device1", "Connect", check=False)
    check("Resource Not Ready" in r.stderr, f"(d) Connect while powered off: {r.stderr.strip()}")
    mon.close()
    w.stop(h2)
    w.stop(holder)
    w.set_powered(HCI0, True)
    check(w.get(HCI0, "org.bluez.Adapter1", "Powered") is True, "(d) powered on again")
    devices = discover(w)
    check(len(devices) == 3, "(d) discovery works after power on")
    chars, holder = connect_and_repl(w, addr, n, "(d) reconnect")

    # Peripheral side Disconnect (P2): the peripheral adapter's view of the central.
    mon = Monitor(w)
    view = f"/org/bluez/hci{n}/dev_{ADDRS[0].replace(':', '_')}"
    w.call(view, "org.bluez.Device1", "Disconnect")
    expect_dropped(w, addr, mon, "peripheral-side Disconnect", chars)
    mon.close()
    w.stop(holder)
    chars, holder = connect_and_repl(w, addr, n, "reconnect after peripheral-side Disconnect")

    # (e) bzworld killed and restarted: monocles re-register by themselves.
    rc, dt = w.stop("bz")
    check(rc == 0, f"(e) bzworld exits 0 on SIGTERM ({dt:.2f} s)")
    w.stop(holder)
    w.start_bzworld()
    for m in (1, 2, 3):
        check(wait_until(lambda: w.ready_count(f"m{m}") >= 2 + (m == n), 10),
              f"(e) monocle hci{m} printed READY again")
    devices = discover(w)
    check(len(devices) == 3, "(e) discovery after restart: 3 monocles")
    chars, holder = connect_and_repl(w, addr, n, "(e) connect after bzworld restart")

    # App unregisters (monocle SIGTERM): link drops, no longer reported, Connect fails.
    mon = Monitor(w)
    rc, dt = w.stop(f"m{n}")
    check(rc == 0, f"monocle exits 0 on SIGTERM ({dt:.2f} s)")
    expect_dropped(w, addr, mon, "monocle SIGTERM", chars)
    mon.close()
    w.stop(holder)
    r = w.call(device, "org.bluez.Device1", "Connect", check=False)
    check("le-connection-abort-by-local" in r.stderr, "Connect after unregister fails")

    temporary_checks(w)

    for name in ("bz", "m1", "m2", "m3"):
        err = w.err(name)
        check("Traceback" not in err, f"no traceback in {name} stderr" + ("" if "Traceback" not in err
                                                                         else ":\n" + err))


TMP_TIMEOUT = 3.0   # --temporary-timeout of temporary_checks


def temporary_checks(w):
    """P14/P15 on a bzworld with --temporary-timeout 3 (monocles on hci1 and
    hci3 run, hci2's is stopped)."""
    ready = {m: w.ready_count(f"m{m}") for m in (1, 3)}
    w.stop("bz")
    w.start_bzworld("--temporary-timeout", str(TMP_TIMEOUT))
    for m in (1, 3):
        check(wait_until(lambda: w.ready_count(f"m{m}") > ready[m], 10),
              f"[P14] bzworld --temporary-timeout {TMP_TIMEOUT:g}: monocle hci{m} READY again")
    dev1, dev3 = dev_path(ADDRS[1]), dev_path(ADDRS[3])
    dev1_props = lambda: hci0_devices(w).get(dev1)   # noqa: E731
    D1 = "org.bluez.Device1"

    # A scan reports both: InterfacesAdded with RSSI.
    mon = Monitor(w)
    set_filter(w)
    holder, _ = w.hold(HCI0 + ":StartDiscovery")
    added = mon.added_device(dev1)
    check(len(added) == 1 and added[0][0].get("RSSI") == -70,
          f"[P15] InterfacesAdded of a found device carries RSSI: {added}")

    # hci1's monocle goes away: the next tick invalidates RSSI, and the
    # device expires TemporaryTimeout after the last report.
    w.stop("m1")
    check(wait_until(lambda: mon.invalidated_at(dev1, D1, "RSSI"), 3),
          "[P15] advertiser gone: PropertiesChanged invalidates RSSI")
    t_invalid = mon.invalidated_at(dev1, D1, "RSSI")[0]
    props = dev1_props()
    check(props is not None and "RSSI" not in props and w.get(dev1, D1, "RSSI") is None,
          "[P15] the device stays, without RSSI (GetManagedObjects, Get)")
    check(wait_until(lambda: mon.removed_at(dev1), TMP_TIMEOUT + 3),
          "[P14] not reported for the timeout: InterfacesRemoved")
    gap = mon.removed_at(dev1)[0] - t_invalid
    check(TMP_TIMEOUT - 1.3 <= gap <= TMP_TIMEOUT + 0.5,
          f"[P14] removed {gap:.2f} s after RSSI went (last report + {TMP_TIMEOUT:g} s)")
    check(dev1_props() is None, "[P14] expired device gone from GetManagedObjects")
    props = hci0_devices(w).get(dev3)
    check(props is not None and props.get("RSSI") == -80 and not mon.removed_at(dev3),
          "[P14] a device every scan still reports is kept, with its RSSI")

    r = subprocess.run([PY, "-c", CALLER, dev1, "org.bluez.Device1", "Connect"],
                       capture_output=True, text=True, env=w.env, timeout=15)
    check(r.stdout.strip() == "org.freedesktop.DBus.Error.UnknownObject "
          f"Unknown object '{dev1}'.",
          f"[P14] Connect on the expired path: {r.stdout.strip()} {r.stderr.strip()}")

    # It advertises again: a fresh Device1 (InterfacesAdded, RSSI).
    w.start_monocle(1)
    check(wait_until(lambda: len(mon.added_device(dev1)) == 2, 3)
          and mon.added_device(dev1)[1][0].get("RSSI") == -70,
          "[P14] seen again after expiry: InterfacesAdded with RSSI -70")
    check(mon.added_device(dev1)[1][0].get("Name") == "monocle", "[P14] fresh device named monocle")

    # Discovery stops: RSSI invalidated on every device; then they expire.
    w.stop(holder)
    check(wait_until(lambda: mon.invalidated_at(dev3, D1, "RSSI")
                     and len(mon.invalidated_at(dev1, D1, "RSSI")) == 2, 3),
          "[P15] StopDiscovery: RSSI invalidated on all devices")
    check(w.get(dev3, D1, "RSSI") is None and "RSSI" not in hci0_devices(w)[dev3],
          "[P15] no RSSI property after StopDiscovery")
    check(wait_until(lambda: mon.removed_at(dev1) and len(mon.removed_at(dev1)) == 2
                     and mon.removed_at(dev3), TMP_TIMEOUT + 3),
          "[P14] after StopDiscovery both expire")
    mon.close()

    # Connected devices are kept; the timer starts at the disconnect.
    mon = Monitor(w)
    holder, _ = w.hold(HCI0 + ":StartDiscovery")
    check(wait_until(lambda: mon.added_device(dev3), 3) and mon.added_device(dev3)[0][0]["RSSI"] == -80,
          "[P14] rediscovered after expiry")
    w.call(dev3, D1, "Connect")
    check(w.get(dev3, D1, "Connected") is True, "[P14] connected")
    w.stop(holder)       # no scan reports it from now on
    time.sleep(TMP_TIMEOUT + 1.0)   # nothing to await: the absence of a removal is checked
    view = f"/org/bluez/hci3/dev_{ADDRS[0].replace(':', '_')}"
    check(w.get(dev3, D1, "Connected") is True and not mon.removed_at(dev3)
          and w.get(view, D1, "Connected") is True,
          f"[P14] connected for {TMP_TIMEOUT + 1:g} s without scan reports: kept (both sides)")
    t_disc = time.time()
    w.call(dev3, D1, "Disconnect")
    check(wait_until(lambda: mon.removed_at(dev3) and mon.removed_at(view), TMP_TIMEOUT + 3),
          "[P14] after the disconnect the device and the peripheral's view expire")
    gap = mon.removed_at(dev3)[0] - t_disc
    check(TMP_TIMEOUT - 0.2 <= gap <= TMP_TIMEOUT + 1.0,
          f"[P14] removed {gap:.2f} s after the disconnect (timer from the disconnect)")
    mon.close()


CALLER = r'''
import asyncio, sys
from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus
async def main():
    path, iface, member = sys.argv[1:4]
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    r = await bus.call(Message(destination="org.bluez", path=path, interface=iface, member=member))
    print("ok" if r.message_type != MessageType.ERROR else f"{r.error_name} {r.body[0]}")
asyncio.run(main())
'''


if __name__ == "__main__":
    main()
