# SPDX-License-Identifier: GPL-2.0-or-later
# Virtual Monocle: the device module. Test-only.
import _vmhost

NAME = 'monocle'
VERSION = _vmhost.fw_version
GIT_TAG = 'b2c6e4f'
GIT_REPO = 'https://github.com/brilliantlabsAR/monocle-micropython'
POWERON = 'POWERON'
SOFTWARE_RESET = 'SOFTWARE_RESET'
CRASHED = 'CRASHED'
_prevent = False


def mac_address():
    return _vmhost.mac


def battery_level():
    _vmhost.poll()
    return _vmhost.battery


def is_charging():
    return False


def reset_cause():
    return _vmhost.reset_cause


def prevent_sleep(enable=None):
    global _prevent
    if enable is None:
        return _prevent
    _prevent = bool(enable)


def force_sleep():
    if not _vmhost.serial_on:
        return
    _vmhost.event('sleep')


def reset():
    if not _vmhost.serial_on:
        return
    print('Resetting', end='')
    for _ in range(3):
        _vmhost.sleep_ms(1000)
        print('.', end='')
    print()
    _vmhost.send('X')
    while True:
        _vmhost.sleep_ms(1000)
