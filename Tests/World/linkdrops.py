# SPDX-License-Identifier: GPL-2.0-or-later
#
# linkdrops: link drops the virtual Monocle (and the virtual Frame/Halo) makes itself, at points
# of its own progress (VirtualMonocle1.DropLinks, VirtualFrame1.DropLinks), so that a test drops
# the link at a given step of an update however late it would have seen that step: a test
# reacting to signals on a loaded machine finds the device already past it. Test-only.
#
# Points, in order; each is armed once the one before has dropped the link:
#   command       the app's REPL runs a command (what it answered before goes out, nothing after)
#   serial N      the app has taken in N serial bytes since the point was armed
#   data N        the same on the data channel
#   dfu N         the bootloader holds N bytes of the image
#   smp N         the Halo's SMP server (vsmp.py) holds N bytes of the upload
#   fpga-erase    the FPGA's flash area was erased
#   fpga-write N  N bytes were written to the FPGA's flash area since its last erase
#   fpga-read     the FPGA's flash area is read (as the update verifies it)
# The drop is Test1.DropLink of bzworld (a lost link, as DropLink from a test). From the point on
# until the link is down nothing crosses it either way (it is being lost): the device does not
# get further than the point. A drop that finds no link leaves the point armed.
# end_links is the other drop a device makes: every link ends when it resets.

import asyncio
from collections import deque

from dbus_fast import DBusError

KINDS = {"command": False, "serial": True, "data": True, "dfu": True, "smp": True, "fpga-erase": False,
         "fpga-write": True, "fpga-read": False}     # kind -> takes a count


def parse(texts):
    """['dfu 21600', 'fpga-read', ...] -> [(kind, count, text)]; ValueError on a bad one."""
    points = []
    for text in texts:
        kind, _, count = text.strip().partition(" ")
        if kind not in KINDS:
            raise ValueError(f"{text!r}: the kinds are {', '.join(KINDS)}")
        if KINDS[kind] != bool(count.strip()):
            raise ValueError(f"{text!r}: {kind} takes {'a count' if KINDS[kind] else 'no count'}")
        n = int(count) if count.strip() else 0
        if KINDS[kind] and n < 1:
            raise ValueError(f"{text!r}: the count is at least 1")
        points.append((kind, n, text.strip()))
    return points


class LinkDrops:
    """`monocle` (or the Frame) gives mode, adapter_path, dfu.adapter_path, call() and control."""

    def __init__(self, monocle, warn):
        self.m, self.warn = monocle, warn
        self.points = deque()
        self.taken = 0            # serial/data bytes since the first point was armed
        self.fpga_offset = 0      # bytes written to the FPGA's flash area since its last erase
        self.dropping = False     # a point was reached and its link is being dropped
        self.done = []            # the points dropped, in order
        self.addresses = {}       # adapter path -> address, read when armed
        self.tasks = set()

    async def arm(self, texts):
        points = deque(parse(texts))
        # Read now, so that a drop is one call: it reaches bzworld before anything the device
        # does after the point (a reset into the bootloader disconnects too).
        for adapter in (self.m.adapter_path, self.m.dfu.adapter_path):
            try:
                self.addresses[adapter] = await self._address(adapter)
            except (DBusError, asyncio.TimeoutError):
                self.addresses.pop(adapter, None)     # read at the drop
        self.points, self.taken, self.done = points, 0, []

    async def _address(self, adapter):
        return (await self.m.call("org.bluez", adapter, "org.freedesktop.DBus.Properties", "Get",
                                  "ss", ["org.bluez.Adapter1", "Address"]))[0].value

    def left(self):
        return [p[2] for p in self.points]

    def _head(self, kind):
        return bool(self.points) and not self.dropping and self.points[0][0] == kind

    # --- the device's progress
    def taken_in(self, key, n):
        """The app took in n bytes on channel `key` ("serial" or "data")."""
        if self._head(key):
            self.taken += n
            if self.taken >= self.points[0][1]:
                self._reach()

    def command(self):
        if self._head("command"):
            self._reach()

    def image_held(self, n):
        if self._head("dfu") and n >= self.points[0][1]:
            self._reach()

    def smp_held(self, n):
        if self._head("smp") and n >= self.points[0][1]:
            self._reach()

    def fpga_erased(self):
        self.fpga_offset = 0
        if self._head("fpga-erase"):
            self._reach()

    def fpga_written(self, n):
        self.fpga_offset += n
        if self._head("fpga-write") and self.fpga_offset >= self.points[0][1]:
            self._reach()

    def fpga_read(self):
        if self._head("fpga-read"):
            self._reach()

    # --- the drop
    def _reach(self):
        self.dropping = True
        adapter = self.m.dfu.adapter_path if self.m.mode == "dfu" else self.m.adapter_path
        task = asyncio.get_running_loop().create_task(self._drop(self.points[0], adapter))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _drop(self, point, adapter):
        try:
            address = self.addresses.get(adapter) or await self._address(adapter)
            await self.m.call("org.bluez", "/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", [address])
        except (DBusError, asyncio.TimeoutError) as e:
            self.warn(f"link drop at {point[2]!r}: {e}; it stays armed")
            return
        finally:
            self.dropping = False
            self.taken = 0
        if self.points and self.points[0] is point:     # not armed anew meanwhile
            self.points.popleft()
        self.done.append(point[2])
        self.m.control.LinkDropped(point[2])


async def end_links(call, objects, adapter_path, warn, tries=6):
    """A reset ends every link to `adapter_path`, as a chip's does. `objects()` gives BlueZ's
    managed objects, `call(path)` disconnects one device. A bus call that times out (a loaded
    host) is tried again, up to `tries` times, rather than leave a link up across the reset."""
    for _ in range(tries):
        try:
            managed = await objects()
        except (DBusError, asyncio.TimeoutError) as e:
            warn(f"BlueZ's objects: {e!r}; trying again")
            continue
        left = False
        for path, ifaces in managed.items():
            dev = ifaces.get("org.bluez.Device1")
            connected = dev.get("Connected") if dev is not None else None
            if not path.startswith(adapter_path + "/") or connected is None or not connected.value:
                continue
            try:
                await call(path)
            except asyncio.TimeoutError:
                warn(f"Disconnect {path}: timed out; trying again")
                left = True
            except DBusError as e:     # gone meanwhile
                warn(f"Disconnect {path}: {e}")
        if not left:
            return True
    warn(f"a link may have outlived the reset: BlueZ did not answer {tries} times")
    return False
