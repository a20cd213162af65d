# SPDX-License-Identifier: GPL-2.0-or-later
# glassd on the Monocle: the data channel. Each message is a 4-byte prefix and a payload.
# Sends retry a bounded number of times on OSError (queue busy); received messages are queued
# for the main loop, which acknowledges them with ack:<count taken modulo 1000000>.
import bluetooth
import time

MAX_QUEUE = 24
_q = []
_n = [0, -1]      # messages taken by the callback, count last acknowledged


def _rx(msg):
    _n[0] = (_n[0] + 1) % 1000000
    if len(_q) < MAX_QUEUE:
        _q.append(bytes(msg))


def start():
    del _q[:]
    _n[0] = 0
    _n[1] = -1
    bluetooth.receive_callback(_rx)


def room():
    return bluetooth.max_length() - 4


def send(prefix, payload=b''):
    if isinstance(payload, str):
        payload = payload.encode()
    data = prefix + payload[:room()]
    for _ in range(40):
        try:
            bluetooth.send(data)
            return True
        except OSError:
            if not bluetooth.connected():
                return False
            time.sleep_ms(5)
        except ValueError:
            return False
    return False


def take():
    return _q.pop(0) if _q else None


def ack():
    if _n[0] != _n[1] and bluetooth.connected():
        if send(b'ack:', str(_n[0])):
            _n[1] = _n[0]
