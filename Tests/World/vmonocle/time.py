# SPDX-License-Identifier: GPL-2.0-or-later
# Virtual Monocle: time. The unix port's time plus the Monocle extras; the sleeps serve the host
# link (Ctrl-C, data and touch callbacks) while they wait. Test-only.
from utime import *   # noqa: F401,F403  the built-in time module of the unix port
import utime as _t
import _vmhost


def sleep(seconds):
    _vmhost.sleep_ms(seconds * 1000)


def sleep_ms(ms):
    _vmhost.sleep_ms(ms)


def sleep_us(us):
    _vmhost.sleep_ms(us // 1000)


def now(epoch=None):
    return _t.localtime(epoch)


def zone(offset=None):
    return '00:00' if offset is None else None
