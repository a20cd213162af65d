#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The terminal side of Scripts/demo: glassd's session states and the virtual Monocle's display.

  demo_view.py wait-name NAME [--pid PID] [--timeout S]
      Exits 0 once NAME has an owner on the bus; 1 when PID exits first or after S seconds.
  demo_view.py view [--vm hci1] [--ready-timeout S] [-- PAIR_COMMAND...]
      Subscribes to glassd's PropertiesChanged and the virtual Monocle's DisplayChanged, runs
      PAIR_COMMAND (e.g. glassctl pair), then prints every session state and every frame, and
      reads commands from stdin (see HELP) once the glasses are ready. Exits 0 on :quit or EOF.

The bus is $DBUS_SESSION_BUS_ADDRESS (or --bus): the demo's private bus, which is glassd's session
bus and the fake BlueZ's system bus at once. Test-only tool, like the rest of Tests/World.
"""
import argparse
import asyncio
import os
import re
import sys
import threading
import time

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.errors import DBusError

GLASSD = "org.glassd"
MANAGER_PATH = "/org/glassd"
MANAGER = "org.glassd.Manager1"
DEVICE = "org.glassd.Device1"
PROPS = "org.freedesktop.DBus.Properties"
VM_IFACE = "org.glassd.test.VirtualMonocle1"
COLS = 26          # characters per line of glassd's display layout (640 px wide)
FRAME_WAIT = 3.0   # how long a command waits for the frame it causes

HELP = """\
Type a line and press Enter to show it on the glasses (org.glassd.Device1.Display).
  :tap    tap the touch pad (starts a question; tap again to end it)
  :hold   hold the touch pad for 1.5 s (photo, then a question)
  :clear  clear the answer area
  :help   this help
  :quit   stop everything (so do Ctrl-C and end of input)"""

ANSI = {"red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "cyan": "36",
        "gray": "90", "black": "30;47"}
COLOUR_RE = re.compile(r"^\[(#[0-9a-fA-F]{6}|[a-z]+)\] ")


def say(text=""):
    print(text, flush=True)


class View:
    def __init__(self, bus, args):
        self.bus = bus
        self.args = args
        self.vm_name = f"org.glassd.test.VirtualMonocle.{args.vm}"
        self.vm_path = f"/org/glassd/vmonocle/{args.vm}"
        self.tty = sys.stdout.isatty()
        utf8 = (sys.stdout.encoding or "").lower().replace("-", "") == "utf8"
        self.box = "┌─┐│└┘" if utf8 else "+-+|++"
        self.t0 = time.monotonic()
        self.frames = 0
        self.frame_event = asyncio.Event()
        self.ready = asyncio.Event()
        self.state = ""
        self.gone = asyncio.Event()      # glassd or the virtual Monocle left the bus
        self.gone_why = ""

    # --- output
    def stamp(self):
        return f"{time.monotonic() - self.t0:6.1f}s"

    def paint(self, line):
        m = COLOUR_RE.match(line)
        if not m or not self.tty:
            return line, len(line)
        body = line[m.end():]
        name = m.group(1)
        if name.startswith("#"):
            r, g, b = (int(name[i:i + 2], 16) for i in (1, 3, 5))
            code = f"38;2;{r};{g};{b}"
        else:
            code = ANSI.get(name, "0")
        return f"\x1b[{code}m{body}\x1b[0m", len(body)

    def show_frame(self, text):
        self.frames += 1
        lines = text.split("\n") if text else []
        painted = [self.paint(line) for line in lines]
        width = max([COLS] + [n for _, n in painted])
        tl, h, tr, v, bl, br = self.box
        title = f" display, frame {self.frames} "
        say(f"{self.stamp()}  {tl}{h}{title}{h * (width + 1 - len(title))}{tr}")
        if not painted:
            painted = [("", 0)]
        for shown, n in painted:
            say(f"{'':8}{v} {shown}{' ' * (width - n)} {v}")
        say(f"{'':8}{bl}{h * (width + 2)}{br}")
        self.frame_event.set()

    def show_state(self, path, props):
        state = props.get("State")
        if state is None:
            return
        self.state = state.value
        line = f"{self.stamp()}  glassd: {self.state}"
        reason = props.get("StateReason")
        if reason is not None and reason.value:
            line += f" ({reason.value})"
        if self.state == "ready":
            self.ready.set()
        else:
            self.ready.clear()
        say(line)

    # --- D-Bus
    async def call(self, destination, path, interface, member, signature="", body=(), timeout=30):
        reply = await asyncio.wait_for(self.bus.call(Message(
            destination=destination, path=path, interface=interface, member=member,
            signature=signature, body=list(body))), timeout)
        if reply.message_type == MessageType.ERROR:
            raise DBusError(reply.error_name, reply.body[0] if reply.body else "")
        return reply.body

    async def add_match(self, rule):
        await self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                        "AddMatch", "s", [rule])

    def on_message(self, msg):
        if msg.message_type != MessageType.SIGNAL:
            return
        if msg.member == "DisplayChanged" and msg.interface == VM_IFACE:
            self.show_frame(msg.body[0])
        elif msg.member == "PropertiesChanged" and msg.interface == PROPS:
            if msg.body[0] == DEVICE:
                self.show_state(msg.path, msg.body[1])
        elif msg.member == "NameOwnerChanged" and msg.body[0] in (GLASSD, self.vm_name):
            if not msg.body[2]:
                who = "glassd" if msg.body[0] == GLASSD else "the virtual Monocle"
                self.gone_why = f"{who} left the bus"
                self.gone.set()

    async def subscribe(self):
        self.bus.add_message_handler(self.on_message)
        await self.add_match(f"type='signal',sender='{self.vm_name}',interface='{VM_IFACE}',"
                             "member='DisplayChanged'")
        await self.add_match(f"type='signal',sender='{GLASSD}',interface='{PROPS}',"
                             "member='PropertiesChanged'")
        for name in (GLASSD, self.vm_name):
            await self.add_match("type='signal',sender='org.freedesktop.DBus',"
                                 "interface='org.freedesktop.DBus',member='NameOwnerChanged',"
                                 f"arg0='{name}'")

    async def device_path(self):
        (value,) = await self.call(GLASSD, MANAGER_PATH, PROPS, "Get", "ss", [MANAGER, "PairedDevice"])
        return value.value

    # --- commands
    async def wait_frame(self):
        try:
            await asyncio.wait_for(self.frame_event.wait(), FRAME_WAIT)
        except asyncio.TimeoutError:
            say(f"{self.stamp()}  (no new frame within {FRAME_WAIT:.0f} s)")

    async def command(self, line):
        """Runs one input line; returns False to stop."""
        word = line.strip()
        if word == ":quit":
            return False
        if word in (":help", ":?"):
            say(HELP)
            return True
        if word == "":
            return True
        self.frame_event.clear()
        try:
            if word == ":tap":
                say(f"{self.stamp()}  > tap")
                await self.call(self.vm_name, self.vm_path, VM_IFACE, "Tap")
            elif word == ":hold":
                say(f"{self.stamp()}  > hold 1.5 s")
                await self.call(self.vm_name, self.vm_path, VM_IFACE, "Hold", "d", [1.5])
            elif word.startswith(":") and word != ":clear":
                say(f"{self.stamp()}  unknown command {word}; :help lists them")
                return True
            else:
                text = "" if word == ":clear" else line.rstrip("\n")
                say(f"{self.stamp()}  > Display {text!r}")
                path = await self.device_path()
                await self.call(GLASSD, path, DEVICE, "Display", "s", [text])
        except DBusError as e:
            say(f"{self.stamp()}  error: {e.type}: {e.text}")
            return True
        except asyncio.TimeoutError:
            say(f"{self.stamp()}  error: no reply within 30 s")
            return True
        await self.wait_frame()
        return True

    async def run(self, pair_command):
        await self.subscribe()
        for name in (GLASSD, self.vm_name):
            (has,) = await self.call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "NameHasOwner", "s", [name])
            if not has:
                say(f"demo: {name} is not on the bus")
                return 1
        say(HELP)
        say()
        if pair_command:
            say(f"{self.stamp()}  $ {' '.join(os.path.basename(a) if i == 0 else a for i, a in enumerate(pair_command))}")
            proc = await asyncio.create_subprocess_exec(
                *pair_command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT)
            out, _ = await proc.communicate()
            for line in out.decode(errors="replace").splitlines():
                say(f"{'':8}{line}")
            if proc.returncode != 0:
                say(f"demo: the pair command failed ({proc.returncode})")
                return 1

        lines = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def reader():
            for line in sys.stdin:
                loop.call_soon_threadsafe(lines.put_nowait, line)
            loop.call_soon_threadsafe(lines.put_nowait, None)

        threading.Thread(target=reader, daemon=True).start()

        gone = asyncio.ensure_future(self.gone.wait())
        try:
            ready = asyncio.ensure_future(self.ready.wait())
            done, _ = await asyncio.wait({ready, gone}, timeout=self.args.ready_timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
            ready.cancel()
            if gone in done:
                say(f"demo: {self.gone_why}")
                return 1
            if ready not in done:
                say(f"demo: the glasses were not ready within {self.args.ready_timeout:.0f} s "
                    f"(state: {self.state or 'unknown'})")
                return 1
            await self.wait_frame()      # the ready screen
            say(f"{self.stamp()}  ready: type a line, or :help")
            while True:
                get = asyncio.ensure_future(lines.get())
                done, _ = await asyncio.wait({get, gone}, return_when=asyncio.FIRST_COMPLETED)
                if gone in done:
                    get.cancel()
                    say(f"demo: {self.gone_why}")
                    return 1
                line = get.result()
                if line is None:
                    say(f"{self.stamp()}  end of input")
                    return 0
                if not self.ready.is_set() and self.state != "busy" and line.strip() not in (":quit", ":help"):
                    say(f"{self.stamp()}  (glasses {self.state}; waiting until they are ready)")
                    ready = asyncio.ensure_future(self.ready.wait())
                    await asyncio.wait({ready, gone}, return_when=asyncio.FIRST_COMPLETED)
                    ready.cancel()
                    if self.gone.is_set():
                        say(f"demo: {self.gone_why}")
                        return 1
                if not await self.command(line):
                    return 0
        finally:
            gone.cancel()


async def wait_name(bus, name, pid, timeout):
    """Waits for NAME to get an owner (NameOwnerChanged, no polling), or PID to exit."""
    owned = asyncio.Event()

    def on_message(msg):
        if (msg.message_type == MessageType.SIGNAL and msg.member == "NameOwnerChanged"
                and msg.body[0] == name and msg.body[2]):
            owned.set()

    bus.add_message_handler(on_message)
    dbus = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")
    await bus.call(Message(destination=dbus[0], path=dbus[1], interface=dbus[2], member="AddMatch",
                           signature="s", body=[f"type='signal',sender='org.freedesktop.DBus',"
                                                f"member='NameOwnerChanged',arg0='{name}'"]))
    reply = await bus.call(Message(destination=dbus[0], path=dbus[1], interface=dbus[2],
                                   member="NameHasOwner", signature="s", body=[name]))
    if reply.body and reply.body[0]:
        return 0
    loop = asyncio.get_running_loop()
    exited = asyncio.Event()
    pidfd = None
    if pid:
        try:
            pidfd = os.pidfd_open(pid)
            loop.add_reader(pidfd, exited.set)
        except ProcessLookupError:
            return 1
    waits = {asyncio.ensure_future(owned.wait()), asyncio.ensure_future(exited.wait())}
    done, pending = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    if pidfd is not None:
        loop.remove_reader(pidfd)
        os.close(pidfd)
    return 0 if owned.is_set() else 1


async def amain(args):
    address = args.bus or os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    if not address:
        say("demo_view: no bus (--bus or DBUS_SESSION_BUS_ADDRESS)")
        return 2
    bus = await MessageBus(bus_address=address).connect()
    try:
        if args.cmd == "wait-name":
            return await wait_name(bus, args.name, args.pid, args.timeout)
        pair = args.pair[1:] if args.pair[:1] == ["--"] else args.pair
        return await View(bus, args).run(pair)
    finally:
        bus.disconnect()


def main():
    parser = argparse.ArgumentParser(description="Scripts/demo's terminal view (test-only tool)")
    parser.add_argument("--bus", help="bus address (default: $DBUS_SESSION_BUS_ADDRESS)")
    sub = parser.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("wait-name", help="wait until a bus name has an owner")
    w.add_argument("name")
    w.add_argument("--pid", type=int, help="give up when this process exits")
    w.add_argument("--timeout", type=float, default=20)
    v = sub.add_parser("view", help="show states and frames, send typed lines to the glasses")
    v.add_argument("--vm", default="hci1", help="the virtual Monocle's adapter (default hci1)")
    v.add_argument("--ready-timeout", type=float, default=90)
    v.add_argument("pair", nargs=argparse.REMAINDER, help="-- COMMAND to pair, run once subscribed")
    args = parser.parse_args()
    try:
        return asyncio.run(amain(args))
    except KeyboardInterrupt:
        return 130
    except (OSError, DBusError) as e:
        say(f"demo_view: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
