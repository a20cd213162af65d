# SPDX-License-Identifier: GPL-2.0-or-later
#
# vdfu: the virtual Monocle's bootloader, a Nordic Secure DFU target ("DfuTarg", service FE59)
# as monocle-protocol.md §5 describes it. Used by virtual_monocle.py, which owns the mode
# switch (app <-> dfu). Test-only; glassd never links it. Written from the protocol facts only.
#
# DfuState is the object protocol (no D-Bus); DfuTarget puts it on an adapter with the
# standard BlueZ peripheral API. Rules (see Tests/World/README.md, "DFU target mode"):
# - command object max 256 bytes, data object max 4096; CRC-32 (zlib) over all bytes of the
#   object type received so far (the init packet; the whole image for data).
# - the init packet is parsed as the nRF protobuf (Packet.command or Packet.signed_command.
#   command -> init -> app_size). It must parse and state app_size > 0, else Execute answers
#   0B 02 (wrong format) / 0B 04 (init invalid); RefuseNextInit() makes the next one 0B 04.
#   The signature and hash are not checked.
# - the image counts as complete when the executed data equals app_size; then the target
#   "boots the new image" (after the Execute response went out).
# - state that survives a reset lives in the --fs folder (dfu_settings.json + dfu_bank.bin),
#   as the real bootloader keeps its settings page: after a reset the data rolls back to the
#   last executed object, as the nRF5 SDK does.

import asyncio
import json
import os
import struct
import zlib

from dbus_fast import DBusError
from dbus_fast.service import method

from linktiming import IN, OUT  # beside this file
import gatt_objects  # beside this file

DFU_SERVICE = "0000fe59-0000-1000-8000-00805f9b34fb"
DFU_CONTROL = "8ec90001-f315-4f60-9fb8-838830daea50"
DFU_PACKET = "8ec90002-f315-4f60-9fb8-838830daea50"
DFU_NAME = "DfuTarg"

CMD_MAX, DATA_MAX = 256, 4096
OP_CREATE, OP_PRN, OP_CRC, OP_EXECUTE, OP_SELECT, OP_ABORT = 0x01, 0x02, 0x03, 0x04, 0x06, 0x0C
OK, NOT_SUPPORTED, INVALID_PARAM, NO_RESOURCES, INVALID_OBJECT = 0x01, 0x02, 0x03, 0x04, 0x05
UNSUPPORTED_TYPE, NOT_PERMITTED, EXTENDED = 0x07, 0x08, 0x0B
EXT_WRONG_FORMAT, EXT_INIT_INVALID = 0x02, 0x04
SETTINGS, BANK = "dfu_settings.json", "dfu_bank.bin"
VERSION_MARKER = b"GLASSD-FW-VERSION:"   # a synthetic image may carry its 12-char version


def _fields(buf):
    """Protobuf fields of buf as (number, value): varints as int, length-delimited as bytes.
    Raises ValueError on anything malformed."""
    out, i = [], 0

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            if i >= len(buf) or shift > 63:
                raise ValueError("bad varint")
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v
    while i < len(buf):
        key = varint()
        num, wire = key >> 3, key & 7
        if wire == 0:
            out.append((num, varint()))
        elif wire == 2:
            n = varint()
            if i + n > len(buf):
                raise ValueError("truncated field")
            out.append((num, bytes(buf[i:i + n])))
            i += n
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            out.append((num, bytes(buf[i:i + n])))
            i += n
        else:
            raise ValueError(f"wire type {wire}")
    return out


def init_app_size(init):
    """app_size of an nRF DFU init packet (dfu-cc.proto: Packet{1 command, 2 signed_command
    {1 command}}, Command{2 init}, InitCommand{7 app_size}); None if it states none.
    ValueError if it is not such a protobuf."""
    top = dict((n, v) for n, v in _fields(init) if isinstance(v, bytes))
    command = top.get(1)
    if command is None and 2 in top:
        command = dict((n, v) for n, v in _fields(top[2]) if isinstance(v, bytes)).get(1)
    if command is None:
        raise ValueError("no command")
    inner = dict((n, v) for n, v in _fields(command) if isinstance(v, bytes)).get(2)
    if inner is None:
        raise ValueError("no init command")
    for n, v in _fields(inner):
        if n == 7 and isinstance(v, int):
            return v
    return None


def make_init_packet(app_size):
    """A minimal unsigned init packet for tests: Packet{command{op_code INIT, init{fw_version 0,
    hw_version 52, type APPLICATION, app_size}}}."""
    def varint(v):
        b = bytearray()
        while True:
            if v < 0x80:
                return bytes(b + bytes([v]))
            b.append(0x80 | (v & 0x7F))
            v >>= 7

    def field(num, value):
        if isinstance(value, int):
            return varint(num << 3) + varint(value)
        return varint(num << 3 | 2) + varint(len(value)) + value
    init = field(1, 0) + field(2, 52) + field(4, 1) + field(7, app_size)
    return field(1, field(1, 1) + field(2, init))


class DfuState:
    """The bootloader's object protocol; `stats` is the owner's counters dict."""

    def __init__(self, fs, stats):
        self.fs, self.stats = fs, stats
        self.refuse_next_init = False
        self.next_version = None
        self.cold_start()

    # --- persistence (the settings page and the bank)
    def _path(self, name):
        return os.path.join(self.fs, name)

    @staticmethod
    def pending(fs):
        """True if fs holds an unfinished DFU (the bootloader must come up, not the app)."""
        return os.path.exists(os.path.join(fs, SETTINGS))

    def _save(self):
        with open(self._path(SETTINGS) + ".tmp", "w") as f:
            json.dump({"init": self.init.hex(), "init_executed": self.init_executed,
                       "app_size": self.app_size, "executed": self.executed,
                       "app_valid": self.app_valid, "next_version": self.next_version}, f)
        os.replace(self._path(SETTINGS) + ".tmp", self._path(SETTINGS))

    def _write_bank(self):
        with open(self._path(BANK), "wb") as f:
            f.write(self.data)

    def cold_start(self):
        """Bootloader start: reload the settings; unexecuted data is dropped (the SDK rolls back
        to the last executed object), so is an unexecuted init packet."""
        try:
            with open(self._path(SETTINGS)) as f:
                s = json.load(f)
        except (OSError, ValueError):
            s = {}
        self.init_executed = bool(s.get("init_executed"))
        self.init = bytearray.fromhex(s.get("init", "")) if self.init_executed else bytearray()
        self.app_size = s.get("app_size")
        self.executed = int(s.get("executed", 0))
        self.app_valid = bool(s.get("app_valid", True))
        self.next_version = s.get("next_version", self.next_version)
        try:
            with open(self._path(BANK), "rb") as f:
                self.data = bytearray(f.read(self.executed))
        except OSError:
            self.data = bytearray()
        self.executed = len(self.data)
        self.cmd_size = len(self.init)    # size of the created command object
        self.obj_start = self.obj_size = 0   # current data object: start offset, created size
        self.current = 1                  # object type of the last Create/Select
        self.prn = self.packets = 0
        self.init_exec_bytes = bytes(self.init) if self.init_executed else None

    def enter(self):
        """Entered from the app (update.micropython()): settings page written."""
        self._save()

    def finish(self):
        for name in (SETTINGS, SETTINGS + ".tmp", BANK):
            try:
                os.remove(self._path(name))
            except OSError:
                pass

    # --- protocol
    def _crc(self, obj_type):
        buf = self.init if obj_type == 1 else self.data
        return len(buf), zlib.crc32(bytes(buf)) & 0xFFFFFFFF

    def control(self, req):
        """One control point write -> (response bytes, boot_after: bool)."""
        if not req:
            return bytes([0x60, 0, NOT_SUPPORTED]), False
        op = req[0]
        result, payload, boot = self._control(op, bytes(req[1:]))
        if isinstance(result, tuple):   # extended error
            return bytes([0x60, op, EXTENDED, result[1]]), False
        return bytes([0x60, op, result]) + payload, boot

    def _control(self, op, arg):
        if op == OP_SELECT:
            if len(arg) != 1:
                return INVALID_PARAM, b"", False
            if arg[0] not in (1, 2):
                return UNSUPPORTED_TYPE, b"", False
            self.current = arg[0]
            off, crc = self._crc(arg[0])
            return OK, struct.pack("<III", CMD_MAX if arg[0] == 1 else DATA_MAX, off, crc), False
        if op == OP_CREATE:
            if len(arg) != 5:
                return INVALID_PARAM, b"", False
            kind, size = arg[0], struct.unpack("<I", arg[1:])[0]
            if kind not in (1, 2):
                return UNSUPPORTED_TYPE, b"", False
            if size == 0:
                return INVALID_PARAM, b"", False
            if size > (CMD_MAX if kind == 1 else DATA_MAX):
                return NO_RESOURCES, b"", False
            if kind == 1:
                self.init = bytearray()
                self.cmd_size = size
                self.init_executed = False
            else:
                if not self.init_executed:
                    return NOT_PERMITTED, b"", False
                del self.data[self.executed:]   # a new object replaces an unexecuted one
                if self.app_size is not None and self.executed + size > self.app_size:
                    return NO_RESOURCES, b"", False
                self.obj_start, self.obj_size = self.executed, size
                if self.app_valid:              # single bank: the old app is overwritten
                    self.app_valid = False
                    self._save()
            self.current = kind
            self.packets = 0                    # the PRN count restarts with each object
            self.stats["dfu_objects_created"] += 1
            return OK, b"", False
        if op == OP_PRN:
            if len(arg) != 2:
                return INVALID_PARAM, b"", False
            self.prn, self.packets = struct.unpack("<H", arg)[0], 0
            return OK, b"", False
        if op == OP_CRC:
            self.stats["dfu_crc_requests"] += 1
            return OK, struct.pack("<II", *self._crc(self.current)), False
        if op == OP_EXECUTE:
            self.stats["dfu_executes"] += 1
            return self._execute()
        if op == OP_ABORT:
            del self.data[self.executed:]
            self.obj_size = 0
            if not self.init_executed:
                self.init = bytearray()
            return OK, b"", False
        return NOT_SUPPORTED, b"", False

    def _execute(self):
        if self.current == 1:
            if self.cmd_size == 0 or len(self.init) != self.cmd_size:
                return INVALID_OBJECT, b"", False
            if self.init_executed:
                return OK, b"", False           # twice is harmless
            if self.refuse_next_init:
                self.refuse_next_init = False
                return (EXTENDED, EXT_INIT_INVALID), b"", False
            try:
                size = init_app_size(bytes(self.init))
            except ValueError:
                return (EXTENDED, EXT_WRONG_FORMAT), b"", False
            if not size:
                return (EXTENDED, EXT_INIT_INVALID), b"", False
            if self.init_exec_bytes != bytes(self.init):
                # another image: start over (the same init packet again resumes the data)
                self.data, self.executed, self.obj_size = bytearray(), 0, 0
                self._write_bank()
            self.init_executed, self.app_size = True, size
            self.init_exec_bytes = bytes(self.init)
            self._save()
            return OK, b"", False
        # data object
        if not self.init_executed:
            return NOT_PERMITTED, b"", False
        got = len(self.data) - self.obj_start
        if self.obj_size == 0 or self.executed > self.obj_start:
            return NOT_PERMITTED, b"", False    # already executed (or never created)
        if got != self.obj_size:
            # As the nRF5 SDK's request handler: the created size against the bytes since the
            # last execute, else "operation not permitted" (also for a created, still empty one).
            return NOT_PERMITTED, b"", False
        self.executed = len(self.data)
        self._write_bank()
        self._save()
        return OK, b"", self.executed == self.app_size

    def packet(self, data):
        """One packet write -> a PRN notification or None."""
        self.stats["dfu_bytes_received"] += len(data)
        if self.current == 1:
            room = self.cmd_size - len(self.init)
            self.init += data[:max(0, room)]
        else:
            if self.obj_size == 0 or self.executed > self.obj_start:
                return None                     # no open object: dropped, as the SDK does
            room = self.obj_start + self.obj_size - len(self.data)
            chunk, at = data[:max(0, room)], len(self.data)
            self.data += chunk
            # the bank is written as it arrives, so a link drop keeps the partial object
            with open(self._path(BANK), "r+b" if os.path.exists(self._path(BANK)) else "wb") as f:
                f.seek(at)
                f.write(chunk)
        if self.prn:
            self.packets += 1
            if self.packets >= self.prn:
                self.packets = 0
                return bytes([0x60, OP_CRC, OK]) + struct.pack("<II", *self._crc(self.current))
        return None

    def link_lost(self):
        self.prn = self.packets = 0

    def image_version(self):
        """The version the new image boots with: the marker in the image, else
        SetNextFirmwareVersion's, else None (unchanged)."""
        i = self.data.find(VERSION_MARKER)
        if i >= 0:
            v = bytes(self.data[i + len(VERSION_MARKER):i + len(VERSION_MARKER) + 12])
            try:
                return v.decode("ascii")
            except UnicodeDecodeError:
                pass
        return self.next_version


class _Char(gatt_objects.GattCharacteristic):
    """The control point (write, notify) or the packet characteristic (write without response)."""

    def __init__(self, target, service_path, uuid):
        super().__init__(service_path, uuid)
        self.t = target

    def flags(self):
        return ["write", "notify"] if self.gatt_uuid == DFU_CONTROL else ["write-without-response"]

    def mtu(self):
        return self.t.mtu

    @method()
    def WriteValue(self, value: "ay", options: "a{sv}"):
        self.check_length(value)
        # At its connection event under the link timing model (virtual_monocle.py takes control
        # point writes with response then, to answer them later).
        value = bytes(value)
        self.t.m.link.send(IN, lambda: self.t.on_write(self.gatt_uuid, value))

    @method()
    def StartNotify(self):
        if self.gatt_uuid != DFU_CONTROL:
            raise DBusError("org.bluez.Error.NotSupported", "Notify not supported")
        self.set_notifying(True)

    @method()
    def StopNotify(self):
        self.stop()
        if self.gatt_uuid == DFU_CONTROL:    # BlueZ stops notify sessions when the link drops
            self.t.state.link_lost()

    def stop(self):
        self.set_notifying(False)

    def notify(self, data):
        if self.gatt_notifying and not self.t.m.drops.dropping:
            self.t.m.link.send(OUT, lambda: self._emit(data))    # at once unless timed

    def _emit(self, data):
        if self.gatt_notifying:
            self.gatt_value = data
            self.emit_properties_changed({"Value": data})


class _Advertisement(gatt_objects.Advertisement):
    def __init__(self, target):
        super().__init__()
        self.t = target

    def local_name(self):
        return DFU_NAME

    def service_uuids(self):
        return [DFU_SERVICE]

    def tx_power(self):
        return self.t.tx_power

    def released(self):
        self.t.registered = False


class DfuTarget:
    """The DfuTarg peripheral on adapter `adapter` (hci(N+1)). `monocle` gives call(),
    disconnect_centrals(path), note(), the bus, the boot hook and `link` (linktiming.py: writes
    and notifications at their connection events when the timing model is on) and `drops`
    (linkdrops.py)."""

    def __init__(self, monocle, root, adapter, fs, stats, mtu, tx_power, inactivity):
        self.m, self.root, self.adapter = monocle, root, adapter
        self.adapter_path = f"/org/bluez/{adapter}"
        self.app_path, self.adv_path = f"{root}/dfu/app", f"{root}/dfu/adv0"
        self.mtu, self.tx_power, self.inactivity = mtu, tx_power, inactivity
        self.state = DfuState(fs, stats)
        self.registered = False
        self.control = self.packet = None
        self.timer = None

    def export(self, bus):
        svc = f"{self.app_path}/service0"
        self.control_path = f"{svc}/char0"
        self.control = _Char(self, svc, DFU_CONTROL)
        self.packet = _Char(self, svc, DFU_PACKET)
        bus.export(svc, gatt_objects.GattService(DFU_SERVICE))
        bus.export(self.control_path, self.control)
        bus.export(f"{svc}/char1", self.packet)
        bus.export(self.adv_path, _Advertisement(self))

    def touch(self):
        """Restart the inactivity timer (the SDK's 3 minutes; after it a valid app boots)."""
        if self.timer is not None:
            self.timer.cancel()
        if self.inactivity > 0:
            self.timer = asyncio.get_running_loop().call_later(self.inactivity, self._idle)

    def _idle(self):
        self.timer = None
        if self.state.app_valid:
            self.m.note({"dfu": "inactivity timeout: booting the app"})
            asyncio.get_running_loop().create_task(self.m.leave_dfu(None))

    def on_write(self, uuid, value):
        if self.m.drops.dropping:
            return      # lost with the link that is going
        self.touch()
        if uuid == DFU_PACKET:
            prn = self.state.packet(value)
            if prn is not None:
                self.control.notify(prn)
            self.m.drops.image_held(len(self.state.data))
            return
        resp, boot = self.state.control(value)
        self.m.note({"dfu": value.hex(), "response": resp.hex()})
        loop = asyncio.get_running_loop()
        # the response is a notification after the write's reply, as on the air
        loop.call_soon(self.control.notify, resp)
        if boot:
            version = self.state.image_version()
            loop.call_later(0.2, lambda: loop.create_task(self.m.leave_dfu(version)))

    async def adapter_exists(self):
        try:
            await self.m.call("org.bluez", self.adapter_path, "org.freedesktop.DBus.Properties",
                              "Get", "ss", ["org.bluez.Adapter1", "Address"])
            return True
        except (DBusError, asyncio.TimeoutError):
            return False

    async def up(self):
        """Register the DfuTarg app and advertisement; False if the adapter is missing."""
        if not await self.adapter_exists():
            return False
        for member, iface, path in (
                ("RegisterApplication", "org.bluez.GattManager1", self.app_path),
                ("RegisterAdvertisement", "org.bluez.LEAdvertisingManager1", self.adv_path)):
            try:
                await self.m.call("org.bluez", self.adapter_path, iface, member, "oa{sv}",
                                  [path, {}])
            except DBusError as e:
                if e.type != "org.bluez.Error.AlreadyExists":
                    raise
        self.registered = True
        self.touch()
        return True

    async def down(self):
        """The bootloader resets: links drop, the registrations go."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        await self.m.disconnect_centrals(self.adapter_path)
        self.lost()
        if not self.registered:
            return
        for member, iface, path in (
                ("UnregisterAdvertisement", "org.bluez.LEAdvertisingManager1", self.adv_path),
                ("UnregisterApplication", "org.bluez.GattManager1", self.app_path)):
            try:
                await self.m.call("org.bluez", self.adapter_path, iface, member, "o", [path])
            except (DBusError, asyncio.TimeoutError):
                pass
        self.registered = False

    def lost(self):
        """Link gone (or bluez gone): notifications off, PRN back to 0."""
        self.state.link_lost()
        if self.control is not None:
            self.control.stop()
