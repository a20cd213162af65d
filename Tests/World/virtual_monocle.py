#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# virtual_monocle: the glassd test world's Brilliant Labs Monocle.
#
# A BLE peripheral made only with the standard BlueZ peripheral API
# (org.bluez.GattManager1.RegisterApplication and
# org.bluez.LEAdvertisingManager1.RegisterAdvertisement), so it runs against
# bzworld.py as well as a real bluetoothd. Test-only; glassd never links it.
#
# GATT (monocle-protocol.md §1.1): serial service 6e400001-… (RX 6e400002-…
# write/write-without-response, TX 6e400003-… notify) and data service
# e5700001-… (RX e5700002-…, TX e5700003-…). Writes longer than MTU-3 are
# rejected with org.bluez.Error.InvalidValueLength; accepted ones are, with
# --record, appended to FILE as one JSON line, as are the data channel's
# notifications and each display frame, all stamped with time.monotonic().
#
# Behind the GATT services runs the Monocle's MicroPython: a real MicroPython
# (the unix port, `micropython` of the venv) running vmonocle/firmware.py, which
# emulates the firmware's REPL and the Monocle modules (vmonocle/*.py). Serial
# RX feeds its REPL through the 1024-byte ring, its stdout goes out as serial TX
# notifications, data RX messages go to bluetooth.receive_callback through
# micropython.schedule, bluetooth.send becomes data TX notifications. Tests drive
# it through org.glassd.test.VirtualMonocle1 (see Tests/World/README.md).
#
# With --link-timing or SetLinkTiming, writes reach it and notifications leave it no faster
# than a BLE connection would carry them (linktiming.py); off by default.
#
# It follows org.bluez: when bluetoothd (or bzworld) goes away and comes back,
# or the adapter is removed and re-added, it registers again. It prints
# "READY" each time both registrations have succeeded. Exits 0 on
# SIGTERM/SIGINT after unregistering.

import argparse
import asyncio
import io
import json
import os
import select
import shutil
import signal
import struct
import sys
import tempfile
import time
import wave
from collections import deque

from worldloop import run_until_signalled  # beside this file
import vdfu  # beside this file: the bootloader (DFU target mode)
import linktiming  # beside this file: the connection's timing (off unless set)
import linkdrops  # beside this file: drops at points of the device's own progress
import gatt_objects  # beside this file: what the peripherals export to BlueZ
from linktiming import IN, OUT

from dbus_fast import BusType, DBusError, Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, method, signal as dbus_signal

SERIAL_SERVICE = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
SERIAL_RX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
SERIAL_TX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
DATA_SERVICE = "e5700001-7bac-429a-b4ce-57ff900f479d"
DATA_RX = "e5700002-7bac-429a-b4ce-57ff900f479d"
DATA_TX = "e5700003-7bac-429a-b4ce-57ff900f479d"

BLUEZ = "org.bluez"
ROOT = "/org/glassd/vmonocle"
APP_PATH = ROOT + "/app"
ADV_PATH = ROOT + "/adv0"
# The FPGA's SPI flash area (update.Fpga), in the --fs folder; b"done" at FPGA_DONE_AT makes a
# power-on boot the FPGA from it (monocle-protocol.md §6).
FPGA_FLASH = "fpga_flash.bin"
FPGA_DONE_AT = 0x6C80E
FPGA_VERSION_MARKER = b"GLASSD-FPGA-VERSION:"

CONTROL_IFACE = "org.glassd.test.VirtualMonocle1"
VMDIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vmonocle")
RING_SIZE = 1024            # the firmware's serial RX ring
SIGINT_AFTER = 0.5          # s a Ctrl-C may wait unread while user code runs before a SIGINT
SIGINT_SETTLED = 2.0        # s after which an unanswered SIGINT is taken as raised
COLOUR_NAMES = {0xFFFFFF: None, 0xAD2323: "red", 0xFFEE33: "yellow", 0x04D718: "green",
                0x0000FF: "blue", 0x00FFFF: "cyan", 0xFF00FF: "magenta", 0x888888: "gray",
                0x000000: "black"}

NOTIFY_YIELD_EVERY = 8      # dbus-fast drops the connection on long sync bursts
CALL_TIMEOUT = 10.0


def warn(text):
    sys.stderr.write(f"virtual_monocle: {text}\n")
    sys.stderr.flush()


class GattCharacteristic(gatt_objects.GattCharacteristic):
    """RX (role "rx": written by the central) or TX (role "tx": notifies)."""

    def __init__(self, monocle, service_key, service_path, uuid, role):
        super().__init__(service_path, uuid)
        self.vm_monocle = monocle
        self.vm_service_key = service_key
        self.vm_role = role
        self.vm_outbox = deque()
        self.vm_wake = asyncio.Event()
        self.vm_empty = asyncio.Event()     # the outbox is empty (every queued notification sent)
        self.vm_empty.set()
        self.vm_task = None
        self.vm_session = 0     # notify sessions: a timed packet of an ended one is not sent

    def flags(self):
        return ["write", "write-without-response"] if self.vm_role == "rx" else ["notify"]

    def mtu(self):
        return self.vm_monocle.mtu

    # --- methods
    @method()
    def WriteValue(self, value: "ay", options: "a{sv}"):
        if self.vm_role != "rx":
            raise DBusError("org.bluez.Error.NotPermitted", "Write not permitted")
        self.check_length(value)
        kind = options.get("type")
        kind = kind.value if isinstance(kind, Variant) else "request"
        value = bytes(value)
        # At its connection event under the link timing model (a write with response never gets
        # here then: Monocle.timed_request takes it, to answer it later).
        self.vm_monocle.link.send(IN, lambda: self.vm_monocle.on_write(self.vm_service_key, value, kind))

    @method()
    def StartNotify(self):
        if self.vm_role != "tx":
            raise DBusError("org.bluez.Error.NotSupported", "Notify not supported")
        if self.set_notifying(True):
            self.vm_monocle.notify_changed()

    @method()
    def StopNotify(self):
        if self.vm_role != "tx":
            raise DBusError("org.bluez.Error.NotSupported", "Notify not supported")
        self.stop_notifying()

    # --- notification path
    def stop_notifying(self, signal_it=True):
        self.vm_outbox.clear()
        if self.gatt_notifying:
            self.vm_session += 1
            self.gatt_notifying = False
            if signal_it:
                self.emit_properties_changed({"Notifying": False})
            self.vm_monocle.notify_changed()

    def notify(self, data: bytes):
        """Queue data as notifications of at most MTU-3 bytes each."""
        if not self.gatt_notifying:
            return
        step = max(1, self.vm_monocle.mtu - 3)
        link = self.vm_monocle.link
        if link.on:     # each packet at its connection event
            for i in range(0, len(data), step):
                link.send(OUT, lambda value=data[i:i + step], session=self.vm_session:
                          self._timed_emit(value, session))
            return
        for i in range(0, len(data), step):
            self.vm_outbox.append(data[i:i + step])
        self.vm_empty.clear()
        if self.vm_task is None or self.vm_task.done():
            self.vm_task = asyncio.get_running_loop().create_task(self._drain())
        self.vm_wake.set()

    def _timed_emit(self, value, session):
        if self.gatt_notifying and session == self.vm_session:
            self.gatt_value = value
            self.emit_properties_changed({"Value": value})

    async def _drain(self):
        sent = 0
        while True:
            await self.vm_wake.wait()
            self.vm_wake.clear()
            while self.vm_outbox:
                if not self.gatt_notifying:
                    self.vm_outbox.clear()
                    break
                await self.vm_monocle.until_writable()
                if not self.gatt_notifying:
                    continue
                self.gatt_value = self.vm_outbox.popleft()
                self.emit_properties_changed({"Value": self.gatt_value})
                sent += 1
                if sent % NOTIFY_YIELD_EVERY == 0:
                    await asyncio.sleep(0)
                    await self.vm_monocle.writer_drained()
            if not self.vm_outbox:
                self.vm_empty.set()


class Advertisement(gatt_objects.Advertisement):
    def __init__(self, monocle):
        super().__init__()
        self.vm_monocle = monocle

    def local_name(self):
        return self.vm_monocle.local_name

    def service_uuids(self):
        return [SERIAL_SERVICE]

    def tx_power(self):
        return self.vm_monocle.tx_power

    def released(self):
        self.vm_monocle.on_advertisement_released()


class Firmware:
    """The MicroPython process behind the services: one process per boot (power-on, soft
    reboot, safe mode). Frames with vmonocle/_vmhost.py: tag byte, u32 LE length, payload."""

    def __init__(self, monocle, args):
        self.monocle = monocle
        self.micropython = args.micropython
        self.fs = args.fs
        self.fs_is_temporary = args.fs_is_temporary
        self.state_dir = tempfile.mkdtemp(prefix="vmonocle-state.")
        self.env = dict(os.environ, MICROPYPATH="::.frozen", VMONOCLE_MTU=str(args.mtu),
                        VMONOCLE_FW_VERSION=args.firmware_version,
                        VMONOCLE_FPGA_VERSION=args.fpga_version, VMONOCLE_STATE=self.state_dir,
                        VMONOCLE_FPGA_FLASH=os.path.join(self.fs, FPGA_FLASH))
        self.fpga_internal = args.fpga_version    # the image in the FPGA's own flash
        self.battery = args.battery
        self.audio = None            # (rate, s16le mono bytes)
        self.image = None
        self.proc = None
        self.generation = 0
        self.ring_used = 0
        self.next_boot = None        # (boot, mode, reset cause) chosen before the process ends
        self.carry = None            # serial ring kept over a soft reboot (bytearray)
        self.user_code = False
        self.sent_serial = self.got_serial = 0
        self.ctrl_c = deque()
        self.sigint_out = False
        self.sigint_time = 0.0
        self.frame = []
        self.frames = 0
        self.mac = "00:00:00:00:00:00"
        self.stats = {"ring_dropped": 0, "safe_mode": 0, "callbacks_dropped": 0,
                      "touch_dropped": 0, "soft_reboots": 0, "repl_commands": 0,
                      "serial_bytes_in": 0, "data_messages_in": 0, "power_cycles": 0,
                      "resets": 0, "dfu_requests": 0, "boots": 0, "sigints": 0,
                      "dfu_entries": 0, "dfu_objects_created": 0, "dfu_bytes_received": 0,
                      "dfu_crc_requests": 0, "dfu_executes": 0, "dfu_boots": 0,
                      "fpga_erases": 0, "fpga_bytes_written": 0, "fpga_reads": 0,
                      "injected_frames": 0}
        self.task = None
        self.stopping = False

    # --- process
    def start(self, boot="power", mode="friendly", cause="POWERON"):
        self.task = asyncio.get_running_loop().create_task(self._run(boot, mode, cause))

    async def _run(self, boot, mode, cause):
        while not self.stopping:
            self.generation += 1
            gen = self.generation
            self.ring_used = 0
            self.stats["boots"] += 1
            if boot != "soft":      # a chip reset configures the FPGA again
                self.env["VMONOCLE_FPGA_VERSION"] = self.fpga_boot_version()
            r, w = os.pipe()
            env = dict(self.env, VMONOCLE_BOOT=boot, VMONOCLE_MODE=mode, VMONOCLE_CTL_FD=str(w),
                       VMONOCLE_RESET_CAUSE=cause, VMONOCLE_MAC=self.mac)
            try:
                self.proc = await asyncio.create_subprocess_exec(
                    self.micropython, os.path.join(VMDIR, "firmware.py"), cwd=self.fs, env=env,
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                    pass_fds=(w,), start_new_session=True)
            finally:
                os.close(w)
            loop = asyncio.get_running_loop()
            ctl = asyncio.StreamReader()
            transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(ctl), os.fdopen(r, "rb", 0))
            self.next_boot = None
            self.user_code = False       # the interpreter runs user code (events run/idle)
            self.sent_serial = 0         # serial bytes sent in S frames / taken in (G frames)
            self.got_serial = 0
            self.ctrl_c = deque()        # (sent_serial after a frame with 0x03, deadline)
            self.sigint_out = False
            self.send(b"N", self.notify_flags())
            self.send(b"B", bytes([self.battery]))
            if self.audio is not None:
                self.send(b"A", struct.pack("<I", self.audio[0]) + self.audio[1])
            self.send(b"I", self.image_bytes())
            self.send(b"Z")
            if self.carry:
                self.ring_used = len(self.carry)
                self.send(b"K", bytes(self.carry))
            self.carry = None
            readers = [loop.create_task(self._stdout(self.proc.stdout)),
                       loop.create_task(self._control(ctl, gen))]
            watchdog = loop.create_task(self._interrupter(self.proc))
            await self.proc.wait()
            watchdog.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
            transport.close()
            if self.stopping:
                return
            if self.next_boot is None:
                warn(f"micropython exited ({self.proc.returncode}); powering on again")
                await asyncio.sleep(0.5)
                self.next_boot = ("power", "friendly", "CRASHED")
            boot, mode, cause = self.next_boot
            if boot == "halt":      # the bootloader runs instead (DFU mode); start() resumes
                self.proc = None
                return

    async def _interrupter(self, proc):
        """Ctrl-C for code that never calls into a Monocle module (so never reads the link): when
        a Ctrl-C waits unread for SIGINT_AFTER while user code runs, one SIGINT (the unix port
        raises KeyboardInterrupt), and frame U so that the Ctrl-C does not count twice. Never a
        second SIGINT before the interpreter took in more serial bytes: the unix port exits on
        a second SIGINT while the first is pending (SIGINT_SETTLED: by then a running VM has
        long raised it; code that caught it and spins on gets the next one)."""
        while proc.returncode is None:
            await asyncio.sleep(0.1)
            now = asyncio.get_running_loop().time()
            if (self.ctrl_c and self.user_code and self.ctrl_c[0][1] <= now
                    and (not self.sigint_out or now - self.sigint_time > SIGINT_SETTLED)):
                self.ctrl_c.popleft()
                self.sigint_out = True
                self.sigint_time = now
                self.stats["sigints"] += 1
                proc.send_signal(signal.SIGINT)
                self.send(b"U")

    def send(self, tag: bytes, payload: bytes = b""):
        proc = self.proc
        if proc is None or proc.returncode is not None or proc.stdin.is_closing():
            return
        proc.stdin.write(tag + struct.pack("<I", len(payload)) + payload)

    def restart(self, boot, mode="friendly", cause="POWERON"):
        """Ends the running interpreter; the supervisor starts the next boot."""
        self.next_boot = (boot, mode, cause)
        self.carry = None
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()

    async def halt(self):
        """Ends the interpreter for good (until start()): the chip runs the bootloader."""
        if self.task is None or self.task.done():
            return
        self.restart("halt")
        try:
            await asyncio.wait_for(self.task, 3)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            pass

    def fpga_boot_version(self):
        """What the FPGA reports after a chip reset: with b'done' at 0x6C80E of the SPI flash
        it boots the image there (its version is the 12 ASCII characters after
        FPGA_VERSION_MARKER; an image without them does not configure the FPGA, whose registers
        then read 0xFF: ""), otherwise the image in its internal flash."""
        try:
            with open(os.path.join(self.fs, FPGA_FLASH), "rb") as f:
                flash = f.read(FPGA_DONE_AT + 4)
        except OSError:
            flash = b""
        if flash[FPGA_DONE_AT:FPGA_DONE_AT + 4] != b"done":
            return self.fpga_internal
        at = flash.find(FPGA_VERSION_MARKER, 0, FPGA_DONE_AT)
        version = flash[at + len(FPGA_VERSION_MARKER):at + len(FPGA_VERSION_MARKER) + 12]
        if at < 0 or len(version) != 12 or not all(0x20 <= b < 0x7F for b in version):
            return ""
        return version.decode("ascii")

    def set_version(self, version):
        self.env["VMONOCLE_FW_VERSION"] = version

    async def stop(self):
        self.stopping = True
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
        if self.task is not None:
            try:
                await asyncio.wait_for(self.task, 3)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
        shutil.rmtree(self.state_dir, ignore_errors=True)
        if self.fs_is_temporary:
            shutil.rmtree(self.fs, ignore_errors=True)

    async def _stdout(self, reader):
        while True:
            data = await reader.read(4096)
            if not data:
                return
            self.monocle.serial_out(data.replace(b"\n", b"\r\n"))

    async def _control(self, reader, gen):
        while True:
            try:
                hdr = await reader.readexactly(5)
                tag, n = struct.unpack("<BI", hdr)
                data = await reader.readexactly(n) if n else b""
            except asyncio.IncompleteReadError:
                return
            if gen != self.generation:
                continue
            try:
                self._event(chr(tag), data)
            except Exception as e:  # a test tool: keep running, say why
                warn(f"control frame {chr(tag)!r}: {e!r}")

    def _event(self, tag, data):
        if tag == "C":
            self.ring_used = max(0, self.ring_used - struct.unpack("<I", data)[0])
        elif tag == "G":
            self.got_serial += struct.unpack("<I", data)[0]
            self.sigint_out = False
            while self.ctrl_c and self.ctrl_c[0][0] <= self.got_serial:
                self.ctrl_c.popleft()
        elif tag == "D":
            self.monocle.data_out(data)
        elif tag == "F":
            self.frame = json.loads(data)
            self.frames += 1
            self.monocle.display_changed(self.display_text())
        elif tag == "E":
            name = data.decode()
            if name in ("run", "idle"):
                self.user_code = name == "run"
            key = {"cbdrop": "callbacks_dropped", "touchdrop": "touch_dropped",
                   "command": "repl_commands", "dfu": "dfu_requests",
                   "fpga_erase": "fpga_erases", "fpga_read": "fpga_reads"}.get(name)
            if key:
                self.stats[key] += 1
            if name == "command":
                self.monocle.drops.command()
            elif name == "fpga_erase":
                self.monocle.drops.fpga_erased()
            elif name == "fpga_read":
                self.monocle.drops.fpga_read()
            elif name.startswith("fpga_write "):
                self.stats["fpga_bytes_written"] += int(name.split()[1])
                self.monocle.drops.fpga_written(int(name.split()[1]))
        elif tag == "R":
            self.stats["soft_reboots"] += 1
            mode, _, unread = data.partition(b"\n")
            self.next_boot = ("soft", mode.decode(), "SOFTWARE_RESET")
            self.carry = bytearray(unread)
        elif tag == "Y":      # update.micropython(): reset into the bootloader
            asyncio.get_running_loop().create_task(self.monocle.enter_dfu())
        elif tag == "X":
            self.stats["resets"] += 1
            asyncio.get_running_loop().create_task(
                self.monocle.power_cycle(cause="SOFTWARE_RESET", count=False))

    # --- inputs
    def notify_flags(self):
        return bytes([int(self.monocle.notifying("serial")), int(self.monocle.notifying("data"))])

    def serial_in(self, value: bytes):
        self.stats["serial_bytes_in"] += len(value)
        if 0x1C in value:
            self.stats["safe_mode"] += 1
            asyncio.get_running_loop().create_task(self.monocle.power_cycle(safe=True))
            return
        if self.carry is not None:      # between two boots: the ring keeps them
            room = max(0, RING_SIZE - len(self.carry))
            self.stats["ring_dropped"] += max(0, len(value) - room)
            self.carry += value[:room]
            return
        room = max(0, RING_SIZE - self.ring_used)
        if len(value) > room:
            self.stats["ring_dropped"] += len(value) - room
            value = value[:room]
        if value:
            self.ring_used += len(value)
            self.sent_serial += len(value)
            self.send(b"S", value)
            if 3 in value:
                self.ctrl_c.append((self.sent_serial,
                                    asyncio.get_running_loop().time() + SIGINT_AFTER))

    def data_in(self, value: bytes):
        self.stats["data_messages_in"] += 1
        self.send(b"D", value)

    def touch(self, seconds, button="A"):
        self.send(b"T", struct.pack("<I", int(seconds * 1000)) + button.encode())

    def set_battery(self, level):
        self.battery = max(0, min(100, level))
        self.send(b"B", bytes([self.battery]))

    def feed_audio(self, path):
        with wave.open(path, "rb") as w:
            rate, width, channels = w.getframerate(), w.getsampwidth(), w.getnchannels()
            raw = w.readframes(w.getnframes())
        frame = width * channels
        out = bytearray()
        for i in range(0, len(raw) - frame + 1, frame):
            if width == 1:
                v = (raw[i] - 128) << 8
                out += struct.pack("<h", v)
            else:   # the two most significant bytes of the first channel
                out += raw[i + width - 2:i + width]
        if rate > 16000:
            # The microphone records at 8 or 16 kHz: more would only cost the device's small heap
            # (espeak-ng's 22050 Hz speech of ten seconds did not fit twice).
            count = len(out) // 2
            picked = bytearray()
            for k in range(count * 16000 // rate):
                j = k * rate // 16000
                picked += out[2 * j:2 * j + 2]
            out, rate = picked, 16000
        self.audio = (rate, bytes(out))
        self.send(b"A", struct.pack("<I", rate) + self.audio[1])

    def feed_image(self, path):
        with open(path, "rb") as f:
            self.image = f.read()
        self.send(b"I", self.image)

    def image_bytes(self):
        if self.image is None:
            try:
                from PIL import Image
                img = Image.new("RGB", (640, 400), (90, 120, 160))
                buf = io.BytesIO()
                img.save(buf, "JPEG", quality=70)
                self.image = buf.getvalue()
            except ImportError:
                self.image = b""
        return self.image

    # --- display
    def display_text(self):
        rows = {}
        for o in self.frame:
            if o.get("t") != "text":
                continue
            name = COLOUR_NAMES.get(o["c"], "#%06x" % o["c"])
            text = o["s"] if name is None else f"[{name}] {o['s']}"
            rows.setdefault(o["y"], []).append((o["x"], text))
        return "\n".join(" ".join(t for _, t in sorted(rows[y])) for y in sorted(rows))

    def display_png(self, path):
        from PIL import Image, ImageDraw, ImageFont
        img = Image.new("RGB", (640, 400), (0, 0, 0))
        draw = ImageDraw.Draw(img)
        try:
            font = ImageFont.load_default(size=40)
        except TypeError:
            font = ImageFont.load_default()

        def rgb(c):
            return ((c >> 16) & 255, (c >> 8) & 255, c & 255)
        for o in self.frame:
            kind, colour = o.get("t"), rgb(o.get("c", 0xFFFFFF))
            if kind == "rect":
                x1, y1, x2, y2 = o["p"]
                draw.rectangle([min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)], fill=colour)
            elif kind == "line":
                draw.line(o["p"], fill=colour, width=max(1, o.get("k", 1)))
            elif kind == "poly":
                pts = list(zip(o["p"][0::2], o["p"][1::2]))
                if o.get("closed") and pts:
                    pts.append(pts[0])
                draw.line(pts, fill=colour, width=max(1, o.get("k", 1)))
            elif kind == "text":
                for i, ch in enumerate(o["s"]):
                    draw.text((o["x"] + 24 * i + 2, o["y"] + 2), ch, fill=colour, font=font)
        img.save(path, "PNG")


class Control(ServiceInterface):
    """org.glassd.test.VirtualMonocle1: what a test does to the glasses and reads from them."""

    def __init__(self, monocle):
        super().__init__(CONTROL_IFACE)
        self.vm_monocle = monocle

    def _fw(self):
        return self.vm_monocle.firmware

    @method()
    def Tap(self):
        self._fw().touch(0.1)

    @method()
    def Hold(self, seconds: "d"):
        if not 0 < seconds <= 60:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", "seconds must be in (0, 60]")
        self._fw().touch(seconds)

    @method()
    def Press(self, pads: "s", seconds: "d"):
        """Touch pad 'A', 'B' or 'BOTH' for `seconds`."""
        if pads not in ("A", "B", "BOTH"):
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", "pads must be A, B or BOTH")
        if not 0 < seconds <= 60:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", "seconds must be in (0, 60]")
        self._fw().touch(seconds, pads)

    @method()
    def FeedAudio(self, path: "s"):
        try:
            self._fw().feed_audio(path)
        except (OSError, EOFError, wave.Error) as e:
            raise DBusError("org.glassd.test.Error.Failed", f"{path}: {e}")

    @method()
    def FeedImage(self, path: "s"):
        try:
            self._fw().feed_image(path)
        except OSError as e:
            raise DBusError("org.glassd.test.Error.Failed", f"{path}: {e}")

    @method()
    def DisplayText(self) -> "s":
        return self._fw().display_text()

    @method()
    def DisplayPNG(self, path: "s"):
        try:
            self._fw().display_png(path)
        except (OSError, ImportError) as e:
            raise DBusError("org.glassd.test.Error.Failed", f"{path}: {e}")

    @method()
    def SetBattery(self, level: "y"):
        self._fw().set_battery(level)

    @method()
    async def PowerCycle(self):
        await self.vm_monocle.power_cycle()

    @method()
    def Mode(self) -> "s":
        return self.vm_monocle.mode

    @method()
    async def EnterDFU(self):
        """What update.micropython() does, without the REPL (and regardless of notifications)."""
        if self.vm_monocle.mode != "app":
            raise DBusError("org.glassd.test.Error.Failed", "already in DFU mode")
        self._fw().stats["dfu_requests"] += 1
        await self.vm_monocle.enter_dfu()

    @method()
    def SetNextFirmwareVersion(self, version: "s"):
        if len(version) != 12:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs",
                            "versions are 12 characters, e.g. v23.248.0754")
        self.vm_monocle.dfu.state.next_version = version

    @method()
    async def Inject(self, channel: "s", frames: "aay"):
        """Notifies each frame as is on the serial or data TX characteristic, at full rate, as
        broken or hostile firmware could (each frame one notification of at most MTU-3 bytes);
        returns once all are sent."""
        await self._inject(channel, [bytes(f) for f in frames])

    @method()
    async def InjectRepeated(self, channel: "s", frame: "ay", count: "u"):
        """The same frame `count` times (up to 1,000,000), at full rate; returns once all are sent."""
        if count > 1_000_000:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", "count must be at most 1000000")
        await self._inject(channel, [bytes(frame)] * count)

    async def _inject(self, channel, frames):
        if channel not in ("serial", "data"):
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", "channel must be serial or data")
        limit = self.vm_monocle.mtu - 3
        if any(len(f) > limit or not f for f in frames):
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", f"frames must be 1 to {limit} bytes")
        tx = self.vm_monocle.services.get(channel)
        if tx is None:
            raise DBusError("org.glassd.test.Error.Failed", "no GATT app is registered")
        self._fw().stats["injected_frames"] += len(frames)
        for frame in frames:
            tx[2].notify(frame)
        await tx[2].vm_empty.wait()

    @method()
    def SetBootloaderDelay(self, seconds: "d"):
        """DfuTarg comes up this long after the app went, from the next reset into it on."""
        if not 0 <= seconds <= 60:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", "seconds must be in [0, 60]")
        self.vm_monocle.bootloader_delay = seconds

    @method()
    def RefuseNextInit(self):
        self.vm_monocle.dfu.state.refuse_next_init = True

    @method()
    def Stats(self) -> "a{sv}":
        fw = self._fw()
        out = {k: Variant("t" if k in ("serial_bytes_in", "dfu_bytes_received", "fpga_bytes_written")
                          else "u", v)
               for k, v in fw.stats.items()}
        out["frames"] = Variant("u", fw.frames)
        out["ring_used"] = Variant("u", fw.ring_used)
        out["link_packets_in"] = Variant("t", self.vm_monocle.link.counts[IN])
        out["link_packets_out"] = Variant("t", self.vm_monocle.link.counts[OUT])
        return out

    @method()
    def SetLinkTiming(self, interval_ms: "d", packets: "u", latency_ms: "d"):
        """The link timing model from now on (linktiming.py); interval 0 turns it off."""
        try:
            self.vm_monocle.link.set(interval_ms, packets, latency_ms)
        except ValueError as e:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", str(e))
        warn(f"link timing: {self.vm_monocle.link.describe()}")

    @method()
    def RemoveOnUpdate(self, names: "as"):
        """The next new image the bootloader boots finds these files gone (an update that took the
        scripts with it), so that its first links upload them, whatever the links before did."""
        if any(not n or "/" in n or n in (".", "..") for n in names):
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", "plain file names only")
        self.vm_monocle.remove_on_update = list(names)

    @method()
    async def DropLinks(self, points: "as"):
        """Drops the link at each of `points` in turn, in the device's own time (linkdrops.py);
        replaces those armed before ([] disarms)."""
        try:
            await self.vm_monocle.drops.arm(points)
        except ValueError as e:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", str(e))

    @method()
    def LinkDrops(self) -> "(asas)":
        """The points dropped at so far and those still armed."""
        drops = self.vm_monocle.drops
        return [list(drops.done), drops.left()]

    @dbus_signal()
    def LinkDropped(self, point) -> "s":
        return point

    @method()
    def LinkLimit(self, payload: "u") -> "d":
        """Bytes/s the model carries one way in packets of `payload` bytes; 0 when it is off."""
        return self.vm_monocle.link.limit(payload, self.vm_monocle.mtu)

    @dbus_signal()
    def DisplayChanged(self, text) -> "s":
        return text


class Monocle:
    def __init__(self, args):
        self.adapter_path = f"/org/bluez/{args.adapter}"
        self.local_name = args.name
        self.tx_power = args.tx_power
        self.mtu = args.mtu
        self.record = open(args.record, "a", encoding="utf-8") if args.record else None
        self.bus = None
        self.bluez_owner = None
        self.app_registered = False
        self.adv_registered = False
        self.register_task = None
        self.stopping = False
        self.services = {}   # key -> (service, rx, tx)
        self.adapter_name = args.adapter
        self.echo = args.echo
        self.link = linktiming.LinkTiming()
        self.link_timing = args.link_timing
        self.timed_writes = {}   # path -> (longest value, delivery): see timed_request
        self.firmware = Firmware(self, args)
        self.control = Control(self)
        self.mode = "app"    # "dfu": the bootloader (DfuTarg on dfu_adapter) runs instead
        self.bootloader_delay = 0.0   # seconds from the app's end to DfuTarg (SetBootloaderDelay)
        self.fs = args.fs
        self.dfu_adapter = dfu_adapter_of(args.adapter)
        self.dfu = vdfu.DfuTarget(self, ROOT, self.dfu_adapter, args.fs, self.firmware.stats,
                                  args.mtu, args.tx_power, args.dfu_inactivity)
        self.drops = linkdrops.LinkDrops(self, warn)
        self.remove_on_update = []    # files the next new image boots without (RemoveOnUpdate)

    # --- objects
    def export(self):
        for index, (key, svc_uuid, rx_uuid, tx_uuid) in enumerate((
                ("serial", SERIAL_SERVICE, SERIAL_RX, SERIAL_TX),
                ("data", DATA_SERVICE, DATA_RX, DATA_TX))):
            svc_path = f"{APP_PATH}/service{index}"
            service = gatt_objects.GattService(svc_uuid)
            rx = GattCharacteristic(self, key, svc_path, rx_uuid, "rx")
            tx = GattCharacteristic(self, key, svc_path, tx_uuid, "tx")
            self.bus.export(svc_path, service)
            self.bus.export(f"{svc_path}/char0", rx)
            self.bus.export(f"{svc_path}/char1", tx)
            self.services[key] = (service, rx, tx)
            self.timed_writes[f"{svc_path}/char0"] = (
                lambda: self.mtu - 3, lambda value, key=key: self.on_write(key, value, "request"))
        self.bus.export(ADV_PATH, Advertisement(self))
        self.bus.export(f"{ROOT}/{self.adapter_name}", self.control)
        self.dfu.export(self.bus)
        self.timed_writes[self.dfu.control_path] = (
            lambda: self.dfu.mtu - 3, lambda value: self.dfu.on_write(vdfu.DFU_CONTROL, value))

    def note(self, event):
        """Appends `event` to the --record file, stamped with the monotonic clock (the same clock
        in every process on this machine, so Scripts/bench can line events up across them)."""
        if self.record is not None:
            self.record.write(json.dumps(dict(event, t=time.monotonic())) + "\n")
            self.record.flush()

    def on_write(self, key, value: bytes, kind: str):
        if self.drops.dropping:
            return      # lost with the link that is going
        self.note({"service": key, "hex": value.hex(), "type": kind})
        if self.echo:
            self.services[key][2].notify(value)
        elif key == "serial":
            self.firmware.serial_in(value)
        else:
            self.firmware.data_in(value)
        self.drops.taken_in(key, len(value))

    def notifying(self, key):
        return key in self.services and self.services[key][2].gatt_notifying

    def notify_changed(self):
        self.firmware.send(b"N", self.firmware.notify_flags())

    def serial_out(self, data: bytes):
        """REPL stdout: serial TX notifications while they are on, else dropped (as the device)."""
        if "serial" in self.services and not self.drops.dropping:
            self.services["serial"][2].notify(data)

    def data_out(self, data: bytes):
        if "data" in self.services and not self.drops.dropping:
            self.note({"service": "data", "hex": data.hex(), "type": "notify"})
            self.services["data"][2].notify(data)

    def display_changed(self, text):
        self.note({"display": text})
        self.control.DisplayChanged(text)

    async def power_cycle(self, safe=False, cause="POWERON", count=True):
        """Chip reset: the links drop, the interpreter starts from power-on (safe: no main.py)."""
        if count and not safe:
            self.firmware.stats["power_cycles"] += 1
        if self.mode == "dfu":     # the bootloader starts again, from its settings page
            await self.disconnect_centrals(self.dfu.adapter_path)
            self.dfu.lost()
            self.dfu.state.cold_start()
            if self.dfu.state.app_valid:    # nothing overwritten yet: the app starts
                await self.leave_dfu(None)
                return
            if self.dfu.registered:
                self.dfu.touch()
            else:
                await self.dfu_up()
            return
        await self.disconnect_centrals()
        self.firmware.restart("safe" if safe else "power", "friendly", cause)

    async def enter_dfu(self):
        """Reset into the bootloader: the app's links, GATT app and advertisement go away from
        this adapter and DfuTarg comes up on dfu_adapter (the address + 1 in the standard world)."""
        if self.mode == "dfu" or self.stopping:
            return
        self.mode = "dfu"
        self.firmware.stats["dfu_entries"] += 1
        self.note({"mode": "dfu"})
        await self.disconnect_centrals()
        await self.firmware.halt()
        self.reset_notifications()
        await self.unregister()
        self.dfu.state.cold_start()
        self.dfu.state.enter()
        if self.bootloader_delay > 0:
            await asyncio.sleep(self.bootloader_delay)
            if self.mode != "dfu" or self.stopping:
                return
        await self.dfu_up()

    async def dfu_up(self):
        if self.bluez_owner is None:
            return
        try:
            up = await self.dfu.up()
        except (DBusError, asyncio.TimeoutError) as e:
            warn(f"DFU target on {self.dfu_adapter}: registration failed: {e}; it stays down")
            return
        if up:
            print("DFU READY", flush=True)
        else:
            warn(f"DFU mode: adapter {self.dfu_adapter} does not exist, so no DfuTarg is "
                 "advertised; the device stays down until the adapter appears or a PowerCycle")

    async def leave_dfu(self, version):
        """The bootloader starts the app: the new image (version: its device.VERSION, None =
        unchanged) or, after the inactivity timeout, the old one."""
        if self.mode != "dfu" or self.stopping:
            return
        await self.dfu.down()
        self.dfu.state.finish()
        self.mode = "app"
        if version is not None:
            self.firmware.set_version(version)
            self.firmware.stats["dfu_boots"] += 1
            for name in self.remove_on_update:
                try:
                    os.remove(os.path.join(self.fs, name))
                except OSError:
                    pass
            self.remove_on_update = []
        self.note({"mode": "app", "version": version})
        self.firmware.start()
        self.schedule_register()

    async def disconnect_centrals(self, adapter_path=None):
        if self.bluez_owner is None:
            return
        await linkdrops.end_links(
            lambda path: self.call(BLUEZ, path, "org.bluez.Device1", "Disconnect"),
            self.managed_objects, adapter_path or self.adapter_path, warn)

    async def managed_objects(self):
        return (await self.call(BLUEZ, "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"))[0]

    def reset_notifications(self):
        for _, _, tx in self.services.values():
            tx.stop_notifying()

    async def until_writable(self):
        """Until the bus socket takes bytes again: dbus-fast drops the connection when a send
        finds it full (EAGAIN), as a flood of notifications can make it. asyncio lets one
        writer callback per fd, and dbus-fast's is that one, so this looks every millisecond."""
        fd = getattr(getattr(self.bus, "_writer", None), "fd", None)
        while fd is not None and not self.stopping and not select.select([], [fd], [], 0)[1]:
            await asyncio.sleep(0.001)

    async def writer_drained(self):
        """Wait while dbus-fast still holds unsent messages (best effort)."""
        writer = getattr(self.bus, "_writer", None)
        for _ in range(1000):
            if writer is None or (getattr(writer, "buf", None) is None
                                  and not getattr(writer, "messages", None)):
                return
            await asyncio.sleep(0.001)

    # --- D-Bus plumbing
    async def call(self, destination, path, interface, member, signature="", body=()):
        reply = await asyncio.wait_for(self.bus.call(Message(
            destination=destination, path=path, interface=interface, member=member,
            signature=signature, body=list(body))), CALL_TIMEOUT)
        if reply.message_type == MessageType.ERROR:
            text = reply.body[0] if reply.body else ""
            raise DBusError(reply.error_name or "org.freedesktop.DBus.Error.Failed", text, reply)
        return reply.body

    async def add_match(self, rule):
        await self.call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                        "org.freedesktop.DBus", "AddMatch", "s", [rule])

    def timed_request(self, msg: Message):
        """Under the link timing model, a write with response to one of our characteristics is
        answered at a later connection event. dbus-fast's (synchronous) method handlers reply
        at once, so such calls are taken here, before them; all else goes on to them."""
        if (not self.link.on or msg.member != "WriteValue"
                or msg.interface != "org.bluez.GattCharacteristic1" or msg.path not in self.timed_writes):
            return None
        value, options = bytes(msg.body[0]), msg.body[1]
        kind = options.get("type")
        if isinstance(kind, Variant) and kind.value != "request":
            return None     # a write command: the method handler queues it and replies at once
        limit, deliver = self.timed_writes[msg.path]
        if len(value) > limit():
            return Message.new_error(msg, "org.bluez.Error.InvalidValueLength",
                                     f"Invalid value length {len(value)} > {limit()}")
        self.link.request(lambda: deliver(value), lambda: self.bus.send(Message.new_method_return(msg)))
        return True

    def on_message(self, msg: Message):
        if msg.message_type == MessageType.METHOD_CALL:
            return self.timed_request(msg)
        if msg.message_type != MessageType.SIGNAL:
            return None
        if msg.member == "NameOwnerChanged" and msg.interface == "org.freedesktop.DBus":
            name, _, new = msg.body
            if name == BLUEZ:
                self.bluez_changed(new or None)
        elif msg.interface == "org.freedesktop.DBus.ObjectManager" and msg.sender == self.bluez_owner:
            path, interfaces = msg.body[0], msg.body[1]
            active = self.dfu.adapter_path if self.mode == "dfu" else self.adapter_path
            if path != active or "org.bluez.Adapter1" not in interfaces:
                return None
            if msg.member == "InterfacesRemoved" and self.mode == "dfu":
                warn(f"{path} removed")
                self.dfu.registered = False
                self.dfu.lost()
            elif msg.member == "InterfacesRemoved":
                warn(f"{self.adapter_path} removed")
                self.app_registered = self.adv_registered = False
                self.reset_notifications()
            elif msg.member == "InterfacesAdded":
                self.schedule_register()
        return None

    def bluez_changed(self, owner):
        if owner == self.bluez_owner:
            return
        self.bluez_owner = owner
        self.app_registered = self.adv_registered = False
        self.dfu.registered = False
        self.dfu.lost()
        self.reset_notifications()
        if owner is None:
            warn("org.bluez went away; waiting for it")
            if self.register_task is not None:
                self.register_task.cancel()
        else:
            self.schedule_register()

    def schedule_register(self):
        if self.stopping or self.bluez_owner is None:
            return
        if self.register_task is not None and not self.register_task.done():
            return
        self.register_task = asyncio.get_running_loop().create_task(self.register_loop())

    def on_advertisement_released(self):
        warn("advertisement released by BlueZ")
        self.adv_registered = False
        loop = asyncio.get_running_loop()
        loop.call_soon(self.schedule_register)

    async def register_loop(self):
        if self.mode == "dfu":
            await self.dfu_up()
            return
        await gatt_objects.register_until_done(self, APP_PATH, ADV_PATH, warn)

    async def unregister(self):
        if self.bluez_owner is None:
            return
        for flag, interface, member, path in (
                ("adv_registered", "org.bluez.LEAdvertisingManager1",
                 "UnregisterAdvertisement", ADV_PATH),
                ("app_registered", "org.bluez.GattManager1", "UnregisterApplication", APP_PATH)):
            if not getattr(self, flag):
                continue
            try:
                await asyncio.wait_for(
                    self.call(BLUEZ, self.adapter_path, interface, member, "o", [path]), 2.0)
            except (DBusError, asyncio.TimeoutError) as e:
                warn(f"{member}: {e}")
            setattr(self, flag, False)

    async def run(self, stop: asyncio.Event):
        if self.link_timing is not None:
            self.link.set(*self.link_timing)
            warn(f"link timing: {self.link.describe()}")
        self.bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
        self.export()
        if not self.echo and vdfu.DfuState.pending(self.fs) and self.dfu.state.app_valid:
            self.dfu.state.finish()     # the app was not touched: it boots
        if not self.echo and vdfu.DfuState.pending(self.fs):
            # an unfinished update: the bootloader comes up (the app is not valid any more)
            self.mode = "dfu"
            self.dfu.state.cold_start()
            warn(f"unfinished DFU in {self.fs}: starting as DfuTarg on {self.dfu_adapter}")
        elif not self.echo:
            self.firmware.start()
        name = f"org.glassd.test.VirtualMonocle.{self.adapter_name}"
        try:
            await self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                            "RequestName", "su", [name, 4])
        except DBusError as e:
            warn(f"cannot own {name} ({e.text}); the control interface is on {self.bus.unique_name}")
        self.bus.add_message_handler(self.on_message)
        await self.add_match("type='signal',sender='org.freedesktop.DBus',"
                             "interface='org.freedesktop.DBus',member='NameOwnerChanged',"
                             f"arg0='{BLUEZ}'")
        await self.add_match(f"type='signal',sender='{BLUEZ}',"
                             "interface='org.freedesktop.DBus.ObjectManager',path='/'")
        try:
            owner = (await self.call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "GetNameOwner", "s", [BLUEZ]))[0]
        except DBusError:
            owner = None
            warn("org.bluez is not on the bus yet; waiting for it")
        if self.bluez_owner is None and owner is not None:
            self.bluez_changed(owner)
        await stop.wait()
        self.stopping = True
        await self.firmware.stop()
        if self.register_task is not None:
            self.register_task.cancel()
        await self.unregister()
        if self.dfu.registered:
            await self.dfu.down()
        self.bus.disconnect()
        if self.record is not None:
            self.record.close()


def dfu_adapter_of(adapter):
    """hciN -> hci(N+1): where the bootloader advertises (address + 1 in the standard world)."""
    head = adapter.rstrip("0123456789")
    digits = adapter[len(head):]
    return f"{head}{int(digits) + 1}" if digits else adapter + "-dfu"


def main() -> int:
    parser = argparse.ArgumentParser(description="virtual Brilliant Labs Monocle (BLE peripheral)")
    parser.add_argument("--adapter", required=True, help="adapter to register on, e.g. hci1")
    parser.add_argument("--name", default="monocle", help="advertised LocalName (default monocle)")
    parser.add_argument("--tx-power", type=int, default=-45,
                        help="advertised TxPower in dBm (default -45)")
    parser.add_argument("--mtu", type=int, default=256, help="ATT MTU (default 256)")
    parser.add_argument("--record", metavar="FILE",
                        help="append every accepted RX write to FILE as a JSON line")
    parser.add_argument("--fs", metavar="DIR",
                        help="the device filesystem (main.py ...; default: a new temporary dir)")
    parser.add_argument("--firmware-version", default="v23.248.0754",
                        help="device.VERSION (default v23.248.0754)")
    parser.add_argument("--fpga-version", default="v23.230.0808",
                        help="fpga.read(2, 12) (default v23.230.0808)")
    parser.add_argument("--battery", type=int, default=100, help="battery level %% (default 100)")
    parser.add_argument("--micropython", metavar="PATH",
                        default=os.path.join(os.path.dirname(sys.executable), "micropython"),
                        help="the MicroPython unix port (default: micropython beside python)")
    parser.add_argument("--echo", action="store_true",
                        help="transport tests only: no MicroPython; every RX write is echoed on "
                             "the TX of its service while that notifies")
    parser.add_argument("--dfu-inactivity", type=float, default=180.0, metavar="SECONDS",
                        help="DFU mode: boot the (still valid) app after this long without a "
                             "DFU write (default 180, the bootloader's; 0 = never)")
    parser.add_argument("--link-timing", metavar="INTERVAL_MS,PACKETS,LATENCY_MS",
                        help="model a BLE connection's timing (linktiming.py): connection interval, "
                             "packets per event each way, write response latency; default off")
    args = parser.parse_args()
    if args.link_timing is not None:
        try:
            args.link_timing = linktiming.parse(args.link_timing)
        except ValueError as e:
            parser.error(f"--link-timing: {e}")
    if args.mtu < 23 or args.mtu > 517:
        parser.error("--mtu must be within 23..517")
    if not 0 <= args.battery <= 100:
        parser.error("--battery must be within 0..100")
    if len(args.firmware_version) != 12 or len(args.fpga_version) != 12:
        parser.error("versions are 12 characters, e.g. v23.248.0754")
    if not args.echo and not os.access(args.micropython, os.X_OK):
        parser.error(f"no MicroPython at {args.micropython} (run Tests/World/setup)")
    args.fs_is_temporary = args.fs is None
    if args.fs is None:
        args.fs = tempfile.mkdtemp(prefix="vmonocle-fs.")
    elif not os.path.isdir(args.fs):
        parser.error(f"--fs {args.fs}: not a directory")
    args.fs = os.path.abspath(args.fs)

    monocle = Monocle(args)
    return run_until_signalled(monocle.run)


if __name__ == "__main__":
    sys.exit(main())
