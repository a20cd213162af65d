#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# monocle_host: a small host-side tool for the test world (not part of glassd). As a BLE central
# through BlueZ it connects to a (virtual) Monocle, enters the raw REPL, uploads files and runs
# commands, and talks on the data channel. Its `demo` runs glassd's device scripts end to end on
# a virtual Monocle: upload (stamped main.py + glassd_new), soft reboot, welcome screen, tap,
# recorded audio, answer text with ack: flow control, photo, cancel, re-entrant run().
#
#   monocle_host.py --adapter hci0 --address 00:00:00:00:00:02 exec "print(1)"
#   monocle_host.py --adapter hci0 --address 00:00:00:00:00:02 upload FILE...
#   monocle_host.py --adapter hci0 --address 00:00:00:00:00:02 demo [--scripts DIR] [--vm hci2]

import argparse
import asyncio
import binascii
import hashlib
import math
import os
import struct
import sys
import tempfile
import wave

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

SERIAL_RX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
SERIAL_TX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
DATA_RX = "e5700002-7bac-429a-b4ce-57ff900f479d"
DATA_TX = "e5700003-7bac-429a-b4ce-57ff900f479d"
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "Sources", "Monocle", "DeviceScripts")
ORDER = ["glassd_ui.py", "glassd_link.py", "glassd_media.py", "main.py"]


class Central:
    def __init__(self, adapter, address):
        self.device = f"/org/bluez/{adapter}/dev_{address.replace(':', '_')}"
        self.serial = bytearray()
        self.data = asyncio.Queue()
        self.chars = {}
        self.serial_event = asyncio.Event()

    async def call(self, dest, path, iface, member, sig="", body=(), timeout=15):
        r = await asyncio.wait_for(self.bus.call(Message(
            destination=dest, path=path, interface=iface, member=member, signature=sig,
            body=list(body))), timeout)
        if r.message_type == MessageType.ERROR:
            raise RuntimeError(f"{member}: {r.error_name} {r.body}")
        return r.body

    async def connect(self):
        self.bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
        await self.call("org.bluez", self.device, "org.bluez.Device1", "Connect")
        for _ in range(100):
            objs = (await self.call("org.bluez", "/", "org.freedesktop.DBus.ObjectManager",
                                    "GetManagedObjects"))[0]
            for path, ifaces in objs.items():
                c = ifaces.get("org.bluez.GattCharacteristic1")
                if c and path.startswith(self.device + "/"):
                    self.chars[c["UUID"].value] = path
            if len(self.chars) >= 4:
                break
            await asyncio.sleep(0.05)
        self.bus.add_message_handler(self.on_message)
        await self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                        "AddMatch", "s", ["type='signal',sender='org.bluez',"
                                          "interface='org.freedesktop.DBus.Properties'"])
        for uuid in (SERIAL_TX, DATA_TX):
            await self.call("org.bluez", self.chars[uuid], "org.bluez.GattCharacteristic1",
                            "StartNotify")

    def on_message(self, msg):
        if msg.member != "PropertiesChanged" or msg.body[0] != "org.bluez.GattCharacteristic1":
            return
        value = msg.body[1].get("Value")
        if value is None:
            return
        if msg.path == self.chars.get(SERIAL_TX):
            self.serial += value.value
            self.serial_event.set()
        elif msg.path == self.chars.get(DATA_TX):
            self.data.put_nowait(bytes(value.value))

    async def write(self, uuid, data):
        await self.call("org.bluez", self.chars[uuid], "org.bluez.GattCharacteristic1",
                        "WriteValue", "aya{sv}", [bytes(data), {"type": Variant("s", "command")}])

    async def serial_write(self, data):
        for i in range(0, len(data), 253):
            await self.write(SERIAL_RX, data[i:i + 253])

    async def wait_serial(self, suffix, start, timeout=10):
        end = asyncio.get_running_loop().time() + timeout
        while not bytes(self.serial[start:]).endswith(suffix):
            self.serial_event.clear()
            left = end - asyncio.get_running_loop().time()
            if left <= 0:
                raise TimeoutError(f"waiting for {suffix!r}: got {bytes(self.serial[start:])!r}")
            try:
                await asyncio.wait_for(self.serial_event.wait(), left)
            except asyncio.TimeoutError:
                pass
        return bytes(self.serial[start:])

    async def raw_repl(self):
        await self.write(SERIAL_RX, b"\x03")
        await asyncio.sleep(0.2)
        mark = len(self.serial)
        await self.write(SERIAL_RX, b"\x03\x01")
        await self.wait_serial(b"raw REPL; CTRL-B to exit\r\n>", mark)

    async def exec(self, code, timeout=10):
        """Runs code in the raw REPL; returns (stdout, traceback) as text."""
        mark = len(self.serial)
        await self.serial_write(code.encode() + b"\x04")
        reply = await self.wait_serial(b"\x04>", mark, timeout)
        body = reply[reply.index(b"OK") + 2:].split(b"\x04")
        return body[0].decode(errors="replace"), body[1].decode(errors="replace")

    async def upload(self, name, content):
        out, err = await self.exec(f"f=open({name!r},'wb')")
        for i in range(0, len(content), 150):
            b64 = binascii.b2a_base64(content[i:i + 150], newline=False).decode()
            out, err = await self.exec(f"f.write(__import__('ubinascii').a2b_base64('{b64}'))")
            if err:
                raise RuntimeError(f"upload {name}: {err}")
        await self.exec("f.close();del f")


def vm_path(adapter):
    return f"/org/glassd/vmonocle/{adapter}"


async def demo(c, args):
    vm = f"org.glassd.test.VirtualMonocle.{args.vm}"

    async def vmcall(member, sig="", body=()):
        return await c.call(vm, vm_path(args.vm), "org.glassd.test.VirtualMonocle1", member, sig,
                            body)

    async def display():
        return (await vmcall("DisplayText"))[0]

    async def expect_display(pred, what, timeout=5):
        for _ in range(int(timeout / 0.05)):
            text = await display()
            if pred(text):
                print(f"ok - {what}:\n    " + text.replace("\n", "\n    "))
                return text
            await asyncio.sleep(0.05)
        raise SystemExit(f"FAILED: {what}: display shows {await display()!r}")

    async def expect_data(prefix, timeout=5):
        while True:
            msg = await asyncio.wait_for(c.data.get(), timeout)
            if msg.startswith(prefix):
                return msg

    changed = []
    c.bus.add_message_handler(lambda m: changed.append(m.body[0])
                              if m.member == "DisplayChanged" else None)
    await c.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                 "AddMatch", "s", ["type='signal',interface='org.glassd.test.VirtualMonocle1'"])

    await c.raw_repl()
    files = [(n, open(os.path.join(args.scripts, n), "rb").read()) for n in ORDER]
    h = hashlib.sha256()
    for n, content in files:
        h.update(n.encode() + b"\0")
        h.update(content + b"\0")
    version = h.hexdigest()
    for n, content in files:
        if n == "main.py":
            content = f'GLASSD_VERSION = "{version}"\n'.encode() + content
        await c.upload(n, content)
    await c.exec("open('glassd_new','w').close()")
    print(f"ok - uploaded {sum(len(x) for _, x in files)} bytes of scripts, version {version[:12]}")
    mark = len(c.serial)
    await c.write(SERIAL_RX, b"\x04")
    await c.wait_serial(b"MPY: soft reboot\r\n", mark)
    await expect_data(b"rdy:")
    print("ok - soft reboot, main.py runs, rdy: received")
    await expect_display(lambda t: "glassd" in t and "Tap" in t, "welcome screen")

    wav = os.path.join(tempfile.mkdtemp(), "q.wav")
    with wave.open(wav, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(b"".join(struct.pack("<h", int(12000 * math.sin(i / 7)))
                               for i in range(16000 * 3)))
    await vmcall("FeedAudio", "s", [wav])
    await vmcall("Tap")
    start = await expect_data(b"ast:")
    assert start == b"ast:16,8", f"the recording's format: {start!r}"
    await expect_display(lambda t: "Listening" in t, "recording indicator")
    samples = bytearray()
    await asyncio.sleep(1.5)
    await c.write(DATA_RX, b"stp:")
    while True:
        msg = await asyncio.wait_for(c.data.get(), 5)
        if msg.startswith(b"dat:"):
            samples += msg[4:]
        elif msg.startswith(b"aen:"):
            break
    print(f"ok - {len(samples)} samples (16 kHz, 8-bit, as ast: said) streamed, stp: stopped it, aen: received")
    await expect_display(lambda t: "Waiting" in t, "waiting prompt")

    # The answer, with at most 4 messages in flight (ack:).
    answer = ("The tallest mountain on Earth is Mount Everest, 8849 metres above sea level, "
              "on the border of Nepal and China. Its summit was first reached in 1953.")
    chunks = [answer[i:i + 40] for i in range(0, len(answer), 40)]
    sent = acked = 0
    for chunk in chunks:
        while sent - acked >= 4:
            msg = await expect_data(b"ack:")
            acked = int(msg[4:])
        await c.write(DATA_RX, b"res:" + chunk.encode())
        sent += 1
    while acked < sent:
        acked = int((await expect_data(b"ack:"))[4:])
    await expect_display(lambda t: "1953." in t and "Tap to speak" in t,
                         "answer word-wrapped and scrolled, tap prompt")
    await c.write(DATA_RX, b"err:No network")
    await expect_display(lambda t: "[red] No network" in t, "err: in red")
    await c.write(DATA_RX, b"pin:abc")
    print("ok - pin: -> " + (await expect_data(b"pon:")).decode())

    await vmcall("Hold", "d", [1.6])
    await expect_data(b"ist:")
    n = 0
    while True:
        msg = await asyncio.wait_for(c.data.get(), 5)
        if msg.startswith(b"idt:"):
            n += len(msg) - 4
        elif msg.startswith(b"ien:"):
            break
    print(f"ok - hold: photo of {n} JPEG bytes, then ien:")
    await asyncio.sleep(0.5)
    await vmcall("Tap")
    await expect_data(b"aen:")
    await c.write(DATA_RX, b"ick:")
    await expect_display(lambda t: "Tap to speak" in t, "ick: back to waiting for a tap")
    await vmcall("Tap")
    start = await expect_data(b"ast:")
    assert start == b"ast:16,8", f"the recording's format: {start!r}"
    await vmcall("Tap")
    await expect_data(b"aen:")
    await vmcall("Tap")
    await expect_data(b"can:")
    print("ok - a tap while the answer is pending: can:")
    await vmcall("SetBattery", "y", [55])

    # Ctrl-C into the raw REPL, the globals are there, run() again.
    await c.write(SERIAL_RX, b"\x03")
    await asyncio.sleep(0.3)
    await c.raw_repl()
    out, err = await c.exec("print(GLASSD_VERSION)")
    assert out.strip() == version, (out, err)
    print("ok - Ctrl-C: GLASSD_VERSION readable in the raw REPL")
    mark = len(c.serial)
    await c.serial_write(b"run()\x04")
    await expect_data(b"rdy:")
    print("ok - run() again from the raw REPL: rdy:")
    await expect_display(lambda t: "Connected" in t or "Tap to speak" in t, "resumed screen")
    bat = await expect_data(b"bat:")
    print(f"ok - {bat.decode()} after run()")
    stats = (await vmcall("Stats"))[0]
    print("ok - stats: " + ", ".join(f"{k}={v.value}" for k, v in sorted(stats.items())))
    if stats["callbacks_dropped"].value:
        raise SystemExit("FAILED: data messages were dropped")
    print(f"ok - {len(changed)} DisplayChanged signals")
    png = os.path.join(tempfile.mkdtemp(), "display.png")
    await vmcall("DisplayPNG", "s", [png])
    print(f"ok - display rendered to {png}")


async def main():
    p = argparse.ArgumentParser(description="talk to a (virtual) Monocle as a BLE central")
    p.add_argument("--adapter", default="hci0")
    p.add_argument("--address", required=True)
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("exec")
    e.add_argument("code")
    u = sub.add_parser("upload")
    u.add_argument("files", nargs="+")
    d = sub.add_parser("demo")
    d.add_argument("--scripts", default=SCRIPTS)
    d.add_argument("--vm", default="hci2", help="adapter of the virtual Monocle (control API)")
    args = p.parse_args()
    c = Central(args.adapter, args.address)
    await c.connect()
    if args.cmd == "exec":
        await c.raw_repl()
        out, err = await c.exec(args.code)
        sys.stdout.write(out + err)
    elif args.cmd == "upload":
        await c.raw_repl()
        for f in args.files:
            await c.upload(os.path.basename(f), open(f, "rb").read())
    else:
        await demo(c, args)
    c.bus.disconnect()


if __name__ == "__main__":
    asyncio.run(main())
