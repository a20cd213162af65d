#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# echo_selfcheck: the virtual Halo's speaker and microphone together (vframe/speaker.py,
# vframe/devices.py), driven directly on a fake clock (no D-Bus, no real time): what the speaker
# plays comes back into the microphone 20 ms later at -12 dB, and at -47 dB with aec=true, unless
# the echo canceller is broken (SetEchoCancel(false)); PCM and LC3 on either side; a clip fed while
# recording goes on in real time across a stop and start; one fed while stopped plays from the
# start of each recording; the Halo's Lua API for it (frame.microphone.start{aec, voice, gain},
# aec(), voice(), status(), typed options) through the real prelude in lupa.
#   .venv/bin/python Tests/World/echo_selfcheck.py [-v]        (about 2 s)
# Exit status 0 when every check passed.
import math
import os
import struct
import sys
import tempfile
import time
import wave
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import lc3  # noqa: E402  (beside this file)
from vframe.devices import Microphone  # noqa: E402
from vframe.speaker import Speaker  # noqa: E402

VERBOSE = "-v" in sys.argv[1:]
RATE = 16000
TONE_AMPLITUDE = 10000
RESULTS = []


class Failed(Exception):
    pass


def check(ok, what):
    RESULTS.append((what, bool(ok)))
    if VERBOSE or not ok:
        print(f"{'ok  ' if ok else 'FAIL'} {what}", flush=True)
    if not ok:
        raise Failed(what)


class Clock:
    """The fake monotonic clock both devices read."""

    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t


def tone(seconds, rate=RATE, amplitude=TONE_AMPLITUDE, hz=440):
    return [int(amplitude * math.sin(2 * math.pi * hz * n / rate)) for n in range(int(seconds * rate))]


def pcm(samples):
    return struct.pack(f"<{len(samples)}h", *samples)


def rms(samples):
    return math.sqrt(sum(v * v for v in samples) / max(1, len(samples)))


def unpack(data):
    return list(struct.unpack(f"<{len(data) // 2}h", data))


def play_and_record(encoder="pcm", mic_encoder="pcm", aec=False, cancel=True, seconds=0.6, toggle_at=None):
    """The speaker plays the tone (fed 10 ms at a time, as glassd paces it) while the microphone
    records from before it starts; returns (recorded samples, the time the first block began,
    the microphone's t0, the played tone's RMS as the speaker decoded it)."""
    clock = Clock()
    speaker = Speaker(clock=clock)
    mic = Microphone(clock=clock, echo=speaker)
    mic.echo_cancel = cancel
    mic.start(RATE, 16, mic_encoder, 32000 if mic_encoder == "lc3" else None, 1000 if mic_encoder == "lc3" else None,
              aec=aec)
    t0 = clock.t
    clock.t += 0.05                 # the microphone hears silence first
    data = pcm(tone(seconds))
    if encoder == "lc3":
        coder = lc3.Encoder(lc3.Format(RATE, 10000, bitrate=32000))
        data = coder.encode(data) + coder.flush()
        speaker.start("lc3", RATE, 16, 50, 32000)
    else:
        speaker.start("pcm", RATE, 16, 50)
    block = speaker.rate // 100
    out = bytearray()
    step = 0
    for at in range(0, len(data), block):
        speaker.write(data[at:at + block])
        clock.t += 0.01
        step += 1
        if toggle_at is not None and step == toggle_at:
            mic.set_aec(not mic.aec)
        out += mic.read(4096) or b""
    clock.t += 0.1
    out += mic.read(1 << 20) or b""
    first = speaker.played[0][0]
    played = speaker.played_audio(first, first + seconds, RATE)
    mic.stop()
    while (rest := mic.read(4096)):
        out += rest
    if mic_encoder == "lc3":
        decoder = lc3.Decoder(lc3.Format(RATE, 10000, bitrate=32000))
        out = bytearray(decoder.decode(bytes(out)))
    return unpack(bytes(out)), first, t0, rms(played[RATE // 10:-RATE // 10])


def steady(recorded, first, t0, seconds=0.6):
    """The recording while the tone's echo sounds, less 100 ms at either end."""
    lo = int((first - t0 + 0.02 + 0.1) * RATE)
    hi = int((first - t0 + 0.02 + seconds - 0.1) * RATE)
    return recorded[lo:hi]


def echoes():
    # (a) PCM, aec off: the tone at -12 dB, 20 ms late.
    recorded, first, t0, played_rms = play_and_record()
    check(abs(played_rms - TONE_AMPLITUDE / math.sqrt(2)) < 50, f"the speaker's timeline holds the tone (RMS {played_rms:.0f})")
    ratio = rms(steady(recorded, first, t0)) / played_rms
    print(f"(a) PCM speaker, aec=false: echo RMS ratio {ratio:.4f} ({20 * math.log10(ratio):.1f} dB)")
    check(0.2 <= ratio <= 0.32, "(a) without the echo canceller the microphone hears the speaker at about -12 dB")
    onset = next(i for i, v in enumerate(recorded) if v != 0)
    delay_ms = ((t0 + onset / RATE) - first) * 1000
    print(f"(a) echo delay {delay_ms:.2f} ms (first echoed sample {onset})")
    check(19.0 <= delay_ms <= 21.0, "(a) the echo comes 20 ms after the speaker played it")
    silent = recorded[:int((first - t0 + 0.019) * RATE)]
    check(len(silent) > 0 and not any(silent), "(a) before the echo arrives the microphone hears silence")

    # (b) aec on: the canceller's residue, 35 dB further down.
    recorded, first, t0, played_rms = play_and_record(aec=True)
    ratio_aec = rms(steady(recorded, first, t0)) / played_rms
    print(f"(b) PCM speaker, aec=true: residue RMS ratio {ratio_aec:.5f} ({20 * math.log10(max(ratio_aec, 1e-9)):.1f} dB)")
    check(0 < ratio_aec < 0.01, "(b) with aec=true the echo is below 0.01 of the played RMS (yet not nothing)")

    # (c) the canceller broken (SetEchoCancel(false)): aec=true hears the whole echo.
    recorded, first, t0, played_rms = play_and_record(aec=True, cancel=False)
    ratio_broken = rms(steady(recorded, first, t0)) / played_rms
    print(f"(c) aec=true, SetEchoCancel(false): echo RMS ratio {ratio_broken:.4f}")
    check(0.2 <= ratio_broken <= 0.32, "(c) with the canceller off, aec=true hears the full echo")

    # aec(true) while recording: from then on the echo is cancelled.
    recorded, first, t0, played_rms = play_and_record(toggle_at=30)
    switched = t0 + 0.05 + 0.30            # when aec(true) ran (30 blocks after the speaker began)
    before = recorded[int((first - t0 + 0.12) * RATE):int((switched - t0 - 0.02) * RATE)]
    after = recorded[int((switched - t0 + 0.05) * RATE):int((first - t0 + 0.5) * RATE)]
    r_before, r_after = rms(before) / played_rms, rms(after) / played_rms
    print(f"(c) aec(true) while recording: {r_before:.4f} before, {r_after:.5f} after")
    check(0.2 <= r_before <= 0.32 and r_after < 0.01, "(c) frame.microphone.aec(true) while recording cancels from then on")

    # (d) LC3 on the speaker (32 kbps, 10 ms), then on both sides.
    recorded, first, t0, played_rms = play_and_record(encoder="lc3")
    ratio_lc3 = rms(steady(recorded, first, t0)) / played_rms
    print(f"(d) LC3 speaker, aec=false: echo RMS ratio {ratio_lc3:.4f} (played RMS {played_rms:.0f} after LC3)")
    check(played_rms > 5000, "(d) the speaker decodes the LC3 it plays")
    check(0.2 <= ratio_lc3 <= 0.32, "(d) an LC3 speaker echoes at about -12 dB")
    recorded, first, t0, played_rms = play_and_record(encoder="lc3", aec=True)
    ratio_lc3_aec = rms(steady(recorded, first, t0)) / played_rms
    print(f"(d) LC3 speaker, aec=true: residue RMS ratio {ratio_lc3_aec:.5f}")
    check(ratio_lc3_aec < 0.01, "(d) an LC3 speaker's echo is cancelled with aec=true")
    recorded, first, t0, played_rms = play_and_record(encoder="lc3", mic_encoder="lc3")
    ratio_both = rms(steady(recorded, first, t0)) / played_rms
    print(f"(d) LC3 speaker, LC3 microphone (glassd's formats), aec=false: echo RMS ratio {ratio_both:.4f}")
    check(0.15 <= ratio_both <= 0.35, "(d) LC3 on both sides: the microphone's LC3 carries the echo")


def speaker_timeline():
    clock = Clock()
    speaker = Speaker(clock=clock)
    check(speaker.played_audio(clock.t - 1, clock.t, RATE) == [0] * RATE, "a speaker that never played: zeros")
    speaker.start("pcm", RATE, 16, 50)
    check(speaker.write(b"\x01" * 2001), "a write fits the ring")
    clock.t += 0.0101
    stats = speaker.stats()
    check(stats["ring_bytes"] == 2001 - 320 and stats["blocks_played"] == 1 and stats["pcm_bytes"] == 320,
          f"the ring plays 320 bytes a block as before ({stats})")
    check(not speaker.write(b"\0" * 8000), "a write that does not fit is refused whole")
    clock.t += 0.0305
    check(speaker.stats()["ring_bytes"] == 2001 - 4 * 320, "blocks go on playing")
    begun = speaker.played[0][0]
    heard = speaker.played_audio(begun, begun + 0.04, RATE)
    check(heard == [0x0101] * 640, "played_audio gives the bytes played as samples")
    check(speaker.played_audio(begun, begun + 0.04, 8000) == [0x0101] * 320, "played_audio resamples to 8 kHz")
    check(speaker.stop() == 2001 - 4 * 320, "stop discards the rest of the ring")
    clock.t += 1.0
    check(speaker.played_audio(begun + 0.04, clock.t, RATE) == [0] * round((clock.t - begun - 0.04) * RATE),
          "after stop() nothing more plays")
    clock.t += 5.0
    check(not any(speaker.played_audio(begun, begun + 0.04, RATE)), "played audio is kept for 5 s only")
    # Each block keeps its own rate: 8 kHz PCM, then 16 kHz after a new start.
    speaker.start("pcm", 8000, 16, 50)
    speaker.write(b"\x02" * 160)
    clock.t += 0.0101
    speaker.stop()
    speaker.start("pcm", RATE, 16, 50)
    speaker.write(b"\x03" * 320)
    clock.t += 0.0101
    speaker.stats()                     # plays what is due
    (b8, r8, _), (b16, r16, _) = list(speaker.played)[-2:]
    check((r8, r16) == (8000, RATE) and speaker.played_audio(b8, b8 + 0.01, RATE) == [0x0202] * 160
          and speaker.played_audio(b16, b16 + 0.01, RATE) == [0x0303] * 160,
          "a block played at 8 kHz before a 16 kHz start is still read at its own rate")
    speaker.stop()


def clip_file(directory, seconds=2.0, rate=RATE):
    """A WAV whose sample j is j + 1 (up to 32767): where the recording is in it shows."""
    path = os.path.join(directory, f"ramp{rate}.wav")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm([min(32767, j + 1) for j in range(int(seconds * rate))]))
    return path


def clips(directory):
    path = clip_file(directory)
    clock = Clock()
    mic = Microphone(clock=clock)

    # (e) fed while recording: heard from then on, and across a stop and start in real time.
    mic.start(RATE, 16)
    clock.t += 0.5
    mic.feed(path)
    clock.t += 0.3
    heard = unpack(mic.read(1 << 20))
    onset = next(i for i, v in enumerate(heard) if v != 0)
    check(abs(onset - 0.5 * RATE) <= 1 and heard[onset] == 1, f"(e) fed while recording: heard from then on, from its start (at {onset})")
    mic.stop()
    clock.t += 0.1
    mic.start(RATE, 16)                 # the host restarts the microphone for the question
    clock.t += 0.01
    heard = unpack(mic.read(1 << 20))
    expected = round(0.4 * RATE) + 1
    print(f"(e) after the restart 0.4 s into the clip: first sample {heard[0]} (clip sample {expected}; its first is 1)")
    check(abs(heard[0] - expected) <= 1 and heard[1] == heard[0] + 1,
          "(e) a restart hears the clip where real time has it, not from its start")
    mic.stop()
    clock.t += 2.0                       # the clip is over: the next recording plays it again
    mic.start(RATE, 16)
    clock.t += 0.01
    check(unpack(mic.read(1 << 20))[:2] == [1, 2], "(e) once over, the clip plays from the next recording's start")
    mic.stop()

    # (f) fed while stopped: from the start of each recording.
    mic.feed(path)
    clock.t += 3.0
    for n in (1, 2):
        mic.start(RATE, 16)
        clock.t += 0.25
        heard = unpack(mic.read(1 << 20))
        check(heard[:3] == [1, 2, 3] and heard[-1] == 0.25 * RATE, f"(f) fed while stopped: recording {n} hears it from its start")
        mic.stop()

    # (g) a recording started while the speaker plays (glassd's app listening over its answer):
    # the clip fed before is not said again; one fed then is heard.
    speaker = Speaker(clock=clock)
    talker = Microphone(clock=clock, echo=speaker)
    talker.feed(path)
    speaker.start("pcm", RATE, 16, 50)
    speaker.write(b"\0" * 6400)
    talker.start(RATE, 16, aec=True)
    clock.t += 0.25
    check(not any(unpack(talker.read(1 << 20))), "(g) listening while the speaker plays: the old clip is not said again")
    talker.feed(path)
    clock.t += 0.1
    check(unpack(talker.read(1 << 20))[:3] == [1, 2, 3], "(g) a clip fed while the speaker plays is heard from its start")
    talker.stop()
    speaker.stop()

    # A Frame's microphone (continues=False): a restart plays the clip from its start again.
    frame_mic = Microphone(clock=clock, continues=False)
    frame_mic.start(RATE, 16)
    clock.t += 0.5
    frame_mic.feed(path)
    clock.t += 0.3
    heard = unpack(frame_mic.read(1 << 20))
    check(heard[int(0.5 * RATE) + 1] in (1, 2), "a Frame: fed while recording, heard from then on")
    frame_mic.stop()
    clock.t += 0.1
    frame_mic.start(RATE, 16)
    clock.t += 0.01
    check(unpack(frame_mic.read(1 << 20))[:2] == [1, 2], "a Frame: a restart plays the clip from its start")
    frame_mic.stop()

    # 8 kHz 8-bit recordings of a 16 kHz clip (a Frame's listening), across a restart too.
    mic.start(8000, 8)
    clock.t += 0.1
    mic.feed(path)
    clock.t += 0.1
    raw = mic.read(1 << 20)
    check(len(raw) == 1600, "8 kHz 8-bit: 0.2 s is 1600 bytes")
    mic.stop()
    clock.t += 0.05
    mic.start(8000, 16)
    clock.t += 0.01
    heard = unpack(mic.read(1 << 20))
    check(abs(heard[0] - (round(0.15 * RATE) + 1)) <= 2 and heard[1] - heard[0] == 2,
          f"8 kHz across a restart: the clip's every other sample, where it is ({heard[:2]})")
    mic.stop()
    while mic.read(4096):
        pass
    check(mic.read(10) is None, "stopped and drained: None")


def performance():
    """30 s at 16 kHz with the speaker playing the whole time, read as glassd's app reads."""
    clock = Clock()
    speaker = Speaker(clock=clock)
    mic = Microphone(clock=clock, echo=speaker)
    speaker.start("pcm", RATE, 16, 50)
    mic.start(RATE, 16, "lc3", 32000, 1000, aec=True)
    block = pcm(tone(0.01))
    started = time.process_time()
    got = 0
    for _ in range(3000):
        speaker.write(block)
        clock.t += 0.01
        while (data := mic.read(4096)):
            got += len(data)
    cost = time.process_time() - started
    print(f"30 s of LC3 recording with echo and a PCM speaker: {cost:.2f} s of CPU")
    check(got >= 29 * 4000 and cost < 10, "a 30 s recording with echo costs well under its real time")


class LuaHost:
    """What LuaVM asks of virtual_frame.Frame, for a Halo without Bluetooth."""

    def __init__(self):
        self.lines = []
        self.speaker = Speaker()
        self.speaker_stats = True
        self.charging = False

    def output(self, data):
        self.lines.append(data.decode())

    def firmware_version(self):
        return "0.8.7"

    def hardware(self):
        return "halo"

    def note(self, event):
        self.lines.append(repr(event))

    def __getattr__(self, name):       # the rest: nothing a chunk here reaches
        return lambda *args: None


def lua_api(directory):
    from vframe.lua_vm import LuaVM
    host = LuaHost()
    mic = Microphone()
    vm = LuaVM(host, type("F", (), {"root": directory, "close_all": lambda self: None})(), mic, None, None, Counter())
    vm._new_vm(True)

    def run(code):
        host.lines.clear()
        vm._run_chunk(code.encode())
        return "\n".join(host.lines)

    check(run("print(frame.microphone.status())") == "stopped", "Lua: status() 'stopped' before a start")
    check(run("frame.microphone.start{encoder='lc3', sample_rate=16000, bitrate=32000, duration=1000, aec=true}"
              " print(frame.microphone.status(), frame.microphone.aec(), frame.microphone.voice())")
          == "streaming\ttrue\tfalse", "Lua: start{aec=true}: streaming, aec() true")
    check(mic.aec and mic.coder is not None, "Lua: the recording has the echo canceller on, in LC3")
    check(run("print(frame.microphone.aec(false), frame.microphone.voice(true))") == "false\ttrue" and not mic.aec and mic.voice,
          "Lua: aec(false) and voice(true) while recording set them and return them")
    check(run("frame.microphone.stop() print(frame.microphone.status())") == "stopped", "Lua: status() 'stopped' after stop()")
    check(run("frame.microphone.start{sample_rate=8000, bit_depth=8, voice=true, gain=-3, channels=1}"
              " print(frame.microphone.voice(), frame.microphone.aec())") == "true\tfalse" and mic.gain == -3,
          "Lua: start{voice=true, gain=-3} (aec defaults to false)")
    for code, says in [("frame.microphone.start{aec='yes'}", "aec: boolean expected"),
                       ("frame.microphone.start{gain=1.5}", "gain: integer expected"),
                       ("frame.microphone.start{gain=20}", "gain must be -10..10"),
                       ("frame.microphone.start{aek=true}", "unknown microphone option: aek"),
                       ("frame.microphone.start{channels=2}", "channels: only 1"),
                       ("frame.microphone.aec(1)", "boolean expected")]:
        said = run(code)
        check(says in said, f"Lua: {code} raises ({said!r})")
    check(run("print(frame.microphone.status())") == "streaming", "Lua: a refused start leaves the recording as it was")


def main():
    t_start = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="echo-selfcheck.") as directory:
            speaker_timeline()
            echoes()
            clips(directory)
            lua_api(directory)
            performance()
    except Failed:
        pass
    except Exception as e:      # a crash is a failure too, said plainly
        RESULTS.append((f"crashed: {e!r}", False))
        print(f"FAIL crashed: {e!r}", flush=True)
        raise
    passed = sum(ok for _, ok in RESULTS)
    print(f"echo_selfcheck: {passed}/{len(RESULTS)} checks passed in {time.monotonic() - t_start:.1f} s")
    return 0 if RESULTS and passed == len(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
