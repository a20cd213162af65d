# SPDX-License-Identifier: GPL-2.0-or-later
# Virtual Monocle: the led module (state reported to the host as events). Test-only.
import _vmhost

RED = 0
GREEN = 1


def on(which):
    _vmhost.event('led %d on' % which)


def off(which):
    _vmhost.event('led %d off' % which)
