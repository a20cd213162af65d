# SPDX-License-Identifier: GPL-2.0-or-later
# Virtual Monocle: the camera module; capture() takes the host's FeedImage() JPEG. Test-only.
import _vmhost

RGB = 'RGB'
JPEG = 'JPEG'
_shot = None
_pos = 0


def capture():
    global _shot, _pos
    _vmhost.sleep_ms(100)
    _shot = _vmhost.image
    _pos = 0


def read(bytes=254):
    global _shot, _pos
    if bytes > 254:
        raise ValueError('bytes must be 254 or fewer')
    _vmhost.poll()
    if _shot is None or _pos >= len(_shot):
        _shot = None
        return None
    chunk = _shot[_pos:_pos + bytes]
    _pos += len(chunk)
    return chunk


def output(*args):
    raise NotImplementedError


def zoom(*args):
    raise NotImplementedError
