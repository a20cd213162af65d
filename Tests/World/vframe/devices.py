# SPDX-License-Identifier: GPL-2.0-or-later
"""The virtual Frame's hardware behind its Lua API (no Lua, no D-Bus here): the flash file
system, the microphone, the camera and the display. Shared by the Lua thread (vframe/lua_vm.py)
and the test control (virtual_frame.py), so every object guards its state with a lock.
"""
import io
import math
import os
import struct
import sys
import threading
import time
import wave
from array import array

# frame.display colour names (Brilliant's SDK docs: a 16-entry palette) -> the RGB shown in PNGs.
PALETTE = {"VOID": 0x000000, "WHITE": 0xFFFFFF, "GREY": 0x9D9D9D, "RED": 0xBE2633,
           "PINK": 0xE06F8B, "DARKBROWN": 0x493C2B, "BROWN": 0xA46422, "ORANGE": 0xEB8931,
           "YELLOW": 0xF7E26B, "DARKGREEN": 0x2F484E, "GREEN": 0x44891A, "LIGHTGREEN": 0xA3CE27,
           "NIGHTBLUE": 0x1B2632, "SEABLUE": 0x005784, "SKYBLUE": 0x31A2F2, "CLOUDBLUE": 0xB2DCEF}
WIDTH, HEIGHT = 640, 400
HALO_SIZE = 256
# frame.camera.capture{quality=...} names -> JPEG quality (Pillow); AppMessage's 0..4 in order.
QUALITY = {"VERY_LOW": 25, "LOW": 40, "MEDIUM": 55, "HIGH": 70, "VERY_HIGH": 85}
CAPTURE_TIME = 0.25        # s from capture() until image_ready() (exposure and compression)
HIDDEN = ".bootloader"     # the DFU bootloader's settings in the flash folder, not a user file


class Fail(Exception):
    """An error the Lua API raises as a Lua error with this message."""


class Flash:
    """frame.file: files in a folder that outlives resets and processes (the device's flash)."""

    def __init__(self, root):
        self.root = root
        self.handles = {}
        self.next_handle = 1
        self.lock = threading.Lock()

    def path(self, name):
        name = name.decode() if isinstance(name, bytes) else str(name)
        parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
        if any(p == ".." for p in parts) or (parts and parts[0] == HIDDEN):
            raise Fail(f"invalid path: {name}")
        return os.path.join(self.root, *parts)

    def open(self, name, mode):
        mode = (mode or b"read").decode() if isinstance(mode, bytes) else (mode or "read")
        py = {"read": "rb", "r": "rb", "write": "wb", "w": "wb", "append": "ab", "a": "ab"}.get(mode)
        if py is None:
            raise Fail(f"invalid mode: {mode}")
        try:
            f = open(self.path(name), py)
        except OSError:
            raise Fail(f"could not open file: {name.decode(errors='replace')}")
        with self.lock:
            handle = self.next_handle
            self.next_handle += 1
            self.handles[handle] = f
        return handle

    def _file(self, handle):
        f = self.handles.get(handle)
        if f is None:
            raise Fail("file is closed")
        return f

    def read(self, handle, n):
        """A line without its newline (n None), or up to n bytes; None at the end."""
        f = self._file(handle)
        data = f.readline() if n is None else f.read(int(n))
        if not data:
            return None
        return data[:-1] if n is None and data.endswith(b"\n") else data

    def write(self, handle, data):
        self._file(handle).write(data)

    def close(self, handle):
        f = self.handles.pop(handle, None)
        if f is not None:
            f.close()

    def close_all(self):
        for handle in list(self.handles):
            self.close(handle)

    def remove(self, name):
        try:
            os.remove(self.path(name))
        except OSError:
            raise Fail(f"could not remove: {name.decode(errors='replace')}")

    def rename(self, old, new):
        try:
            os.rename(self.path(old), self.path(new))
        except OSError:
            raise Fail("could not rename")

    def mkdir(self, name):
        try:
            os.mkdir(self.path(name))
        except OSError:
            raise Fail("could not create directory")

    def listdir(self, name=b""):
        """[(name, size, type)]: type 1 file, 2 folder, as frame.file.listdir tables."""
        try:
            base = self.path(name or b"")
            names = sorted(os.listdir(base))
        except OSError:
            raise Fail("could not open directory")
        out = []
        for n in names:
            if n == HIDDEN and base == self.root:
                continue
            p = os.path.join(base, n)
            out.append((n, os.path.getsize(p) if os.path.isfile(p) else 0, 2 if os.path.isdir(p) else 1))
        return out

    def files(self):
        """Every user file, relative to the flash root (the test control's Files())."""
        out = []
        for dirpath, dirs, names in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if not (dirpath == self.root and d == HIDDEN))
            for n in sorted(names):
                out.append(os.path.relpath(os.path.join(dirpath, n), self.root))
        return out


class Microphone:
    """frame.microphone: the fed clip (else silence) becomes readable in real time from start();
    8-bit samples are the signed high byte, 16-bit ones signed little-endian (the nRF's order).
    No overflow is modelled: unread samples wait until read.

    A clip fed while it records is heard from then on, from its start (a sound starts when it
    starts), and it goes on in real time: a stop and start while it lasts hear it from where it
    is then (the wearer does not begin again because the microphone restarted: a Halo's barge-in).
    A clip fed while stopped, or one that has ended, plays from the start of each recording, but
    not of one started while the speaker plays (the glasses listen over their own answer: the
    wearer does not repeat the question; a clip fed then is heard). With
    continues=False (a Frame) every start plays the clip from its start, as before the Halo's
    barge-in: glassd's wake-phrase test on a Frame asks its question with the phrase's own clip
    again.

    With an echo source (a Halo's speaker, vframe/speaker.py) every sample also holds what the
    speaker played ECHO_DELAY_S before, ECHO_GAIN down (the acoustic path); a recording with
    aec on leaves AEC_RESIDUE of that (the echo canceller), unless echo_cancel is off (a test's
    SetEchoCancel(false): the canceller does nothing)."""

    ECHO_DELAY_S = 0.020
    ECHO_GAIN = 0.251             # -12 dB
    AEC_RESIDUE = 0.0178          # -35 dB below the echo
    NEVER = 1e12                  # a base no recording reaches: the clip is not heard

    def __init__(self, clock=time.monotonic, echo=None, continues=True):
        self.lock = threading.Lock()
        self.clock = clock
        self.echo = echo
        self.continues = continues
        self.echo_cancel = True
        self.clip = (16000, array("h"))   # (rate, samples)
        self.clip_at = None           # clock time it began, when fed while recording
        self.running = False
        self.rate = 8000
        self.bits = 16
        self.aec = self.voice = False
        self.gain = 0
        self.t0 = 0.0
        self.t_stop = None
        self.taken = 0                # samples read out of this recording
        self.base = 0.0               # the sample of this recording at which the clip starts
        self.coder = None             # an LC3 encoder while recording LC3 (a Halo)
        self.coded = bytearray()      # LC3 bytes not yet read

    def feed(self, path):
        with wave.open(path, "rb") as w:
            rate, width, channels = w.getframerate(), w.getsampwidth(), w.getnchannels()
            raw = w.readframes(w.getnframes())
        out = bytearray()
        step = width * channels
        for i in range(0, len(raw) - step + 1, step):
            if width == 1:
                out += struct.pack("<h", (raw[i] - 128) << 8)
            else:       # the two most significant bytes of the first channel
                out += raw[i + width - 2:i + width]
        samples = array("h")
        samples.frombytes(bytes(out))
        if sys.byteorder == "big":
            samples.byteswap()
        with self.lock:
            self.clip = (rate, samples)
            if self.running:
                self.clip_at = self.clock()
                self.base = (self.clip_at - self.t0) * self.rate
            else:
                self.clip_at, self.base = None, 0.0

    def start(self, rate, bits, encoder="pcm", bitrate=None, duration=None, aec=False, voice=False, gain=0):
        """encoder "lc3" (a Halo): reads give LC3 frames as a byte stream, coded by liblc3
        (bitrate in bit/s, duration 750 or 1000: 7.5 or 10 ms frames). aec: the echo canceller
        (see the class). voice (300-3400 Hz) and gain (-10..10) are kept, not modelled: the clip
        is heard as it is."""
        if rate not in (8000, 16000):
            raise Fail("sample_rate must be 8000 or 16000")
        if bits not in (8, 16):
            raise Fail("bit_depth must be 8 or 16")
        if not -10 <= gain <= 10:
            raise Fail("gain must be -10..10")
        coder = None
        if encoder == "lc3":
            import lc3  # beside the world's scripts; loads liblc3.so.0
            try:
                coder = lc3.Encoder(lc3.Format(rate, 7500 if duration == 750 else 10000, bitrate=bitrate or 32000))
            except (ValueError, OSError) as e:
                raise Fail(f"lc3: {e}")
            bits = 16
        elif encoder != "pcm":
            raise Fail("encoder must be pcm or lc3")
        with self.lock:
            now = self.clock()
            self.rate, self.bits, self.coder, self.coded = rate, bits, coder, bytearray()
            self.aec, self.voice, self.gain = bool(aec), bool(voice), int(gain)
            self.running, self.t0, self.t_stop, self.taken = True, now, None, 0
            clip_rate, clip = self.clip
            if self.continues and self.clip_at is not None and now - self.clip_at < len(clip) / clip_rate:
                self.base = (self.clip_at - now) * rate     # still sounding: where it is now
            elif self.continues and self.echo is not None and self.echo.streaming:
                # Listening while the glasses speak (a Halo's barge-in): the wearer does not say
                # the question again; only a clip fed from now on is heard.
                self.clip_at, self.base = None, self.NEVER
            else:
                self.clip_at, self.base = None, 0.0

    def stop(self):
        with self.lock:
            if self.running:
                self.running, self.t_stop = False, self.clock()

    def set_aec(self, on):
        """frame.microphone.aec(on): also while recording, from the next read on."""
        with self.lock:
            self.aec = bool(on)

    def set_voice(self, on):
        with self.lock:
            self.voice = bool(on)

    def status(self):
        with self.lock:
            return "streaming" if self.running else "stopped"

    def _clip(self, k0, count):
        """The clip's samples at this recording's samples k0 .. k0+count-1 (0 outside it)."""
        rate, clip = self.clip
        n = len(clip)
        if rate == self.rate:       # clip sample j = k - base, the same for the whole read
            j0 = k0 + math.floor(-self.base + 1e-6)
            out = [0] * count
            lo, hi = max(0, -j0), min(count, n - j0)
            if lo < hi:
                out[lo:hi] = clip[j0 + lo:j0 + hi]
            return out
        ratio, base = rate / self.rate, self.base
        out = []
        for k in range(k0, k0 + count):
            j = math.floor((k - base) * ratio + 1e-6)
            out.append(clip[j] if 0 <= j < n else 0)
        return out

    def _echo(self, k0, count):
        """What the speaker sent into this recording's samples k0 .. k0+count-1, or None."""
        if self.echo is None:
            return None
        at = self.t0 + k0 / self.rate - self.ECHO_DELAY_S
        played = self.echo.played_audio(at, at + count / self.rate, self.rate, count)
        if not any(played):
            return None
        gain = self.ECHO_GAIN * (self.AEC_RESIDUE if self.aec and self.echo_cancel else 1.0)
        return [round(v * gain) for v in played]

    def read(self, n):
        """Up to n bytes of samples recorded so far; b"" when none yet; None when stopped and
        drained (or never started). LC3 is a byte stream: any n, frames split anywhere."""
        if self.coder is None:
            return self._read_pcm(n)
        with self.lock:
            stopped = not self.running
        pcm = self._read_pcm(4096 * 2)
        with self.lock:
            if pcm:
                self.coded += self.coder.encode(pcm)
            if not self.coded:
                return None if stopped and pcm is None else b""
            out = bytes(self.coded[:int(n)])
            del self.coded[:len(out)]
            return out

    def _read_pcm(self, n):
        with self.lock:
            end = self.t_stop if self.t_stop is not None else self.clock()
            if not self.running and self.t_stop is None:
                return None
            ready = int((end - self.t0) * self.rate) - self.taken
            width = self.bits // 8
            count = max(0, min(ready, int(n) // width))
            if count == 0:
                return None if not self.running else b""
            values = self._clip(self.taken, count)
            echo = self._echo(self.taken, count)
            if echo is not None:
                values = [max(-32768, min(32767, v + e)) for v, e in zip(values, echo)]
            self.taken += count
            if width == 1:
                return bytes((v >> 8) & 0xFF for v in values)
            out = array("h", values)
            if sys.byteorder == "big":
                out.byteswap()
            return out.tobytes()


class Camera:
    """frame.camera: capture() makes a square JPEG of `resolution` from the fed picture (default
    Tests/Fixtures/photo.jpg) at the asked quality; read(n) serves it in pieces, then None."""

    def __init__(self, default_path):
        self.lock = threading.Lock()
        self.source = default_path
        self.image = b""
        self.pos = 0
        self.ready_at = None

    def feed(self, path):
        with open(path, "rb") as f:
            f.read(1)
        with self.lock:
            self.source = path

    def capture(self, resolution, quality):
        if not (100 <= resolution <= 720) or resolution % 2:
            raise Fail("resolution must be an even number between 100 and 720")
        from PIL import Image
        with self.lock:
            source = self.source
        try:
            img = Image.open(source).convert("RGB")
        except OSError:
            img = Image.new("RGB", (720, 720), (90, 120, 160))
        side = min(img.size)
        left, top = (img.width - side) // 2, (img.height - side) // 2
        img = img.crop((left, top, left + side, top + side)).resize((resolution, resolution))
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=quality)
        with self.lock:
            self.image, self.pos = buf.getvalue(), 0
            self.ready_at = time.monotonic() + CAPTURE_TIME

    def image_ready(self):
        with self.lock:
            return self.ready_at is not None and time.monotonic() >= self.ready_at

    def read(self, n):
        with self.lock:
            if not self.image or self.ready_at is None or time.monotonic() < self.ready_at:
                return None
            if self.pos >= len(self.image):
                return None
            piece = self.image[self.pos:self.pos + int(n)]
            self.pos += len(piece)
            return piece


class Display:
    """frame.display: text() draws into the back buffer, show() makes it the shown frame and
    starts an empty back buffer (the firmware's double buffering)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.back = []
        self.shown = []           # [(x, y, colour name, text)]
        self.frames = 0

    def text(self, s, x, y, colour, spacing):
        colour = (colour or b"WHITE").decode().upper() if isinstance(colour, bytes) else (colour or "WHITE")
        if colour not in PALETTE:
            raise Fail(f"invalid color: {colour}")
        with self.lock:
            self.back.append((int(x), int(y), colour, s.decode("utf-8", "replace")))

    def show(self):
        with self.lock:
            self.shown, self.back = self.back, []
            self.frames += 1
            return self.describe_locked()

    def clear(self):
        with self.lock:
            self.back, self.shown = [], []

    # Halo: no double buffer, so text() draws on the shown frame and clear() blanks it; 256x256,
    # colours as 0xRRGGBB (named here by the nearest palette entry, for DisplayText).
    def draw(self, s, x, y, rgb):
        if not (1 <= x <= HALO_SIZE and 1 <= y <= HALO_SIZE):
            raise Fail(f"text position {x}, {y} is off the 256x256 display")
        if not (0 <= rgb <= 0xFFFFFF):
            raise Fail(f"invalid color: {rgb}")
        name = min(PALETTE, key=lambda n: sum((((PALETTE[n] >> k) & 255) - ((rgb >> k) & 255)) ** 2 for k in (0, 8, 16)))
        with self.lock:
            self.shown.append((int(x), int(y), name, s.decode("utf-8", "replace")))
            self.frames += 1
            return self.describe_locked()

    def blank(self):
        with self.lock:
            self.shown = []
            self.frames += 1
            return self.describe_locked()

    def items(self):
        with self.lock:
            return list(self.shown)

    def describe_locked(self):
        """One line per row (same y), texts left to right; a colour other than white prefixes
        its text as "[red] " (lower case), like the virtual Monocle's DisplayText."""
        rows = {}
        for x, y, colour, text in self.shown:
            shown = text if colour == "WHITE" else f"[{colour.lower()}] {text}"
            rows.setdefault(y, []).append((x, shown))
        return "\n".join(" ".join(t for _, t in sorted(rows[y])) for y in sorted(rows))

    def describe(self):
        with self.lock:
            return self.describe_locked()

    def png(self, path):
        from PIL import Image, ImageDraw, ImageFont
        img = Image.new("RGB", (WIDTH, HEIGHT), (0, 0, 0))
        draw = ImageDraw.Draw(img)
        try:
            font = ImageFont.load_default(size=32)
        except TypeError:
            font = ImageFont.load_default()
        for x, y, colour, text in self.items():
            c = PALETTE[colour]
            draw.text((x, y), text, fill=((c >> 16) & 255, (c >> 8) & 255, c & 255), font=font)
        img.save(path, "PNG")
