# SPDX-License-Identifier: GPL-2.0-or-later
"""What the test world's fake peripherals (the virtual Monocle, the virtual Frame and the bootloader, vdfu.py) export
to BlueZ and have in common: a GATT service, a characteristic's properties and the methods no
peripheral here supports, and an advertisement. Each peripheral subclasses them for its own writes
and notifications. Test-only, like the rest of Tests/World.
"""
import asyncio

from dbus_fast import DBusError
from dbus_fast.constants import PropertyAccess
from dbus_fast.service import ServiceInterface, dbus_property, method


class GattService(ServiceInterface):
    def __init__(self, uuid):
        super().__init__("org.bluez.GattService1")
        self.gatt_uuid = uuid

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return self.gatt_uuid

    @dbus_property(access=PropertyAccess.READ)
    def Primary(self) -> "b":
        return True

    @dbus_property(access=PropertyAccess.READ)
    def Includes(self) -> "ao":
        return []


class GattCharacteristic(ServiceInterface):
    """org.bluez.GattCharacteristic1: its properties, ReadValue refused, Confirm ignored.
    Subclasses give flags() and mtu(), and WriteValue, StartNotify and StopNotify."""

    def __init__(self, service_path, uuid):
        super().__init__("org.bluez.GattCharacteristic1")
        self.gatt_service_path = service_path
        self.gatt_uuid = uuid
        self.gatt_value = b""
        self.gatt_notifying = False

    def flags(self):
        raise NotImplementedError

    def mtu(self):
        raise NotImplementedError

    def check_length(self, value):
        """A write longer than the ATT MTU allows is refused as BlueZ refuses it."""
        limit = self.mtu() - 3
        if len(value) > limit:
            raise DBusError("org.bluez.Error.InvalidValueLength", f"Invalid value length {len(value)} > {limit}")

    def set_notifying(self, on):
        """Changes Notifying and signals it; returns whether it changed."""
        if self.gatt_notifying == on:
            return False
        self.gatt_notifying = on
        self.emit_properties_changed({"Notifying": on})
        return True

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return self.gatt_uuid

    @dbus_property(access=PropertyAccess.READ)
    def Service(self) -> "o":
        return self.gatt_service_path

    @dbus_property(access=PropertyAccess.READ)
    def Flags(self) -> "as":
        return self.flags()

    @dbus_property(access=PropertyAccess.READ)
    def Value(self) -> "ay":
        return self.gatt_value

    @dbus_property(access=PropertyAccess.READ)
    def Notifying(self) -> "b":
        return self.gatt_notifying

    @dbus_property(access=PropertyAccess.READ)
    def MTU(self) -> "q":
        return self.mtu()

    @method()
    def ReadValue(self, options: "a{sv}") -> "ay":
        raise DBusError("org.bluez.Error.NotPermitted", "Read not permitted")

    @method()
    def Confirm(self):
        pass  # only stock bluezoo calls it, after every notification


class Advertisement(ServiceInterface):
    """org.bluez.LEAdvertisement1 of a connectable peripheral. Subclasses give local_name(),
    service_uuids(), tx_power() and released()."""

    def __init__(self):
        super().__init__("org.bluez.LEAdvertisement1")

    @dbus_property(access=PropertyAccess.READ)
    def Type(self) -> "s":
        return "peripheral"

    @dbus_property(access=PropertyAccess.READ)
    def LocalName(self) -> "s":
        return self.local_name()

    @dbus_property(access=PropertyAccess.READ)
    def ServiceUUIDs(self) -> "as":
        return self.service_uuids()

    @dbus_property(access=PropertyAccess.READ)
    def Discoverable(self) -> "b":
        return True

    @dbus_property(access=PropertyAccess.READ)
    def TxPower(self) -> "n":
        return self.tx_power()

    @method()
    def Release(self):
        self.released()


async def register_until_done(peripheral, app_path, adv_path, warn, serving=lambda: True, before=None):
    """Registers `peripheral`'s GATT application and advertisement with BlueZ, retrying with
    backoff (bluetoothd may be restarting) while `serving()` and BlueZ is on the bus, then prints
    READY. `before()` (async) runs at the start of each try. The peripheral has `call`,
    `adapter_path`, `stopping`, `bluez_owner`, `app_registered` and `adv_registered`."""
    delay = 0.1
    while not peripheral.stopping and peripheral.bluez_owner is not None and serving():
        try:
            if before is not None:
                await before()
            if not peripheral.app_registered:
                await peripheral.call("org.bluez", peripheral.adapter_path, "org.bluez.GattManager1",
                                      "RegisterApplication", "oa{sv}", [app_path, {}])
                peripheral.app_registered = True
            if not peripheral.adv_registered:
                await peripheral.call("org.bluez", peripheral.adapter_path, "org.bluez.LEAdvertisingManager1",
                                      "RegisterAdvertisement", "oa{sv}", [adv_path, {}])
                peripheral.adv_registered = True
            print("READY", flush=True)
            return
        except DBusError as e:
            if e.type == "org.bluez.Error.AlreadyExists":
                # Registered by an earlier attempt whose reply was lost.
                if not peripheral.app_registered:
                    peripheral.app_registered = True
                else:
                    peripheral.adv_registered = True
                continue
            warn(f"registration on {peripheral.adapter_path} failed: {e.type}: {e.text}; retrying")
        except asyncio.TimeoutError:
            warn(f"registration on {peripheral.adapter_path} timed out; retrying")
        await asyncio.sleep(delay)
        delay = min(delay * 2, 2.0)
