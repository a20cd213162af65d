#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Makes the audio fixtures: raw signed 8-bit, 8 kHz, mono (.s8), as the Monocle streams them.
# Needs espeak-ng and sox (Debian: espeak-ng sox). Made with eSpeak NG 1.51 and SoX 14.4.2;
# another espeak-ng may say it slightly differently, so the tests read the layout below, not
# exact sample counts.
#
#   speech-clean.s8   1.0 s digital silence, the spoken question (trimmed, peak -3 dBFS), 1.5 s silence
#   speech-noisy.s8   the same plus white noise, 15 dB under the speech's RMS
#   silence.s8        2.0 s of digital silence
#   noise.s8          3.0 s of the same white noise alone
#
# Usage: Tests/AudioTests/Fixtures/make-fixtures.sh   (writes next to itself)
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

lead=1.0
tail=1.5
snr=15
raw=(-t raw -e signed-integer -b 8 -c 1 -r 8000)
# -D: no dither (the padding stays digital silence; nothing random); -R: repeatable noise.
sox() { command sox -D -R "$@"; }

espeak-ng -v en-us -s 165 -w "$tmp/tts.wav" "What's the weather in Paris tomorrow? Should I take an umbrella?"
# 8 kHz, espeak's own leading and trailing silence cut, normalised, then padded to the layout above.
sox "$tmp/tts.wav" -r 8000 -b 16 "$tmp/trimmed.wav" silence 1 0.02 1% reverse silence 1 0.02 1% reverse norm -3
sox "$tmp/trimmed.wav" "$tmp/speech.wav" pad "$lead" "$tail"
sox "$tmp/speech.wav" "${raw[@]}" speech-clean.s8

# Noise level from the speech's RMS (dB).
speech_rms=$(sox "$tmp/trimmed.wav" -n stats 2>&1 | awk '/^RMS lev dB/ {print $4}')
noise_db=$(awk -v s="$speech_rms" -v n="$snr" 'BEGIN {print s - n}')
length=$(soxi -D "$tmp/speech.wav")
sox -n -r 8000 -c 1 -b 16 "$tmp/noise.wav" synth "$length" whitenoise norm "$noise_db"
# norm set the noise's peak; bring its RMS to the target instead.
noise_rms=$(sox "$tmp/noise.wav" -n stats 2>&1 | awk '/^RMS lev dB/ {print $4}')
sox "$tmp/noise.wav" "$tmp/noise-level.wav" gain "$(awk -v t="$noise_db" -v r="$noise_rms" 'BEGIN {print t - r}')"
sox -m -v 1 "$tmp/speech.wav" -v 1 "$tmp/noise-level.wav" "$tmp/noisy.wav"
sox "$tmp/noisy.wav" "${raw[@]}" speech-noisy.s8
sox "$tmp/noise-level.wav" "${raw[@]}" noise.s8 trim 0 3.0

sox -n -r 8000 -c 1 "${raw[@]}" silence.s8 trim 0 2.0

echo "speech: $(soxi -D "$tmp/trimmed.wav") s at ${lead} s, RMS ${speech_rms} dBFS; noise RMS ${noise_db} dBFS" >&2
ls -l ./*.s8 >&2
