#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# smp_selfcheck: end-to-end check of the virtual Halo's MCUmgr server (virtual_frame.py --halo,
# vsmp.py) on bzworld.py, with a dbus-fast central on hci0 acting as an SMP client (cbor2) and
# images made by imgtool (make_mcuboot_image.py): random garbage into the server (well-formed
# answers, no exception); echo and parameters; a full upload, test, reset, back with the new
# version (SMP and Lua), confirm; an upload refused while the running image is an unconfirmed
# test, which the next reset reverts; a link drop mid-upload and the resume from the held
# offset (no second data at offset 0); an image that does not boot; an image whose Lua stays
# silent; self-confirming firmware; a permanent swap; errors in SMP v1 and v2.
#   .venv/bin/python Tests/World/smp_selfcheck.py [-v]        (about 25 s)
# Exit status 0 when every check passed; a summary with timings at the end.
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import collections
import random

import cbor2
from dbus_fast import BusType, MessageType, Variant
from dbus_fast.aio import MessageBus

import frame_selfcheck as fc    # beside this file: Agent, check, start, step, the results
from frame_selfcheck import DBusFail, Failed, check
import vmcuboot
import vsmp

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
HOST, HALO = "00:00:00:00:00:01", "00:00:00:00:00:02"
DEV = "/org/bluez/hci0/dev_" + HALO.replace(":", "_")
BASE = "-5475-a6a4-654c-8431f6ad49c4"
SERVICE, RX, TX, AUDIO = (f"7a23000{i}{BASE}" for i in (1, 2, 3, 5))
SMP_CHAR = "da2e7828-fbce-4e01-ae9e-261174997c48"
VF, VF_PATH, VF_IFACE = "org.glassd.test.VirtualFrame.hci1", "/org/glassd/vframe/hci1", "org.glassd.test.VirtualFrame1"
MTU = 185               # state answers take two notifications, upload requests three writes
CHUNK = 384             # data per upload request, as Brilliant's tool sends it
GATT = "org.bluez.GattCharacteristic1"


class Host(fc.Host):
    """The central: one dbus-fast connection to the private bus (its calls are the Frame
    selfcheck's: call, bluez, vf, prop); an SMP client on it."""

    def __init__(self, bus):
        self.paths = {}
        self.lua_in, self.smp_in = asyncio.Queue(), asyncio.Queue()
        self.signals = {"Booted": asyncio.Queue(), "LinkDropped": asyncio.Queue()}
        self.seq = 0
        super().__init__(bus)

    async def slots(self):
        return json.loads((await self.vf("SlotState"))[0])

    async def counters(self):
        return (await self.slots())["counters"]

    def on_message(self, msg):
        if msg.message_type != MessageType.SIGNAL:
            return
        if msg.path == VF_PATH and msg.member in self.signals:
            self.signals[msg.member].put_nowait(msg.body[0])
        elif msg.member == "PropertiesChanged" and "Value" in msg.body[1]:
            value = bytes(msg.body[1]["Value"].value)
            if msg.path == self.paths.get(TX):
                self.lua_in.put_nowait(value)
            elif msg.path == self.paths.get(SMP_CHAR):
                self.smp_in.put_nowait(value)

    async def signal(self, name, timeout=10.0):
        try:
            return await asyncio.wait_for(self.signals[name].get(), timeout)
        except asyncio.TimeoutError:
            raise Failed(f"no {name} signal within {timeout} s")

    async def find_chars(self):
        self.paths = {}
        objects = (await self.bluez("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"))[0]
        flags = {}
        for path, ifaces in objects.items():
            char = ifaces.get(GATT)
            if char is not None and path.startswith(DEV + "/"):
                self.paths[char["UUID"].value] = path
                flags[char["UUID"].value] = sorted(char["Flags"].value)
        check(all(u in self.paths for u in (RX, TX, AUDIO, SMP_CHAR)), "RX, TX, audio and SMP found by UUID")
        return flags

    async def connect(self):
        """Connects (the Halo may still be registering after a reset) and turns notifications on."""
        t_end = time.monotonic() + 10
        while True:
            try:
                await self.bluez(DEV, "org.bluez.Device1", "Connect")
                break
            except DBusFail:
                if time.monotonic() > t_end:
                    raise
                await asyncio.sleep(0.1)
        await self.find_chars()
        for uuid in (TX, SMP_CHAR):
            await self.bluez(self.paths[uuid], GATT, "StartNotify")
        for q in (self.lua_in, self.smp_in):
            while not q.empty():
                q.get_nowait()

    async def write(self, uuid, data, kind="command"):
        await self.bluez(self.paths[uuid], GATT, "WriteValue", "aya{sv}", [data, {"type": Variant("s", kind)}])

    async def lua(self, code, timeout=5.0):
        while not self.lua_in.empty():
            self.lua_in.get_nowait()
        await self.write(RX, code.encode(), "request")
        try:
            return (await asyncio.wait_for(self.lua_in.get(), timeout)).decode()
        except asyncio.TimeoutError:
            raise Failed(f"no Lua answer within {timeout} s")

    async def smp(self, op, group, cmd, body, version=1, timeout=5.0, raw=None):
        """One SMP request (split into writes of at most MTU-3 bytes) -> (header, CBOR map)."""
        self.seq = (self.seq + 1) % 256
        payload = cbor2.dumps(body) if raw is None else raw
        frame = bytes([(version << 3) | op, 0]) + len(payload).to_bytes(2, "big") + group.to_bytes(2, "big") \
            + bytes([self.seq, cmd]) + payload
        for i in range(0, len(frame), MTU - 3):
            await self.write(SMP_CHAR, frame[i:i + MTU - 3])
        buf = bytearray()
        while len(buf) < 8 or len(buf) < 8 + int.from_bytes(buf[2:4], "big"):
            try:
                buf += await asyncio.wait_for(self.smp_in.get(), timeout)
            except asyncio.TimeoutError:
                raise Failed(f"no SMP answer to group {group} id {cmd} within {timeout} s")
        head = bytes(buf[:8])
        if not (head[0] & 7 == op + 1 and head[6] == self.seq and head[7] == cmd
                and int.from_bytes(head[4:6], "big") == group):
            raise Failed(f"answer header {head.hex()} does not match the request")
        return head, cbor2.loads(bytes(buf[8:]))

    async def state(self):
        return (await self.smp(0, 1, 0, {}))[1]["images"]

    async def upload(self, image):
        """Uploads image (make_mcuboot_image's JSON) from the offset the Halo names; returns the
        offset answered to the first request (CHUNK for a new upload: its data was written)."""
        data = open(image["path"], "rb").read()
        sha = bytes.fromhex(image["sha256"])
        first = {"image": 0, "len": len(data), "off": 0, "sha": sha, "data": data[:CHUNK], "upgrade": False}
        rsp = (await self.smp(2, 1, 1, first, timeout=3))[1]
        if "off" not in rsp:
            raise Failed(f"first chunk answered {rsp}")
        start = off = rsp["off"]
        while off < len(data):
            rsp = (await self.smp(2, 1, 1, {"off": off, "data": data[off:off + CHUNK]}, timeout=3))[1]
            if rsp.get("off", 0) <= off:
                raise Failed(f"the offset did not move on from {off}: {rsp}")
            off = rsp["off"]
        check(rsp.get("match") is True, "the last answer says the file's SHA-256 matched")
        return start

    async def reset_to(self, version):
        """SMP reset; the link drops; back (Booted) with `version`; reconnected."""
        while not self.signals["Booted"].empty():     # the power-on's, when it came after the match
            self.signals["Booted"].get_nowait()
        head, rsp = await self.smp(2, 0, 5, {})
        check(rsp == {}, f"reset answered {rsp}")
        booted = await self.signal("Booted")
        check(booted == version, f"back with {booted} (expected {version})")
        await self.connect()


class GarbageDevice:
    """What vsmp.SmpServer needs of a device, without BLE."""

    def __init__(self, folder):
        self.mcuboot = vmcuboot.Mcuboot(folder, "0.8.7", collections.Counter())
        self.server = None

    def reset_requested(self):
        self.server.booted()
        self.mcuboot.boot()

    def smp_held(self, n):
        pass


async def garbage(tmp):
    """Random bytes and random well-framed requests of mistyped fields into the server itself:
    every answer is one whole SMP frame with a CBOR map, and nothing raises."""
    rnd = random.Random(31)
    device = GarbageDevice(os.path.join(tmp, "garbage-slots"))
    server = device.server = vsmp.SmpServer(device, device.mcuboot)
    keys = ("off", "len", "data", "sha", "image", "upgrade", "hash", "confirm", "d", "slot", "force")
    values = (0, 1, -1, 2 ** 40, 1.5, None, True, "x", [1], {"a": 1}, b"", bytes(32),
              bytes.fromhex("3db8f396") + bytes(40))
    answers = 0
    for i in range(6000):
        if rnd.random() < 0.3:
            frame = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 40)))
        else:
            payload = cbor2.dumps({rnd.choice(keys): rnd.choice(values) for _ in range(rnd.randrange(4))})
            frame = bytes([rnd.choice((0, 1, 8, 10, 16)), 0]) + len(payload).to_bytes(2, "big") \
                + rnd.choice((0, 1, 9)).to_bytes(2, "big") + bytes([i % 256, rnd.choice((0, 1, 5, 6, 7))]) + payload
        for rsp in server.feed(frame):
            if len(rsp) != 8 + int.from_bytes(rsp[2:4], "big") or not isinstance(cbor2.loads(rsp[8:]), dict):
                raise Failed(f"a malformed answer to {frame.hex()}: {rsp.hex()}")
            answers += 1
        if rnd.random() < 0.02:
            server.lost()       # a link drop: a half-received request is gone
    check(answers > 1000, f"6000 random writes: {answers} well-formed answers, no exception")


def make_image(tmp, version, size=30000):
    out = subprocess.run([PY, os.path.join(HERE, "make_mcuboot_image.py"), "--out",
                          os.path.join(tmp, f"img-{version}.bin"), "--version", version, "--size", str(size)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def slot(images, n):
    found = [i for i in images if i["slot"] == n]
    return found[0] if found else None


async def run(tmp):
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    host = Host(bus)
    for rule in ("type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties'",
                 f"type='signal',interface='{VF_IFACE}'"):
        await host.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                        "AddMatch", "s", [rule])
    images = {v: make_image(tmp, v, size) for v, size in
              (("0.8.8", 30000), ("0.8.9", 20000), ("0.9.0", 40000), ("0.9.1", 12000), ("0.9.2", 12000))}

    async def pair():
        await host.bluez("/org/bluez/hci0", "org.bluez.Adapter1", "SetDiscoveryFilter", "a{sv}",
                         [{"Transport": Variant("s", "le"), "UUIDs": Variant("as", [SERVICE])}])
        await host.bluez("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        t_end = time.monotonic() + 5
        while True:
            try:
                if await host.prop(DEV, "org.bluez.Device1", "Name") == "Halo 02":
                    break
            except DBusFail:
                pass
            if time.monotonic() > t_end:
                raise Failed("'Halo 02' not seen in a scan")
            await asyncio.sleep(0.05)
        bus.export("/test/agent", fc.Agent())
        await host.bluez("/org/bluez", "org.bluez.AgentManager1", "RegisterAgent", "os",
                         ["/test/agent", "NoInputNoOutput"])
        await host.bluez("/org/bluez", "org.bluez.AgentManager1", "RequestDefaultAgent", "o", ["/test/agent"])
        await host.bluez(DEV, "org.bluez.Device1", "Connect")
        flags = await host.find_chars()
        check(flags[SMP_CHAR] == ["notify", "write-without-response"], f"SMP flags {flags[SMP_CHAR]}")
        check(flags[AUDIO] == ["write", "write-without-response"], f"audio 0005 flags {flags[AUDIO]}")
        try:
            await host.write(SMP_CHAR, b"\x00" * 8)
            await host.bluez(host.paths[SMP_CHAR], GATT, "StartNotify")
            raise Failed("SMP before pairing: StartNotify accepted")
        except DBusFail as e:
            check(e.name == "org.bluez.Error.NotPermitted", f"SMP before pairing: {e.name}")
        await host.bluez(DEV, "org.bluez.Device1", "Pair")
        await host.connect()
        check(await host.lua("print(frame.FIRMWARE_VERSION, frame.HARDWARE_VERSION)") == "0.8.7\thalo",
              "Lua: FIRMWARE_VERSION is slot 0's image version, 0.8.7")
        await host.write(AUDIO, b"\x00" * 100)
        stats = {k: v.value for k, v in (await host.vf("Stats"))[0].items()}
        check(stats["audio_bytes"] == 100, "speaker audio writes are counted")

    async def echo():
        """The speaker's sound in the microphone, through the real wiring: Lua starts both, the
        tone goes over the audio characteristic, Lua reads the recording's peak."""
        import math
        tone = b"".join(int(10000 * math.sin(2 * math.pi * 440 * n / 16000)).to_bytes(2, "little", signed=True)
                        for n in range(4000))    # 250 ms
        peaks = {}
        # Chunks fit one write (MTU - 3 bytes): helpers first.
        await host.write(RX, b"M, S = frame.microphone, frame.speaker", "request")
        await host.write(RX, b"function R() local p,n=0,0 while 1 do local s=M.read(4096) if not s or #s==0 then "
                             b"return p,n end for i=1,#s-1,2 do p=math.max(p,math.abs(('<i2'):unpack(s,i))) end "
                             b"n=n+#s//2 end end", "request")
        for aec, cancel in ((False, True), (True, True), (True, False)):
            await host.vf("SetEchoCancel", "b", [cancel])
            check(await host.lua("S.start{encoder='pcm', sample_rate=16000, bit_depth=16} "
                                 f"M.start{{sample_rate=16000, bit_depth=16, aec={str(aec).lower()}}} "
                                 "print(M.status(), M.aec())")
                  == f"streaming\t{str(aec).lower()}", f"Lua: speaker and microphone (aec={aec}) started")
            played = (await host.vf("SpeakerStats"))[0]["played"].value
            for at in range(0, len(tone), MTU - 3):
                await host.write(AUDIO, tone[at:at + MTU - 3])
            # Once the whole tone has played its echo is in the recording, but for the last block's
            # last 20 ms: the peak is well before.
            await host.vf("WaitPlayed", "t", [played + len(tone)])
            answer = await host.lua("local p, n = R() M.stop() S.stop() print(p, n)")
            peak, count = (int(v) for v in answer.split("\t"))
            check(count >= len(tone) // 2, f"the recording has {count} samples, as long as the tone at least")
            peaks[(aec, cancel)] = peak
        await host.vf("SetEchoCancel", "b", [True])
        print(f"  echo peaks (tone peak 10000): aec=false {peaks[(False, True)]}, aec=true {peaks[(True, True)]}, "
              f"aec=true with SetEchoCancel(false) {peaks[(True, False)]}", flush=True)
        check(2000 <= peaks[(False, True)] <= 3200, "aec=false: the microphone hears the speaker at about -12 dB")
        check(peaks[(True, True)] < 100, "aec=true: the echo canceller leaves a residue below 1 %")
        check(2000 <= peaks[(True, False)] <= 3200, "SetEchoCancel(false): aec=true hears the whole echo")

    async def basics():
        head, rsp = await host.smp(2, 0, 0, {"d": "hello halo"})
        check(rsp == {"r": "hello halo"} and (head[0] >> 3) & 3 == 1, f"echo v2: {rsp}")
        head, rsp = await host.smp(2, 0, 0, {"d": "v1"}, version=0)
        check(rsp == {"r": "v1"} and (head[0] >> 3) & 3 == 0, f"echo v1 answered in v1: {rsp}")
        _, rsp = await host.smp(0, 0, 6, {})
        check(rsp == {"buf_size": 517, "buf_count": 4}, f"MCUmgr parameters {rsp}")
        images = await host.state()
        s0 = slot(images, 0)
        check(len(images) == 1 and s0["version"] == "0.8.7" and s0["active"] and s0["confirmed"]
              and len(s0["hash"]) == 32 and not s0["pending"], f"state: slot 0 runs 0.8.7 confirmed ({images})")
        _, rsp = await host.smp(2, 1, 9, {})
        check(rsp == {"rc": 8}, f"unknown command: rc 8 (ENOTSUP) {rsp}")
        try:
            await host.write(SMP_CHAR, b"\x00" * 8, "request")
            raise Failed("a write with response was accepted")
        except DBusFail as e:
            check(e.name == "org.bluez.Error.NotPermitted", f"write with response refused: {e.name}")
        # a frame longer than buf_size is dropped unanswered; the next one is answered
        await host.write(SMP_CHAR, bytes([0x0A, 0, 0x02, 0x58, 0, 0, 0x77, 0]) + b"\xa0")
        before = (await host.counters()).get("smp_oversize", 0)
        _, rsp = await host.smp(2, 0, 0, {"d": "after"})
        check(rsp == {"r": "after"} and before == 1, "an oversize frame was dropped, the next one answered")

    async def update():
        img = images["0.8.8"]
        c0 = await host.counters()
        check(await host.upload(img) == CHUNK, "a new upload takes the first chunk at offset 0")
        images_now = await host.state()
        s1 = slot(images_now, 1)
        check(s1 is not None and s1["version"] == "0.8.8" and s1["hash"].hex() == img["hash"]
              and s1["bootable"] and not s1["pending"], f"slot 1 holds 0.8.8 with imgtool's hash ({s1})")
        c1 = await host.counters()
        check(c1["smp_off0_writes"] - c0.get("smp_off0_writes", 0) == 1, "one upload from zero")
        _, rsp = await host.smp(2, 1, 0, {"hash": bytes.fromhex(img["hash"]), "confirm": False})
        check(slot(rsp["images"], 1)["pending"] and not slot(rsp["images"], 1)["permanent"],
              "test write: slot 1 pending (not permanent)")
        await host.reset_to("0.8.8")
        images_now = await host.state()
        s0, s1 = slot(images_now, 0), slot(images_now, 1)
        check(s0["version"] == "0.8.8" and s0["active"] and not s0["confirmed"], f"0.8.8 runs, unconfirmed ({s0})")
        check(s1["version"] == "0.8.7" and s1["confirmed"], f"0.8.7 waits in slot 1 to revert to ({s1})")
        check(await host.lua("print(frame.FIRMWARE_VERSION)") == "0.8.8", "Lua: FIRMWARE_VERSION 0.8.8")
        _, rsp = await host.smp(2, 1, 0, {"hash": bytes.fromhex(img["hash"]), "confirm": True})
        check(slot(rsp["images"], 0)["confirmed"] and not slot(rsp["images"], 1)["confirmed"],
              "confirm with the running image's hash: it is confirmed")
        check((await host.slots())["swap_type"] == "none", "nothing happens at the next reset")

    async def refused_and_reverted():
        img = images["0.8.9"]
        await host.upload(img)
        await host.smp(2, 1, 0, {"hash": bytes.fromhex(img["hash"]), "confirm": False})
        await host.reset_to("0.8.9")
        other = images["0.9.0"]
        data = open(other["path"], "rb").read()
        first = {"image": 0, "len": len(data), "off": 0, "sha": bytes.fromhex(other["sha256"]), "data": data[:CHUNK]}
        _, rsp = await host.smp(2, 1, 1, first)
        check(rsp == {"err": {"group": 1, "rc": 9}}, f"upload while unconfirmed, v2: no free slot {rsp}")
        _, rsp = await host.smp(2, 1, 1, first, version=0)
        check(rsp == {"rc": 6}, f"the same in v1: rc 6 (EBADSTATE) {rsp}")
        await host.reset_to("0.8.8")
        images_now = await host.state()
        s0, s1 = slot(images_now, 0), slot(images_now, 1)
        check(s0["version"] == "0.8.8" and s0["confirmed"] and s1["version"] == "0.8.9"
              and not (s1["pending"] or s1["confirmed"]), "the unconfirmed 0.8.9 was reverted at the reset")
        check(await host.lua("print(frame.FIRMWARE_VERSION)") == "0.8.8", "Lua: back to 0.8.8")

    async def drop_and_resume():
        img = images["0.9.0"]
        c0 = await host.counters()
        await host.vf("DropLinks", "as", [["smp 8000"]])
        try:
            await host.upload(img)
            raise Failed("the upload went through the drop")
        except (Failed, DBusFail):
            pass
        dropped = await host.signal("LinkDropped")
        check(dropped == "smp 8000", f"LinkDropped({dropped!r})")
        t_end = time.monotonic() + 5
        while await host.prop(DEV, "org.bluez.Device1", "Connected"):
            if time.monotonic() > t_end:
                raise Failed("still connected after the drop")
            await asyncio.sleep(0.05)
        await host.connect()
        start = await host.upload(img)
        check(8000 <= start < 8000 + CHUNK, f"resumed at the held offset {start}")
        c1 = await host.counters()
        d = {k: c1.get(k, 0) - c0.get(k, 0) for k in ("smp_off0_writes", "smp_off0_requests", "smp_resumes",
                                                       "smp_bytes_written")}
        check(d["smp_off0_writes"] == 1 and d["smp_resumes"] == 1 and d["smp_off0_requests"] == 2,
              f"no second data at offset 0: {d}")
        check(d["smp_bytes_written"] == os.path.getsize(img["path"]), "every byte written once")
        check(slot(await host.state(), 1)["version"] == "0.9.0", "slot 1 holds 0.9.0")

    async def does_not_boot():
        img = images["0.9.0"]
        await host.vf("FailNextBoot", "s", ["crash"])
        await host.smp(2, 1, 0, {"hash": bytes.fromhex(img["hash"]), "confirm": False})
        await host.reset_to("0.8.8")
        images_now = await host.state()
        s0, s1 = slot(images_now, 0), slot(images_now, 1)
        check(s0["version"] == "0.8.8" and s0["confirmed"] and s1["version"] == "0.9.0" and not s1["pending"],
              "0.9.0 did not boot: 0.8.8 runs, confirmed; 0.9.0 sits in slot 1")
        check(await host.lua("print(frame.FIRMWARE_VERSION)") == "0.8.8", "Lua: 0.8.8")
        _, rsp = await host.smp(2, 1, 0, {"confirm": True})
        check(slot(rsp["images"], 0)["confirmed"], "confirm without hash: the running image (already confirmed)")

    async def silent():
        img = images["0.9.1"]
        await host.upload(img)
        await host.vf("SilenceNextImage", "b", [True])
        await host.smp(2, 1, 0, {"hash": bytes.fromhex(img["hash"]), "confirm": False})
        await host.reset_to("0.9.1")
        check(not slot(await host.state(), 0)["confirmed"], "0.9.1 runs unconfirmed; SMP answers")
        try:
            await host.lua("print(1)", timeout=1.0)
            raise Failed("the silent image's Lua answered")
        except Failed as e:
            check("no Lua answer" in str(e), "its Lua does not answer")
        await host.reset_to("0.8.8")
        check(await host.lua("print(frame.FIRMWARE_VERSION)") == "0.8.8", "reverted: Lua answers again")

    async def self_confirm():
        img = images["0.9.2"]
        await host.vf("SetSelfConfirm", "b", [True])
        await host.upload(img)
        await host.smp(2, 1, 0, {"hash": bytes.fromhex(img["hash"]), "confirm": False})
        await host.reset_to("0.9.2")
        images_now = await host.state()
        s0, s1 = slot(images_now, 0), slot(images_now, 1)
        check(s0["version"] == "0.9.2" and s0["confirmed"] and not s1["confirmed"],
              "0.9.2 confirmed itself at boot")
        await host.vf("SetSelfConfirm", "b", [False])
        await host.reset_to("0.9.2")

    async def permanent():
        img = images["0.9.1"]       # uploaded again: a new file for slot 1, of normal behaviour
        await host.upload(img)
        _, rsp = await host.smp(2, 1, 0, {"hash": bytes.fromhex(img["hash"]), "confirm": True})
        s1 = slot(rsp["images"], 1)
        check(s1["pending"] and s1["permanent"], "confirm with slot 1's hash: pending, permanent")
        _, rsp = await host.smp(2, 1, 0, {"confirm": True})
        check(rsp == {"err": {"group": 1, "rc": 28}}, f"confirming the running one meanwhile: err 28 {rsp}")
        await host.reset_to("0.9.1")
        images_now = await host.state()
        check(slot(images_now, 0)["confirmed"] and not slot(images_now, 1)["confirmed"],
              "0.9.1 runs confirmed; nothing to revert to")

    async def errors():
        _, rsp = await host.smp(2, 1, 0, {"confirm": False}, version=0)
        check(rsp == {"rc": 3}, f"test without hash, v1: rc 3 {rsp}")
        _, rsp = await host.smp(2, 1, 0, {"confirm": False})
        check(rsp == {"err": {"group": 1, "rc": 24}}, f"the same, v2: err 24 {rsp}")
        _, rsp = await host.smp(2, 1, 0, {"hash": bytes(32), "confirm": False})
        check(rsp == {"err": {"group": 1, "rc": 8}}, f"unknown hash: err 8 {rsp}")
        _, rsp = await host.smp(2, 1, 1, {}, raw=b"\xff\x00")
        check(rsp == {"rc": 3}, f"not CBOR: rc 3 {rsp}")
        img = images["0.8.9"]       # not in a slot now: a new session
        data = open(img["path"], "rb").read()
        first = {"image": 0, "len": len(data), "off": 0, "sha": bytes.fromhex(img["sha256"]), "data": data[:CHUNK]}
        _, rsp = await host.smp(2, 1, 1, first)
        _, rsp2 = await host.smp(2, 1, 1, {"off": rsp["off"] + 100, "data": data[:CHUNK]})
        check(rsp2 == {"off": CHUNK}, f"data at a wrong offset: answered the offset wanted {rsp2}")

    for name, coro in (("garbage in, well-formed answers out", garbage(tmp)),
                       ("pair, SMP and audio characteristics", pair),
                       ("speaker echo in the microphone, aec, SetEchoCancel", echo),
                       ("echo, parameters, state", basics),
                       ("upload, test, reset, confirm", update),
                       ("refused while unconfirmed, reverted at reset", refused_and_reverted),
                       ("link drop mid-upload, resume", drop_and_resume), ("image that does not boot", does_not_boot),
                       ("image whose Lua is silent", silent), ("self-confirming firmware", self_confirm),
                       ("permanent swap", permanent),
                       ("errors in v1 and v2", errors)):
        await fc.step(name, coro if asyncio.iscoroutine(coro) else coro())
    bus.disconnect()


def main():
    t_start = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="smp-check.")
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
        procs.append(fc.start(tmp, env, "bz", [PY, os.path.join(HERE, "bzworld.py"), "-q", "--auto-enable",
                                               "--scan-interval", "1", "-a", HOST, "-a", HALO,
                                               "-a", "00:00:00:00:00:03"]))
        procs.append(fc.start(tmp, env, "halo", [PY, os.path.join(HERE, "virtual_frame.py"), "--adapter", "hci1",
                                                 "--halo", "--mtu", str(MTU), "--smp-reset-seconds", "0.5",
                                                 "--fs", os.path.join(tmp, "flash"),
                                                 "--record", os.path.join(tmp, "halo.jsonl")]))
        try:
            asyncio.run(run(tmp))
            status = 0
        except (Failed, DBusFail, asyncio.TimeoutError, subprocess.CalledProcessError) as e:
            print(f"FAIL {fc.RESULTS[-1][0] if fc.RESULTS else '?'}: {e}", flush=True)
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        os.kill(bus_pid, signal.SIGTERM)
        for name in ("bz", "halo"):
            path = os.path.join(tmp, name + ".err")
            text = open(path).read() if os.path.exists(path) else ""
            if "Traceback" in text or (status and text):
                print(f"--- {name} stderr:\n{text}")
                status = status or ("Traceback" in text)
    passed = sum(1 for r in fc.RESULTS if r[1])
    print(f"\nsmp_selfcheck: {passed}/{len(fc.RESULTS)} steps passed in {time.monotonic() - t_start:.1f} s")
    for name, good, took, why in fc.RESULTS:
        print(f"  {'PASS' if good else 'FAIL'}  {took:6.2f} s  {name}{'  ' + why if why else ''}")
    if status == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"logs kept in {tmp}")
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
