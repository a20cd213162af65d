#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# selfcheck: end-to-end check of the BLE test world, with busctl as the
# central. Run it with the world's venv python (Tests/World/setup first):
#     .venv/bin/python Tests/World/selfcheck.py [-v]
# It starts a private bus, bzworld.py with hci0..hci3 and three virtual
# Monocles (hci1..hci3, TxPower -70/-45/-80), then checks discovery, RSSI,
# connect, GATT echo, MTU and every link-loss path (DropLink, Disconnect,
# peripheral kill -9, Powered off, bzworld restart) followed by a reconnect.
# Test-only tool.
#
# busctl exits after each call, and BlueZ ends a client's discovery and
# notify sessions when the client leaves the bus. So the sessions that must
# outlive one call (StartNotify, StartDiscovery) are made by a tiny holder
# process (HOLDER below) that stays on the bus.

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

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
        if len(got) >= count:
            done.set()
    loop.add_reader(n.fileno(), readable)
    for p in sent:
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

    def start_bzworld(self):
        before = self.ready_count("bz") if os.path.exists(os.path.join(self.dir, "bz.out")) else 0
        argv = [PY, os.path.join(HERE, "bzworld.py"), "-q", "--auto-enable", "--scan-interval", "1"]
        for a in ADDRS:
            argv += ["-a", a]
        self.spawn("bz", argv)
        if not wait_until(lambda: self.ready_count("bz") > before, 10):
            fail("bzworld did not print READY:\n" + self.err("bz"))

    def start_monocle(self, n):
        name = f"m{n}"
        before = self.ready_count(name) if os.path.exists(os.path.join(self.dir, name + ".out")) else 0
        self.spawn(name, [PY, os.path.join(HERE, "virtual_monocle.py"), "--adapter", f"hci{n}",
                          "--tx-power", str(TX_POWER[n]), "--record", self.record(n)])
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
                self.msgs.append(json.loads(line))

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

    def close(self):
        self.proc.terminate()
        self.proc.wait()


# ---------------------------------------------------------------- scenarios

def dev_path(addr):
    return f"{HCI0}/dev_{addr.replace(':', '_')}"


def discover(w, uuids=(SERIAL[0],)):
    w.call(HCI0, "org.bluez.Adapter1", "SetDiscoveryFilter", "a{sv}", 2,
           "Transport", "s", "le", "UUIDs", "as", len(uuids), *uuids)
    w.call(HCI0, "org.bluez.Adapter1", "StartDiscovery")
    devices = {}
    for path, ifaces in w.objects().items():
        d = ifaces.get("org.bluez.Device1")
        if d and path.startswith(HCI0 + "/"):
            devices[path] = {k: v["data"] for k, v in d.items()}
    return devices


def find_chars(w, device):
    chars = {}
    for path, ifaces in w.objects().items():
        c = ifaces.get("org.bluez.GattCharacteristic1")
        if c and path.startswith(device + "/"):
            chars[c["UUID"]["data"]] = path
    return chars


def connect_and_echo(w, addr, n, label):
    """Connect to addr (monocle on hciN), resolve, notify, write both RX, see echoes."""
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
    payloads = {"serial": os.urandom(20), "data": os.urandom(200)}
    for key, (_, rx, tx) in (("serial", SERIAL), ("data", DATA)):
        p = payloads[key]
        w.call(chars[rx], "org.bluez.GattCharacteristic1", "WriteValue", "aya{sv}", len(p), *p,
               1, "type", "s", "command")
    for key, (_, rx, tx) in (("serial", SERIAL), ("data", DATA)):
        p = list(payloads[key])
        check(wait_until(lambda: p in mon.changed(chars[tx], "org.bluez.GattCharacteristic1",
                                                   "Value")),
              f"{label}: {key} echo seen as PropertiesChanged(Value)")
    lines = open(w.record(n)).read().splitlines()[len(rec_before):]
    expect = [{"service": k, "hex": payloads[k].hex(), "type": "command"} for k in ("serial", "data")]
    check([json.loads(x) for x in lines] == expect, f"{label}: both writes in the --record file")
    mon.close()
    return chars, holder


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
    chars, holder = connect_and_echo(w, addr, n, "first connect")

    # P12: AcquireWrite/AcquireNotify on the data service (bzworld serves them).
    r = subprocess.run([PY, "-c", ACQUIRER, chars[DATA[1]], chars[DATA[2]], "300"],
                       capture_output=True, text=True, env=w.env, timeout=30)
    check(r.stdout.split() == ["MTU", "256", "256", "INORDER", "True", "ACQUIRED", "True", "True",
                               "RELEASED", "False", "False"],
          f"AcquireWrite/AcquireNotify: 300 packets echoed in order: {r.stdout.strip()} {r.stderr.strip()}")

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
    chars, holder = connect_and_echo(w, addr, n, "(a) reconnect")

    # (b) Disconnect from the central
    mon = Monitor(w)
    w.call(device, "org.bluez.Device1", "Disconnect")
    expect_dropped(w, addr, mon, "(b) Device1.Disconnect", chars)
    mon.close()
    w.stop(holder)
    chars, holder = connect_and_echo(w, addr, n, "(b) reconnect")

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
    chars, holder = connect_and_echo(w, addr, n, "(c) reconnect")

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
    chars, holder = connect_and_echo(w, addr, n, "(d) reconnect")

    # Peripheral side Disconnect (P2): the peripheral adapter's view of the central.
    mon = Monitor(w)
    view = f"/org/bluez/hci{n}/dev_{ADDRS[0].replace(':', '_')}"
    w.call(view, "org.bluez.Device1", "Disconnect")
    expect_dropped(w, addr, mon, "peripheral-side Disconnect", chars)
    mon.close()
    w.stop(holder)
    chars, holder = connect_and_echo(w, addr, n, "reconnect after peripheral-side Disconnect")

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
    chars, holder = connect_and_echo(w, addr, n, "(e) connect after bzworld restart")

    # App unregisters (monocle SIGTERM): link drops, no longer reported, Connect fails.
    mon = Monitor(w)
    rc, dt = w.stop(f"m{n}")
    check(rc == 0, f"monocle exits 0 on SIGTERM ({dt:.2f} s)")
    expect_dropped(w, addr, mon, "monocle SIGTERM", chars)
    mon.close()
    w.stop(holder)
    r = w.call(device, "org.bluez.Device1", "Connect", check=False)
    check("le-connection-abort-by-local" in r.stderr, "Connect after unregister fails")

    for name in ("bz", "m1", "m2", "m3"):
        err = w.err(name)
        check("Traceback" not in err, f"no traceback in {name} stderr" + ("" if "Traceback" not in err
                                                                         else ":\n" + err))


if __name__ == "__main__":
    main()
