#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Listens to every signal org.glassd sends, as any client may (a match rule, no eavesdropping),
on the bus at argv[1]: prints READY once subscribed, then one line per signal received:
"Member arg arg ...". Ends at SIGTERM. Test-only; runs with Debian's python3-dbus."""
import signal
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(sys.argv[1])

    def received(*args, **keywords):
        print(keywords["member"], *[str(a) for a in args], flush=True)

    # add_signal_receiver calls AddMatch synchronously: subscribed once it returns.
    bus.add_signal_receiver(received, bus_name="org.glassd", member_keyword="member")
    print("READY", flush=True)
    loop = GLib.MainLoop()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    loop.run()


if __name__ == "__main__":
    main()
