# SPDX-License-Identifier: GPL-2.0-or-later
# Virtual Monocle: the bluetooth module (data service). Test-only.
import _vmhost

_none = object()


def max_length():
    return _vmhost.mtu - 3


def connected():
    _vmhost.poll()
    return _vmhost.data_on


def send(data):
    if isinstance(data, str):
        data = data.encode()
    data = bytes(data)
    _vmhost.poll()
    if len(data) > max_length():
        raise ValueError('input buffer is larger than max_length()')
    if not _vmhost.data_on:
        raise OSError('notifications are not enabled on the data service')
    if not _vmhost.tx_slot():
        raise OSError(16)   # EBUSY: the notification queue is full
    _vmhost.send('D', data)


def receive_callback(fn=_none):
    if fn is _none:
        return _vmhost.rx_cb
    _vmhost.rx_cb = fn
