# SPDX-License-Identifier: GPL-2.0-or-later
# Virtual Monocle: the update module. micropython() prints the device's messages, records the
# request (event "dfu") and resets into the bootloader (frame "Y": virtual_monocle.py switches to
# DFU target mode, vdfu.py); Fpga writes go to <state dir>/fpga.bin. Test-only.
import _vmhost

_FPGA_END = 0x6C80E + 4


def micropython():
    if not _vmhost.serial_on:
        return
    print('Monocle will reset if not updated within 5 minutes.')
    print('If an update fails, simply connect to DFUTarg again to retry.')
    print('Monocle will now enter update mode', end='')
    for _ in range(3):
        _vmhost.sleep_ms(300)
        print('.', end='')
    print()
    _vmhost.event('dfu')
    # GPREGRET + reset: the host side halts this interpreter and brings up the bootloader
    _vmhost.send('Y')
    while True:
        _vmhost.sleep_ms(1000)


def _path():
    return _vmhost.state_dir + '/fpga.bin'


class Fpga:
    @staticmethod
    def erase():
        open(_path(), 'wb').close()
        _vmhost.event('fpga_erase')

    @staticmethod
    def write(data):
        try:
            import os
            size = os.stat(_path())[6]
        except OSError:
            size = 0
        if size + len(data) > _FPGA_END:
            raise ValueError('write exceeds the FPGA area')
        with open(_path(), 'ab') as f:
            f.write(data)
        _vmhost.event('fpga_write %d' % len(data))

    @staticmethod
    def read(addr, n):
        with open(_path(), 'rb') as f:
            f.seek(addr)
            return f.read(n)
