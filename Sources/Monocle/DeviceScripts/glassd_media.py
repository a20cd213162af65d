# SPDX-License-Identifier: GPL-2.0-or-later
# glassd on the Monocle: recording (a question at 16 kHz 8-bit, streamed as dat:; 8 kHz 8-bit as
# lis: while listening for the wake phrase) and the photo (ist:/idt:).
import camera
import microphone
import time
import glassd_link as link

# A question at 16 kHz, 8-bit linear: 16 kB/s, half what the link carries (two notifications of
# 249 bytes per 15 ms event); 16-bit would fill it. The microphone gives 8-bit itself (each sample's
# high byte); mu-law would need every 16-bit sample companded in Python, too slow here.
RATE = 16000
FORMAT = b'16,8'              # what ast:/ist: say the recording is (kHz, bits)
LISTEN_RATE = 8000            # the wake phrase's spotter needs no more
LISTEN_S = 30
_rec = [0, 0, 0, b'dat:', RATE]   # samples expected, samples sent, start (ms), the command, rate


def record(seconds, cmd=b'dat:', rate=RATE):
    microphone.record(seconds=seconds, sample_rate=rate, bit_depth=8)
    _rec[0] = int(seconds * rate)
    _rec[1] = 0
    _rec[2] = time.ticks_ms()
    _rec[3] = cmd
    _rec[4] = rate


def listen():
    """Listening for the wake phrase: the microphone in 30 s stretches, sent as lis:."""
    record(LISTEN_S, b'lis:', LISTEN_RATE)


def listening():
    return _rec[3] == b'lis:' and _rec[1] < _rec[0]


def deaf():
    """Stops sending what the microphone hears (the next stretch is not started)."""
    _rec[0] = _rec[1]


def elapsed_s():
    return time.ticks_diff(time.ticks_ms(), _rec[2]) // 1000


def pump():
    """Sends what the microphone has, up to two messages (what the notification queue holds: a
    slow step, a redraw, is caught up on at 16 kB/s). False once every expected sample went out
    (or it stalled: no samples for 2 s past the end of the recording)."""
    want = link.room()
    for _ in range(2):
        buf = b''
        while len(buf) < want and _rec[1] + len(buf) < _rec[0]:
            s = microphone.read(min(127, want - len(buf), _rec[0] - _rec[1] - len(buf)))
            if s is None:
                break
            buf += s
        if not buf:
            break
        link.send(_rec[3], buf)
        _rec[1] += len(buf)
        if len(buf) < want:
            break               # the microphone has no more yet
    if _rec[1] >= _rec[0]:
        return False
    late = time.ticks_diff(time.ticks_ms(), _rec[2]) - _rec[0] * 1000 // _rec[4]
    return late < 2000


def photo(start=b'ist:', info=b''):
    """Takes a photo and streams it: `start` (ist: with the question's FORMAT, or sst: for a
    scene frame), then idt: chunks. Returns the bytes sent."""
    camera.capture()
    link.send(start, info)
    n = 0
    while True:
        chunk = camera.read(min(254, link.room()))
        if chunk is None:
            return n
        link.send(b'idt:', chunk)
        n += len(chunk)
