# SPDX-License-Identifier: GPL-2.0-or-later
# The virtual Monocle's link to its host process (virtual_monocle.py), MicroPython side.
# Frames both ways: 1 tag byte, u32 LE payload length, payload.
#   host -> here (stdin): S serial bytes, K ring kept over a soft reboot, D data message, N notify flags (serial, data),
#     U last Ctrl-C was delivered as SIGINT, T touch (u32 ms, button), A audio (u32 rate + s16le mono), I image, B battery, Z init done
#   here -> host (fd 3): C ring bytes consumed (u32), G serial bytes taken in (u32), F display frame (JSON), D data notification,
#     E event (ascii), R soft reboot (mode), X hardware reset request
# Shared state of the stub modules lives here too. Test-only.
import sys
import select
import struct
import micropython
import utime as _t

VMDIR = __file__.rsplit('/', 1)[0] if '/' in __file__ else '.'

_in = sys.stdin.buffer
_out = open('/dev/fd/' + (__import__('os').getenv('VMONOCLE_CTL_FD') or '3'), 'wb')
_poller = select.poll()
_poller.register(sys.stdin, select.POLLIN)


def _env(name, default):
    import os
    v = os.getenv(name)
    return default if v is None else v


mtu = int(_env('VMONOCLE_MTU', '256'))
fw_version = _env('VMONOCLE_FW_VERSION', 'v23.248.0754')
fpga_version = _env('VMONOCLE_FPGA_VERSION', 'v23.230.0808')
mac = _env('VMONOCLE_MAC', '00:00:00:00:00:00')
state_dir = _env('VMONOCLE_STATE', '/tmp')
reset_cause = _env('VMONOCLE_RESET_CAUSE', 'POWERON')

ring = bytearray()       # serial bytes received; ring[rpos:] not yet read by the REPL
rpos = 0
unacked = 0              # bytes taken from ring, not yet reported to the host
running = False          # user code is executing (Ctrl-C -> KeyboardInterrupt)
serial_on = False
data_on = False
battery = 100
audio = b''
audio_rate = 8000
audio_fed = 0        # counts FeedAudio()s: a recording under way hears new audio from when it came
image = b''
touch_until = 0
touch_button = None
touch_cbs = {}           # 'A' / 'B' / 'BOTH' / 'EITHER' -> fn
rx_cb = None
_tx_busy = []            # completion times (ms) of data notifications in the 2-entry queue


def take():
    """The next unread serial byte, or -1."""
    global ring, rpos, unacked
    if rpos >= len(ring):
        if rpos:
            ring = bytearray()
            rpos = 0
        return -1
    c = ring[rpos]
    rpos += 1
    unacked += 1
    return c


def send(tag, payload=b''):
    # One write: a callback micropython.schedule runs between two bytecodes could otherwise put
    # its own frame between this header and its payload (a flood of them did, and the host read
    # a display frame with events inside).
    _out.write(struct.pack('<BI', ord(tag), len(payload)) + payload)


def event(text):
    send('E', text.encode())


def ack():
    global unacked
    if unacked:
        send('C', struct.pack('<I', unacked))
        unacked = 0


def _schedule(fn, arg, what):
    try:
        micropython.schedule(fn, arg)
    except RuntimeError:
        event(what)


def _handle(tag, data):
    """Returns True if a Ctrl-C must interrupt running code."""
    global serial_on, data_on, battery, audio, audio_rate, audio_fed, image
    global touch_until, touch_button, unacked
    kbd = False
    if tag == 83:  # S
        _got[0] += len(data)
        if running:
            for b in data:
                if b == 3:
                    kbd = True
                    unacked += 1
                else:
                    ring.append(b)
            ack()
        else:
            ring.extend(data)
    elif tag == 85:  # U: the host delivered the last Ctrl-C as SIGINT (see virtual_monocle.py)
        kbd = None
    elif tag == 75:  # K: ring bytes kept over a soft reboot (no Ctrl-C meaning any more)
        ring.extend(data)
    elif tag == 68:  # D
        _batch.append(bytes(data))
    elif tag == 78:  # N
        serial_on = data[0] != 0
        data_on = data[1] != 0
    elif tag == 84:  # T
        ms = struct.unpack('<I', data[:4])[0]
        button = data[4:].decode() or 'A'
        touch_button = button
        touch_until = _t.ticks_add(_t.ticks_ms(), ms)
        # A finger lands on one pad before the other: both pads' press is first pad A's (its
        # callback, or EITHER's, with 'A'), then 'BOTH' (to a BOTH callback only) while both are
        # touched; state() says 'BOTH' throughout.
        first = 'A' if button == 'BOTH' else button
        fn = touch_cbs.get(first) or touch_cbs.get('EITHER')
        if fn is not None:
            _schedule(fn, first, 'touchdrop')
        if button == 'BOTH' and touch_cbs.get('BOTH') is not None:
            _schedule(touch_cbs['BOTH'], 'BOTH', 'touchdrop')
    elif tag == 65:  # A
        audio_rate = struct.unpack('<I', data[:4])[0]
        audio = memoryview(data)[4:]    # not a copy: a long recording fits the heap once
        audio_fed += 1
    elif tag == 73:  # I
        image = bytes(data)
    elif tag == 66:  # B
        battery = data[0]
    elif tag == 81:  # Q
        sys.exit(0)
    return kbd


_batch = []


def _deliver():
    """Hands the data messages that arrived together to the scheduler in one go, with no Python
    code in between (so no callback runs meanwhile): what does not fit the queue of 4 is lost."""
    global _batch
    msgs = _batch
    _batch = []
    if rx_cb is None:
        return
    it = iter(msgs)
    try:
        list(map(micropython.schedule, [rx_cb] * len(msgs), it))
    except RuntimeError:
        for _ in range(1 + len(list(it))):
            event('cbdrop')


def _read_frame():
    hdr = _in.read(5)
    if not hdr or len(hdr) < 5:
        sys.exit(0)      # host went away
    tag, n = struct.unpack('<BI', hdr)
    data = _in.read(n) if n else b''
    if n and (data is None or len(data) < n):
        sys.exit(0)
    return tag, data


def init():
    """Read the host's initial state, up to its Z frame."""
    while True:
        tag, data = _read_frame()
        if tag == 90:  # Z
            return
        _handle(tag, data)
        if _batch:
            _deliver()


_got = [0]       # serial bytes taken from the host link, not yet reported (frame G)


def _unring_ctrl_c():
    """Takes back the newest unread Ctrl-C of the ring (it was delivered as a signal)."""
    global ring
    for i in range(len(ring) - 1, rpos - 1, -1):
        if ring[i] == 3:
            ring = ring[:i] + ring[i + 1:]
            return


def poll(timeout=0):
    """Take what the host sent. While user code runs, a Ctrl-C raises KeyboardInterrupt here."""
    kbd = False
    while _poller.poll(timeout):
        tag, data = _read_frame()
        r = _handle(tag, data)
        if r:
            kbd = True
        elif r is None:       # U: that Ctrl-C already interrupted the code
            if kbd:
                kbd = False
            else:
                _unring_ctrl_c()
        timeout = 0
    if _got[0]:
        send('G', struct.pack('<I', _got[0]))
        _got[0] = 0
    if _batch:
        _deliver()
    if kbd and running:
        raise KeyboardInterrupt


def sleep_ms(ms):
    end = _t.ticks_add(_t.ticks_ms(), int(ms))
    poll(0)
    while True:
        left = _t.ticks_diff(end, _t.ticks_ms())
        if left <= 0:
            break
        poll(min(left, 50))


def touched():
    if touch_button is not None and _t.ticks_diff(touch_until, _t.ticks_ms()) > 0:
        return touch_button
    return None


def tx_slot():
    """The 2-entry notification queue: False when both entries are still in flight."""
    now = _t.ticks_ms()
    while _tx_busy and _t.ticks_diff(now, _tx_busy[0]) >= 0:
        _tx_busy.pop(0)
    if len(_tx_busy) >= 2:
        return False
    last = _tx_busy[-1] if _tx_busy else now
    _tx_busy.append(_t.ticks_add(last if _t.ticks_diff(last, now) > 0 else now, 2))
    return True
