# SPDX-License-Identifier: GPL-2.0-or-later
"""The virtual Halo's speaker (halo-protocol.md, "Lua API, current firmware"): audio written to
AUDIO RX lands in an 8 KB ring; while the speaker streams (frame.speaker.start) the ring is played
in 10 ms blocks at the format's byte rate, in real time; a write that does not fit is refused whole
and lost (counted, as the firmware's stats() does); an empty ring while streaming plays a silence
block. stop() discards the ring; bytes written while stopped wait for the next start.

Played time is worked out from the clock when asked (no thread): every call first plays the blocks
due since the last one."""

import threading
import time

RING = 8192
BLOCK_S = 0.01


class Speaker:
    def __init__(self, clock=time.monotonic):
        self.lock = threading.Lock()
        self.clock = clock
        self.ring = 0
        self.streaming = False
        self.rate = 32000            # bytes per second of the current format
        self.next_block = 0.0
        self.volume = 50
        self.encoder = "pcm"
        self.reset_counts()
        # Across answers, for tests: every byte played, and each resume after the ring ran dry.
        self.total_played = 0
        self.gaps = 0
        self.dry = False
        # Writes that came while the speaker was stopped (after a tap stopped it, say), and when
        # the last write came (time.monotonic()).
        self.late_writes = 0
        self.last_write_at = 0.0

    def reset_counts(self):
        self.counts = dict(starts=0, ble_writes=0, ble_bytes=0, ble_rejected=0, ble_rejected_bytes=0,
                           ble_flushed_bytes=0, ring_peak=0, blocks_played=0, silence_blocks=0, pcm_bytes=0)

    def _play_until(self, now):
        if not self.streaming:
            return
        block = max(1, int(self.rate * BLOCK_S))
        while self.next_block + BLOCK_S <= now:
            self.next_block += BLOCK_S
            if self.ring > 0:
                n = min(block, self.ring)
                self.ring -= n
                self.counts["blocks_played"] += 1
                self.counts["pcm_bytes"] += n
                self.total_played += n
                self.dry = False
            else:
                self.counts["silence_blocks"] += 1
                self.dry = self.counts["blocks_played"] > 0   # waiting for the first byte is not a gap

    def start(self, encoder, sample_rate, bit_depth, volume, bitrate=None):
        if encoder not in ("pcm", "lc3"):
            raise ValueError("encoder must be pcm or lc3")
        if sample_rate not in (8000, 16000):
            raise ValueError("sample_rate must be 8000 or 16000")
        if encoder == "pcm" and bit_depth != 16:
            raise ValueError("the speaker plays 16-bit PCM only")
        if not 0 <= volume <= 100:
            raise ValueError("volume must be 0..100")
        rate = sample_rate * 2 if encoder == "pcm" else (bitrate or 32000) // 8
        with self.lock:
            now = self.clock()
            self._play_until(now)
            self.encoder, self.volume, self.rate = encoder, volume, rate
            if not self.streaming:
                self.streaming, self.next_block, self.dry = True, now, False
                self.counts["starts"] += 1

    def write(self, data):
        with self.lock:
            now = self.clock()
            self._play_until(now)
            self.counts["ble_writes"] += 1
            self.last_write_at = time.monotonic()
            if not self.streaming:
                self.late_writes += 1
            if self.ring + len(data) > RING:
                self.counts["ble_rejected"] += 1
                self.counts["ble_rejected_bytes"] += len(data)
                return False
            if self.streaming and self.dry:
                self.gaps += 1          # the ring had run dry and audio came again
                self.dry = False
            if self.streaming and self.ring == 0:
                self.next_block = max(self.next_block, now - BLOCK_S)
            self.ring += len(data)
            self.counts["ble_bytes"] += len(data)
            self.counts["ring_peak"] = max(self.counts["ring_peak"], self.ring)
            return True

    def stop(self):
        """Stops playing and discards the ring; returns the bytes discarded."""
        with self.lock:
            self._play_until(self.clock())
            flushed = self.ring
            self.counts["ble_flushed_bytes"] += flushed
            self.ring, self.streaming, self.dry = 0, False, False
            return flushed

    def stats(self, reset=False):
        with self.lock:
            self._play_until(self.clock())
            out = dict(self.counts, streaming=self.streaming, ring_bytes=self.ring)
            if reset:
                self.reset_counts()
            return out

    def totals(self):
        with self.lock:
            self._play_until(self.clock())
            return dict(self.counts, played=self.total_played, gaps=self.gaps, ring_bytes=self.ring,
                        streaming=self.streaming, late_writes=self.late_writes)
