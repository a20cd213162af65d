# SPDX-License-Identifier: GPL-2.0-or-later
#
# linktiming: the timing of a BLE connection, for the virtual Monocle (virtual_monocle.py) and
# its bootloader (vdfu.py), so that transfer times in the test world mean something. Off by
# default: then every packet goes at once, as before. Test-only.
#
# The model (Tests/World/README.md, "Link timing"):
# - connection events every `interval` s, counted from when the model was set;
# - each event carries up to `packets` packets in EACH direction, counted apart (in an event
#   central and peripheral take turns, so n exchanges carry n packets each way);
# - a packet is one ATT PDU of at most MTU-3 bytes (one link-layer packet, as with data length
#   extension): a write, a notification or a write response. It goes in the first event after it
#   was made (strictly after: nothing made while an event runs makes that event) that still has
#   room in its direction; packets of one direction keep their order;
# - a write with response is answered by a packet in the peripheral's direction, in the first
#   event at least `latency` s after the event that delivered the write (at the earliest the next).
# Run this file to check the scheduler alone: python Tests/World/linktiming.py

import asyncio
import math
import sys
from collections import deque

IN, OUT = 0, 1       # central -> peripheral (writes), peripheral -> central (notifications)
EPS = 1e-6           # in events: a timer fires up to the clock's resolution early


def check(interval_ms, packets, latency_ms):
    """ValueError unless a BLE link could have these (interval 0: the model is off)."""
    if interval_ms != 0 and not 7.5 <= interval_ms <= 4000:
        raise ValueError("the connection interval is 0 (off) or 7.5..4000 ms")
    if interval_ms and not 1 <= packets <= 1000:
        raise ValueError("packets per event is 1..1000")
    if not 0 <= latency_ms <= 10000:
        raise ValueError("the latency is 0..10000 ms")


def parse(text):
    """INTERVAL_MS,PACKETS,LATENCY_MS (the --link-timing option) -> checked values."""
    try:
        interval, packets, latency = text.split(",")
        values = float(interval), int(packets), float(latency)
    except ValueError:
        raise ValueError("expected INTERVAL_MS,PACKETS,LATENCY_MS, e.g. 15,6,0")
    check(*values)
    return values


class LinkTiming:
    def __init__(self):
        self.interval = 0.0      # s; 0 = off
        self.packets = 0
        self.latency = 0.0       # s
        self.epoch = 0.0
        self.queues = (deque(), deque())   # (event index, seq, callback), in order
        self.timers = [None, None]
        self.last = [(-1, 0), (-1, 0)]     # per direction: last event used, packets in it
        self.seq = 0
        self.counts = [0, 0]               # packets carried under the model, per direction

    @property
    def on(self):
        return self.interval > 0

    def set(self, interval_ms, packets, latency_ms):
        """interval_ms 0 turns the model off. Raises ValueError as check() does."""
        check(interval_ms, packets, latency_ms)
        self.flush()
        self.interval, self.packets, self.latency = interval_ms / 1000, int(packets), latency_ms / 1000
        self.epoch = asyncio.get_running_loop().time()
        self.last = [(-1, 0), (-1, 0)]

    def describe(self):
        if not self.on:
            return "off"
        return (f"{self.interval * 1000:g} ms interval, {self.packets} packets per event each way, "
                f"{self.latency * 1000:g} ms write response latency")

    def limit(self, payload, mtu):
        """Bytes/s one way with packets of `payload` bytes (at most MTU-3); 0 when off (no limit)."""
        if not self.on:
            return 0.0
        return min(payload, mtu - 3) * self.packets / self.interval

    # --- scheduling
    def send(self, direction, callback, first=None):
        """Runs `callback` at the event that carries this packet (at once when off): the first
        one after now with room, or from event `first` on. Returns the event's index."""
        if not self.on:
            callback()
            return None
        if first is None:
            first = math.floor((asyncio.get_running_loop().time() - self.epoch) / self.interval + EPS) + 1
        k = self._reserve(direction, first)
        self.counts[direction] += 1
        self.seq += 1
        queue = self.queues[direction]
        queue.append((k, self.seq, callback))
        if len(queue) == 1:
            self._arm(direction)
        return k

    def request(self, deliver, answer):
        """A write with response: `deliver` at its event, `answer` (the reply) at a later one."""
        def arrive():
            deliver()
            if self.on:
                self.send(OUT, answer, event + max(1, math.ceil(self.latency / self.interval - EPS)))
            else:
                answer()
        event = self.send(IN, arrive)

    def _reserve(self, direction, k):
        last, used = self.last[direction]
        if last >= k:
            k, used = (last, used + 1) if used < self.packets else (last + 1, 1)
        else:
            used = 1
        self.last[direction] = (k, used)
        return k

    def _arm(self, direction):
        k = self.queues[direction][0][0]
        self.timers[direction] = asyncio.get_running_loop().call_at(
            self.epoch + k * self.interval, self._fire, direction)

    def _fire(self, direction):
        """One event's packets in this direction, in order; the next event gets its own timer."""
        self.timers[direction] = None
        queue = self.queues[direction]
        k = queue[0][0]
        while queue and queue[0][0] == k:
            self._run(queue.popleft()[2])
        if queue:
            self._arm(direction)

    def flush(self):
        """Everything still queued goes now, in the order it was made (the model changes)."""
        for direction, timer in enumerate(self.timers):
            if timer is not None:
                timer.cancel()
                self.timers[direction] = None
        pending = sorted(list(self.queues[IN]) + list(self.queues[OUT]))
        for queue in self.queues:
            queue.clear()
        self.interval = 0.0     # off while they run: what they send goes at once too
        for _, _, callback in pending:
            self._run(callback)

    @staticmethod
    def _run(callback):
        try:
            callback()
        except Exception as e:  # a test tool: one failing delivery must not stop the others
            sys.stderr.write(f"linktiming: delivery failed: {e!r}\n")


async def _selfcheck():
    loop = asyncio.get_running_loop()
    link = LinkTiming()
    seen = []
    link.send(IN, lambda: seen.append("off"))
    assert seen == ["off"], "off: at once"

    def event():      # the event a callback runs at (timers are late, never early; 100 ms of room)
        return math.floor((loop.time() - link.epoch) / 0.1 + EPS)

    link.set(100, 3, 100)
    times = []
    for i in range(7):     # 7 writes made together: events 1, 1, 1, 2, 2, 2, 3
        link.send(IN, lambda i=i: times.append((i, event())))
    answered = loop.create_future()
    link.request(lambda: times.append(("req", event())), lambda: answered.set_result(event()))
    reply_event = await answered
    assert [t for _, t in times] == [1, 1, 1, 2, 2, 2, 3, 3], times
    assert [i for i, _ in times[:7]] == list(range(7)), "in order"
    # delivered at event 3, answered at least 100 ms later: event 4
    assert reply_event == 4, reply_event
    assert link.limit(300, 256) == 253 * 3 / 0.1 and link.limit(100, 256) == 100 * 3 / 0.1

    link.set(100, 3, 150)     # 150 ms after event 1: event 3
    answered = loop.create_future()
    link.request(lambda: None, lambda: answered.set_result(event()))
    got = await answered
    assert got == 3, got

    outs = []
    for i in range(4):
        link.send(OUT, lambda i=i: outs.append(i))
    link.set(0, 0, 0)       # off: what was queued goes at once, in order
    assert outs == [0, 1, 2, 3], outs
    print("linktiming: ok")


if __name__ == "__main__":
    asyncio.run(_selfcheck())
