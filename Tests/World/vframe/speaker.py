# SPDX-License-Identifier: GPL-2.0-or-later
"""The virtual Halo's speaker (halo-protocol.md, "Lua API, current firmware"): audio written to
AUDIO RX lands in an 8 KB ring; while the speaker streams (frame.speaker.start) the ring is played
in 10 ms blocks at the format's byte rate, in real time; a write that does not fit is refused whole
and lost (counted, as the firmware's stats() does); an empty ring while streaming plays a silence
block. stop() discards the ring; bytes written while stopped wait for the next start.

Played time is worked out from the clock when asked (no thread): every call first plays the blocks
due since the last one. Each played block is decoded (PCM16 as is, LC3 through liblc3) and kept with
the time it began for the last KEEP_S seconds: played_audio() is what came out of the speaker then,
what the virtual microphone hears as echo (vframe/devices.py)."""

import math
import sys
import threading
import time
from array import array
from collections import deque

RING = 8192
BLOCK_S = 0.01
KEEP_S = 5.0                # how much played audio played_audio() can still tell


def _samples(pcm):
    """s16le bytes (even length) -> array('h')."""
    out = array("h")
    out.frombytes(pcm)
    if sys.byteorder == "big":
        out.byteswap()
    return out


class Speaker:
    def __init__(self, clock=time.monotonic):
        self.lock = threading.Lock()
        self.clock = clock
        self.ring = bytearray()
        self.streaming = False
        self.rate = 32000            # bytes per second of the current format
        self.sample_rate = 16000     # samples per second it plays
        self.next_block = 0.0
        self.volume = 50
        self.encoder = "pcm"
        self.duration = 1000         # LC3 frame duration, in 10 us (1000: 10 ms)
        self.decoder = None          # an lc3.Decoder while it plays LC3 (None: undecodable, silent)
        self.odd = b""               # PCM: a byte whose sample's other half has not played yet
        self.played = deque()        # (time the block began, its sample rate, its samples)
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
        while self.played and self.played[0][0] < now - KEEP_S:
            self.played.popleft()
        if not self.streaming:
            return
        block = max(1, int(self.rate * BLOCK_S))
        while self.next_block + BLOCK_S <= now:
            began = self.next_block
            self.next_block += BLOCK_S
            if self.ring:
                n = min(block, len(self.ring))
                self._sound(began, bytes(self.ring[:n]))
                del self.ring[:n]
                self.counts["blocks_played"] += 1
                self.counts["pcm_bytes"] += n
                self.total_played += n
                self.dry = False
            else:   # silence: nothing kept, played_audio() gives zeros there
                self.counts["silence_blocks"] += 1
                self.dry = self.counts["blocks_played"] > 0   # waiting for the first byte is not a gap

    def _sound(self, began, data):
        """Keeps what one block played: its bytes decoded to samples."""
        if self.encoder == "lc3":
            if self.decoder is None:
                return
            pcm = self.decoder.decode(data)     # whole frames; a partial one waits for the next block
        else:
            pcm = self.odd + data
            cut = len(pcm) - len(pcm) % 2
            pcm, self.odd = pcm[:cut], pcm[cut:]
        if pcm:
            self.played.append((began, self.sample_rate, _samples(pcm)))

    def played_audio(self, t0, t1, rate, count=None):
        """What the speaker played from time t0 to t1 (its clock), as `count` (default
        (t1 - t0) × rate) int samples at `rate`: sample i is the one playing at t0 + i / rate, the
        nearest earlier one of its own rate; 0 where nothing played (silence, stopped, or longer
        ago than KEEP_S)."""
        with self.lock:
            self._play_until(self.clock())
            if count is None:
                count = max(0, round((t1 - t0) * rate))
            out = [0] * count
            t1 = t0 + count / rate
            # Blocks are in time order: from the newest back to the first that ended before t0
            # (echo asks for the last few), then laid down oldest first.
            blocks = []
            for began, own, samples in reversed(self.played):
                ended = began + len(samples) / own
                if ended <= t0:
                    break
                if began < t1:
                    blocks.append((began, ended, own, samples))
            for began, ended, own, samples in reversed(blocks):
                # j(i) = floor((t0 - began) * own + i * own / rate): the block's sample at output i.
                offset = (t0 - began) * own + 1e-6
                if own == rate:
                    j0 = math.floor(offset)
                    lo, hi = max(0, -j0), min(count, len(samples) - j0)
                    if lo < hi:
                        out[lo:hi] = samples[j0 + lo:j0 + hi]
                    continue
                step = own / rate
                lo = max(0, math.ceil((began - t0) * rate - 1e-6))
                hi = min(count, math.ceil((ended - t0) * rate))
                n = len(samples)
                for i in range(lo, hi):
                    j = math.floor(offset + i * step)
                    if 0 <= j < n:
                        out[i] = samples[j]
            return out

    def start(self, encoder, sample_rate, bit_depth, volume, bitrate=None, duration=1000):
        if encoder not in ("pcm", "lc3"):
            raise ValueError("encoder must be pcm or lc3")
        if sample_rate not in (8000, 16000):
            raise ValueError("sample_rate must be 8000 or 16000")
        if encoder == "pcm" and bit_depth != 16:
            raise ValueError("the speaker plays 16-bit PCM only")
        if not 0 <= volume <= 100:
            raise ValueError("volume must be 0..100")
        rate = sample_rate * 2 if encoder == "pcm" else (bitrate or 32000) // 8
        shape = (encoder, sample_rate, rate, duration)
        with self.lock:
            now = self.clock()
            self._play_until(now)
            if not self.streaming or shape != (self.encoder, self.sample_rate, self.rate, self.duration):
                self.decoder, self.odd = self._decoder(encoder, sample_rate, rate, duration), b""
            self.encoder, self.volume, self.rate, self.sample_rate, self.duration = encoder, volume, rate, sample_rate, duration
            if not self.streaming:
                self.streaming, self.next_block, self.dry = True, now, False
                self.counts["starts"] += 1

    @staticmethod
    def _decoder(encoder, sample_rate, rate, duration):
        """A fresh LC3 decoder for this format; None for PCM, or when liblc3 cannot decode it
        (below 16 kbps, say: it still plays, as silence, so the counters stay as they were)."""
        if encoder != "lc3":
            return None
        try:
            import lc3  # beside the world's scripts; loads liblc3.so.0
            us = 7500 if duration == 750 else 10000
            return lc3.Decoder(lc3.Format(sample_rate, us, frame_bytes=rate * us // 1_000_000))
        except (ValueError, RuntimeError, OSError):
            return None

    def write(self, data):
        with self.lock:
            now = self.clock()
            self._play_until(now)
            self.counts["ble_writes"] += 1
            self.last_write_at = time.monotonic()
            if not self.streaming:
                self.late_writes += 1
            if len(self.ring) + len(data) > RING:
                self.counts["ble_rejected"] += 1
                self.counts["ble_rejected_bytes"] += len(data)
                return False
            if self.streaming and self.dry:
                self.gaps += 1          # the ring had run dry and audio came again
                self.dry = False
            if self.streaming and not self.ring:
                self.next_block = max(self.next_block, now - BLOCK_S)
            self.ring += data
            self.counts["ble_bytes"] += len(data)
            self.counts["ring_peak"] = max(self.counts["ring_peak"], len(self.ring))
            return True

    def stop(self):
        """Stops playing and discards the ring; returns the bytes discarded. Nothing more plays."""
        with self.lock:
            self._play_until(self.clock())
            flushed = len(self.ring)
            self.counts["ble_flushed_bytes"] += flushed
            self.ring.clear()
            self.streaming, self.dry, self.odd = False, False, b""
            return flushed

    def stats(self, reset=False):
        with self.lock:
            self._play_until(self.clock())
            out = dict(self.counts, streaming=self.streaming, ring_bytes=len(self.ring))
            if reset:
                self.reset_counts()
            return out

    def totals(self):
        with self.lock:
            self._play_until(self.clock())
            return dict(self.counts, played=self.total_played, gaps=self.gaps, ring_bytes=len(self.ring),
                        streaming=self.streaming, late_writes=self.late_writes)
