# SPDX-License-Identifier: GPL-2.0-or-later
# Virtual Monocle: the microphone module, fed from the host's FeedAudio() WAV (silence past its
# end or without one). Samples become readable in real time from record(); audio fed during a
# recording is heard from then on, from its start (a sound starts when it starts). Test-only.
import _vmhost
import utime as _t

_rec = None


def record(*, seconds=5.0, sample_rate=16000, bit_depth=16):
    global _rec
    if sample_rate not in (8000, 16000):
        raise ValueError('sample rate must be 8000 or 16000')
    if bit_depth not in (8, 16):
        raise ValueError('bit depth must be 8 or 16')
    _vmhost.poll()
    total = int(seconds * sample_rate)
    _rec = [_t.ticks_ms(), total, sample_rate, bit_depth, 0, 0, _vmhost.audio_fed]


def stop():
    raise NotImplementedError


def read(samples=127):
    if samples > 127:
        raise ValueError('samples must be 127 or fewer')
    _vmhost.poll()
    if _rec is None:
        return None
    start, total, rate, depth, pos, base, fed = _rec
    if fed != _vmhost.audio_fed:
        _rec[5] = base = pos        # new audio: it plays from here on
        _rec[6] = _vmhost.audio_fed
    ready = min(total, _t.ticks_diff(_t.ticks_ms(), start) * rate // 1000)
    n = min(samples, ready - pos)
    if n <= 0:
        return None
    src = _vmhost.audio
    srate = _vmhost.audio_rate
    size = len(src) // 2
    out = bytearray(n if depth == 8 else 2 * n)
    for i in range(n):
        j = (pos - base + i) * srate // rate
        if j < size:
            hi = src[2 * j + 1]
            lo = src[2 * j]
        else:
            hi = lo = 0
        if depth == 8:
            out[i] = hi
        else:
            out[2 * i] = hi
            out[2 * i + 1] = lo
    _rec[4] = pos + n
    return bytes(out)
