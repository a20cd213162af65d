#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# virtual_frame: the glassd test world's Brilliant Frame (or, with --halo, a Halo).
#
# A BLE peripheral made only with the standard BlueZ peripheral API, like virtual_monocle.py.
# GATT (frame-protocol.md): service 7a230001-…, RX 7a230002-… (write, write without response),
# TX 7a230003-… (notify); --halo adds the speaker audio characteristic 7a230005-… (write, write
# without response; played in real time by vframe/speaker.py, and heard back by the microphone as
# echo) and the MCUmgr SMP service 8d53dc1d-… (vsmp.py over vmcuboot.py's slots: upload, test,
# confirm, reset). Advertised by service UUID with the name "Frame XX" (XX: the adapter address's
# last byte).
#
# Bonding is required: until both sides hold the bond (vframe/bond.py), writes with response and
# StartNotify fail with org.bluez.Error.NotPermitted "Not paired" (what BlueZ makes of the ATT
# errors Insufficient Authentication/Encryption) and writes without response are dropped (no ATT
# response exists to refuse them). The Frame's half of the bond is its adapter's Device1 for the
# central; bzworld (P16) refuses a new Pair while it is kept, so after the host's RemoveDevice only
# ResetBond() (the pin-hole reset) lets the host pair again.
#
# Behind RX runs a real Lua 5.4 (vframe/lua_vm.py) in its own thread with the firmware's `frame`
# API emulated (vframe/prelude.lua, vframe/devices.py). Tests drive it through
# org.glassd.test.VirtualFrame1 (see Tests/World/README.md). Prints READY when registered;
# frame.update() brings up the "Frame Update" bootloader (vdfu.py) on hci(N+1), DFU READY.

import argparse
import asyncio
import json
import os
import select
import sys
import tempfile
import time
from collections import Counter, deque

from worldloop import run_until_signalled  # beside this file
import gatt_objects  # beside this file
import linkdrops  # beside this file: drops at points of the device's own progress (DropLinks)
import linktiming  # beside this file: vdfu's link model, and the SMP characteristic's (SetLinkTiming)
import vdfu  # beside this file: the bootloader
import vmcuboot  # beside this file: the Halo's MCUboot slots
import vsmp  # beside this file: the Halo's MCUmgr (SMP) server
from vframe import devices
from vframe.speaker import Speaker
from vframe.bond import BondCheck
from vframe.lua_vm import LuaVM

from dbus_fast import BusType, DBusError, Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, method, signal as dbus_signal

BASE = "-5475-a6a4-654c-8431f6ad49c4"
SERVICE, RX, TX, HALO_AUDIO = (f"7a23000{i}{BASE}" for i in (1, 2, 3, 5))
BLUEZ = "org.bluez"
ROOT = "/org/glassd/vframe"
APP_PATH, ADV_PATH = ROOT + "/app", ROOT + "/adv0"
CONTROL_IFACE = "org.glassd.test.VirtualFrame1"
FIXTURE_PHOTO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "photo.jpg")
NOTIFY_YIELD_EVERY = 8      # dbus-fast drops the connection on long synchronous bursts
SEND_QUEUE = 4              # frame.bluetooth.send: notifications the SoftDevice queue holds
SEND_DRAIN = 0.002          # s each of them takes to go out
CALL_TIMEOUT = 10.0
FINGER_GAP_S = 0.06         # the shortest time between two taps of a finger (the app debounces 40 ms)
RESET_AFTER_S = 0.25        # Zephyr's MCUMGR_GRP_OS_RESET_MS: the reset answer goes out first
DROP_KINDS = ("smp", "dfu")  # the link-drop points (linkdrops.py) this device reaches


def warn(text):
    sys.stderr.write(f"virtual_frame: {text}\n")
    sys.stderr.flush()


class Characteristic(gatt_objects.GattCharacteristic):
    def __init__(self, frame, service_path, uuid, role):
        super().__init__(service_path, uuid)
        self.vf, self.vf_role = frame, role
        self.vf_outbox = deque()
        self.vf_task = None

    def flags(self):
        return {"rx": ["write", "write-without-response"], "audio": ["write", "write-without-response"],
                "smp": ["write-without-response", "notify"]}.get(self.vf_role, ["notify"])

    def mtu(self):
        return self.vf.mtu

    @method()
    async def WriteValue(self, value: "ay", options: "a{sv}"):
        if self.vf_role == "tx":
            raise DBusError("org.bluez.Error.NotPermitted", "Write not permitted")
        self.check_length(value)
        kind = options.get("type")
        # BlueZ writes without response to a characteristic that has no "write"
        kind = kind.value if isinstance(kind, Variant) else ("command" if self.vf_role == "smp" else "request")
        if self.vf_role == "smp" and kind == "request":
            raise DBusError("org.bluez.Error.NotPermitted", "Write not permitted")
        device = options.get("device")
        device = device.value if isinstance(device, Variant) else None
        async with self.vf.gate:        # in order, also when a bond lookup has to wait
            if not await self.vf.bond.encrypted(device):
                if kind == "request":
                    self.vf.stats["refused_requests"] += 1
                    raise DBusError("org.bluez.Error.NotPermitted", "Not paired")
                self.vf.stats["dropped_commands"] += 1
                return
            if self.vf_role == "rx":
                self.vf.on_write(bytes(value), kind)
            elif self.vf_role == "audio":
                self.vf.stats["audio_writes"] += 1
                self.vf.stats["audio_bytes"] += len(value)
                self.vf.speaker.write(bytes(value))   # a full ring refuses it, silently
                if not self.vf.speaker_fed:
                    self.vf.speaker_fed = True
                    self.vf.control.SpeakerFed()
            else:   # at its connection event under SetLinkTiming (at once when off)
                self.vf.link.send(linktiming.IN, lambda data=bytes(value): self.vf.on_smp(data))

    @method()
    async def StartNotify(self):
        if self.vf_role in ("rx", "audio"):
            raise DBusError("org.bluez.Error.NotSupported", "Notify not supported")
        if not await self.vf.bond.encrypted(None):
            self.vf.stats["refused_notify"] += 1
            raise DBusError("org.bluez.Error.NotPermitted", "Not paired")
        self.set_notifying(True)

    @method()
    def StopNotify(self):
        self.stop()

    def stop(self):
        self.vf_outbox.clear()
        self.set_notifying(False)
        if self.vf_role == "smp":     # BlueZ stops notify sessions when the link drops
            self.vf.smp_lost()

    def notify(self, data: bytes):
        """Queue data as notifications of at most MTU-3 bytes each (dropped when off)."""
        if not self.gatt_notifying:
            return False
        step = self.vf.mtu - 3
        if self.vf_role == "smp" and self.vf.link.on:     # each packet at its connection event
            for i in range(0, max(1, len(data)), step):
                self.vf.link.send(linktiming.OUT, lambda value=data[i:i + step]: self._timed_emit(value))
            return True
        for i in range(0, max(1, len(data)), step):
            self.vf_outbox.append(data[i:i + step])
        if self.vf_task is None or self.vf_task.done():
            self.vf_task = asyncio.get_running_loop().create_task(self._drain())
        return True

    def _timed_emit(self, value):
        if self.gatt_notifying:
            self.gatt_value = value
            self.emit_properties_changed({"Value": value})

    async def _drain(self):
        sent = 0
        while self.vf_outbox:
            if not self.gatt_notifying:
                self.vf_outbox.clear()
                return
            await self.vf.until_writable()
            self.gatt_value = self.vf_outbox.popleft()
            self.emit_properties_changed({"Value": self.gatt_value})
            sent += 1
            if sent % NOTIFY_YIELD_EVERY == 0:
                await asyncio.sleep(0)


class Advertisement(gatt_objects.Advertisement):
    def __init__(self, frame):
        super().__init__()
        self.vf = frame

    def local_name(self):
        return self.vf.local_name

    def service_uuids(self):
        return [SERVICE]

    def tx_power(self):
        return self.vf.tx_power

    def released(self):
        self.vf.adv_registered = False


class UpdateAdvertisement(gatt_objects.Advertisement):
    """The bootloader's advertisement: "Frame Update" (frame-protocol.md), service FE59."""

    def __init__(self, target):
        super().__init__()
        self.t = target

    def local_name(self):
        return "Frame Update"

    def service_uuids(self):
        return [vdfu.DFU_SERVICE]

    def tx_power(self):
        return self.t.tx_power

    def released(self):
        self.t.registered = False


class Bootloader(vdfu.DfuTarget):
    """vdfu's Secure DFU target with the Frame bootloader's name."""

    def export(self, bus):
        svc = f"{self.app_path}/service0"
        self.control_path = f"{svc}/char0"
        self.control = vdfu._Char(self, svc, vdfu.DFU_CONTROL)
        self.packet = vdfu._Char(self, svc, vdfu.DFU_PACKET)
        bus.export(svc, gatt_objects.GattService(vdfu.DFU_SERVICE))
        bus.export(self.control_path, self.control)
        bus.export(f"{svc}/char1", self.packet)
        bus.export(self.adv_path, UpdateAdvertisement(self))


class Control(ServiceInterface):
    """org.glassd.test.VirtualFrame1: what a test does to the glasses and reads from them."""

    def __init__(self, frame):
        super().__init__(CONTROL_IFACE)
        self.vf = frame

    @method()
    async def Tap(self):
        await self.vf.tap()

    @method()
    async def DoubleTap(self):
        """Two taps 0.15 s apart, as a finger makes them: past the app's debounce, within its
        double-tap window. A Halo's firmware tells them apart itself: one 'double' tap."""
        if self.vf.halo:
            await self.vf.tap("double")
            return
        # Both at once, the second with its time: on a loaded host a sleep here could run past
        # the window, and the glasses would see two single taps no finger made.
        first = await self.vf.tap()
        await self.vf.tap(at=first + 0.15)

    @method()
    async def TripleTap(self):
        """Three taps 0.15 s apart, each with its own time (as DoubleTap's): each within the app's
        window of the one before. A Halo's firmware classifies them itself: one 'triple' tap."""
        if self.vf.halo:
            await self.vf.tap("triple")
            return
        first = await self.vf.tap()
        await self.vf.tap(at=first + 0.15)
        await self.vf.tap(at=first + 0.30)

    @method()
    def SetCharging(self, charging: "b"):
        """What a Halo's frame.battery_charging() answers from now on."""
        self.vf.charging = charging

    @method()
    def SetEchoCancel(self, on: "b"):
        """Whether a Halo's echo canceller works (default on): off, a recording with aec=true
        hears the speaker's whole echo, as without it."""
        self.vf.mic.echo_cancel = on

    @method()
    def FeedAudio(self, path: "s"):
        try:
            self.vf.mic.feed(path)
        except Exception as e:
            raise DBusError("org.glassd.test.Error.Failed", f"{path}: {e}")

    @method()
    def FeedImage(self, path: "s"):
        try:
            self.vf.camera.feed(path)
        except OSError as e:
            raise DBusError("org.glassd.test.Error.Failed", f"{path}: {e}")

    @method()
    def DisplayText(self) -> "s":
        return self.vf.display.describe()

    @method()
    def DisplayItems(self) -> "a(iiss)":
        return [[x, y, c, t] for x, y, c, t in self.vf.display.items()]

    @method()
    def DisplayPNG(self, path: "s"):
        try:
            self.vf.display.png(path)
        except (OSError, ImportError) as e:
            raise DBusError("org.glassd.test.Error.Failed", f"{path}: {e}")

    @method()
    def SetBattery(self, level: "y"):
        self.vf.battery = min(100, level)

    @method()
    def SetFirmwareVersion(self, version: "s"):
        """frame.FIRMWARE_VERSION from the next boot (reset, power-on) on."""
        if self.vf.halo:
            raise DBusError("org.glassd.test.Error.Failed",
                            "a Halo runs the version of its MCUboot image: upload one over SMP")
        self.vf.version = version

    # --- the Halo's MCUboot and SMP server (vsmp.py)
    def _halo(self):
        if not self.vf.halo:
            raise DBusError("org.glassd.test.Error.Failed", "not a Halo (start with --halo)")
        return self.vf.mcuboot

    @method()
    def SlotState(self) -> "s":
        """JSON: the slots (version, hash, flags, behaviour), swap type, upload in progress,
        counters (smp_*, boot_*), what the last boots did."""
        self._halo()
        return json.dumps(self.vf.smp.describe())

    @method()
    def FailNextBoot(self, how: "s"):
        """The next image swapped in for a test does not run: "crash" (it faults before it could
        confirm; MCUboot reverts at once), "invalid" (MCUboot refuses and erases it); "" disarms."""
        if how not in ("", "crash", "invalid"):
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", "how: crash, invalid or empty")
        self._halo().armed = how or "normal"

    @method()
    def SilenceNextImage(self, on: "b"):
        """The next image swapped in boots, but its Lua never answers (SMP still does)."""
        self._halo().silence_next = on

    @method()
    def SetSelfConfirm(self, on: "b"):
        """Halo firmware 0.8.8: each image confirms itself at boot (--self-confirm)."""
        self._halo().self_confirm = on

    @method()
    def SetLinkTiming(self, interval_ms: "d", packets: "u", latency_ms: "d"):
        """The link timing model (linktiming.py) on the Halo's SMP characteristic from now on:
        its writes and notifications; interval 0 turns it off."""
        self._halo()
        try:
            self.vf.link.set(interval_ms, packets, latency_ms)
        except ValueError as e:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", str(e))

    @method()
    def LinkLimit(self, payload: "u") -> "d":
        """Bytes/s the model carries one way in packets of `payload` bytes (0 when off)."""
        return self.vf.link.limit(payload, self.vf.mtu)

    @method()
    def SetResetDelay(self, seconds: "d"):
        """How long a reset keeps the Halo away (links down, not advertising)."""
        if not 0 <= seconds <= 60:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", "0 to 60 seconds")
        self._halo()
        self.vf.reset_seconds = seconds

    @method()
    async def DropLinks(self, points: "as"):
        """Drops the link at each point in turn, in the device's own time (linkdrops.py):
        `smp N` (the SMP upload holds N bytes), `dfu N` (the bootloader holds N bytes)."""
        for p in points:
            if p.strip().partition(" ")[0] not in DROP_KINDS:
                raise DBusError("org.freedesktop.DBus.Error.InvalidArgs",
                                f"{p!r}: the virtual Frame drops at {', '.join(k + ' N' for k in DROP_KINDS)}")
        try:
            await self.vf.drops.arm(points)
        except ValueError as e:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", str(e))

    @method()
    def LinkDrops(self) -> "(asas)":
        return [list(self.vf.drops.done), self.vf.drops.left()]

    @dbus_signal()
    def LinkDropped(self, point) -> "s":
        return point

    @dbus_signal()
    def Booted(self, version) -> "s":
        """After a boot (power-on, reset), once registered and advertising again."""
        return version

    @method()
    def SetNextFirmwareVersion(self, version: "s"):
        """The version a finished DFU boots with when its image carries no version marker."""
        self.vf.dfu.state.next_version = version

    @method()
    def RefuseNextInit(self):
        self.vf.dfu.state.refuse_next_init = True

    @method()
    async def Bonded(self) -> "b":
        return bool(await self.vf.bond.bonded_views())

    @method()
    async def ResetBond(self):
        await self.vf.reset_bond()

    @method()
    def Files(self) -> "as":
        return self.vf.flash.files()

    @method()
    async def PowerOff(self):
        await self.vf.power_off()

    @method()
    async def PowerOn(self):
        await self.vf.power_on()

    @method()
    async def PowerCycle(self):
        await self.vf.power_off()
        await self.vf.power_on()

    @method()
    def Mode(self) -> "s":
        return self.vf.mode

    @method()
    async def EnterDFU(self):
        if self.vf.mode != "app":
            raise DBusError("org.glassd.test.Error.Failed", f"not running the app ({self.vf.mode})")
        await self.vf.enter_dfu()

    @method()
    def SetSendBusy(self, count: "u"):
        """The next `count` frame.bluetooth.send calls fail as with a full notification queue."""
        self.vf.send_busy = count

    @method()
    async def Inject(self, frames: "aay"):
        """Notifies each frame as it is on TX (1 to MTU-3 bytes each): broken or hostile glasses."""
        limit = self.vf.mtu - 3
        if any(not f or len(f) > limit for f in frames):
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", f"frames must be 1 to {limit} bytes")
        for f in frames:
            self.vf.tx.notify(bytes(f))
        self.vf.stats["injected_frames"] += len(frames)

    @method()
    def SpeakerStats(self) -> "a{sv}":
        """The speaker's counters since its last reset, with its totals over the run: every byte
        played ("played") and each time audio came again after the ring ran dry ("gaps")."""
        out = {k: Variant("b", v) if isinstance(v, bool) else Variant("t", int(v))
               for k, v in self.vf.speaker.totals().items()}
        out["tap_to_last_write_us"] = Variant("t", int(self.vf.tap_to_last_write * 1e6))
        return out

    @method()
    async def WaitPlayed(self, count: "t"):
        """Returns once the speaker has played `count` bytes in all (its model says when that is
        due while it streams); fails after 30 s without."""
        deadline = time.monotonic() + 30
        while True:
            totals = self.vf.speaker.totals()
            if totals["played"] >= count:
                return
            if time.monotonic() > deadline:
                raise DBusError("org.glassd.test.Error.Failed", f"the speaker played {totals['played']} of {count} bytes")
            due = (count - totals["played"]) / max(1, self.vf.speaker.rate) if totals["streaming"] else 0.05
            await asyncio.sleep(min(max(due, 0.01), 1.0))

    @method()
    def Stats(self) -> "a{sv}":
        out = {k: Variant("t", int(v)) for k, v in self.vf.stats.items()}
        out["frames"] = Variant("t", self.vf.display.frames)
        out["running"] = Variant("b", self.vf.vm.running)
        return out

    @dbus_signal()
    def DisplayChanged(self, text) -> "s":
        return text

    @dbus_signal()
    def SpeakerStarted(self, rate) -> "u":
        """frame.speaker.start() ran (a Halo): the bytes per second it plays."""
        return rate

    @dbus_signal()
    def SpeakerFed(self):
        """The first audio came to the speaker since it last stopped (a Halo)."""

    @dbus_signal()
    def SpeakerStopped(self, flushed) -> "t":
        """frame.speaker.stop() ran (a Halo): the bytes it discarded unplayed."""
        return flushed


class Frame:
    """The device: GATT app and advertisement, the Lua VM, power, bond and DFU mode."""

    def __init__(self, args):
        self.args = args
        self.adapter_name = args.adapter
        self.adapter_path = f"/org/bluez/{args.adapter}"
        self.tx_power, self.mtu, self.battery = args.tx_power, args.mtu, args.battery
        self.charging = False
        self.version, self.halo = args.firmware_version, args.halo
        self.local_name = args.name or ("Halo" if args.halo else "Frame")   # + address, at registration
        self.address_text = "00:00:00:00:00:00"
        self.record = open(args.record, "a", encoding="utf-8") if args.record else None
        self.stats = Counter()
        self.last_tap = 0.0
        self.flash = devices.Flash(args.fs)
        self.speaker, self.speaker_stats = Speaker(), not args.no_speaker_stats
        # A Halo's microphone hears its speaker (the echo its canceller takes out, aec=true), and
        # a clip goes on across its restarts (barge-in); a Frame's replays at each start.
        self.mic = devices.Microphone(echo=self.speaker if args.halo else None, continues=args.halo)
        self.display = devices.Display()
        self.speaker_started_at = self.tap_to_last_write = 0.0
        self.speaker_fed = False    # audio came since the speaker last stopped (SpeakerFed once)
        self.camera = devices.Camera(args.photo)
        self.vm = LuaVM(self, self.flash, self.mic, self.camera, self.display, self.stats)
        self.mode = "app"           # "off", "asleep" (frame.sleep()), "dfu"
        self.bus = self.bond = self.loop = None
        self.gate = asyncio.Lock()
        self.bluez_owner = None
        self.app_registered = self.adv_registered = False
        self.register_task = None
        self.stopping = False
        self.send_busy = 0
        self.sent_at = deque()      # times of frame.bluetooth.send notifications (Lua thread)
        self.link = linktiming.LinkTiming()
        self.drops = linkdrops.LinkDrops(self, warn)
        self.mcuboot = self.smp = self.smp_char = None
        self.reset_seconds = args.smp_reset_seconds
        self.booted = False          # a boot waits for its registration (signal Booted)
        if self.halo:
            self.mcuboot = vmcuboot.Mcuboot(os.path.join(args.fs, devices.HIDDEN, "mcuboot"), self.version,
                                            self.stats, args.smp_slot_size)
            self.mcuboot.self_confirm = args.self_confirm
            self.smp = vsmp.SmpServer(self, self.mcuboot, args.smp_buf_size, args.smp_buf_count,
                                      args.smp_legacy_rc)
        boot_dir = os.path.join(args.fs, devices.HIDDEN)
        os.makedirs(boot_dir, exist_ok=True)
        self.dfu = Bootloader(self, ROOT, dfu_adapter_of(args.adapter), boot_dir, self.stats,
                              args.mtu, args.tx_power, args.dfu_inactivity)

    # --- objects
    def export(self):
        svc = f"{APP_PATH}/service0"
        self.rx = Characteristic(self, svc, RX, "rx")
        self.tx = Characteristic(self, svc, TX, "tx")
        self.bus.export(svc, gatt_objects.GattService(SERVICE))
        self.bus.export(f"{svc}/char0", self.rx)
        self.bus.export(f"{svc}/char1", self.tx)
        if self.halo:
            self.bus.export(f"{svc}/char2", Characteristic(self, svc, HALO_AUDIO, "audio"))
            smp_svc = f"{APP_PATH}/service1"
            self.smp_char = Characteristic(self, smp_svc, vsmp.SMP_CHAR, "smp")
            self.bus.export(smp_svc, gatt_objects.GattService(vsmp.SMP_SERVICE))
            self.bus.export(f"{smp_svc}/char0", self.smp_char)
        self.bus.export(ADV_PATH, Advertisement(self))
        self.control = Control(self)
        self.bus.export(f"{ROOT}/{self.adapter_name}", self.control)
        self.dfu.export(self.bus)

    def note(self, event):
        if self.record is not None:
            self.record.write(json.dumps(dict(event, t=time.monotonic())) + "\n")
            self.record.flush()

    # --- RX
    def on_write(self, value, kind):
        self.stats["writes"] += 1
        self.note({"rx": value.hex(), "type": kind})
        if self.mode != "app":
            return
        if value == b"\x02" and self.halo:          # Halo: reboot (MCUboot runs)
            self.stats["reboots_requested"] += 1
            self.loop.create_task(self.reboot("0x02"))
            return
        if self.halo and self.mcuboot.silent():
            self.stats["silent_dropped"] += 1       # this image's Lua never answers
            return
        if value == b"\x03":
            self.stats["breaks"] += 1
            self.vm.interrupt()
        elif value == b"\x04":
            self.stats["resets"] += 1
            self.vm.reset()
        elif value == b"\x05" and self.halo:     # Halo: remove main.lua
            try:
                os.remove(os.path.join(self.flash.root, "main.lua"))
            except OSError:
                pass
        elif value[:1] == b"\x01":
            self.stats["data_in"] += 1
            self.vm.data(value[1:])
        else:
            self.vm.chunk(value)

    # --- SMP (Halo)
    def on_smp(self, value):
        if self.drops.dropping or self.mode != "app":
            return      # lost with the link that is going
        self.stats["smp_writes"] += 1
        for rsp in self.smp.feed(value):
            self.note({"smp_rx": value.hex()[:64], "smp_tx": rsp.hex()[:64]})
            if not self.drops.dropping:
                self.smp_char.notify(rsp)

    def smp_lost(self):
        if self.smp is not None:
            self.smp.lost()

    def smp_held(self, n):
        """vsmp: the upload holds n bytes (linkdrops' `smp N`)."""
        self.drops.smp_held(n)

    def reset_requested(self):
        """vsmp: an SMP reset was answered; the device resets a moment later."""
        self.loop.call_later(RESET_AFTER_S, lambda: self.loop.create_task(self.reboot("smp")))

    async def reboot(self, why):
        """A reset: links drop, nothing advertises for reset_seconds, then MCUboot and a boot."""
        if self.mode != "app" or self.stopping:
            return
        self.mode = "rebooting"
        self.stats["reboots"] += 1
        self.vm.power_off()
        self.display.clear()
        self.mic.stop()
        self.note({"mode": "rebooting", "why": why})
        await self.disconnect_centrals()
        self.smp_char.stop()
        await self.unregister()
        await asyncio.sleep(self.reset_seconds)
        if self.mode == "rebooting" and not self.stopping:
            self.mode = "asleep"        # so that power_on boots
            await self.power_on()

    # --- host functions for the Lua thread (called from it)
    def _in_loop(self, fn, *args):
        self.loop.call_soon_threadsafe(fn, *args)

    def output(self, data):
        self.stats["prints"] += 1
        if not (self.halo and self.mcuboot.silent()):
            self._in_loop(self.tx.notify, data)

    def max_length(self):
        return min(self.mtu, 512) - 4

    def connected(self):
        return self.tx.gatt_notifying

    def send(self, data):
        if len(data) > self.max_length():
            return f"payload too long ({len(data)} > {self.max_length()})"
        now = time.monotonic()
        while self.sent_at and self.sent_at[0] <= now:
            self.sent_at.popleft()
        if self.send_busy > 0 or len(self.sent_at) >= SEND_QUEUE:
            if self.send_busy > 0:
                self.send_busy -= 1
            self.stats["send_busy"] += 1
            return "bluetooth send buffer full"
        start = self.sent_at[-1] if self.sent_at else now
        self.sent_at.append(max(start, now) + SEND_DRAIN)
        self.stats["data_out"] += 1
        self._in_loop(self._send_now, b"\x01" + data)
        return None

    def _send_now(self, value):
        if self.halo and self.mcuboot.silent():
            return
        self.note({"tx": value.hex()})
        self.tx.notify(value)

    def address(self):
        return self.address_text

    def firmware_version(self):
        return self.mcuboot.running_version() if self.halo else self.version

    def hardware(self):
        return "halo" if self.halo else "Frame"

    def display_changed(self, text):
        self._in_loop(self._display_changed, text)

    def speaker_start(self, *args):
        # A tap since the last start: how long audio still came after it (measured when the
        # next answer starts the speaker, so its own audio is not counted).
        if self.last_tap > self.speaker_started_at:
            self.tap_to_last_write = max(0.0, self.speaker.last_write_at - self.last_tap)
        self.speaker_started_at = time.monotonic()
        self.speaker.start(*args)
        rate = self.speaker.rate
        self._in_loop(lambda: self.control.SpeakerStarted(rate))

    def speaker_stop(self):
        """frame.speaker.stop() from the Lua thread: stops the speaker and says so on the bus."""
        flushed = self.speaker.stop()
        self.speaker_fed = False
        self._in_loop(lambda: self.control.SpeakerStopped(flushed))

    def _display_changed(self, text):
        self.note({"display": text})
        self.control.DisplayChanged(text)

    def battery_level(self):
        return self.battery

    def request_dfu(self):
        self._in_loop(lambda: self.loop.create_task(self.enter_dfu()))

    def request_deep_sleep(self):
        self._in_loop(lambda: self.loop.create_task(self.power_off("asleep")))

    # --- power, bond, DFU
    async def tap(self, kind=None, at=None):
        """A tap, made now or at `at` (time.monotonic()); returns when it was made."""
        # A finger cannot tap twice within the app's 40 ms debounce: a tap asked for sooner (a
        # test that taps as soon as the display changed) comes when a finger's next one could.
        if at is None:
            since = time.monotonic() - self.last_tap
            if since < FINGER_GAP_S:
                await asyncio.sleep(FINGER_GAP_S - since)
            at = time.monotonic()
        self.last_tap = at
        self.stats["taps"] += 1
        if self.mode == "asleep":       # a tap wakes it: it boots
            await self.power_on()
        elif self.mode == "app":
            # A Halo's firmware classifies each tap (after its multi-tap window): 'single' here.
            self.vm.tap(kind or ("single" if self.halo else None), at)
        return at

    async def power_off(self, mode="off"):
        if self.mode == "dfu":
            await self.dfu.down()
        elif self.mode == "app":
            self.vm.power_off()
        self.mode = mode
        self.stats["power_offs" if mode == "off" else "deep_sleeps"] += 1
        self.display.clear()
        self.mic.stop()
        await self.disconnect_centrals()
        await self.unregister()
        self.note({"mode": mode})

    async def power_on(self):
        if self.mode == "app":
            return
        if self.mode == "dfu":
            await self.dfu.down()
        self.mode = "app"
        self.stats["power_ons"] += 1
        self.boot()
        self.vm.reset()
        self.note({"mode": "app"})
        self.schedule_register()

    def boot(self):
        """A boot (signal Booted once registered); on a Halo MCUboot runs first, before the app
        (and its Lua) starts."""
        self.booted = True
        if self.halo:
            self.smp.booted()
            self.note({"mcuboot": self.mcuboot.boot()})

    async def reset_bond(self):
        """The cradle's pin-hole reset: the Frame forgets its bonds (RemoveDevice of its views of
        the centrals, which drops their links) and boots."""
        for path in await self.bond.bonded_views():
            try:
                await self.call(BLUEZ, self.adapter_path, "org.bluez.Adapter1", "RemoveDevice",
                                "o", [path])
            except (DBusError, asyncio.TimeoutError) as e:
                warn(f"RemoveDevice {path}: {e}")
        self.bond.invalidate()
        self.stats["bond_resets"] += 1
        if self.mode == "app":
            self.vm.reset()

    async def enter_dfu(self):
        if self.mode != "app" or self.stopping:
            return
        self.mode = "dfu"
        self.stats["dfu_entries"] += 1
        self.vm.power_off()
        self.note({"mode": "dfu"})
        await self.disconnect_centrals()
        await self.unregister()
        self.dfu.state.cold_start()
        self.dfu.state.enter()
        await self.dfu_up()

    async def dfu_up(self):
        try:
            up = await self.dfu.up()
        except (DBusError, asyncio.TimeoutError) as e:
            warn(f"bootloader on {self.dfu.adapter}: {e}")
            return
        if up:
            print("DFU READY", flush=True)
        else:
            warn(f"adapter {self.dfu.adapter} does not exist: no 'Frame Update' is advertised")

    async def leave_dfu(self, version):
        """vdfu's hook: the bootloader starts the app (new image: `version`, None = unchanged)."""
        if self.mode != "dfu" or self.stopping:
            return
        await self.dfu.down()
        self.dfu.state.finish()
        if version is not None:
            self.version = version
            self.stats["dfu_boots"] += 1
        self.mode = "asleep"            # so that power_on boots
        await self.power_on()

    async def disconnect_centrals(self, adapter_path=None):
        await linkdrops.end_links(
            lambda path: self.call(BLUEZ, path, "org.bluez.Device1", "Disconnect"),
            self.bond.objects, adapter_path or self.adapter_path, warn)
        self.tx.stop()

    async def until_writable(self):
        """dbus-fast drops the connection when a send finds the socket full: wait for room."""
        fd = getattr(getattr(self.bus, "_writer", None), "fd", None)
        while fd is not None and not self.stopping and not select.select([], [fd], [], 0)[1]:
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

    def on_message(self, msg):
        if msg.message_type != MessageType.SIGNAL:
            return None
        if msg.member == "NameOwnerChanged" and msg.interface == "org.freedesktop.DBus":
            if msg.body[0] == BLUEZ:
                self.bluez_changed(msg.body[2] or None)
            return None
        if msg.sender != self.bluez_owner:
            return None
        self.bond.on_signal(msg)
        if msg.interface == "org.freedesktop.DBus.ObjectManager" and msg.body[0] == self.adapter_path \
                and "org.bluez.Adapter1" in msg.body[1]:
            if msg.member == "InterfacesRemoved":
                self.app_registered = self.adv_registered = False
                self.tx.stop()
            else:
                self.schedule_register()
        return None

    def bluez_changed(self, owner):
        if owner == self.bluez_owner:
            return
        self.bluez_owner = owner
        self.app_registered = self.adv_registered = False
        self.dfu.registered = False
        self.tx.stop()
        self.bond.invalidate()
        if owner is None:
            warn("org.bluez went away; waiting for it")
        else:
            self.schedule_register()

    def schedule_register(self):
        if self.stopping or self.bluez_owner is None or self.mode in ("off", "asleep", "rebooting"):
            return
        if self.register_task is None or self.register_task.done():
            self.register_task = self.loop.create_task(self.register_loop())

    async def register_loop(self):
        if self.mode == "dfu":
            await self.dfu_up()
            return

        async def named():
            address = (await self.call(BLUEZ, self.adapter_path, "org.freedesktop.DBus.Properties",
                                       "Get", "ss", ["org.bluez.Adapter1", "Address"]))[0].value
            self.address_text = address
            if self.args.name is None:
                self.local_name = f"{'Halo' if self.halo else 'Frame'} {address[-2:].upper()}"

        await gatt_objects.register_until_done(self, APP_PATH, ADV_PATH, warn,
                                               serving=lambda: self.mode == "app", before=named)
        if self.booted and self.app_registered and self.adv_registered:
            self.booted = False
            self.control.Booted(self.firmware_version())

    async def unregister(self):
        if self.register_task is not None:
            self.register_task.cancel()
        for flag, iface, member, path in (
                ("adv_registered", "org.bluez.LEAdvertisingManager1", "UnregisterAdvertisement", ADV_PATH),
                ("app_registered", "org.bluez.GattManager1", "UnregisterApplication", APP_PATH)):
            if getattr(self, flag) and self.bluez_owner is not None:
                try:
                    await asyncio.wait_for(self.call(BLUEZ, self.adapter_path, iface, member, "o", [path]), 2)
                except (DBusError, asyncio.TimeoutError) as e:
                    warn(f"{member}: {e}")
            setattr(self, flag, False)

    async def run(self, stop):
        self.loop = asyncio.get_running_loop()
        self.bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
        self.bond = BondCheck(self.bus, self.adapter_path)
        self.export()
        self.vm.start()
        if vdfu.DfuState.pending(self.dfu.state.fs) and not self.dfu.state.app_valid:
            self.mode = "dfu"       # an unfinished update: the bootloader comes up
            self.dfu.state.cold_start()
            self.vm.power_off()
        else:
            self.dfu.state.finish()
            self.boot()
            self.vm.reset()         # power-on: main.lua runs
        name = f"org.glassd.test.VirtualFrame.{self.adapter_name}"
        try:
            await self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                            "RequestName", "su", [name, 4])
        except DBusError as e:
            warn(f"cannot own {name} ({e.text}); the control is on {self.bus.unique_name}")
        self.bus.add_message_handler(self.on_message)
        for rule in ("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                     f"member='NameOwnerChanged',arg0='{BLUEZ}'",
                     f"type='signal',sender='{BLUEZ}',interface='org.freedesktop.DBus.ObjectManager'",
                     f"type='signal',sender='{BLUEZ}',interface='org.freedesktop.DBus.Properties',"
                     "arg0='org.bluez.Device1'"):
            await self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                            "AddMatch", "s", [rule])
        try:
            owner = (await self.call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "GetNameOwner", "s", [BLUEZ]))[0]
            self.bluez_changed(owner)
        except DBusError:
            warn("org.bluez is not on the bus yet; waiting for it")
        await stop.wait()
        self.stopping = True
        self.vm.stop()
        await self.unregister()
        if self.dfu.registered:
            await self.dfu.down()
        await asyncio.sleep(0.2)    # bluez may still read our objects: answer before leaving
        self.bus.disconnect()
        if self.record is not None:
            self.record.close()


def dfu_adapter_of(adapter):
    """hciN -> hci(N+1): where the bootloader advertises (address + 1 in the standard world)."""
    head = adapter.rstrip("0123456789")
    digits = adapter[len(head):]
    return f"{head}{int(digits) + 1}" if digits else adapter + "-dfu"


def main() -> int:
    parser = argparse.ArgumentParser(description="virtual Brilliant Frame (BLE peripheral)")
    parser.add_argument("--adapter", required=True, help="adapter to register on, e.g. hci1")
    parser.add_argument("--name", help="advertised LocalName (default: 'Frame XX', XX the last "
                        "byte of the adapter's address; 'Halo XX' with --halo)")
    parser.add_argument("--halo", action="store_true",
                        help="a Halo: adds the speaker characteristic 7a230005-… and the SMP service "
                        "(MCUboot slots, vsmp.py); 0x02 reboots, 0x05 removes main.lua")
    parser.add_argument("--no-speaker-stats", action="store_true",
                        help="a Halo without frame.speaker.stats() (firmware 0.8.8)")
    parser.add_argument("--tx-power", type=int, default=-45, help="advertised TxPower (default -45)")
    parser.add_argument("--mtu", type=int, default=247, help="ATT MTU (default 247)")
    parser.add_argument("--fs", metavar="DIR", help="the device's flash (default: a new temporary dir)")
    parser.add_argument("--firmware-version",
                        help="frame.FIRMWARE_VERSION (default v25.080.0838); on a Halo the version of "
                        "the image slot 0 starts with (MCUboot major.minor.revision[+build], default 0.8.7)")
    parser.add_argument("--battery", type=int, default=100, help="battery level %% (default 100)")
    parser.add_argument("--photo", default=os.path.normpath(FIXTURE_PHOTO),
                        help="the camera's picture until FeedImage (default Tests/Fixtures/photo.jpg)")
    parser.add_argument("--record", metavar="FILE", help="append RX writes, sent data and frames as JSON lines")
    parser.add_argument("--dfu-inactivity", type=float, default=300.0, metavar="SECONDS",
                        help="bootloader: boot the still valid app after this long idle (default 300)")
    halo = parser.add_argument_group("Halo (--halo): the SMP server and MCUboot (vsmp.py)")
    halo.add_argument("--self-confirm", action="store_true",
                      help="each image confirms itself at boot, as firmware 0.8.8 does")
    halo.add_argument("--smp-reset-seconds", type=float, default=2.0, metavar="S",
                      help="how long a reset keeps the Halo away (default 2)")
    halo.add_argument("--smp-buf-size", type=int, default=517, metavar="N",
                      help="MCUmgr buf_size: the longest request frame taken (default 517, "
                      "halo-firmware's CONFIG_MCUMGR_TRANSPORT_NETBUF_SIZE)")
    halo.add_argument("--smp-buf-count", type=int, default=4, metavar="N",
                      help="MCUmgr buf_count (default 4, Zephyr's default netbuf count)")
    halo.add_argument("--smp-slot-size", type=lambda t: int(t, 0), default=0x100000, metavar="N",
                      help="slot size: longer uploads are refused (default 0x100000)")
    halo.add_argument("--smp-legacy-rc", action="store_true",
                      help="successful upload, erase and reset answers carry rc: 0 "
                      "(CONFIG_MCUMGR_SMP_LEGACY_RC_BEHAVIOUR)")
    args = parser.parse_args()
    if args.firmware_version is None:
        args.firmware_version = "0.8.7" if args.halo else "v25.080.0838"
    if args.halo:
        try:
            vmcuboot.parse_version(args.firmware_version)
        except ValueError as e:
            parser.error(f"--firmware-version: {e}")
        if args.smp_buf_size < 64:
            parser.error("--smp-buf-size must be at least 64")
    if not 23 <= args.mtu <= 517:
        parser.error("--mtu must be within 23..517")
    if not 0 <= args.battery <= 100:
        parser.error("--battery must be within 0..100")
    if args.fs is None:
        args.fs = tempfile.mkdtemp(prefix="vframe-fs.")
    elif not os.path.isdir(args.fs):
        parser.error(f"--fs {args.fs}: not a directory")
    args.fs = os.path.abspath(args.fs)
    return run_until_signalled(Frame(args).run)


if __name__ == "__main__":
    sys.exit(main())
