#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bzworld: the Bluetooth LE test world of glassd.
#
# It runs bluezoo 1.0.2 (a BlueZ D-Bus mock, GPL-2.0) on the bus named by
# $DBUS_SYSTEM_BUS_ADDRESS, with the same command line as `bluezoo`, after
# monkeypatching the defects that matter for glassd (list in README.md and
# in install_patches() below). It imports GPL-2.0 code, so this file is
# GPL-2.0-or-later. It is a test-only tool: glassd never links or ships it.
#
# Every patch reaches into bluezoo 1.0.2 internals (sdbus `original_method`,
# `property_setter`, name-mangled private methods), so the version is pinned
# and checked at start-up.
#
# Usage: bzworld.py [-v] [-q] [--bus-session] [--auto-enable]
#                   [--scan-interval SECONDS] [--temporary-timeout SECONDS]
#                   [-a ADDRESS]...
# Prints one line "READY" on stdout once org.bluez is owned and the adapters
# exist. Exits 0 on SIGTERM/SIGINT.

import asyncio
import logging
import socket
import sys
import weakref
from argparse import ArgumentParser
from collections import deque
from importlib.metadata import version

from worldloop import run_until_signalled  # beside this file

BLUEZOO_VERSION = "1.0.2"

try:
    _found = version("bluezoo")
except Exception:  # not installed at all
    _found = None
if _found != BLUEZOO_VERSION:
    sys.stderr.write(f"bzworld: needs bluezoo=={BLUEZOO_VERSION}, found {_found} "
                     "(run Tests/World/setup and use its venv)\n")
    sys.exit(2)

import sdbus  # noqa: E402
from sdbus.dbus_proxy_async_interface_base import DBUS_CLASS_TO_META  # noqa: E402
from sdbus.dbus_proxy_async_method import DbusMethodAsync  # noqa: E402
from sdbus.sd_bus_internals import SdBusInterface  # noqa: E402

from bluezoo import events  # noqa: E402
from bluezoo.adapter import Adapter  # noqa: E402
from bluezoo.bluezoo import BluezMockService  # noqa: E402
from bluezoo.controller import BlueZooDoesNotExistError  # noqa: E402
from bluezoo.device import Device  # noqa: E402
from bluezoo.exceptions import (DBusBluezAlreadyExistsError,  # noqa: E402
                                DBusBluezAuthenticationFailedError, DBusBluezDoesNotExistError, DBusBluezFailedError,
                                DBusBluezInProgressError, DBusBluezInvalidArgumentsError,
                                DBusBluezNotConnectedError, DBusBluezNotPermittedError,
                                DBusBluezNotReadyError, DBusBluezNotSupportedError)
from bluezoo.interfaces.Device import DeviceInterface  # noqa: E402
from bluezoo.gatt import (GattCharacteristicClient, GattCharacteristicClientLink,  # noqa: E402
                          GattDescriptorClient, GattDescriptorClientLink, GattManager,
                          GattServiceClient, GattServiceClientLink)
from bluezoo.adv import LEAdvertisingManager  # noqa: E402
from bluezoo.utils import BluetoothAddress, BluetoothUUID, NoneTask, setup_default_bus  # noqa: E402

log = logging.getLogger("bzworld")

# BlueZ >= 5.82 Device1.Disconnected reasons.
REASON_LOCAL = ("org.bluez.Reason.Local", "Connection terminated by local host")
REASON_REMOTE = ("org.bluez.Reason.Remote", "Connection terminated by remote user")
REASON_TIMEOUT = ("org.bluez.Reason.Timeout", "Connection timeout")

DEFAULT_RSSI = -60          # RSSI of an advertiser without TxPower
CONNECT_FAIL_DELAY = 0.2    # seconds before Connect to an absent peer fails


class World:
    """Global state of the patched world."""
    mock: BluezMockService = None
    scan_interval: int = 10
    temporary_timeout: float = 30      # seconds; 0 = temporary devices never expire
    links: set = set()                 # live Link objects
    rssi_override: dict = {}           # ADDRESS -> RSSI (Test1.SetRSSI)
    fail_connects: dict = {}           # ADDRESS -> Connect() calls left to fail (Test1.FailConnects)
    hold_rssi: bool = False            # RSSI kept until discovery stops (Test1.HoldRSSI)
    hold_devices: bool = False         # temporary devices kept (Test1.HoldDevices)
    inflight: set = set()              # reply tasks of removed objects (kept alive)
    background: set = set()


class Link:
    """One LE connection: `central` is the central adapter's Device1 for the
    peripheral, `periph` the peripheral adapter's Device1 for the central."""

    def __init__(self, central: Device, periph: Device):
        self.central = central
        self.periph = periph
        self.apps = []      # GattApplicationClient objects served on this link
        self.objects = []   # exported GATT link objects, parents first
        self.alive = True

    def __str__(self):
        return f"link[{self.periph.address}->{self.central.address}]"


# ----------------------------------------------------------------- helpers

def _spawn(coro):
    """Fire-and-forget task that logs (never raises) its failure."""
    async def run():
        try:
            await coro
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the peer may be gone: expected
            log.debug("background call failed: %s", e)
    task = asyncio.get_running_loop().create_task(run())
    World.background.add(task)
    task.add_done_callback(World.background.discard)
    return task


def _dev_path(adapter, address: str) -> str:
    return f"{adapter.get_object_path()}/dev_{address.replace(':', '_')}"


def _find_adapter(address: str):
    for adapter in World.mock.adapters.values():
        if adapter.address.upper() == address.upper():
            return adapter
    return None


def _prop(obj, attr):
    """The sdbus DbusPropertyAsync descriptor behind obj.<attr>."""
    return getattr(type(obj), attr)


def _emit_changed(obj, attr, value):
    """Emit PropertiesChanged for obj.<attr> = value (no setter involved)."""
    if obj.__dict__.get("_bzw_removed") or obj._dbus.attached_bus is None:
        return
    prop = _prop(obj, attr)
    obj.properties_changed.emit(
        (prop.interface_name, {prop.property_name: (prop.property_signature, value)}, []))


def _set(obj, attr, value):
    """Synchronous Property.set_async: call the (private) setter, signal it."""
    _prop(obj, attr).property_setter(obj, value)
    _emit_changed(obj, attr, value)


def _export(obj, path):
    World.mock.export_object(path, obj)


def _remove(obj):
    """Unexport an object. Calls in flight on it are allowed to finish (sdbus
    would cancel them and the caller would get no reply at all)."""
    obj.__dict__["_bzw_removed"] = True
    handle = World.mock.manager_export_handles.get(obj)
    if handle is None:
        return
    for task in list(handle._tasks):
        if not task.done():
            World.inflight.add(task)
            task.add_done_callback(World.inflight.discard)
    handle._tasks = set()
    World.mock.remove_object(obj)


def _replace_method(cls, name, fn):
    member = cls.__dict__[name]
    assert isinstance(member, DbusMethodAsync), (cls, name)
    original = member.original_method
    member.original_method = fn
    return original


def _dbus_method(fn):
    """Log unexpected exceptions of a patched D-Bus method, keep D-Bus errors."""
    async def wrapper(*args, **kwargs):
        try:
            return await fn(*args, **kwargs)
        except sdbus.SdBusBaseError:
            raise
        except Exception as e:
            log.exception("error in %s", fn.__name__)
            raise DBusBluezFailedError(str(e)) from e
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    return wrapper


def _sender() -> str:
    return sdbus.get_current_message().sender


def _app_gone_owners(adapter) -> set:
    """Clients whose GATT application on this adapter went away while their
    advertisement stayed: that advertisement no longer counts (P3)."""
    return adapter.__dict__.setdefault("_bzw_app_gone", set())


def _usable_advertisement(adapter):
    gone = _app_gone_owners(adapter)
    for adv in adapter.advertisements.values():
        if adv.get_client() not in gone:
            return adv
    return None


def _connectable(adapter) -> bool:
    if adapter is None or not adapter.powered:
        return False
    if World.mock.adapters.get(adapter.id) is not adapter:
        return False
    return _usable_advertisement(adapter) is not None or adapter.discoverable


# ------------------------------------- RSSI presence, temporary devices (P14 P15)
#
# BlueZ shows Device1.RSSI only while it has a current reading (its property
# "exists" callback), and invalidates it when discovery stops. sd-bus has no
# per-object "exists" hook, but it merges several vtables of one interface on
# one path. So RSSI is taken out of Device1's own vtable (install_patches)
# and served by a second, RSSI-only Device1 vtable that is added while the
# device has an RSSI and closed when it is invalidated: GetAll,
# GetManagedObjects and InterfacesAdded then list RSSI exactly while present.

def _has_rssi(dev) -> bool:
    return dev.__dict__.get("_bzw_rssi_iface") is not None


def _rssi_vtable_add(dev):
    """Serve Device1.RSSI on the exported dev (or at its export)."""
    if _has_rssi(dev):
        return
    dev.__dict__["_bzw_rssi_wanted"] = True
    meta = dev._dbus
    if meta.attached_bus is None or dev.__dict__.get("_bzw_removed"):
        return      # added by _device_export_to_dbus
    ref = weakref.ref(dev)     # no cycle through the C object

    def get(message):
        d = ref()
        message.append_data("n", d.rssi if d is not None else 0)

    prop = _prop(dev, "RSSI")
    iface = SdBusInterface()
    iface.add_property(prop.property_name, prop.property_signature, get, None, prop.flags)
    meta.attached_bus.add_interface(iface, meta.serving_object_path, prop.interface_name)
    dev.__dict__["_bzw_rssi_iface"] = iface


def _rssi_vtable_close(dev):
    dev.__dict__["_bzw_rssi_wanted"] = False
    iface = dev.__dict__.pop("_bzw_rssi_iface", None)
    if iface is not None:
        iface._stop_export()


def _rssi_update(dev, rssi):
    """dev has a (new) RSSI reading: present it, signal it when it changed
    or was absent (an absent RSSI that appears is a change)."""
    appeared = not _has_rssi(dev)
    if not appeared and dev.rssi == rssi:
        return
    dev.rssi = rssi
    _rssi_vtable_add(dev)
    _emit_changed(dev, "RSSI", rssi)


def _rssi_invalidate(dev):
    """No current reading: RSSI leaves Device1, with PropertiesChanged
    listing it as invalidated (as BlueZ does)."""
    if not _has_rssi(dev):
        return
    _rssi_vtable_close(dev)
    if dev.__dict__.get("_bzw_removed") or dev._dbus.attached_bus is None:
        return
    prop = _prop(dev, "RSSI")
    dev.properties_changed.emit((prop.interface_name, {}, [prop.property_name]))


_orig_export_to_dbus = None


def _device_export_to_dbus(self, object_path, bus=None):
    handle = _orig_export_to_dbus(self, object_path, bus)
    if self.__dict__.get("_bzw_rssi_wanted"):
        _rssi_vtable_add(self)     # before the InterfacesAdded of export_with_manager
    return handle


_orig_remove_object = None


def _remove_object(self, obj):
    """Every unexport (ours, RemoveDevice, RemoveAdapter) also closes the RSSI
    vtable, which would otherwise keep a Device1 with only RSSI at the path."""
    obj.__dict__["_bzw_removed"] = True
    _orig_remove_object(self, obj)
    if isinstance(obj, Device):
        _rssi_vtable_close(obj)
        _expiry_cancel(obj)


def _seen(adapter) -> set:
    """Devices of this central reported by its latest scan tick."""
    return adapter.__dict__.setdefault("_bzw_seen", set())


def _expiry_cancel(dev):
    handle = dev.__dict__.pop("_bzw_expiry", None)
    if handle is not None:
        handle.cancel()


def _expiry_restart(dev):
    """dev was seen or disconnected just now: it expires TemporaryTimeout
    seconds from now unless that happens again (or it gets connected)."""
    _expiry_cancel(dev)
    if World.temporary_timeout > 0 and not dev.__dict__.get("_bzw_removed"):
        dev.__dict__["_bzw_expiry"] = asyncio.get_running_loop().call_later(
            World.temporary_timeout, _expire, dev)


def _is_connected(dev) -> bool:
    link = dev.__dict__.get("_bzw_link")
    return dev.connected or (link is not None and link.alive)


def _expire(dev):
    dev.__dict__.pop("_bzw_expiry", None)
    if World.hold_devices:
        return      # kept, with no timer: HoldDevices(false) starts it again
    try:
        adapter = dev.adapter
        if dev.__dict__.get("_bzw_removed") or adapter is None:
            return
        path = _dev_path(adapter, dev.address)
        if adapter.devices.get(path) is not dev:
            return
        if dev.paired or dev.bonded or dev.trusted:
            return      # not temporary
        if (_is_connected(dev) or dev.__dict__.get("_bzw_connecting")
                or dev in _seen(adapter)):
            _expiry_restart(dev)     # kept; the disconnect restarts it anyway
            return
        log.info("temporary device %s on %s expired", dev.address, adapter)
        adapter.devices.pop(path, None)
        prefix = path + "/"
        for obj in [o for o in World.mock.manager_export_handles
                    if (o._dbus.serving_object_path or "").startswith(prefix)]:
            _remove(obj)     # GATT objects (none while disconnected; defensive)
        _remove(dev)
        _spawn(dev.cleanup())
    except Exception:
        log.exception("expiry of %s", dev)


# ------------------------------------------------------ links (P1 P2 P3 P7 P8)

def _peer_get(self):
    """Device.peer: the exported Device1 that represents our adapter on the
    peer adapter (stock made a new, never exported one on every attach)."""
    peer_adapter, adapter = self.peer_adapter, self.adapter
    if peer_adapter is not None and adapter is not None:
        found = peer_adapter.devices.get(_dev_path(peer_adapter, adapter.address))
        if found is not None:
            return found
    fallback = self.__dict__.get("_bzw_peer")
    if fallback is None and adapter is not None:
        fallback = Device(adapter)
        fallback.adapter = peer_adapter
        self.__dict__["_bzw_peer"] = fallback
    return fallback


def _peer_set(self, value):
    self.__dict__["_bzw_peer"] = value


def _attach_to_adapter(self, adapter):
    self.adapter = adapter


def _export_gatt(link: Link, app):
    made = {}
    for obj_path, obj in sorted(app.objects.items(), key=lambda x: x[0]):
        if isinstance(obj, GattServiceClient):
            lk = GattServiceClientLink(obj, link.central)
        elif isinstance(obj, GattCharacteristicClient):
            parent = made.get(obj.Service.get())
            if parent is None:
                continue
            lk = GattCharacteristicClientLink(obj, parent)
        elif isinstance(obj, GattDescriptorClient):
            parent = made.get(obj.Characteristic.get())
            if parent is None:
                continue
            lk = GattDescriptorClientLink(obj, parent)
        else:
            continue
        lk.__dict__["_bzw_link"] = link
        try:
            _export(lk, lk.get_object_path())
        except Exception as e:
            log.error("cannot export %s: %s", lk.get_object_path(), e)
            continue
        link.objects.append(lk)
        made[obj_path] = lk


async def _device_connect(self, uuid=None):
    # A device being connected does not expire (P14); when the attempt ends
    # unconnected, its temporary timer starts again from now.
    self.__dict__["_bzw_connecting"] = self.__dict__.get("_bzw_connecting", 0) + 1
    _expiry_cancel(self)
    try:
        await _device_connect_now(self, uuid)
    finally:
        self.__dict__["_bzw_connecting"] -= 1
        if not self.__dict__["_bzw_connecting"] and not _is_connected(self):
            _expiry_restart(self)


async def _device_connect_now(self, uuid):
    link = self.__dict__.get("_bzw_link")
    if link is not None and link.alive:
        return  # P7: already connected
    if self.adapter is None or not self.adapter.powered:
        raise DBusBluezNotReadyError("Resource Not Ready")
    if self.connect_check_pairing_required(uuid):
        await self.pair()
    left = World.fail_connects.get(self.address.upper(), 0)
    if left > 0:
        # Test1.FailConnects: as BlueZ does when the LE peer does not answer in time.
        World.fail_connects[self.address.upper()] = left - 1
        await asyncio.sleep(CONNECT_FAIL_DELAY)
        raise DBusBluezFailedError("le-connection-abort-by-local")
    peer_adapter = _find_adapter(self.address)
    if not _connectable(peer_adapter):
        # P8: like BlueZ when the LE peer does not answer.
        await asyncio.sleep(CONNECT_FAIL_DELAY)
        peer_adapter = _find_adapter(self.address)
        if not _connectable(peer_adapter):
            raise DBusBluezFailedError("le-connection-abort-by-local")
    link = self.__dict__.get("_bzw_link")
    if link is not None and link.alive:
        return
    if not self.adapter.powered:
        raise DBusBluezNotReadyError("Resource Not Ready")
    central_adapter = self.adapter
    self.peer_adapter = peer_adapter

    path = _dev_path(peer_adapter, central_adapter.address)
    view = peer_adapter.devices.get(path)
    if view is None:
        view = Device(central_adapter, is_le=True)
        view.adapter = peer_adapter
        _export(view, path)
        peer_adapter.devices[path] = view
    old = view.__dict__.get("_bzw_link")
    if old is not None and old.alive:
        _drop_link(old, REASON_LOCAL, REASON_REMOTE)

    link = Link(self, view)
    self.__dict__["_bzw_link"] = link
    view.__dict__["_bzw_link"] = link
    _expiry_cancel(view)
    World.links.add(link)
    log.info("connecting %s", link)

    _set(view, "Connected", True)
    _set(self, "Connected", True)
    for app in list(peer_adapter.gatt_apps.values()):
        link.apps.append(app)
        _export_gatt(link, app)
    _set(view, "ServicesResolved", True)
    _set(self, "ServicesResolved", True)


def _drop_link(link: Link, central_reason, periph_reason):
    """Tear a link down, on both sides, synchronously."""
    if not link.alive:
        return
    link.alive = False
    World.links.discard(link)
    log.info("disconnecting %s (%s)", link, central_reason[0])
    central, periph = link.central, link.periph
    for dev in (central, periph):
        if dev.__dict__.get("_bzw_link") is link:
            dev.__dict__["_bzw_link"] = None
    for obj in link.objects:
        if isinstance(obj, GattCharacteristicClientLink):
            _notify_drop_all(obj)
    if central.services_resolved:
        _set(central, "ServicesResolved", False)
    for obj in reversed(link.objects):
        _remove(obj)
    link.objects.clear()
    if central.connected:
        _set(central, "Connected", False)
    central.Disconnected.emit(central_reason)
    if periph.services_resolved:
        _set(periph, "ServicesResolved", False)
    if periph.connected:
        _set(periph, "Connected", False)
    periph.Disconnected.emit(periph_reason)
    for dev in (central, periph):    # P14: temporary again from now
        if not dev.__dict__.get("_bzw_connecting"):
            _expiry_restart(dev)


def _drop_links_of_adapter(adapter, own_reason, other_reason):
    for link in list(World.links):
        if link.central.adapter is adapter:
            _drop_link(link, own_reason, other_reason)
        elif link.periph.adapter is adapter:
            _drop_link(link, other_reason, own_reason)


async def _device_disconnect(self, uuid=None):
    self.connecting_task.cancel()
    link = self.__dict__.get("_bzw_link")
    if link is None or not link.alive:
        if self.services_resolved:
            _set(self, "ServicesResolved", False)
        if self.connected:
            _set(self, "Connected", False)
            _expiry_restart(self)
        return
    if self is link.central:
        _drop_link(link, REASON_LOCAL, REASON_REMOTE)
    else:
        _drop_link(link, REASON_REMOTE, REASON_LOCAL)


# ------------------------------------------------------------ pairing (P16)
#
# Stock Device1.Pair needs a default agent of capability NoInputNoOutput
# (AttributeError without one, NotImplementedError with any other), pairs
# without a link, never refuses, answers a second Pair with success, and its
# Bonded setter writes `bond`, so Bonded stays false. It also marks the
# peripheral's view of the central paired without PropertiesChanged. BlueZ's
# pair_device() (src/device.c): InProgress while bonding, AlreadyExists when
# bonded, the caller's (or default) agent's IO capability or NoInputNoOutput
# without one, and an LE device that is not connected is connected first.
# The peripherals here have no IO, so it is Just Works: the initiator's agent
# is never asked. A peripheral that still holds a bond the central lost
# (its view of the central is paired, the central's device is not, e.g.
# after the central's RemoveDevice) refuses, as a Brilliant Frame does until
# its pin-hole reset (nRF peer manager without re-pairing):
# org.bluez.Error.AuthenticationFailed, what BlueZ reports for an SMP
# "pairing failed". The peripheral forgets the bond with RemoveDevice of its
# view on its own adapter.

@_dbus_method
async def _device_pair(self):
    if self.__dict__.get("_bzw_pairing"):
        raise DBusBluezInProgressError("In Progress")
    if self.paired:
        raise DBusBluezAlreadyExistsError("Already Exists")
    self.__dict__["_bzw_pairing"] = True
    try:
        if not _is_connected(self):
            await self.connect()
        link = self.__dict__.get("_bzw_link")
        if link is None or not link.alive:
            raise DBusBluezFailedError("le-connection-abort-by-local")
        view = link.periph
        if view.paired:
            raise DBusBluezAuthenticationFailedError("Authentication Failed")
        log.info("pairing %s (Just Works)", link)
        for dev in (view, self):
            dev.paired = dev.bonded = True
            _emit_changed(dev, "Paired", True)
            _emit_changed(dev, "Bonded", True)
            _expiry_cancel(dev)     # P14: no longer temporary
    finally:
        self.__dict__["_bzw_pairing"] = False


# ------------------------------------------------- GATT applications (P3)

_orig_del_gatt_application = None
_orig_register_application = None
_orig_register_advertisement = None


async def _del_gatt_application(self, app):
    for link in list(World.links):
        if any(a is app for a in link.apps):
            _drop_link(link, REASON_TIMEOUT, REASON_LOCAL)
    if (app.get_client(), app.get_object_path()) in self.gatt_apps:
        _app_gone_owners(self).add(app.get_client())
    await _orig_del_gatt_application(self, app)


@_dbus_method
async def _register_application(self, application, options):
    sender = _sender()
    if (sender, application) in self.gatt_apps:
        raise DBusBluezAlreadyExistsError("Already Exists")
    await _orig_register_application(self, application, options)
    if (sender, application) in self.gatt_apps:
        _app_gone_owners(self).discard(sender)


@_dbus_method
async def _unregister_application(self, application):
    app = self.gatt_apps.get((_sender(), application))
    if app is None:
        raise DBusBluezDoesNotExistError("Does Not Exist")
    await self._GattManager__del_gatt_application(app)


@_dbus_method
async def _register_advertisement(self, path, options):
    if (_sender(), path) in self.advertisements:
        raise DBusBluezAlreadyExistsError("Already Exists")
    await _orig_register_advertisement(self, path, options)


_orig_del_adapter = None


async def _del_adapter(self, id):
    adapter = self.adapters.get(id)
    if adapter is not None:
        _drop_links_of_adapter(adapter, REASON_LOCAL, REASON_TIMEOUT)
        _stop_discovery(adapter)
    await _orig_del_adapter(self, id)


# ---------------------------------------------------- notifications (P9 P10)

def _sessions(lk) -> dict:
    return lk.__dict__.setdefault("_bzw_sessions", {})


def _on_app_value(lk):
    def callback(properties):
        if "Value" not in properties or lk.__dict__.get("_bzw_removed"):
            return
        value = properties["Value"]
        _emit_changed(lk, "Value", value)
        _acquired_notify_send(lk, value)
        if "indicate" in lk.client.Flags.get([]):   # P9: Confirm only indications
            _spawn(lk.client.Confirm())
    return callback


async def _app_notify_start(lk):
    client = lk.client
    holders = client.__dict__.setdefault("_bzw_notify_holders", set())
    lk.__dict__["_bzw_value_sub"] = events.subscribe(
        f"properties:changed:{id(client)}", _on_app_value(lk))
    holders.add(lk)
    if len(holders) == 1:
        try:
            await client.StartNotify()
        except BaseException:
            _app_notify_stop(lk, call_app=False)
            raise


def _app_notify_stop(lk, call_app=True):
    sub = lk.__dict__.pop("_bzw_value_sub", None)
    if sub is not None:
        sub.unsubscribe()
    holders = lk.client.__dict__.setdefault("_bzw_notify_holders", set())
    if lk in holders:
        holders.discard(lk)
        if not holders and call_app:
            _spawn(lk.client.StopNotify())


def _notify_session_end(lk, sender):
    sessions = _sessions(lk)
    sub = sessions.pop(sender, None)
    if sub is None:
        return
    sub.unsubscribe()
    if not sessions:
        _app_notify_stop(lk)
        _emit_changed(lk, "Notifying", False)


def _notify_drop_all(lk):
    _release_write(lk, signal_it=False)
    _release_notify(lk, signal_it=False)
    sessions = _sessions(lk)
    had = bool(sessions)
    for sub in sessions.values():
        sub.unsubscribe()
    sessions.clear()
    if had:
        _app_notify_stop(lk)


def _uses_acquire(lk) -> bool:
    return lk.client.NotifyAcquired.get() is not None


_orig_start_notify = None
_orig_stop_notify = None


def _link_alive(lk) -> bool:
    link = lk.__dict__.get("_bzw_link")
    return link is not None and link.alive and not lk.__dict__.get("_bzw_removed")


@_dbus_method
async def _char_start_notify(self):
    if not _link_alive(self):
        raise DBusBluezNotConnectedError("Not Connected")
    flags = self.client.Flags.get([])
    if "notify" not in flags and "indicate" not in flags:
        raise DBusBluezNotSupportedError("Operation is not supported")
    if _uses_acquire(self):
        return await _orig_start_notify(self)
    sender = _sender()
    sessions = _sessions(self)
    if sender in sessions:
        return
    first = not sessions

    async def on_sender_lost():
        _notify_session_end(self, sender)

    sessions[sender] = events.subscribe(f"service:lost:{sender}", on_sender_lost, once=True)
    if first:
        try:
            await _app_notify_start(self)
        except BaseException:
            sub = sessions.pop(sender, None)
            if sub is not None:
                sub.unsubscribe()
            raise
        _emit_changed(self, "Notifying", True)


@_dbus_method
async def _char_stop_notify(self):
    if _uses_acquire(self):
        return await _orig_stop_notify(self)
    sender = _sender()
    if sender not in _sessions(self):
        raise DBusBluezFailedError("No notify session started")
    _notify_session_end(self, sender)


def _char_notifying(self) -> bool:
    if _uses_acquire(self):
        return bool(self.client.Notifying.get(False))
    return bool(self.__dict__.get("_bzw_sessions"))


# ------------------------------------------- AcquireWrite / AcquireNotify (P12)
#
# Stock bluezoo only forwards Acquire* to the app. Real BlueZ implements them
# itself for any remote characteristic, so do that: the central gets one end
# of a SOCK_SEQPACKET pair. Each packet it writes becomes the app's
# WriteValue(type=command) (in order, at most WRITE_WINDOW in flight); each
# notification of the app becomes one packet. Closing the fd releases; link
# loss closes our end (the central sees EOF / EPIPE). MTU = app's MTU or 512.
# Apps that implement Acquire* themselves (WriteAcquired/NotifyAcquired
# properties) keep the stock pass-through.

WRITE_WINDOW = 16
NOTIFY_BACKLOG = 4096             # packets queued for a slow AcquireNotify reader
ACQUIRE_SESSION = "\0acquire"   # key of the AcquireNotify holder in _sessions()


class _NoSubscription:
    def unsubscribe(self):
        pass


def _socketpair():
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.setblocking(False)
    # sd-bus duplicates the fd into the reply; close our copy of the central's
    # end right after the reply has been built (same task step as our return).
    asyncio.get_running_loop().call_soon(theirs.close)
    return ours, theirs.fileno()


def _release_write(lk, signal_it=True):
    state = lk.__dict__.pop("_bzw_write", None)
    if state is None:
        return
    loop = asyncio.get_running_loop()
    loop.remove_reader(state["sock"].fileno())
    state["sock"].close()
    state["queue"].put_nowait(None)
    if signal_it:
        _emit_changed(lk, "WriteAcquired", False)


def _release_notify(lk, signal_it=True):
    sock = lk.__dict__.pop("_bzw_notify_sock", None)
    if sock is None:
        return
    loop = asyncio.get_running_loop()
    loop.remove_reader(sock.fileno())
    loop.remove_writer(sock.fileno())
    lk.__dict__.pop("_bzw_notify_backlog", None)
    sock.close()
    if signal_it:
        sessions = _sessions(lk)
        if sessions.pop(ACQUIRE_SESSION, None) is not None and not sessions:
            _app_notify_stop(lk)
            _emit_changed(lk, "Notifying", False)
        _emit_changed(lk, "NotifyAcquired", False)


def _acquired_notify_send(lk, value):
    """One notification = one packet; kept in order in a bounded backlog
    while the central does not read its end fast enough."""
    sock = lk.__dict__.get("_bzw_notify_sock")
    if sock is None:
        return
    backlog = lk.__dict__.setdefault("_bzw_notify_backlog", deque())
    if len(backlog) >= NOTIFY_BACKLOG:
        log.warning("acquired notify socket of %s full, notification dropped", lk)
        return
    backlog.append(bytes(value))
    if len(backlog) == 1:
        _acquired_notify_flush(lk)


def _acquired_notify_flush(lk):
    sock = lk.__dict__.get("_bzw_notify_sock")
    backlog = lk.__dict__.get("_bzw_notify_backlog")
    if sock is None or backlog is None:
        return
    loop = asyncio.get_running_loop()
    try:
        while backlog:
            sock.send(backlog[0])
            backlog.popleft()
    except BlockingIOError:
        loop.add_writer(sock.fileno(), _acquired_notify_flush, lk)
        return
    except OSError:
        _release_notify(lk)
        return
    loop.remove_writer(sock.fileno())


_orig_acquire_write = None
_orig_acquire_notify = None


@_dbus_method
async def _char_acquire_write(self, options):
    if not _link_alive(self):
        raise DBusBluezNotConnectedError("Not Connected")
    if self.client.WriteAcquired.get() is not None:
        return await _orig_acquire_write(self, options)
    if "write-without-response" not in self.client.Flags.get([]):
        raise DBusBluezNotSupportedError("Operation is not supported")
    if "_bzw_write" in self.__dict__:
        raise DBusBluezNotPermittedError("Write acquired")
    ours, fd = _socketpair()
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()
    state = {"sock": ours, "queue": queue}
    self.__dict__["_bzw_write"] = state

    def on_readable():
        try:
            data = ours.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            _release_write(self)
            return
        queue.put_nowait(data)
        if queue.qsize() >= WRITE_WINDOW:
            loop.remove_reader(ours.fileno())   # backpressure: resumed by pump()
            state["paused"] = True

    async def pump():
        window = asyncio.Semaphore(WRITE_WINDOW)
        while True:
            data = await queue.get()
            if data is None:
                return
            if state.get("paused") and queue.qsize() < WRITE_WINDOW // 2 \
                    and self.__dict__.get("_bzw_write") is state:
                state["paused"] = False
                loop.add_reader(ours.fileno(), on_readable)
            await window.acquire()
            options = {"type": ("s", "command"),
                       "device": ("o", self.service.device.peer.get_object_path()),
                       "mtu": ("q", self.mtu), "link": ("s", self.link)}
            task = _spawn(self.client.WriteValue(data, options))
            task.add_done_callback(lambda _: window.release())

    loop.add_reader(ours.fileno(), on_readable)
    state["pump"] = _spawn(pump())
    _emit_changed(self, "WriteAcquired", True)
    return (fd, self.mtu)


@_dbus_method
async def _char_acquire_notify(self, options):
    if not _link_alive(self):
        raise DBusBluezNotConnectedError("Not Connected")
    if _uses_acquire(self):
        return await _orig_acquire_notify(self, options)
    flags = self.client.Flags.get([])
    if "notify" not in flags and "indicate" not in flags:
        raise DBusBluezNotSupportedError("Operation is not supported")
    if "_bzw_notify_sock" in self.__dict__:
        raise DBusBluezNotPermittedError("Notify acquired")
    sessions = _sessions(self)
    first = not sessions
    sessions[ACQUIRE_SESSION] = _NoSubscription()
    if first:
        try:
            await _app_notify_start(self)
        except BaseException:
            sessions.pop(ACQUIRE_SESSION, None)
            raise
    ours, fd = _socketpair()
    self.__dict__["_bzw_notify_sock"] = ours

    def on_readable():   # the central closed its end (or wrote: ignored)
        try:
            if ours.recv(65536):
                return
        except BlockingIOError:
            return
        except OSError:
            pass
        _release_notify(self)

    asyncio.get_running_loop().add_reader(ours.fileno(), on_readable)
    _emit_changed(self, "NotifyAcquired", True)
    if first:
        _emit_changed(self, "Notifying", True)
    return (fd, self.mtu)


def _char_write_acquired(self) -> bool:
    return "_bzw_write" in self.__dict__ or bool(self.client.WriteAcquired.get(False))


def _char_notify_acquired(self) -> bool:
    return "_bzw_notify_sock" in self.__dict__ or bool(self.client.NotifyAcquired.get(False))


# ----------------------------------------------- discovery (P4 P5 P11 P13)

def _stop_discovery(adapter):
    if adapter.discovering:
        log.info("stopping discovery on %s", adapter)
    adapter.discovering_task.cancel()
    adapter.discovering_task = NoneTask()
    for sub in adapter.scan_subscribers.values():
        sub.unsubscribe()
    adapter.scan_subscribers.clear()
    _seen(adapter).clear()
    for dev in list(adapter.devices.values()):   # P15: no reading any more
        _rssi_invalidate(dev)
    if adapter.discovering:
        _set(adapter, "Discovering", False)


def _filter_match(central, fields, rssi) -> bool:
    wanted = central.scan_filter_uuids
    if wanted:
        have = set(fields["uuids"]) | set(fields["service_data"].keys())
        if not have.intersection(wanted):
            return False
    min_rssi = central.__dict__.get("_bzw_filter_rssi")
    if min_rssi is not None and rssi < min_rssi:
        return False
    pattern = central.scan_filter_pattern
    if pattern and not (fields["address"].upper().startswith(pattern.upper())
                        or fields["name"].startswith(pattern)):
        return False
    return True


def _rssi_for(address, tx_power):
    override = World.rssi_override.get(address.upper())
    if override is not None:
        return override
    return tx_power if tx_power is not None else DEFAULT_RSSI


def _report(central, peer, fields, is_le):
    """One advertisement (or inquiry result) of peer seen by central: the
    Device1 reported, or None when the discovery filter drops it."""
    rssi = _rssi_for(peer.address, fields["tx_power"])
    if not _filter_match(central, fields, rssi):
        return None
    path = _dev_path(central, peer.address)
    dev = central.devices.get(path)
    if dev is None:
        dev = Device(peer, is_le=is_le, is_br_edr=not is_le)
        dev.adapter = central
        dev.name_ = fields["name"]
        dev.appearance = fields["appearance"]
        dev.uuids = fields["uuids"]
        dev.manufacturer_data = fields["manufacturer_data"]
        dev.service_data = fields["service_data"]
        dev.tx_power = fields["tx_power"]
        dev.rssi = rssi
        dev.__dict__["_bzw_rssi_wanted"] = True    # RSSI in its InterfacesAdded
        log.info("found %s on %s (RSSI %d)", peer.address, central, rssi)
        _export(dev, path)
        central.devices[path] = dev
        if not _is_connected(dev):
            _expiry_restart(dev)
        return dev
    dev.peer_adapter = peer
    if is_le:
        dev.is_le = True
    else:
        dev.is_br_edr = True
    if dev.name_ != fields["name"]:
        _set(dev, "Name", fields["name"])
        if "name__" not in dev.__dict__:   # P6: Alias follows Name
            _emit_changed(dev, "Alias", dev.name)
    for attr, key in (("appearance", "Appearance"), ("uuids", "UUIDs"),
                      ("manufacturer_data", "ManufacturerData"),
                      ("service_data", "ServiceData")):
        if getattr(dev, attr) != fields[attr]:
            _set(dev, key, fields[attr])
    if dev.tx_power != fields["tx_power"]:
        dev.tx_power = fields["tx_power"]
        _emit_changed(dev, "TxPower", dev.tx_power or 0)
    _rssi_update(dev, rssi)
    if not _is_connected(dev) and not dev.__dict__.get("_bzw_connecting"):
        _expiry_restart(dev)
    return dev


def _scan_tick(central):
    if not central.powered:
        return
    transport = central.scan_filter_transport
    scan_le = transport in ("auto", "le")
    scan_br_edr = transport in ("auto", "bredr")
    reported = set()
    for peer in list(World.mock.adapters.values()):
        if peer is central or not peer.powered:
            continue
        discoverable = peer.discoverable or (peer.discovering and peer.scan_filter_discoverable)
        if scan_le:
            adv = _usable_advertisement(peer)
            if adv is not None and adv.Discoverable.get(discoverable):
                reported.add(_report(central, peer, {
                    "address": peer.address,
                    "name": adv.LocalName.get(peer.name),
                    "appearance": adv.Appearance.get(0),
                    "uuids": [BluetoothUUID(x) for x in adv.ServiceUUIDs.get([])],
                    "manufacturer_data": adv.ManufacturerData.get({}),
                    "service_data": {BluetoothUUID(k): v
                                     for k, v in adv.ServiceData.get({}).items()},
                    "tx_power": adv.TxPower.get(),
                }, is_le=True))
                continue
        if scan_br_edr and discoverable:
            reported.add(_report(central, peer, {
                "address": peer.address, "name": peer.name, "appearance": 0,
                "uuids": list(peer.uuids), "manufacturer_data": {}, "service_data": {},
                "tx_power": None,
            }, is_le=False))
    reported.discard(None)
    seen = _seen(central)
    if not World.hold_rssi:
        for dev in seen - reported:      # P15: its advertisements stopped
            _rssi_invalidate(dev)
    seen.clear()
    seen.update(reported)


async def _scan_loop(central):
    while True:
        await asyncio.sleep(World.scan_interval)
        try:
            _scan_tick(central)
        except Exception:
            log.exception("scan tick on %s", central)


@_dbus_method
async def _start_discovery(self):
    sender = _sender()
    if not self.powered:
        raise DBusBluezNotReadyError("Resource Not Ready")
    if sender in self.scan_subscribers:
        raise DBusBluezInProgressError("Operation already in progress")

    async def on_sender_lost():
        sub = self.scan_subscribers.pop(sender, None)
        if sub is not None and not self.scan_subscribers:
            _stop_discovery(self)

    self.scan_subscribers[sender] = events.subscribe(
        f"service:lost:{sender}", on_sender_lost, once=True)
    if self.discovering_task.done():
        log.info("starting discovery on %s", self)
        if not self.discovering:
            _set(self, "Discovering", True)
        _scan_tick(self)   # the first tick is done when StartDiscovery returns
        self.discovering_task = asyncio.get_running_loop().create_task(_scan_loop(self))


@_dbus_method
async def _stop_discovery_method(self):
    sub = self.scan_subscribers.pop(_sender(), None)
    if sub is None:
        raise DBusBluezFailedError("No discovery started")
    sub.unsubscribe()
    if not self.scan_subscribers:
        _stop_discovery(self)


@_dbus_method
async def _set_discovery_filter(self, properties):
    uuids, transport, rssi, duplicate, discoverable, pattern = [], "auto", None, False, False, None
    try:
        for key, (_, value) in properties.items():
            if key == "UUIDs":
                uuids = [BluetoothUUID(x) for x in value]
            elif key == "Transport":
                if value not in ("auto", "bredr", "le"):
                    raise ValueError(value)
                transport = value
            elif key == "RSSI":
                rssi = int(value)
            elif key == "Pathloss":
                pass
            elif key == "DuplicateData":
                duplicate = bool(value)
            elif key == "Discoverable":
                discoverable = bool(value)
            elif key == "Pattern":
                pattern = str(value) or None
            else:
                raise ValueError(key)
    except ValueError as e:
        raise DBusBluezInvalidArgumentsError(f"Invalid arguments in method call: {e}")
    self.scan_filter_uuids = uuids
    self.__dict__["_bzw_filter_rssi"] = rssi
    self.scan_filter_transport = transport
    self.scan_filter_duplicate = duplicate
    self.scan_filter_discoverable = discoverable
    self.scan_filter_pattern = pattern


def _powered_setter(self, value):
    value = bool(value)
    if self.powered == value:
        return
    self.powered = value
    # Runs right after this Set returns, before the next message is read.
    asyncio.get_running_loop().call_soon(_power_changed, self, value)


def _power_changed(adapter, on):
    try:
        if World.mock.adapters.get(adapter.id) is not adapter:
            return
        if on:
            _set(adapter, "PowerState", Adapter.PowerStateValue.OffEnabling)
            _set(adapter, "PowerState", Adapter.PowerStateValue.On)
        else:
            _set(adapter, "PowerState", Adapter.PowerStateValue.OnDisabling)
            _drop_links_of_adapter(adapter, REASON_LOCAL, REASON_TIMEOUT)   # P13
            _stop_discovery(adapter)
            _set(adapter, "PowerState", Adapter.PowerStateValue.Off)
    except Exception:
        log.exception("power change of %s", adapter)


# ------------------------------------------------------------ org.bluezoo.Test1

class WorldTest(sdbus.DbusInterfaceCommonAsync, interface_name="org.bluezoo.Test1"):
    """Test controls: RSSI, link loss and failed connection attempts."""

    @sdbus.dbus_method_async(input_signature="sn", input_args_names=["address", "rssi"],
                             flags=sdbus.DbusUnprivilegedFlag)
    async def SetRSSI(self, address: str, rssi: int) -> None:
        address = _checked_address(address)
        World.rssi_override[address] = rssi
        _apply_rssi(address)

    @sdbus.dbus_method_async(input_signature="s", input_args_names=["address"],
                             flags=sdbus.DbusUnprivilegedFlag)
    async def ClearRSSI(self, address: str) -> None:
        address = _checked_address(address)
        World.rssi_override.pop(address, None)
        _apply_rssi(address)

    @sdbus.dbus_method_async(input_signature="b", input_args_names=["hold"],
                             flags=sdbus.DbusUnprivilegedFlag)
    async def HoldRSSI(self, hold: bool) -> None:
        """hold: a device that stops advertising keeps its last RSSI while discovery runs, as in
        BlueZ, which invalidates RSSI only when discovery stops (P15 otherwise drops it at the
        next scan tick that does not report the device)."""
        World.hold_rssi = bool(hold)

    @sdbus.dbus_method_async(input_signature="b", input_args_names=["hold"],
                             flags=sdbus.DbusUnprivilegedFlag)
    async def HoldDevices(self, hold: bool) -> None:
        """hold: temporary devices stay however long they go unseen (P14 as with TemporaryTimeout
        0), so a test that needs BlueZ to still show one does not depend on how fast it ran; with
        false, each of them expires --temporary-timeout s from now."""
        World.hold_devices = bool(hold)
        if World.hold_devices:
            return
        for adapter in World.mock.adapters.values():
            for dev in list(adapter.devices.values()):
                if ("_bzw_expiry" not in dev.__dict__ and not _is_connected(dev)
                        and not dev.__dict__.get("_bzw_connecting")):
                    _expiry_restart(dev)

    @sdbus.dbus_method_async(input_signature="su", result_signature="u",
                             input_args_names=["address", "count"], result_args_names=["left"],
                             flags=sdbus.DbusUnprivilegedFlag)
    async def FailConnects(self, address: str, count: int) -> int:
        """The next `count` Connect() calls to `address` fail as an LE connection that was not
        answered (le-connection-abort-by-local), whether or not it advertises; 0 ends that.
        Returns how many of the previous count were left (0: all of them failed)."""
        address = _checked_address(address)
        left = World.fail_connects.get(address, 0)
        World.fail_connects[address] = count
        return left

    @sdbus.dbus_method_async(input_signature="s", input_args_names=["address"],
                             flags=sdbus.DbusUnprivilegedFlag)
    async def DropLink(self, address: str) -> None:
        address = _checked_address(address)
        found = [link for link in World.links
                 if address in (link.central.address.upper(), link.periph.address.upper())]
        if not found:
            raise BlueZooDoesNotExistError(f"No link with {address}")
        for link in found:
            _drop_link(link, REASON_TIMEOUT, REASON_TIMEOUT)


def _checked_address(address: str) -> str:
    try:
        return BluetoothAddress(address).upper()
    except ValueError:
        raise DBusBluezInvalidArgumentsError(f"Invalid address {address!r}")


def _apply_rssi(address):
    for adapter in World.mock.adapters.values():
        for dev in adapter.devices.values():
            if dev.address.upper() != address or not _has_rssi(dev):
                continue    # without a current reading: applied at the next one
            _rssi_update(dev, _rssi_for(address, dev.tx_power))


# --------------------------------------------------------------------- install

def install_patches():
    """Monkeypatch bluezoo 1.0.2.

    P1  disconnect: GATT objects removed (InterfacesRemoved), ServicesResolved
        and Connected false with PropertiesChanged, StopNotify to the app.
    P2  Disconnect from either side (central or peripheral view) drops both.
    P3  app gone (exit, UnregisterApplication, RemoveAdapter): its links drop
        and its advertisement is no longer reported.
    P4  RSSI := advertisement TxPower (-60 if absent), resynced every scan
        tick; Test1.SetRSSI / ClearRSSI override.
    P5  SetDiscoveryFilter UUIDs (and RSSI, Pattern) honoured; empty resets.
    P6  Notifying and Alias changes are signalled.
    P7  Connect while connected: no-op success.
    P8  Connect to a peer without advertisement (app gone, powered off):
        org.bluez.Error.Failed "le-connection-abort-by-local" after 0.2 s;
        Test1.FailConnects makes the next n attempts fail so anyway.
    P9  app Confirm() only for indications.
    P10 notify sessions per client; the app gets StartNotify/StopNotify once.
    P11 one scan task per adapter; repeated StartDiscovery -> InProgress.
    P12 AcquireWrite/AcquireNotify served by bzworld for any app.
    P13 Powered=false drops the adapter's links and stops its discovery.
    P14 temporary devices (not paired/bonded/trusted) are removed when not
        connected and not reported by a scan for --temporary-timeout s;
        never while Test1.HoldDevices(true).
    P15 Device1.RSSI only while a scan reports the device: invalidated (and
        absent) when a tick no longer reports it and when discovery stops;
        with Test1.HoldRSSI(true) only when discovery stops, as in BlueZ.
    P16 Pair: Just Works whatever the agent, connects first, InProgress /
        AlreadyExists, Paired and Bonded on both sides with PropertiesChanged;
        refused (AuthenticationFailed) while the peripheral keeps a bond the
        central lost.
    Reconnect: fresh GATT objects per link, old ones are unexported first.
    Extra: AlreadyExists/DoesNotExist like BlueZ for (Un)Register*.
    """
    global _orig_del_gatt_application, _orig_register_application
    global _orig_register_advertisement, _orig_del_adapter
    global _orig_start_notify, _orig_stop_notify, _orig_acquire_write, _orig_acquire_notify
    global _orig_export_to_dbus, _orig_remove_object

    Device.peer = property(_peer_get, _peer_set)
    Device.attach_to_adapter = _attach_to_adapter
    Device.connect = _device_connect
    Device.disconnect = _device_disconnect
    _replace_method(Device, "Pair", _device_pair)     # P16

    # P15: RSSI leaves Device1's own vtable; _rssi_vtable_add serves it.
    DBUS_CLASS_TO_META[DeviceInterface].python_attr_to_dbus_member.pop("RSSI")
    _orig_export_to_dbus = Device.export_to_dbus
    Device.export_to_dbus = _device_export_to_dbus
    _orig_remove_object = BluezMockService.remove_object
    BluezMockService.remove_object = _remove_object

    _orig_del_gatt_application = GattManager._GattManager__del_gatt_application
    GattManager._GattManager__del_gatt_application = _del_gatt_application
    _orig_register_application = _replace_method(
        GattManager, "RegisterApplication", _register_application)
    _replace_method(GattManager, "UnregisterApplication", _unregister_application)
    _orig_register_advertisement = _replace_method(
        LEAdvertisingManager, "RegisterAdvertisement", _register_advertisement)

    _orig_del_adapter = BluezMockService.del_adapter
    BluezMockService.del_adapter = _del_adapter

    _orig_start_notify = _replace_method(
        GattCharacteristicClientLink, "StartNotify", _char_start_notify)
    _orig_stop_notify = _replace_method(
        GattCharacteristicClientLink, "StopNotify", _char_stop_notify)
    GattCharacteristicClientLink.__dict__["Notifying"].property_getter = _char_notifying
    _orig_acquire_write = _replace_method(
        GattCharacteristicClientLink, "AcquireWrite", _char_acquire_write)
    _orig_acquire_notify = _replace_method(
        GattCharacteristicClientLink, "AcquireNotify", _char_acquire_notify)
    GattCharacteristicClientLink.__dict__["WriteAcquired"].property_getter = _char_write_acquired
    GattCharacteristicClientLink.__dict__["NotifyAcquired"].property_getter = _char_notify_acquired

    _replace_method(Adapter, "StartDiscovery", _start_discovery)
    _replace_method(Adapter, "StopDiscovery", _stop_discovery_method)
    _replace_method(Adapter, "SetDiscoveryFilter", _set_discovery_filter)
    Adapter.__dict__["Powered"].property_setter = _powered_setter


# ------------------------------------------------------------------------ main

async def _run(args, stop: asyncio.Event):
    bus = setup_default_bus("session" if args.bus_session else "system")
    World.scan_interval = args.scan_interval
    World.temporary_timeout = args.temporary_timeout
    World.mock = BluezMockService(args.auto_enable, args.scan_interval)
    for id, address in enumerate(args.adapters or []):
        await World.mock.add_adapter(id, address)
    test = WorldTest()
    test.export_to_dbus("/org/bluezoo")
    # Own the name only when the adapters exist: a client that sees org.bluez
    # appear can use them at once.
    try:
        await bus.request_name_async("org.bluez", 0)
    except sdbus.SdBusBaseError as e:
        log.critical("cannot own org.bluez on this bus (%s): is another BlueZ running?",
                     type(e).__name__)
        raise SystemExit(1)
    await asyncio.sleep(0)
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    await stop.wait()
    log.info("shutting down")
    bus.close()


def main() -> int:
    parser = ArgumentParser(description="bluezoo 1.0.2 with the glassd test-world patches")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="increase verbosity level (can be used multiple times)")
    parser.add_argument("-q", "--quiet", action="count", default=0,
                        help="decrease verbosity level (can be used multiple times)")
    parser.add_argument("--bus-session", action="store_true",
                        help="use the session bus; default is the system bus")
    parser.add_argument("--auto-enable", action="store_true", help="auto-enable adapters")
    parser.add_argument("--scan-interval", type=int, default=10,
                        help="interval between scans; default is %(default)s seconds")
    parser.add_argument("--temporary-timeout", type=float, default=30, metavar="SECONDS",
                        help="remove a device that is not paired/bonded/trusted, not "
                        "connected and not reported by a scan for SECONDS (BlueZ "
                        "main.conf TemporaryTimeout); 0 = never; default %(default)g")
    parser.add_argument("-a", "--adapter", metavar="ADDRESS", dest="adapters",
                        action="append", type=lambda a: BluetoothAddress(a.upper()),
                        help="adapter to use")
    args = parser.parse_args()
    if args.temporary_timeout < 0:
        parser.error("--temporary-timeout must be >= 0")
    level = logging.INFO + 10 * (args.quiet - args.verbose)
    logging.basicConfig(level=max(logging.DEBUG, min(logging.CRITICAL, level)))

    install_patches()

    return run_until_signalled(lambda stop: _run(args, stop))


if __name__ == "__main__":
    sys.exit(main())
