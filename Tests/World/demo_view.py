#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The terminal side of Scripts/demo: glassd's session states and the virtual glasses' display
(a virtual Monocle, or with --frame a virtual Frame).

  demo_view.py wait-name NAME [--pid PID] [--timeout S]
      Exits 0 once NAME has an owner on the bus; 1 when PID exits first or after S seconds.
  demo_view.py view [--vm hci1] [--frame] [--dir DIR] [--files-from DIR] [--fake-server URL]
                    [--answers-from NAME] [--note TEXT] [--ready-timeout S] [--question-timeout S] [-- PAIR_COMMAND...]
      Subscribes to glassd's PropertiesChanged and question signals and the virtual Monocle's
      DisplayChanged, runs PAIR_COMMAND (e.g. glassctl pair), then prints every session state,
      every frame and every signal, and reads commands from stdin (see HELP) once the glasses are
      ready: a typed line is spoken with espeak-ng (WAV in DIR) into the virtual Monocle's
      microphone and asked with a tap, and the next line waits until that question ended. With
      --fake-server (tests' fake_openai.py, URL without /v1) its transcript is set to the typed
      text first; unless --answers-from names another (the embedded backend), it answers too.
      --note TEXT is said before pairing (what answers). Relative photo paths are taken from --files-from. Exits 0 on :quit or EOF.

The bus is $DBUS_SESSION_BUS_ADDRESS (or --bus): the demo's private bus, which is glassd's session
bus and the fake BlueZ's system bus at once. Test-only tool, like the rest of Tests/World.
"""
import argparse
import asyncio
import json
import os
import re
import shlex
import sys
import threading
import time
import urllib.request
import wave

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.errors import DBusError

GLASSD = "org.glassd"
MANAGER_PATH = "/org/glassd"
MANAGER = "org.glassd.Manager1"
DEVICE = "org.glassd.Device1"
PROPS = "org.freedesktop.DBus.Properties"
VM_IFACE = "org.glassd.test.VirtualMonocle1"
FRAME_IFACE = "org.glassd.test.VirtualFrame1"
FRAME_IDLE_PROMPT = "Tap to ask"   # glassd's Frame app when idle (glassd_app.lua STATUS.idle)
COLS = 26          # characters per line of glassd's display layout (640 px wide)
FRAME_WAIT = 3.0   # how long a command waits for the frame it causes
SETTLE_WAIT = 15.0  # after a question ended: until the glasses are back at their idle prompt
IDLE_PROMPT = "Tap to speak"   # the scripts' prompt when idle (main.py TAP_PROMPT)
HOLD_SECONDS = 1.5  # a hold: the scripts take the photo at 1.25 s
CAMERA_SIZE = (640, 400)       # converted photos are fitted to the Monocle camera's size
QUESTION_SIGNALS = ("Transcribed", "AnswerDelta", "Answered", "QueryFailed")

HELP = """\
Type a question and press Enter: espeak-ng speaks it into the glasses' microphone and a tap asks
it; the signals and frames show it being heard and answered (the next line waits for the end).
  :photo FILE QUESTION  a question about a photo: FILE (a JPEG as is, a PNG or other image
                converted to JPEG) is the camera's picture, a 1.5 s hold takes it, then
                QUESTION is heard
  :show TEXT    show TEXT on the glasses (org.glassd.Device1.Display)
  :mode MODE    assistant or translator (org.glassd.Manager1.Mode)
  :voice VOICE  the espeak-ng voice for what follows (e.g. de, fr, en)
  :tap          just a tap (hears the last question again; while listening: stop; while
                answering: cancel); does not wait for an answer
  :hold         just a 1.5 s hold (photo, then a question); does not wait for an answer
  :clear        clear the answer area
  :help         this help
  :quit         stop everything (so do Ctrl-C and end of input)"""

FAKE_NOTE = """\
The OFFLINE FAKE SERVER answers, not a model: it "hears" exactly the typed text and answers
"echo: <question>" (translator mode: "translated: <text>")."""

ANSI = {"red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "cyan": "36",
        "gray": "90", "black": "30;47"}
COLOUR_RE = re.compile(r"^\[(#[0-9a-fA-F]{6}|[a-z]+)\] ")


def say(text=""):
    print(text, flush=True)


class DemoError(Exception):
    """A command that cannot be done (a missing file, espeak-ng failing): said, then the next line."""


class View:
    def __init__(self, bus, args):
        self.bus = bus
        self.args = args
        if args.frame:
            self.vm_name = f"org.glassd.test.VirtualFrame.{args.vm}"
            self.vm_path = f"/org/glassd/vframe/{args.vm}"
            self.iface, self.idle_prompt, self.glasses = FRAME_IFACE, FRAME_IDLE_PROMPT, "the virtual Frame"
        else:
            self.vm_name = f"org.glassd.test.VirtualMonocle.{args.vm}"
            self.vm_path = f"/org/glassd/vmonocle/{args.vm}"
            self.iface, self.idle_prompt, self.glasses = VM_IFACE, IDLE_PROMPT, "the virtual Monocle"
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
        self.changed = asyncio.Event()   # any state, frame or signal: wakes until()
        self.idle = False                # the last frame shows the idle prompt
        self.question_ends = 0           # Answered/QueryFailed of questions from the glasses
        self.open_answer = None          # the query whose AnswerDelta line is still open
        self.spoken = 0
        self.voice = None

    # --- output
    def say(self, text=""):
        self.end_answer_line()
        say(text)

    def end_answer_line(self):
        if self.open_answer is not None:     # an answer streaming on its own line ends here
            sys.stdout.write("\n")
            self.open_answer = None

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
        self.idle = bool(lines) and lines[-1].endswith(self.idle_prompt)
        self.changed.set()
        painted = [self.paint(line) for line in lines]
        width = max([COLS] + [n for _, n in painted])
        tl, h, tr, v, bl, br = self.box
        title = f" display, frame {self.frames} "
        self.say(f"{self.stamp()}  {tl}{h}{title}{h * (width + 1 - len(title))}{tr}")
        if not painted:
            painted = [("", 0)]
        for shown, n in painted:
            self.say(f"{'':8}{v} {shown}{' ' * (width - n)} {v}")
        self.say(f"{'':8}{bl}{h * (width + 2)}{br}")
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
        self.changed.set()
        self.say(line)

    def show_question(self, member, body):
        """Manager1's signals about a question, from the glasses or from D-Bus."""
        query_id = body[0]
        if member == "AnswerDelta":
            # The pieces of the answer on one line, until something else is printed.
            if self.open_answer != query_id:
                self.end_answer_line()
                sys.stdout.write(f"{self.stamp()}  AnswerDelta: ")
                self.open_answer = query_id
            sys.stdout.write(body[1].replace("\n", " "))
            sys.stdout.flush()
        elif member == "Transcribed":
            self.say(f"{self.stamp()}  Transcribed: {json.dumps(body[1], ensure_ascii=False)}")
        elif member == "Answered":
            self.say(f"{self.stamp()}  Answered: {json.dumps(body[2], ensure_ascii=False)}")
        elif member == "QueryFailed":
            self.say(f"{self.stamp()}  QueryFailed: {body[1]}: {body[2]}")
        if member in ("Answered", "QueryFailed") and query_id.startswith("glasses/"):
            self.question_ends += 1
        self.changed.set()

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
        if msg.member == "DisplayChanged" and msg.interface == self.iface:
            self.show_frame(msg.body[0])
        elif msg.member == "PropertiesChanged" and msg.interface == PROPS:
            if msg.body[0] == DEVICE:
                self.show_state(msg.path, msg.body[1])
        elif msg.interface == MANAGER and msg.member in QUESTION_SIGNALS and msg.path == MANAGER_PATH:
            self.show_question(msg.member, msg.body)
        elif msg.member == "NameOwnerChanged" and msg.body[0] in (GLASSD, self.vm_name):
            if not msg.body[2]:
                who = "glassd" if msg.body[0] == GLASSD else self.glasses
                self.gone_why = f"{who} left the bus"
                self.gone.set()
                self.changed.set()

    async def subscribe(self):
        self.bus.add_message_handler(self.on_message)
        await self.add_match(f"type='signal',sender='{self.vm_name}',interface='{self.iface}',"
                             "member='DisplayChanged'")
        await self.add_match(f"type='signal',sender='{GLASSD}',interface='{PROPS}',"
                             "member='PropertiesChanged'")
        await self.add_match(f"type='signal',sender='{GLASSD}',interface='{MANAGER}',"
                             f"path='{MANAGER_PATH}'")
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
            self.say(f"{self.stamp()}  (no new frame within {FRAME_WAIT:.0f} s)")

    async def until(self, predicate, timeout):
        """Waits for the signals (no polling) until predicate() holds: False after `timeout`
        seconds or when glassd or the virtual Monocle left the bus."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            left = deadline - loop.time()
            if self.gone.is_set() or left <= 0:
                return False
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                return False
        return True

    async def vm(self, member, signature="", body=()):
        return await self.call(self.vm_name, self.vm_path, self.iface, member, signature, body)

    async def speak(self, text):
        """The question as a WAV from espeak-ng, in the demo's directory; returns its path."""
        self.spoken += 1
        path = os.path.join(self.args.dir, f"question-{self.spoken}.wav")
        command = ["espeak-ng", "-w", path] + (["-v", self.voice] if self.voice else []) + ["--stdin"]
        try:
            # The text on stdin, not argv: a question may start with "-".
            proc = await asyncio.create_subprocess_exec(
                *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT)
        except FileNotFoundError:
            raise DemoError("espeak-ng is not installed (Scripts/deps demo installs it)") from None
        try:
            out, _ = await asyncio.wait_for(proc.communicate(text.encode()), 30)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
            raise DemoError("espeak-ng did not finish within 30 s") from None
        try:
            with wave.open(path, "rb") as w:
                seconds = w.getnframes() / w.getframerate()
        except (OSError, EOFError, wave.Error):
            seconds = 0
        if proc.returncode != 0 or seconds <= 0:
            why = out.decode(errors="replace").strip() or f"exit status {proc.returncode}"
            raise DemoError(f"espeak-ng could not say it: {why}")
        voice = f", voice {self.voice}" if self.voice else ""
        self.say(f"{self.stamp()}  > espeak-ng{voice}: {os.path.basename(path)}, {seconds:.1f} s of speech")
        return path

    def jpeg(self, name):
        """The photo for the camera: a JPEG as is, anything else Pillow opens as a JPEG made here."""
        path = os.path.join(self.args.files_from, os.path.expanduser(name))
        try:
            with open(path, "rb") as f:
                head = f.read(3)
        except OSError as e:
            raise DemoError(f"cannot read the photo: {e}") from None
        if head == b"\xff\xd8\xff":
            self.say(f"{self.stamp()}  > photo {name} ({os.path.getsize(path)} bytes, a JPEG as is)")
            return os.path.abspath(path)
        from PIL import Image, UnidentifiedImageError
        try:
            with Image.open(path) as image:
                kind = image.format or "image"
                image = image.convert("RGB")
                # A real Monocle's photos are small; so a JPEG of that size crosses the link quickly.
                image.thumbnail(CAMERA_SIZE)
                out = os.path.join(self.args.dir, f"photo-{self.spoken + 1}.jpg")
                image.save(out, "JPEG", quality=85)
        except (OSError, UnidentifiedImageError) as e:
            raise DemoError(f"not an image Pillow can open: {e}") from None
        self.say(f"{self.stamp()}  > photo {name}: {kind} converted to {os.path.basename(out)} "
                 f"({image.width}x{image.height}, {os.path.getsize(out)} bytes)")
        return out

    async def set_transcript(self, text):
        """The fake server "hears" what follows as exactly this text."""
        request = urllib.request.Request(
            self.args.fake_server.rstrip("/") + "/_transcript",
            json.dumps({"text": text}).encode(), {"Content-Type": "application/json"})

        def post():
            with urllib.request.urlopen(request, timeout=10) as reply:
                reply.read()

        try:
            await asyncio.to_thread(post)
        except OSError as e:
            raise DemoError(f"the fake server did not take the transcript: {e}") from None

    async def ask(self, question, photo=None):
        """A spoken question (after a photo with `photo`), asked on the glasses; returns once it
        was answered or failed and the glasses are idle again, or after the timeouts."""
        if not question.strip():
            raise DemoError("no question to ask")
        if not await self.until(lambda: self.state == "ready", self.args.question_timeout):
            raise DemoError(f"the glasses are {self.state or 'not ready'}, not ready for a question")
        jpeg = self.jpeg(photo) if photo is not None else None
        wav = await self.speak(question)
        if self.args.fake_server:
            await self.set_transcript(question)
        await self.vm("FeedAudio", "s", [wav])
        if jpeg:
            await self.vm("FeedImage", "s", [jpeg])
        ends = self.question_ends
        self.idle = False                # from here on, only a frame after the question counts
        self.frame_event.clear()
        if jpeg and self.args.frame:
            self.say(f"{self.stamp()}  > double tap (photo, then the question)")
            await self.vm("DoubleTap")
        elif jpeg:
            self.say(f"{self.stamp()}  > hold {HOLD_SECONDS} s (photo, then the question)")
            await self.vm("Hold", "d", [HOLD_SECONDS])
        else:
            self.say(f"{self.stamp()}  > tap (the glasses listen)")
            await self.vm("Tap")
        timeout = self.args.question_timeout
        if not await self.until(lambda: self.question_ends > ends, timeout):
            if not self.gone.is_set():
                self.say(f"{self.stamp()}  (the question did not end within {timeout:.0f} s)")
            return
        # The answer's last frames: until the glasses are ready and show their idle prompt.
        if not await self.until(lambda: self.state == "ready" and self.idle, SETTLE_WAIT):
            if not self.gone.is_set():
                self.say(f"{self.stamp()}  (the glasses did not show \"{self.idle_prompt}\" within "
                         f"{SETTLE_WAIT:.0f} s)")

    async def set_mode(self, mode):
        await self.call(GLASSD, MANAGER_PATH, PROPS, "Set", "ssv", [MANAGER, "Mode", Variant("s", mode)])
        self.say(f"{self.stamp()}  mode: {await self.mode()}")

    async def mode(self):
        (value,) = await self.call(GLASSD, MANAGER_PATH, PROPS, "Get", "ss", [MANAGER, "Mode"])
        return value.value

    async def command(self, line):
        """Runs one input line; returns False to stop."""
        text = line.rstrip("\n")
        word, _, rest = text.strip().partition(" ")
        rest = rest.strip()
        if word == ":quit":
            return False
        if word in (":help", ":?"):
            self.say(HELP)
            return True
        if word == "":
            return True
        self.frame_event.clear()
        try:
            if not word.startswith(":"):
                self.say(f"{self.stamp()}  > question {json.dumps(text.strip(), ensure_ascii=False)}")
                await self.ask(text.strip())
                return True
            if word == ":photo":
                # FILE may be quoted (spaces); the question is the rest as typed.
                lexer = shlex.shlex(rest, posix=True)
                lexer.whitespace_split = True
                try:
                    photo = lexer.get_token()
                    question = lexer.instream.read().strip()
                except ValueError as e:
                    raise DemoError(f":photo FILE QUESTION: {e}") from None
                if not photo or not question:
                    raise DemoError("usage: :photo FILE QUESTION")
                self.say(f"{self.stamp()}  > question about {photo}: "
                         f"{json.dumps(question, ensure_ascii=False)}")
                await self.ask(question, photo=photo)
                return True
            if word == ":mode":
                await self.set_mode(rest)
                return True
            if word == ":voice":
                self.voice = rest or None
                self.say(f"{self.stamp()}  espeak-ng voice: {self.voice or 'the default'}")
                return True
            if word == ":tap":
                self.say(f"{self.stamp()}  > tap")
                await self.vm("Tap")
            elif word == ":hold" and self.args.frame:
                self.say(f"{self.stamp()}  > double tap (a Frame has no touch pad: two taps take a photo)")
                await self.vm("DoubleTap")
            elif word == ":hold":
                self.say(f"{self.stamp()}  > hold {HOLD_SECONDS} s")
                await self.vm("Hold", "d", [HOLD_SECONDS])
            elif word in (":show", ":clear"):
                shown = rest if word == ":show" else ""
                self.say(f"{self.stamp()}  > Display {shown!r}")
                path = await self.device_path()
                await self.call(GLASSD, path, DEVICE, "Display", "s", [shown])
            else:
                self.say(f"{self.stamp()}  unknown command {word}; :help lists them")
                return True
        except DemoError as e:
            self.say(f"{self.stamp()}  error: {e}")
            return True
        except DBusError as e:
            self.say(f"{self.stamp()}  error: {e.type}: {e.text}")
            return True
        except asyncio.TimeoutError:
            self.say(f"{self.stamp()}  error: no reply within 30 s")
            return True
        await self.wait_frame()
        return True

    async def run(self, pair_command):
        await self.subscribe()
        for name in (GLASSD, self.vm_name):
            (has,) = await self.call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "NameHasOwner", "s", [name])
            if not has:
                self.say(f"demo: {name} is not on the bus")
                return 1
        self.say(HELP)
        self.say()
        note = self.args.note if self.args.note is not None else FAKE_NOTE if self.args.fake_server else ""
        if note:
            self.say(note)
            self.say()
        if pair_command:
            self.say(f"{self.stamp()}  $ {' '.join(os.path.basename(a) if i == 0 else a for i, a in enumerate(pair_command))}")
            proc = await asyncio.create_subprocess_exec(
                *pair_command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT)
            out, _ = await proc.communicate()
            for line in out.decode(errors="replace").splitlines():
                self.say(f"{'':8}{line}")
            if proc.returncode != 0:
                self.say(f"demo: the pair command failed ({proc.returncode})")
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
                self.say(f"demo: {self.gone_why}")
                return 1
            if ready not in done:
                self.say(f"demo: the glasses were not ready within {self.args.ready_timeout:.0f} s "
                    f"(state: {self.state or 'unknown'})")
                return 1
            await self.wait_frame()      # the ready screen
            server = self.args.answers_from or ("the offline fake server" if self.args.fake_server else "your server")
            self.say(f"{self.stamp()}  ready (mode {await self.mode()}, answers from {server}): "
                     "type a question, or :help")
            while True:
                get = asyncio.ensure_future(lines.get())
                done, _ = await asyncio.wait({get, gone}, return_when=asyncio.FIRST_COMPLETED)
                if gone in done:
                    get.cancel()
                    self.say(f"demo: {self.gone_why}")
                    return 1
                line = get.result()
                if line is None:
                    self.say(f"{self.stamp()}  end of input")
                    return 0
                if not self.ready.is_set() and self.state != "busy" and line.strip() not in (":quit", ":help"):
                    self.say(f"{self.stamp()}  (glasses {self.state}; waiting until they are ready)")
                    ready = asyncio.ensure_future(self.ready.wait())
                    await asyncio.wait({ready, gone}, return_when=asyncio.FIRST_COMPLETED)
                    ready.cancel()
                    if self.gone.is_set():
                        self.say(f"demo: {self.gone_why}")
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
    v.add_argument("--vm", default="hci1", help="the virtual glasses' adapter (default hci1)")
    v.add_argument("--frame", action="store_true", help="the glasses are a virtual Frame, not a Monocle")
    v.add_argument("--ready-timeout", type=float, default=90)
    v.add_argument("--question-timeout", type=float, default=120,
                   help="longest wait for a question's end (recording, transcription, answer)")
    v.add_argument("--dir", default=".", help="where the spoken questions and photos go")
    v.add_argument("--files-from", default=".", help="relative photo paths start here")
    v.add_argument("--fake-server", metavar="URL",
                   help="the fake server (no /v1): its transcript is set to each typed question")
    v.add_argument("--answers-from", metavar="NAME", help="what answers, for the ready line")
    v.add_argument("--note", help="said before pairing (default: the fake server's note with --fake-server)")
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
