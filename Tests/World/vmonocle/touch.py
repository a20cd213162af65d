# SPDX-License-Identifier: GPL-2.0-or-later
# Virtual Monocle: the touch module. The host's Tap()/Hold() press pad A, Press() either pad or
# both (see _vmhost.py, tag T). Test-only.
import _vmhost

A = 'A'
B = 'B'
BOTH = 'BOTH'
EITHER = 'EITHER'

_none = object()


def callback(button, fn=_none):
    if button not in (A, B, BOTH, EITHER):
        raise ValueError('must be touch.A, touch.B, touch.BOTH or touch.EITHER')
    if fn is _none:
        return _vmhost.touch_cbs.get(button)
    if button == EITHER:
        _vmhost.touch_cbs.pop(A, None)
        _vmhost.touch_cbs.pop(B, None)
    if fn is None:
        _vmhost.touch_cbs.pop(button, None)
    else:
        _vmhost.touch_cbs[button] = fn


def state(button=None):
    _vmhost.poll()
    now = _vmhost.touched()
    if button is None:
        return now
    if button == EITHER:
        return now is not None
    return now == button or (now == BOTH and button in (A, B))
