# SPDX-License-Identifier: GPL-2.0-or-later
# Virtual Monocle: the fpga module (register 1: "Mncl", 2: the version). Test-only.
import _vmhost

_running = True


def read(addr, n):
    if n < 1 or n > 255:
        raise ValueError('n must be 1..255')
    if addr == 1:
        v = b'Mncl'
    elif addr == 2:
        v = _vmhost.fpga_version.encode()
    elif addr == 3:
        v = b'revC'
    else:
        v = b''
    return (v + b'\xff' * n)[:n]


def write(addr, data=b''):
    if len(data) > 255:
        raise ValueError('at most 255 bytes')


def run(enable=None):
    global _running
    if enable is None:
        return _running
    _running = bool(enable)
