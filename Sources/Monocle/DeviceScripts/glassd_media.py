# SPDX-License-Identifier: GPL-2.0-or-later
# glassd on the Monocle: recording (8 kHz, 8-bit, streamed as dat:, or as lis: while listening
# for the wake phrase) and the photo (ist:/idt:).
import camera
import microphone
import time
import glassd_link as link

RATE = 8000
LISTEN_S = 30
_rec = [0, 0, 0, b'dat:']     # samples expected, samples sent, start (ms), the command they go in


def record(seconds, cmd=b'dat:'):
    microphone.record(seconds=seconds, sample_rate=RATE, bit_depth=8)
    _rec[0] = int(seconds * RATE)
    _rec[1] = 0
    _rec[2] = time.ticks_ms()
    _rec[3] = cmd


def listen():
    """Listening for the wake phrase: the microphone in 30 s stretches, sent as lis:."""
    record(LISTEN_S, b'lis:')


def listening():
    return _rec[3] == b'lis:' and _rec[1] < _rec[0]


def deaf():
    """Stops sending what the microphone hears (the next stretch is not started)."""
    _rec[0] = _rec[1]


def elapsed_s():
    return time.ticks_diff(time.ticks_ms(), _rec[2]) // 1000


def pump():
    """Sends what the microphone has. False once every expected sample went out (or it stalled:
    no samples for 2 s past the end of the recording)."""
    want = link.room()
    buf = b''
    while len(buf) < want and _rec[1] + len(buf) < _rec[0]:
        s = microphone.read(min(127, want - len(buf), _rec[0] - _rec[1] - len(buf)))
        if s is None:
            break
        buf += s
    if buf:
        link.send(_rec[3], buf)
        _rec[1] += len(buf)
    if _rec[1] >= _rec[0]:
        return False
    late = time.ticks_diff(time.ticks_ms(), _rec[2]) - _rec[0] * 1000 // RATE
    return late < 2000


def photo(start=b'ist:'):
    """Takes a photo and streams it: `start` (ist:, or sst: for a scene frame), then idt:
    chunks. Returns the bytes sent."""
    camera.capture()
    link.send(start)
    n = 0
    while True:
        chunk = camera.read(min(254, link.room()))
        if chunk is None:
            return n
        link.send(b'idt:', chunk)
        n += len(chunk)
