# SPDX-License-Identifier: GPL-2.0-or-later
#
# lc3: Debian's liblc3 (liblc3-0 1.0.1, liblc3.so.0) through ctypes, for the test world (the virtual
# Halo's speaker and microphone) and the benches. The same rules as glassd's Sources/Audio/LC3*.swift:
# mono s16 PCM, 7.5 or 10 ms frames, CBR frames of bitrate × duration / 8 bytes (rounded down),
# 16 kbps at least and 20-400 bytes a frame (liblc3's limits); decode takes bytes in any split.
# Standard library only (no numpy): PCM is little-endian s16 bytes in and out.
#
#   fmt = lc3.Format(16000, 10000, bitrate=32000)        # 40-byte frames
#   enc = lc3.Encoder(fmt); data = enc.encode(pcm) + enc.flush()
#   dec = lc3.Decoder(fmt); pcm = dec.decode(data); pcm += dec.conceal()
#   python3 Tests/World/lc3.py   # checks itself (a sine round trip, split decode, garbage)

import ctypes
import math
import struct
import sys

SAMPLE_RATES = (8000, 16000, 24000, 32000, 48000)
DURATIONS = (7500, 10000)
MIN_BITRATE = 16000
MIN_FRAME_BYTES, MAX_FRAME_BYTES = 20, 400
_S16 = 0  # LC3_PCM_FORMAT_S16

_lib = None


def library():
    """liblc3.so.0, loaded once (Scripts/deps installs liblc3-dev, which brings liblc3-0)."""
    global _lib
    if _lib is None:
        try:
            lib = ctypes.CDLL("liblc3.so.0")
        except OSError as error:
            raise RuntimeError("liblc3.so.0 not found: apt-get install liblc3-0 (Scripts/deps does)") from error
        for name, args, result in [
            ("lc3_frame_samples", [ctypes.c_int, ctypes.c_int], ctypes.c_int),
            ("lc3_delay_samples", [ctypes.c_int, ctypes.c_int], ctypes.c_int),
            ("lc3_encoder_size", [ctypes.c_int, ctypes.c_int], ctypes.c_uint),
            ("lc3_decoder_size", [ctypes.c_int, ctypes.c_int], ctypes.c_uint),
            ("lc3_setup_encoder", [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p], ctypes.c_void_p),
            ("lc3_setup_decoder", [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p], ctypes.c_void_p),
            ("lc3_encode", [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p],
             ctypes.c_int),
            ("lc3_decode", [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int],
             ctypes.c_int),
        ]:
            function = getattr(lib, name)
            function.argtypes, function.restype = args, result
        _lib = lib
    return _lib


class Format:
    """An LC3 stream: sample rate (Hz), frame duration (µs), frame size (bytes). ValueError when
    liblc3 cannot code it (Halo's 8 kbps among them)."""

    def __init__(self, sample_rate, duration_us, bitrate=None, frame_bytes=None):
        if (bitrate is None) == (frame_bytes is None):
            raise ValueError("give bitrate or frame_bytes")
        if sample_rate not in SAMPLE_RATES:
            raise ValueError(f"LC3 at {sample_rate} Hz: liblc3 codes {SAMPLE_RATES}")
        if duration_us not in DURATIONS:
            raise ValueError(f"LC3 frames of {duration_us} us: 7500 or 10000")
        if bitrate is not None:
            if bitrate < MIN_BITRATE:
                raise ValueError(f"LC3 at {bitrate} bps: liblc3 needs >= 16 kbps")
            frame_bytes = bitrate * duration_us // 8_000_000
        if not MIN_FRAME_BYTES <= frame_bytes <= MAX_FRAME_BYTES:
            raise ValueError(f"LC3 frames of {frame_bytes} bytes: liblc3 takes 20-400")
        self.sample_rate, self.duration_us, self.frame_bytes = sample_rate, duration_us, frame_bytes

    def samples(self, rate=None):
        """Samples in one frame at `rate` (default the codec's)."""
        return (rate or self.sample_rate) * self.duration_us // 1_000_000

    @property
    def bytes_per_second(self):
        return self.frame_bytes * 1_000_000 / self.duration_us

    def __repr__(self):
        return f"lc3.Format({self.sample_rate}, {self.duration_us}, frame_bytes={self.frame_bytes})"


def _context(size_of, setup, fmt, pcm_rate):
    rate = pcm_rate or fmt.sample_rate
    if rate not in SAMPLE_RATES or rate < fmt.sample_rate:
        raise ValueError(f"PCM at {rate} Hz for LC3 at {fmt.sample_rate} Hz: a coded rate, not below it")
    size = size_of(fmt.duration_us, rate)
    # Pointer-aligned, as lc3.h asks; kept alive by the owner (liblc3 points into it).
    memory = (ctypes.c_void_p * ((size + 7) // 8))()
    handle = setup(fmt.duration_us, fmt.sample_rate, rate, memory)
    if not size or not handle:
        raise ValueError(f"liblc3 refused {fmt} at {rate} Hz")
    return rate, memory, handle


class Encoder:
    """s16 PCM bytes (at the codec's rate or a higher coded one) to whole frames; a partial frame
    waits; flush() pads it with silence and pushes the codec's delay out."""

    def __init__(self, fmt, pcm_rate=None):
        lib = library()
        self.fmt = fmt
        self.pcm_rate, self._memory, self._handle = _context(lib.lc3_encoder_size, lib.lc3_setup_encoder, fmt, pcm_rate)
        self.samples = fmt.samples(self.pcm_rate)
        self._delay = max(0, lib.lc3_delay_samples(fmt.duration_us, self.pcm_rate))
        self._pending = bytearray()
        self._consumed = 0  # bytes since the last flush
        self._frames = 0

    def encode(self, pcm):
        self._pending += pcm
        self._consumed += len(pcm)  # an odd byte waits in _pending for its other half
        return self._frames_out(len(self._pending) // (2 * self.samples))

    def flush(self):
        owed = self._consumed // 2 + self._delay
        done = self._frames * self.samples
        out = b""
        if self._consumed and done < owed:
            count = -(-(owed - done) // self.samples)
            self._pending += bytes(2 * count * self.samples - len(self._pending))
            out = self._frames_out(count)
        self._pending.clear()
        self._consumed = self._frames = 0
        return out

    def _frames_out(self, count):
        lib, size, step = library(), self.fmt.frame_bytes, 2 * self.samples
        out = bytearray()
        frame = ctypes.create_string_buffer(size)
        for k in range(count):
            pcm = (ctypes.c_int16 * self.samples).from_buffer_copy(self._pending, k * step)
            if lib.lc3_encode(self._handle, _S16, pcm, 1, size, frame) != 0:
                raise RuntimeError("lc3_encode refused its parameters")
            out += frame.raw
        del self._pending[:count * step]
        self._frames += count
        return bytes(out)


class Decoder:
    """Frames to s16 PCM bytes; bytes in any split (a byte FIFO, re-cut by the frame size).
    A frame liblc3 cannot read is concealed and counted (frames_invalid, the firmware's
    decode_errors); conceal() fills a lost frame (frames_concealed, its frames_plc)."""

    def __init__(self, fmt, pcm_rate=None):
        lib = library()
        self.fmt = fmt
        self.pcm_rate, self._memory, self._handle = _context(lib.lc3_decoder_size, lib.lc3_setup_decoder, fmt, pcm_rate)
        self.samples = fmt.samples(self.pcm_rate)
        self.delay = max(0, lib.lc3_delay_samples(fmt.duration_us, self.pcm_rate))
        self._fifo = bytearray()
        self.frames_decoded = self.frames_invalid = self.frames_concealed = 0

    @property
    def buffered(self):
        return len(self._fifo)

    def decode(self, data):
        self._fifo += data
        size = self.fmt.frame_bytes
        count = len(self._fifo) // size
        out = bytearray()
        for k in range(count):
            frame = (ctypes.c_uint8 * size).from_buffer_copy(self._fifo, k * size)
            result, pcm = self._run(frame, size)
            out += pcm
            if result == 0:
                self.frames_decoded += 1
            else:
                self.frames_invalid += 1
        del self._fifo[:count * size]
        return bytes(out)

    def conceal(self):
        self.frames_concealed += 1
        return self._run(None, self.fmt.frame_bytes)[1]

    def _run(self, frame, size):
        pcm = (ctypes.c_int16 * self.samples)()
        result = library().lc3_decode(self._handle, frame, size, _S16, pcm, 1)
        return result, bytes(pcm)  # -1 writes nothing: that frame stays silent


def _selfcheck():
    fmt = Format(16000, 10000, bitrate=32000)
    assert fmt.frame_bytes == 40 and fmt.samples() == 160 and fmt.bytes_per_second == 4000
    for bad in [dict(bitrate=8000), dict(frame_bytes=19)]:
        try:
            Format(16000, 10000, **bad)
            raise AssertionError(f"accepted {bad}")
        except ValueError:
            pass
    tone = [int(10000 * math.sin(2 * math.pi * 440 * n / 16000)) for n in range(16000)]
    pcm = struct.pack(f"<{len(tone)}h", *tone)
    encoder = Encoder(fmt)
    data = b"".join(encoder.encode(pcm[i:i + 333]) for i in range(0, len(pcm), 333)) + encoder.flush()
    assert len(data) % 40 == 0
    decoder = Decoder(fmt)
    whole = decoder.decode(data)
    out = struct.unpack(f"<{len(whole) // 2}h", whole)
    signal = sum(x * x for x in tone)
    error = sum((x - out[n + decoder.delay]) ** 2 for n, x in enumerate(tone))
    snr = 10 * math.log10(signal / max(error, 1))
    assert snr > 15, f"round trip SNR {snr:.1f} dB"
    split = Decoder(fmt)
    pieces = b"".join(split.decode(data[i:i + 7]) for i in range(0, len(data), 7))
    assert pieces == whole and split.buffered == 0
    assert len(split.conceal()) == 320 and split.frames_concealed == 1
    junk = Decoder(fmt)
    assert len(junk.decode(b"\xff" * 41)) == 320 and junk.frames_invalid == 1 and junk.buffered == 1
    print(f"lc3 ok: {fmt}, sine round trip {snr:.1f} dB, {len(data)} bytes for 1 s")


if __name__ == "__main__":
    sys.exit(_selfcheck())
