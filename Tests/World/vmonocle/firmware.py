# SPDX-License-Identifier: GPL-2.0-or-later
# Virtual Monocle firmware: the REPL of the Monocle's MicroPython (pyexec: friendly and raw REPL,
# soft reboot, main.py) written in MicroPython around the user's code. One run of this process is
# one boot; a soft reboot ends it (frame R) and the host starts a fresh one. Output goes to stdout
# with bare "\n"; the host turns every "\n" into "\r\n", as the device's cooked stdout does.
# Environment: VMONOCLE_BOOT power|soft|safe, VMONOCLE_MODE friendly|raw. Test-only.
import sys
import os
import io
import _vmhost

BANNER = ('MicroPython v1.20.0-monocle on 2023-09-05; Monocle with nRF52832\n'
          'Type "help()" for more information.\n')
FRIENDLY = 'friendly'
RAW = 'raw'
SOFT_REBOOT = 1

mode = os.getenv('VMONOCLE_MODE') or FRIENDLY
G = {'__name__': '__main__'}
_stdout = sys.stdout


def out(text):
    _stdout.write(text)


def getc():
    """The next serial byte; serves the host link (and scheduled callbacks) while waiting."""
    while True:
        c = _vmhost.take()
        if c >= 0:
            return c
        _vmhost.ack()
        try:
            _vmhost.poll(100)
        except KeyboardInterrupt:     # a late SIGINT (see virtual_monocle.py): nothing to stop
            pass
        except Exception as e:        # a scheduled callback raised while the REPL was idle
            print_exc(e)


def print_exc(e):
    buf = io.StringIO()
    sys.print_exception(e, buf)
    lines = [ln for ln in buf.getvalue().split('\n')
             if not (ln.startswith('  File "') and _vmhost.VMDIR in ln)]
    out('\n'.join(lines))


def execute(src, filename, kind):
    """Runs user code in G. Returns SOFT_REBOOT on SystemExit. Prints the traceback itself unless
    kind is 'raw', where it returns the exception text after the first EOF marker."""
    _vmhost.ack()
    exc = None
    _vmhost.event('run')
    _vmhost.running = True
    try:
        code = compile(src, filename, 'single' if kind == 'single' else 'exec')
        exec(code, G)
    except BaseException as e:   # noqa: B036  everything, as pyexec does
        exc = e
    _vmhost.running = False
    _vmhost.event('idle')
    if kind == 'raw':
        out('\x04')
    if exc is not None and isinstance(exc, SystemExit):
        ret = SOFT_REBOOT
    else:
        ret = 0
        if exc is not None:
            print_exc(exc)
    if kind == 'raw':
        out('\x04')
    return ret


def raw_repl():
    global mode
    out('raw REPL; CTRL-B to exit\n')
    while True:
        out('>')
        line = bytearray()
        while True:
            c = getc()
            if c == 1:                                  # Ctrl-A
                if len(line) == 2 and line[0] == 5:     # raw-paste request: not supported
                    out('R\x00')
                    line = bytearray()
                    continue
                return 0                                # re-enter: banner again
            elif c == 2:                                # Ctrl-B
                out('\n')
                mode = FRIENDLY
                return 0
            elif c == 3:                                # Ctrl-C
                line = bytearray()
            elif c == 4:                                # Ctrl-D
                break
            else:
                line.append(c)
        out('OK')
        if not line:
            out('\n')
            return SOFT_REBOOT
        _vmhost.event('command')
        try:
            src = bytes(line).decode()
        except UnicodeError:
            src = ''.join(chr(b) for b in line)
        if execute(src, '<stdin>', 'raw') == SOFT_REBOOT:
            return SOFT_REBOOT


def readline(prompt):
    """Friendly-REPL line input with echo. Returns str, or an int control code."""
    out(prompt)
    line = ''
    while True:
        c = getc()
        if c in (1, 2, 4, 5) and not line:
            return c
        if c == 3:
            return 3
        if c == 13:
            out('\n')
            return line
        if c == 10:
            continue
        if c in (8, 127):
            if line:
                line = line[:-1]
                out('\x08 \x08')
            continue
        if c >= 32:
            ch = chr(c)
            line += ch
            out(ch)


def _input(prompt=''):
    """input() reads the REPL's serial stream, as on the device (not this process's stdin)."""
    line = readline(str(prompt))
    return line if isinstance(line, str) else ''


def needs_more(src):
    depth = 0
    for ch in src:
        if ch in '([{':
            depth += 1
        elif ch in ')]}':
            depth -= 1
    if depth > 0 or src.count('"""') % 2 or src.count("'''") % 2:
        return True
    last = src.rstrip().split('\n')[-1]
    return last.endswith(':') or last.endswith('\\') or ('\n' in src)


def friendly_repl():
    global mode
    out(BANNER)
    while True:
        line = readline('>>> ')
        if line == 1:
            out('\n')
            mode = RAW
            return 0
        if line == 2:
            out('\n')
            out(BANNER)
            continue
        if line == 3:
            out('\n')
            continue
        if line == 4:
            out('\n')
            return SOFT_REBOOT
        if line == 5:
            out('\npaste mode; Ctrl-C to cancel, Ctrl-D to finish\n=== ')
            buf = bytearray()
            while True:
                c = getc()
                if c == 3:
                    buf = None
                    out('\n')
                    break
                if c == 4:
                    out('\n')
                    break
                buf.append(c)
                out(chr(c) if c != 13 else '\n=== ')
            if buf:
                _vmhost.event('command')
                if execute(bytes(buf).decode().replace('\r', '\n'), '<stdin>', 'exec'):
                    return SOFT_REBOOT
            continue
        if not line.strip():
            continue
        src = line
        cancelled = False
        while needs_more(src):
            more = readline('... ')
            if more == 3:
                out('\n')
                cancelled = True
                break
            if isinstance(more, int) or more == '':
                break
            src += '\n' + more
        if cancelled:
            continue
        _vmhost.event('command')
        if execute(src + '\n', '<stdin>', 'single' if '\n' not in src else 'exec'):
            return SOFT_REBOOT


def main():
    import builtins
    builtins.input = _input
    boot = os.getenv('VMONOCLE_BOOT') or 'power'
    _vmhost.init()
    if boot == 'soft':
        out('MPY: soft reboot\n')
    reboot = False
    if boot != 'safe':
        try:
            os.stat('main.py')
            have_main = True
        except OSError:
            have_main = False
        if have_main:
            with open('main.py') as f:
                src = f.read()
            reboot = execute(src, 'main.py', 'file') == SOFT_REBOOT
    while not reboot:
        try:
            if mode == RAW:
                reboot = raw_repl() == SOFT_REBOOT
            else:
                reboot = friendly_repl() == SOFT_REBOOT
        except KeyboardInterrupt:     # a late SIGINT landed in the REPL itself
            pass
        except Exception as e:        # a late scheduled callback raised in the REPL itself
            print_exc(e)
    _vmhost.poll()        # what the host already sent; unread serial bytes survive the reboot
    _vmhost.ack()
    _vmhost.send('R', mode.encode() + b'\n' + bytes(_vmhost.ring[_vmhost.rpos:]))


main()
