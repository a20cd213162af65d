# SPDX-License-Identifier: GPL-2.0-or-later
"""Is the link to a central encrypted? A Frame's attributes need an encrypted link (bonded, Just
Works). BlueZ's peripheral API does not say whether a link is encrypted, so the world answers it
from both sides' bonds, which it can read: the peripheral adapter's Device1 for the central is
Paired (the Frame keeps the bond) AND the central's Device1 for the Frame is Paired (the host keeps
it). After the host's RemoveDevice only the Frame's half is left: refused, as on the air.
Results are cached until a Device1 Paired/Connected change or a Device1 comes or goes."""
import asyncio

from dbus_fast import DBusError, Message, MessageType

BLUEZ = "org.bluez"


class BondCheck:
    def __init__(self, bus, adapter_path):
        self.bus, self.adapter_path = bus, adapter_path
        self.cache = {}
        self.generation = 0

    def invalidate(self):
        self.generation += 1
        self.cache.clear()

    def on_signal(self, msg):
        """Feed every signal from org.bluez here."""
        if msg.member == "PropertiesChanged" and msg.body and msg.body[0] == "org.bluez.Device1":
            changed = msg.body[1]
            if "Paired" in changed or "Connected" in changed or "Paired" in msg.body[2]:
                self.invalidate()
        elif msg.member in ("InterfacesAdded", "InterfacesRemoved"):
            ifaces = msg.body[1]
            if "org.bluez.Device1" in ifaces:
                self.invalidate()

    async def objects(self):
        reply = await asyncio.wait_for(self.bus.call(Message(
            destination=BLUEZ, path="/", interface="org.freedesktop.DBus.ObjectManager",
            member="GetManagedObjects")), 5)
        if reply.message_type == MessageType.ERROR:
            raise DBusError(reply.error_name, str(reply.body))
        return reply.body[0]

    @staticmethod
    def _prop(objects, path, iface, name, default=None):
        v = objects.get(path, {}).get(iface, {}).get(name)
        return default if v is None else v.value

    async def encrypted(self, view_path=None):
        """view_path: our adapter's Device1 for the central (WriteValue's `device`); None:
        any central connected to us now."""
        key = view_path or "*"
        if key in self.cache:
            return self.cache[key]
        gen = self.generation
        try:
            objects = await self.objects()
        except (DBusError, asyncio.TimeoutError):
            return False
        my_address = self._prop(objects, self.adapter_path, "org.bluez.Adapter1", "Address", "")
        if view_path is None:
            views = [p for p in objects if p.startswith(self.adapter_path + "/dev_")
                     and self._prop(objects, p, "org.bluez.Device1", "Connected", False)]
        else:
            views = [view_path]
        result = any(self._both_paired(objects, v, my_address) for v in views)
        if gen == self.generation:
            self.cache[key] = result
        return result

    def _both_paired(self, objects, view, my_address):
        if not self._prop(objects, view, "org.bluez.Device1", "Paired", False):
            return False
        central = self._prop(objects, view, "org.bluez.Device1", "Address", "")
        for path, ifaces in objects.items():
            adapter = ifaces.get("org.bluez.Adapter1")
            if adapter is None or adapter["Address"].value.upper() != central.upper():
                continue
            host_device = f"{path}/dev_{my_address.upper().replace(':', '_')}"
            return bool(self._prop(objects, host_device, "org.bluez.Device1", "Paired", False))
        return False

    async def bonded_views(self):
        """Our adapter's Device1 paths of centrals the Frame holds a bond with."""
        objects = await self.objects()
        return [p for p in objects if p.startswith(self.adapter_path + "/dev_")
                and self._prop(objects, p, "org.bluez.Device1", "Paired", False)]
