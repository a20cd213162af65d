# SPDX-License-Identifier: GPL-2.0-or-later
# glassd on the Monocle: the data-channel receiver of an FPGA image or a large script. Sent as one
# raw-REPL command (never stored; comment lines are left out), then called with the size and the
# writer (update.Fpga.write after the erase, or a file's write), with _gf = 0. Takes
# fpg:<u32 big-endian offset><bytes> on the data channel, writes what continues at _gf with
# w and answers fpa:<_gf> (cumulative) whenever its queue runs empty (one answer
# per burst: fewer notifications); a message after a lost one is dropped, and the answer says where
# to resume. fpe:<text> if a write fails. Ends at `size` bytes, on fpx: or after 10 s without a
# message, and prints _gf.
import bluetooth, time
def _gfr(size, w):
    global _gf
    q = []
    def rx(m):
        if len(q) < 8:
            q.append(bytes(m))
    def tell(p, s):
        for _ in range(40):
            try:
                bluetooth.send(p + s.encode())
                return
            except OSError:
                time.sleep_ms(5)
    bluetooth.receive_callback(rx)
    idle = time.ticks_ms()
    while _gf < size:
        if not q:
            time.sleep_ms(1)
            if time.ticks_diff(time.ticks_ms(), idle) > 10000:
                break
            continue
        m = q.pop(0)
        idle = time.ticks_ms()
        if m[:4] == b'fpx:':
            break
        if m[:4] != b'fpg:' or len(m) < 9:
            continue
        if int.from_bytes(m[4:8], 'big') == _gf:
            try:
                w(m[8:])
            except Exception as e:
                tell(b'fpe:', str(e))
                break
            _gf += len(m) - 8
        if not q:
            tell(b'fpa:', str(_gf))
    print(_gf)
