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
# e5700001-… (RX e5700002-…, TX e5700003-…). Every RX write is echoed as a
# notification on the TX of the same service while it notifies, and with
# --record appended to FILE as one JSON line. Writes longer than MTU-3 are
# rejected with org.bluez.Error.InvalidValueLength.
#
# It follows org.bluez: when bluetoothd (or bzworld) goes away and comes back,
# or the adapter is removed and re-added, it registers again. It prints
# "READY" each time both registrations have succeeded. Exits 0 on
# SIGTERM/SIGINT after unregistering.

import argparse
import asyncio
import json
import sys
from collections import deque

from worldloop import run_until_signalled  # beside this file

from dbus_fast import BusType, DBusError, Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.constants import PropertyAccess
from dbus_fast.service import ServiceInterface, dbus_property, method

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

NOTIFY_YIELD_EVERY = 8      # dbus-fast drops the connection on long sync bursts
CALL_TIMEOUT = 10.0


def warn(text):
    sys.stderr.write(f"virtual_monocle: {text}\n")
    sys.stderr.flush()


class GattService(ServiceInterface):
    def __init__(self, uuid):
        super().__init__("org.bluez.GattService1")
        self.vm_uuid = uuid

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return self.vm_uuid

    @dbus_property(access=PropertyAccess.READ)
    def Primary(self) -> "b":
        return True

    @dbus_property(access=PropertyAccess.READ)
    def Includes(self) -> "ao":
        return []


class GattCharacteristic(ServiceInterface):
    """RX (role "rx": written by the central) or TX (role "tx": notifies)."""

    def __init__(self, monocle, service_key, service_path, uuid, role):
        super().__init__("org.bluez.GattCharacteristic1")
        self.vm_monocle = monocle
        self.vm_service_key = service_key
        self.vm_service_path = service_path
        self.vm_uuid = uuid
        self.vm_role = role
        self.vm_value = b""
        self.vm_notifying = False
        self.vm_outbox = deque()
        self.vm_wake = asyncio.Event()
        self.vm_task = None

    # --- properties
    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return self.vm_uuid

    @dbus_property(access=PropertyAccess.READ)
    def Service(self) -> "o":
        return self.vm_service_path

    @dbus_property(access=PropertyAccess.READ)
    def Flags(self) -> "as":
        return ["write", "write-without-response"] if self.vm_role == "rx" else ["notify"]

    @dbus_property(access=PropertyAccess.READ)
    def Value(self) -> "ay":
        return self.vm_value

    @dbus_property(access=PropertyAccess.READ)
    def Notifying(self) -> "b":
        return self.vm_notifying

    @dbus_property(access=PropertyAccess.READ)
    def MTU(self) -> "q":
        return self.vm_monocle.mtu

    # --- methods
    @method()
    def ReadValue(self, options: "a{sv}") -> "ay":
        raise DBusError("org.bluez.Error.NotPermitted", "Read not permitted")

    @method()
    def WriteValue(self, value: "ay", options: "a{sv}"):
        if self.vm_role != "rx":
            raise DBusError("org.bluez.Error.NotPermitted", "Write not permitted")
        limit = self.vm_monocle.mtu - 3
        if len(value) > limit:
            raise DBusError("org.bluez.Error.InvalidValueLength",
                            f"Invalid value length {len(value)} > {limit}")
        kind = options.get("type")
        kind = kind.value if isinstance(kind, Variant) else "request"
        self.vm_monocle.on_write(self.vm_service_key, bytes(value), kind)

    @method()
    def StartNotify(self):
        if self.vm_role != "tx":
            raise DBusError("org.bluez.Error.NotSupported", "Notify not supported")
        if not self.vm_notifying:
            self.vm_notifying = True
            self.emit_properties_changed({"Notifying": True})

    @method()
    def StopNotify(self):
        if self.vm_role != "tx":
            raise DBusError("org.bluez.Error.NotSupported", "Notify not supported")
        self.stop_notifying()

    @method()
    def Confirm(self):
        pass  # no-op: only stock bluezoo calls it, after every notification

    # --- notification path
    def stop_notifying(self, signal_it=True):
        self.vm_outbox.clear()
        if self.vm_notifying:
            self.vm_notifying = False
            if signal_it:
                self.emit_properties_changed({"Notifying": False})

    def notify(self, data: bytes):
        """Queue data as notifications of at most MTU-3 bytes each."""
        if not self.vm_notifying:
            return
        step = max(1, self.vm_monocle.mtu - 3)
        for i in range(0, len(data), step):
            self.vm_outbox.append(data[i:i + step])
        if self.vm_task is None or self.vm_task.done():
            self.vm_task = asyncio.get_running_loop().create_task(self._drain())
        self.vm_wake.set()

    async def _drain(self):
        sent = 0
        while True:
            await self.vm_wake.wait()
            self.vm_wake.clear()
            while self.vm_outbox:
                if not self.vm_notifying:
                    self.vm_outbox.clear()
                    break
                self.vm_value = self.vm_outbox.popleft()
                self.emit_properties_changed({"Value": self.vm_value})
                sent += 1
                if sent % NOTIFY_YIELD_EVERY == 0:
                    await asyncio.sleep(0)
                    await self.vm_monocle.writer_drained()


class Advertisement(ServiceInterface):
    def __init__(self, monocle):
        super().__init__("org.bluez.LEAdvertisement1")
        self.vm_monocle = monocle

    @dbus_property(access=PropertyAccess.READ)
    def Type(self) -> "s":
        return "peripheral"

    @dbus_property(access=PropertyAccess.READ)
    def LocalName(self) -> "s":
        return self.vm_monocle.local_name

    @dbus_property(access=PropertyAccess.READ)
    def ServiceUUIDs(self) -> "as":
        return [SERIAL_SERVICE]

    @dbus_property(access=PropertyAccess.READ)
    def Discoverable(self) -> "b":
        return True

    @dbus_property(access=PropertyAccess.READ)
    def TxPower(self) -> "n":
        return self.vm_monocle.tx_power

    @method()
    def Release(self):
        self.vm_monocle.on_advertisement_released()


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

    # --- objects
    def export(self):
        for index, (key, svc_uuid, rx_uuid, tx_uuid) in enumerate((
                ("serial", SERIAL_SERVICE, SERIAL_RX, SERIAL_TX),
                ("data", DATA_SERVICE, DATA_RX, DATA_TX))):
            svc_path = f"{APP_PATH}/service{index}"
            service = GattService(svc_uuid)
            rx = GattCharacteristic(self, key, svc_path, rx_uuid, "rx")
            tx = GattCharacteristic(self, key, svc_path, tx_uuid, "tx")
            self.bus.export(svc_path, service)
            self.bus.export(f"{svc_path}/char0", rx)
            self.bus.export(f"{svc_path}/char1", tx)
            self.services[key] = (service, rx, tx)
        self.bus.export(ADV_PATH, Advertisement(self))

    def on_write(self, key, value: bytes, kind: str):
        if self.record is not None:
            self.record.write(json.dumps({"service": key, "hex": value.hex(), "type": kind}) + "\n")
            self.record.flush()
        self.services[key][2].notify(value)

    def reset_notifications(self):
        for _, _, tx in self.services.values():
            tx.stop_notifying()

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

    def on_message(self, msg: Message):
        if msg.message_type != MessageType.SIGNAL:
            return None
        if msg.member == "NameOwnerChanged" and msg.interface == "org.freedesktop.DBus":
            name, _, new = msg.body
            if name == BLUEZ:
                self.bluez_changed(new or None)
        elif msg.interface == "org.freedesktop.DBus.ObjectManager" and msg.sender == self.bluez_owner:
            path, interfaces = msg.body[0], msg.body[1]
            if path != self.adapter_path or "org.bluez.Adapter1" not in interfaces:
                return None
            if msg.member == "InterfacesRemoved":
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
        delay = 0.1
        while not self.stopping and self.bluez_owner is not None:
            try:
                if not self.app_registered:
                    await self.call(BLUEZ, self.adapter_path, "org.bluez.GattManager1",
                                    "RegisterApplication", "oa{sv}", [APP_PATH, {}])
                    self.app_registered = True
                if not self.adv_registered:
                    await self.call(BLUEZ, self.adapter_path, "org.bluez.LEAdvertisingManager1",
                                    "RegisterAdvertisement", "oa{sv}", [ADV_PATH, {}])
                    self.adv_registered = True
                print("READY", flush=True)
                return
            except DBusError as e:
                if e.type == "org.bluez.Error.AlreadyExists":
                    # Registered by an earlier attempt whose reply was lost.
                    if not self.app_registered:
                        self.app_registered = True
                    else:
                        self.adv_registered = True
                    continue
                warn(f"registration on {self.adapter_path} failed: {e.type}: {e.text}; retrying")
            except asyncio.TimeoutError:
                warn(f"registration on {self.adapter_path} timed out; retrying")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)

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
        self.bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
        self.export()
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
        if self.register_task is not None:
            self.register_task.cancel()
        await self.unregister()
        self.bus.disconnect()
        if self.record is not None:
            self.record.close()


def main() -> int:
    parser = argparse.ArgumentParser(description="virtual Brilliant Labs Monocle (BLE peripheral)")
    parser.add_argument("--adapter", required=True, help="adapter to register on, e.g. hci1")
    parser.add_argument("--name", default="monocle", help="advertised LocalName (default monocle)")
    parser.add_argument("--tx-power", type=int, default=-45,
                        help="advertised TxPower in dBm (default -45)")
    parser.add_argument("--mtu", type=int, default=256, help="ATT MTU (default 256)")
    parser.add_argument("--record", metavar="FILE",
                        help="append every accepted RX write to FILE as a JSON line")
    args = parser.parse_args()
    if args.mtu < 23 or args.mtu > 517:
        parser.error("--mtu must be within 23..517")

    monocle = Monocle(args)
    return run_until_signalled(monocle.run)


if __name__ == "__main__":
    sys.exit(main())
