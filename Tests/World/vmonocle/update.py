# SPDX-License-Identifier: GPL-2.0-or-later
# Virtual Monocle: the update module. micropython() prints the device's messages, records the
# request (event "dfu") and resets into the bootloader (frame "Y": virtual_monocle.py switches to
# DFU target mode, vdfu.py). Fpga acts on the FPGA's SPI flash area, the file fpga_flash.bin in the
# device's --fs folder (VMONOCLE_FPGA_FLASH), as NOR flash: erase sets 0xFF, writes clear bits.
# At a power-on the host boots the FPGA from it if b'done' sits at 0x6C80E. Test-only.
import _vmhost

_FPGA_END = 0x6C80E + 4
_FPGA_PAGES = 0x6D       # 4-KiB pages erase() clears
_FPGA_AREA = _FPGA_PAGES * 4096


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


# The write offset, as the firmware's counter in _update: RAM, so a boot starts it at 0.
_off = [0]


def _path():
    import os
    return os.getenv('VMONOCLE_FPGA_FLASH') or _vmhost.state_dir + '/fpga_flash.bin'


def _size():
    try:
        import os
        return os.stat(_path())[6]
    except OSError:
        return 0


class Fpga:
    @staticmethod
    def erase():
        page = b'\xff' * 4096
        with open(_path(), 'wb') as f:
            for _ in range(_FPGA_PAGES):
                f.write(page)
        _off[0] = 0
        _vmhost.event('fpga_erase')

    @staticmethod
    def write(data):
        data = bytes(data)
        at = _off[0]
        if at + len(data) > _FPGA_END:
            raise ValueError('write exceeds the FPGA area')
        old = Fpga._bytes(at, len(data))
        # NOR flash: programming only clears bits, so a write over unerased bytes shows.
        new = bytes(a & b for a, b in zip(old, data))
        if _size() < _FPGA_AREA:
            with open(_path(), 'ab') as f:
                f.write(b'\xff' * (_FPGA_AREA - _size()))
        with open(_path(), 'r+b') as f:
            f.seek(at)
            f.write(new)
        _off[0] = at + len(data)
        _vmhost.event('fpga_write %d' % len(data))

    @staticmethod
    def read(addr, n):
        if addr < 0 or n < 0 or addr + n > _FPGA_AREA:
            raise ValueError('outside the FPGA area')
        _vmhost.event('fpga_read')
        return Fpga._bytes(addr, n)

    @staticmethod
    def _bytes(addr, n):
        # a flash never erased (no file yet) reads as erased
        try:
            with open(_path(), 'rb') as f:
                f.seek(addr)
                got = f.read(n)
        except OSError:
            got = b''
        return got + b'\xff' * (n - len(got))
