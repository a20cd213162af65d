#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Fake OpenAI-compatible chat and speech-to-text server for glassd's
integration tests and benchmark.

Usage: fake_openai.py [--port N] [--verbose]
       fake_openai.py --self-test

Binds 127.0.0.1 (port 0 = ephemeral), prints one line "PORT <n>" to stdout,
then serves until SIGTERM or SIGINT (exit status 0).  --self-test instead
checks the endpoints below against a server of its own and exits 0 or 1.

POST /v1/chat/completions
    The answer is always "echo: <question>", where the question is the text
    of the last user message.  Tags inside the question (see TAGS) select
    failure modes such as "[429once]" or "[stall]".  When that message's
    content is an array it must hold exactly one "text" part and at most one
    "image_url" part whose url is "data:image/jpeg;base64,..." decoding to a
    JPEG (FF D8 ... FF D9); otherwise 400.  The log entry then also has
    "image_sha256" (hex) and "image_bytes".  "stream_options" is checked
    against ChatCompletionStreamOptions (an object or null, only with
    "stream": true, boolean include_usage / include_obfuscation); with
    include_usage the stream ends with a usage chunk (choices: []) before
    [DONE], and the log entry has the "usage" it reported: prompt_tokens from
    the length of every message's text, completion_tokens from the answer's
    (approx_tokens).  "[nousage]" plays a server that ignores the option (no
    usage chunk), "[rejectoptions]" a strict one that answers 400 naming
    stream_options whenever the field is there.
    When "tools" offers a function named show_answer and the question says
    "[table]" (or "[list]"), the answer is instead a call of it with a small
    fixed table (list): streamed, the name in the first delta and the
    arguments JSON in 4 pieces; whole, as message.tool_calls.  The log entry
    then has "tool_call": "table" (or "list").  With any "tools" and
    "[notools]" in the question: 400 "tools are not supported" (param tools),
    a server without tool support.

POST /v1/audio/transcriptions, POST /v1/audio/translations
    multipart/form-data as in OpenAI's CreateTranscriptionRequest and
    CreateTranslationRequest: "model" and "file" required, no field outside
    the schema.  "file" must be a WAV: RIFF/WAVE, PCM, mono, 16000 Hz, 16 bit,
    the data chunk running to the end of the file, at least 0.1 s; otherwise
    400 naming what is wrong.  The answer is {"text": <transcript>}
    (translations: "translated: <transcript>"), or the bare text with
    response_format=text.  Tags in the transcript fail the request the way
    they fail a chat request ([stall] holds it, [slow] answers late, but
    [paced] paces only the chat answer, as [slow] does, not the transcription,
    [malformed] answers bad JSON, [midstream] cuts the body short); the
    "once" tags count each endpoint separately.  The log entry has "model", "fields" (the non-file fields),
    "duration_s", "wav_rate", "wav_channels", "wav_bits", "wav_high_band"
    (the share of the first 8 s's energy above about 4.5 kHz: near 0 for
    audio recorded at 8 kHz and resampled, a percent or more for speech
    recorded at 16 kHz), "file_name", "file_type" and "file_bytes".

POST /v1/audio/speech
    JSON as OpenAI's CreateSpeechRequest: "model", "input" (1-4096
    characters) and "voice" required, no field outside the schema,
    "response_format" wav or pcm (the others: 400, not made here), "speed"
    0.25-4.  The answer is a 440 Hz tone, SPEECH_MS_PER_CHAR ms per character
    of input (divided by speed), streamed (chunked) in pieces of
    SPEECH_PIECE_MS: pcm as OpenAI's (s16le mono 24 kHz, audio/pcm), wav as a
    streaming server writes it (the same samples after a 44-byte header whose
    RIFF and data sizes are 0xFFFFFFFF, audio/wav).  Tags in the input fail
    it as they fail a chat request ([401], [429once], [500once], [leakkey],
    [stall]...; [midstream] sends half the audio, then closes without the
    chunked body's end).  The log entry has "body", "audio_bytes" and, as the
    pieces go out, "t_pieces".

POST /_speech {"ms_per_char": 60, "delay_ms": 0, "missing": false,
               "hold": false}
    Sets how every following speech request is answered (each key
    optional; /_reset restores these defaults): ms of audio per character,
    a wait before the response starts, 404 as a server without the
    endpoint, and "hold": after the first piece the rest waits until
    POST /_speech_release (then every held and later one goes on).

POST /_transcript {"text": "...", "partial": "...", "partial_below_s": S}
    Sets the transcript of every following audio request (default
    DEFAULT_TRANSCRIPT); with "partial", a recording shorter than S seconds
    is answered that instead, as a question cut at a pause would be.

POST /_vision {"<image sha256 hex>": "answer", ...}
    From now on a chat request whose image has that SHA-256 is answered with
    that text instead of the echo (scene mode's hazard answers); /_reset
    forgets them.

GET /_requests lists the requests seen so far (a refused one has "rejected"
with the reason) and POST /_reset forgets them and restores the default
transcript, so tests can check what glassd actually sent. Each has
"t_arrival", and a streamed answer "t_pieces" (when each piece was written):
time.monotonic(), which Scripts/bench lines up with the virtual Monocle's.
"""

import argparse
import array
import base64
import binascii
import email.message
import hashlib
import http.client
import json
import math
import operator
import re
import select
import signal
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PIECE_LEN = 5          # normal streams send the answer in pieces of <= 5 chars
SLOW_PIECES = 6        # [slow] sends about this many pieces ...
SLOW_DELAY = 0.3       # ... this many seconds apart
STALL_SECONDS = 120.0  # longest a [stall] request is held open
DEFAULT_MODEL = "fake-model"
DEFAULT_TRANSCRIPT = "what is the tallest mountain"
MIN_AUDIO_SECONDS = 0.1  # OpenAI refuses shorter audio

# The multipart fields each audio endpoint's schema allows (both have
# additionalProperties: false); arrays are sent as "name[]".
TRANSCRIPTION_FIELDS = {
    "file", "model", "language", "languages[]", "keywords[]", "prompt",
    "response_format", "temperature", "include[]",
    "timestamp_granularities[]", "stream", "chunking_strategy",
    "known_speaker_names[]", "known_speaker_references[]",
}
TRANSLATION_FIELDS = {"file", "model", "prompt", "response_format",
                      "temperature"}
# Of the spec's response formats, the ones this fake can produce.
AUDIO_FORMATS = {"json", "text"}
# CreateSpeechRequest's fields (additionalProperties: false) and what this fake makes of them.
SPEECH_FIELDS = {"model", "input", "instructions", "voice", "response_format",
                 "speed", "stream_format"}
SPEECH_FORMATS = {"wav", "pcm"}
SPEECH_MAX_INPUT = 4096
SPEECH_RATE = 24000        # OpenAI's pcm: s16le mono 24 kHz
SPEECH_MS_PER_CHAR = 60    # default audio length per input character
SPEECH_PIECE_MS = 100      # streamed in pieces this long
SPEECH_DEFAULTS = {"ms_per_char": SPEECH_MS_PER_CHAR, "delay_ms": 0,
                   "missing": False, "hold": False}

# Checked in this order; the first tag found in the question wins.
TAGS = (
    "[401]", "[403]", "[429]", "[429once]", "[500]", "[500once]",
    "[midstream]", "[stall]", "[malformed]", "[slow]", "[paced]", "[crlf]", "[nodone]",
    "[leakkey]", "[nousage]", "[rejectoptions]",
)


# --------------------------------------------------------------------------
# Response bodies
# --------------------------------------------------------------------------

def error_body(message, etype, code=None, param=None):
    """The error object shape OpenAI uses for every failure."""
    return {"error": {"message": message, "type": etype,
                      "param": param, "code": code}}


AUTH_ERROR = error_body("Incorrect API key provided",
                        "invalid_request_error", code="invalid_api_key")
RATE_LIMIT_ERROR = error_body("Rate limit reached for requests",
                              "rate_limit_error")
SERVER_ERROR = error_body("The server had an error", "server_error")
MIDSTREAM_ERROR = error_body("model overloaded mid-stream", "server_error")


def to_json(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def approx_tokens(text):
    """A deterministic stand-in for a tokenizer: about 4 chars per token."""
    return max(1, (len(text) + 3) // 4)


def split_every(text, size):
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def split_into(text, count):
    """Split text into at most `count` near-equal pieces."""
    return split_every(text, max(1, -(-len(text) // count)))


def content_text(content):
    """Message content as plain text: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content
                       if isinstance(part, dict) and part.get("type") == "text"
                       and isinstance(part.get("text"), str))
    return ""


def last_user_message(messages):
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return message
    return None


def last_user_text(messages):
    message = last_user_message(messages)
    return content_text(message.get("content")) if message else ""


# The show_answer arguments "[table]" and "[list]" are answered with.
TOOL_ANSWERS = {
    "[table]": {"parts": [{"kind": "table", "columns": ["City", "Population"],
                           "rows": [["Oslo", "709000"], ["Bergen", "291000"]]}]},
    "[list]": {"parts": [{"kind": "list", "title": "Planets",
                          "items": ["Mercury", "Venus", "Earth"]}]},
    # More than one page on any glasses' display.
    "[longlist]": {"parts": [{"kind": "list", "title": "Months",
                              "items": ["January", "February", "March", "April", "May", "June", "July",
                                        "August", "September", "October", "November", "December"]}]},
}
TOOL_PIECES = 4  # a streamed call's arguments come in this many pieces


def offers_show_answer(body):
    tools = body.get("tools")
    return isinstance(tools, list) and any(
        isinstance(tool, dict) and isinstance(tool.get("function"), dict)
        and tool["function"].get("name") == "show_answer" for tool in tools)


def find_tool_answer(body, question):
    """The kind of show_answer call to answer with ("table", "list"), or None."""
    if not offers_show_answer(body):
        return None
    return next((tag[1:-1] for tag in TOOL_ANSWERS if tag in question), None)


def find_tag(question):
    return next((tag for tag in TAGS if tag in question), None)


STREAM_OPTIONS = {"include_usage", "include_obfuscation"}


def check_stream_options(body, question):
    """BadRequest unless "stream_options" is absent or as the spec's
    ChatCompletionStreamOptions allows; always when the question says
    "[rejectoptions]" (a server whose schema has no such field)."""
    if "stream_options" not in body:
        return
    if "[rejectoptions]" in question:
        raise BadRequest("Unrecognized request argument supplied: "
                         "stream_options", "stream_options")
    options = body["stream_options"]
    if options is None:
        return
    if not isinstance(options, dict):
        raise BadRequest("stream_options must be an object or null.",
                         "stream_options")
    if body.get("stream") is not True:
        raise BadRequest("The 'stream_options' parameter is only allowed "
                         "when 'stream' is enabled.", "stream_options")
    for key, value in options.items():
        if key not in STREAM_OPTIONS:
            raise BadRequest(f"Unrecognized stream_options field: {key}.",
                             "stream_options")
        if not isinstance(value, bool):
            raise BadRequest(f"stream_options.{key} must be a boolean.",
                             "stream_options")


class BadRequest(Exception):
    """A request refused with 400; the message says what is wrong."""

    def __init__(self, message, param=None):
        super().__init__(message)
        self.param = param


# --------------------------------------------------------------------------
# Request checks: photo parts, multipart bodies, WAV files
# --------------------------------------------------------------------------

JPEG_DATA_URI = "data:image/jpeg;base64,"


def check_user_parts(content):
    """The image bytes of a user message's parts array (None if it has no
    image); BadRequest unless it is one text part and at most one image."""
    if not content:
        raise BadRequest("User message content array must not be empty.",
                         "messages")
    texts, images = 0, []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            if not isinstance(part.get("text"), str):
                raise BadRequest("A text part needs a string 'text'.",
                                 "messages")
            texts += 1
        elif kind == "image_url":
            images.append(decode_jpeg_url(part.get("image_url")))
        else:
            raise BadRequest(f"Unsupported content part type: {kind!r}.",
                             "messages")
    if texts != 1:
        raise BadRequest(f"Expected exactly one text part, got {texts}.",
                         "messages")
    if len(images) > 1:
        raise BadRequest(f"Expected at most one image_url part, got "
                         f"{len(images)}.", "messages")
    return images[0] if images else None


def decode_jpeg_url(image_url):
    if not isinstance(image_url, dict) or \
            not isinstance(image_url.get("url"), str):
        raise BadRequest("image_url must be an object with a string 'url'.",
                         "messages")
    if image_url.get("detail", "auto") not in ("auto", "low", "high"):
        raise BadRequest("image_url.detail must be auto, low or high.",
                         "messages")
    url = image_url["url"]
    if not url.startswith(JPEG_DATA_URI):
        raise BadRequest(f"Image url must start with {JPEG_DATA_URI!r}, "
                         f"got {url[:40]!r}.", "messages")
    try:
        data = base64.b64decode(url[len(JPEG_DATA_URI):], validate=True)
    except (binascii.Error, ValueError) as error:
        raise BadRequest(f"Image data is not valid base64: {error}.",
                         "messages") from None
    if len(data) < 4 or data[:2] != b"\xff\xd8" or data[-2:] != b"\xff\xd9":
        raise BadRequest("Image data is not a JPEG (it must start with FF D8 "
                         "and end with FF D9).", "messages")
    return data


def parse_multipart(content_type, raw):
    """Strictly split a multipart/form-data body (RFC 7578, RFC 2046) into
    (name, filename or None, part content type or None, bytes) tuples."""
    header = email.message.Message()
    header["content-type"] = content_type or ""
    if header.get_content_type() != "multipart/form-data":
        raise BadRequest("Content-Type must be multipart/form-data, got "
                         f"{content_type!r}.")
    boundary = header.get_param("boundary")
    if not isinstance(boundary, str) or not boundary:
        raise BadRequest("multipart/form-data without a boundary.")
    delimiter = b"\r\n--" + boundary.encode("latin-1")
    if not raw.startswith(delimiter[2:] + b"\r\n"):
        raise BadRequest("The body does not start with the boundary line.")
    # Splitting on CRLF--boundary: first the empty preamble, last the close.
    pieces = (b"\r\n" + raw).split(delimiter)
    if pieces[-1] not in (b"--", b"--\r\n"):
        raise BadRequest("The body does not end with the closing boundary "
                         "(--boundary--).")
    parts = []
    for piece in pieces[1:-1]:
        if not piece.startswith(b"\r\n"):
            raise BadRequest("A boundary line is not followed by CRLF.")
        head, blank, content = piece[2:].partition(b"\r\n\r\n")
        if not blank or piece[2:].startswith(b"\r\n"):
            raise BadRequest("A part has no headers, or no blank line after "
                             "them.")
        headers = email.message.Message()
        for line in head.split(b"\r\n"):
            name, colon, value = line.decode("utf-8", "replace").partition(":")
            if not colon:
                raise BadRequest(f"Bad part header line {line[:60]!r}.")
            headers[name.strip()] = value.strip()
        if headers.get_content_disposition() != "form-data":
            raise BadRequest("A part lacks Content-Disposition: form-data.")
        name = headers.get_param("name", header="content-disposition")
        if not isinstance(name, str) or not name:
            raise BadRequest("A part has no name.")
        parts.append((name, headers.get_filename(),
                      headers.get("content-type"), content))
    return parts


def check_wav(data):
    """(rate, channels, bits, seconds) of a WAV this server accepts: PCM,
    mono, 16 kHz, 16 bit; BadRequest naming the first thing wrong."""
    def fail(why):
        raise BadRequest(f"Invalid WAV file: {why}.", "file")

    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        fail("no RIFF/WAVE header")
    riff = int.from_bytes(data[4:8], "little")
    if riff != len(data) - 8:
        fail(f"RIFF size is {riff} but {len(data) - 8} bytes follow it")
    fmt, offset = None, 12
    while offset + 8 <= len(data):
        chunk, size = data[offset:offset + 4], \
            int.from_bytes(data[offset + 4:offset + 8], "little")
        start = offset + 8
        if chunk == b"fmt ":
            if size < 16 or start + size > len(data):
                fail(f"fmt chunk of {size} bytes")
            fmt = struct.unpack_from("<HHIIHH", data, start)
        elif chunk == b"data":
            if fmt is None:
                fail("data chunk before the fmt chunk")
            tag, channels, rate, byte_rate, align, bits = fmt
            for what, got, want in (("format", tag, 1),
                                    ("channels", channels, 1),
                                    ("sample rate", rate, 16000),
                                    ("bits per sample", bits, 16),
                                    ("block align", align, 2),
                                    ("byte rate", byte_rate, 32000)):
                if got != want:
                    fail(f"{what} is {got}, expected {want}"
                         + (" (PCM)" if what == "format" else ""))
            if size != len(data) - start:
                fail(f"data chunk says {size} bytes but {len(data) - start} "
                     "follow it")
            if size % 2:
                fail(f"data chunk has an odd length ({size})")
            seconds = size / byte_rate
            if seconds < MIN_AUDIO_SECONDS:
                raise BadRequest(
                    f"Audio file is too short ({seconds:.3f} s). Minimum "
                    f"audio length is {MIN_AUDIO_SECONDS} seconds.", "file")
            return rate, channels, bits, seconds, start
        offset = start + size + (size & 1)  # chunks are padded to even
    fail("no data chunk" if fmt else "no fmt chunk")


def _high_pass(taps=21, cutoff=4500 / 16000):
    """A Blackman-windowed sinc high-pass (1 minus the low-pass), as floats."""
    middle = (taps - 1) / 2
    out = []
    for i in range(taps):
        n = i - middle
        low = 2 * cutoff * (math.sin(2 * math.pi * cutoff * n) / (2 * math.pi * cutoff * n) if n else 1.0)
        window = 0.42 - 0.5 * math.cos(2 * math.pi * i / (taps - 1)) + 0.08 * math.cos(4 * math.pi * i / (taps - 1))
        out.append((1.0 if n == 0 else 0.0) - low * window)
    return out


HIGH_PASS = _high_pass()


def high_band(pcm):
    """Of 16 kHz s16le samples (the first 8 s), the share of the energy above about 4.5 kHz: what
    tells a recording made at 16 kHz from one made at 8 kHz and resampled (nothing up there)."""
    samples = array.array("h", pcm[:2 * 16000 * 8])
    if sys.byteorder == "big":
        samples.byteswap()
    x = samples.tolist()
    taps = len(HIGH_PASS)
    total = high = 0.0
    for n in range(0, len(x) - taps + 1, 3):   # every 3rd output: the same share, a third of the work
        y = sum(map(operator.mul, HIGH_PASS, x[n:n + taps]))
        middle = x[n + taps // 2]
        high += y * y
        total += middle * middle
    return round(high / total, 6) if total else 0.0


def check_speech(raw):
    """A CreateSpeechRequest this fake answers, or BadRequest naming what
    is wrong."""
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise BadRequest("We could not parse the JSON body of your request.")
    for name in body:
        if name not in SPEECH_FIELDS:
            raise BadRequest(
                f"Unrecognized request argument supplied: {name}", name)
    for name in ("model", "input", "voice"):
        if not isinstance(body.get(name), str) or not body[name]:
            raise BadRequest(f"Missing required parameter: '{name}'.", name)
    if len(body["input"]) > SPEECH_MAX_INPUT:
        raise BadRequest(f"input is longer than {SPEECH_MAX_INPUT} "
                         "characters.", "input")
    if body.get("response_format", "wav") not in SPEECH_FORMATS:
        raise BadRequest(f"response_format {body['response_format']!r} is "
                         "not made here (use wav or pcm).", "response_format")
    speed = body.get("speed", 1)
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) \
            or not 0.25 <= speed <= 4:
        raise BadRequest("speed must be a number from 0.25 to 4.", "speed")
    return body


def tone(seconds, hz=440):
    """s16le mono at SPEECH_RATE: a sine at a third of full scale. A whole number of hertz repeats
    every second: one second is made once and repeated (a long answer's audio is ready at once)."""
    count = int(seconds * SPEECH_RATE)
    second = _TONE_SECONDS.get(hz)
    if second is None:
        second = _TONE_SECONDS[hz] = b"".join(struct.pack("<h", int(10000 * math.sin(
            2 * math.pi * hz * n / SPEECH_RATE))) for n in range(SPEECH_RATE))
    whole, rest = divmod(count, SPEECH_RATE)
    return second * whole + second[:2 * rest]


_TONE_SECONDS = {}


def streamed_wav_header():
    """A WAV header as streaming servers write it: sizes not yet known."""
    fmt = struct.pack("<HHIIHH", 1, 1, SPEECH_RATE, SPEECH_RATE * 2, 2, 16)
    return (b"RIFF" + struct.pack("<I", 0xFFFFFFFF) + b"WAVEfmt "
            + struct.pack("<I", len(fmt)) + fmt + b"data"
            + struct.pack("<I", 0xFFFFFFFF))


class Reply:
    """The successful answer to one chat request, in either wire format."""

    def __init__(self, body, question):
        model = body.get("model")
        self.model = model if isinstance(model, str) else DEFAULT_MODEL
        self.created = int(time.time())
        self.answer = "echo: " + question
        prompt = " ".join(content_text(m.get("content"))
                          for m in body.get("messages") or []
                          if isinstance(m, dict))
        prompt_tokens = approx_tokens(prompt)
        completion_tokens = approx_tokens(self.answer)
        self.usage = {"prompt_tokens": prompt_tokens,
                      "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}
        # Streams report usage only when asked, as OpenAI's do.
        options = body.get("stream_options")
        self.include_usage = (isinstance(options, dict)
                              and options.get("include_usage") is True
                              and "[nousage]" not in question)

    def _envelope(self, obj_type):
        return {"id": "chatcmpl-fake", "object": obj_type,
                "created": self.created, "model": self.model}

    def set_tool_call(self, arguments):
        """Answer with a show_answer call instead of text."""
        self.arguments = to_json(arguments)
        self.answer = ""
        completion_tokens = approx_tokens(self.arguments)
        self.usage["completion_tokens"] = completion_tokens
        self.usage["total_tokens"] = self.usage["prompt_tokens"] + completion_tokens

    def tool_call(self, arguments, first):
        call = {"index": 0, "function": {"arguments": arguments}}
        if first:
            call.update(id="call_fake", type="function")
            call["function"]["name"] = "show_answer"
        return call

    def completion(self):
        body = self._envelope("chat.completion")
        message = {"role": "assistant", "content": self.answer}
        if getattr(self, "arguments", None) is not None:
            message = {"role": "assistant", "content": None,
                       "tool_calls": [self.tool_call(self.arguments, True)]}
            del message["tool_calls"][0]["index"]
        body["choices"] = [{"index": 0, "message": message,
                            "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}]
        body["usage"] = self.usage
        return body

    def chunk(self, delta, finish_reason=None):
        body = self._envelope("chat.completion.chunk")
        body["choices"] = [{"index": 0, "delta": delta,
                            "finish_reason": finish_reason}]
        return body

    def usage_chunk(self):
        # Sent with include_usage: no choices at all, which clients must accept.
        body = self._envelope("chat.completion.chunk")
        body["choices"] = []
        body["usage"] = self.usage
        return body


# --------------------------------------------------------------------------
# Shared state
# --------------------------------------------------------------------------

class State:
    """Everything handler threads share; one lock guards all of it."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []     # recorded requests, arrival order
        self.seen = {}         # question -> times seen, for the *once tags
        self.transcript = DEFAULT_TRANSCRIPT  # what audio requests answer
        self.partial = None  # (text, below this many seconds) or None
        self.vision = {}       # image sha256 -> answer (POST /_vision)
        self.stalls = set()    # wake-up Events of requests held by [stall]
        self.stopping = threading.Event()
        self.speech = dict(SPEECH_DEFAULTS)  # POST /_speech
        self.speech_release = threading.Event()

    def record(self, entry):
        with self.lock:
            self.requests.append(entry)

    def snapshot(self):
        with self.lock:
            # A deep copy: a streaming request still adds its piece times.
            return json.loads(json.dumps(self.requests))

    def stamp(self, entry, key):
        """Appends time.monotonic() to entry[key] (for Scripts/bench, which lines these up with
        the virtual Monocle's record: the same clock in every process)."""
        with self.lock:
            entry.setdefault(key, []).append(time.monotonic())

    def reset(self):
        with self.lock:
            self.requests.clear()
            self.seen.clear()
            self.vision = {}
            self.transcript = DEFAULT_TRANSCRIPT
            self.partial = None
            self.speech = dict(SPEECH_DEFAULTS)
            self.speech_release.set()  # nothing held stays held

    def set_transcript(self, text, partial=None):
        with self.lock:
            self.transcript = text
            self.partial = partial

    def set_vision(self, answers):
        with self.lock:
            self.vision.update(answers)

    def vision_answer(self, sha256):
        with self.lock:
            return self.vision.get(sha256)

    def set_speech(self, settings):
        with self.lock:
            self.speech.update(settings)
            if settings.get("hold"):
                self.speech_release.clear()

    def get_speech(self):
        with self.lock:
            return dict(self.speech)

    def get_transcript(self, seconds=None):
        with self.lock:
            if self.partial and seconds is not None and seconds < self.partial[1]:
                return self.partial[0]
            return self.transcript

    def first_time(self, question):
        """True only for the first request carrying this exact question."""
        with self.lock:
            count = self.seen.get(question, 0)
            self.seen[question] = count + 1
            return count == 0

    def add_stall(self, wake):
        with self.lock:
            self.stalls.add(wake)
            if self.stopping.is_set():
                wake.set()

    def remove_stall(self, wake):
        with self.lock:
            self.stalls.discard(wake)

    def stop(self):
        """Wake every waiting handler so shutdown is not held up by them."""
        with self.lock:
            self.stopping.set()
            self.speech_release.set()
            for wake in self.stalls:
                wake.set()


def set_when_readable(sock, wake):
    """Set `wake` once the peer closes (or sends); used to end a [stall]."""
    try:
        select.select([sock], [], [], STALL_SECONDS)
    except (OSError, ValueError):
        pass  # socket already closed by the handler
    wake.set()


# --------------------------------------------------------------------------
# Server-sent events
# --------------------------------------------------------------------------

class SSEWriter:
    """Writes one SSE body, HTTP-chunked (keep-alive) or raw until close."""

    def __init__(self, wfile, chunked, eol):
        self.wfile = wfile
        self.chunked = chunked
        self.eol = eol

    def raw(self, text):
        data = text.encode("utf-8")
        if self.chunked:
            data = b"%x\r\n%s\r\n" % (len(data), data)
        self.wfile.write(data)
        self.wfile.flush()  # each event must reach the client right away

    def comment(self, text):
        self.raw(f": {text}{self.eol}{self.eol}")

    def data(self, payload):
        text = payload if isinstance(payload, str) else to_json(payload)
        self.raw(f"data: {text}{self.eol}{self.eol}")

    def end(self):
        if self.chunked:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()


# --------------------------------------------------------------------------
# HTTP handling
# --------------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-openai/1.0"
    # Real servers send small SSE writes at once; with Nagle on, a kept-alive connection
    # waits out the client's delayed ACK (~40 ms) between writes.
    disable_nagle_algorithm = True

    @property
    def state(self):
        return self.server.state

    def log_message(self, format, *args):  # noqa: A002 (base class name)
        # Per-request logging would flood test output; only on --verbose.
        if self.server.verbose:
            super().log_message(format, *args)

    def do_GET(self):
        self._dispatch()

    def do_POST(self):
        self._dispatch()

    def do_PUT(self):
        self._dispatch()

    def do_DELETE(self):
        self._dispatch()

    def do_PATCH(self):
        self._dispatch()

    def _dispatch(self):
        self.arrived = time.monotonic()
        self.entry = {}
        try:
            raw = self._read_body()
            if raw is None:
                return
            self._route(raw)
        except ConnectionError:
            # The client went away mid-response; nothing left to do.
            self.close_connection = True

    def _route(self, raw):
        path = self.path.split("?", 1)[0]
        method = self.command
        if method == "POST" and path.endswith("/chat/completions"):
            self._chat(raw)
        elif method == "POST" and path.endswith("/audio/transcriptions"):
            self._audio(raw, translate=False)
        elif method == "POST" and path.endswith("/audio/translations"):
            self._audio(raw, translate=True)
        elif method == "POST" and path.endswith("/audio/speech"):
            self._speech(raw)
        elif method == "POST" and path == "/_speech":
            self._set_speech(raw)
        elif method == "POST" and path == "/_speech_release":
            self.state.speech_release.set()
            self.send_response(204)
            self.end_headers()
        elif method == "POST" and path == "/_transcript":
            self._set_transcript(raw)
        elif method == "POST" and path == "/_vision":
            self._set_vision(raw)
        elif method == "GET" and path == "/_requests":
            self._send_json(200, self.state.snapshot())
        elif method == "POST" and path == "/_reset":
            self.state.reset()
            self.send_response(204)
            self.end_headers()
        elif method == "GET" and path.endswith("/models"):
            self._send_json(200, {"object": "list", "data": [
                {"id": DEFAULT_MODEL, "object": "model",
                 "created": 0, "owned_by": "fake-openai"}]})
        else:
            self._send_json(404, error_body(
                f"Unknown request URL: {method} {path}.",
                "invalid_request_error", code="unknown_url"))

    # ---- plumbing ---------------------------------------------------------

    def _read_body(self):
        """Read the whole request body so keep-alive stays in sync.

        Returns None after answering 400 itself."""
        try:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                return self._read_chunked()
            length = int(self.headers.get("Content-Length") or 0)
            if length < 0:
                raise ValueError(length)
            return self.rfile.read(length)
        except ValueError:
            self._send_json(400, error_body("Malformed request body framing",
                                            "invalid_request_error"),
                            [("Connection", "close")])
            self.close_connection = True  # cannot find the next request
            return None

    def _read_chunked(self):
        parts = []
        while True:
            size = int(self.rfile.readline().split(b";", 1)[0].strip(), 16)
            if size == 0:
                break
            parts.append(self.rfile.read(size))
            self.rfile.readline()  # CRLF after each chunk
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # skip trailers
        return b"".join(parts)

    def _send_json(self, status, obj, headers=()):
        data = to_json(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _send_bytes(self, status, ctype, data, length=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length",
                         str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)

    def send_error(self, code, message=None, explain=None):
        # The base class answers malformed requests with an HTML page; keep
        # every error OpenAI-shaped JSON so clients parse it the same way.
        self.close_connection = True
        if message is None:
            message = self.responses.get(code, ("Error",))[0]
        try:
            self._send_json(code, error_body(message, "invalid_request_error"),
                            [("Connection", "close")])
        except ConnectionError:
            pass

    def _start_sse(self, chunked, eol="\n"):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            # The stream ends by closing, so the body is delimited by EOF.
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        return SSEWriter(self.wfile, chunked, eol)

    # ---- chat completions -------------------------------------------------

    def _chat(self, raw):
        try:
            body = json.loads(raw)
        except ValueError:  # includes bad UTF-8
            body = None
        if not isinstance(body, dict):
            self._send_json(400, error_body(
                "We could not parse the JSON body of your request.",
                "invalid_request_error"))
            return
        entry = {
            "path": self.path,
            "headers": self._lower_headers(),
            "body": body,
            "t_arrival": self.arrived,
        }
        self.entry = entry
        message = last_user_message(body.get("messages"))
        if message and isinstance(message.get("content"), list):
            try:
                image = check_user_parts(message["content"])
            except BadRequest as error:
                self._refuse(entry, error)
                return
            if image is not None:
                entry["image_sha256"] = hashlib.sha256(image).hexdigest()
                entry["image_bytes"] = len(image)
        try:
            check_stream_options(body, last_user_text(body.get("messages")))
            if "tools" in body and "[notools]" in last_user_text(body.get("messages")):
                raise BadRequest("tools are not supported", "tools")
        except BadRequest as error:
            self._refuse(entry, error)
            return
        self.state.record(entry)
        question = last_user_text(body.get("messages"))
        tag = find_tag(question)
        if self._send_tagged_error(tag, question):
            return
        reply = Reply(body, question)
        vision = self.state.vision_answer(entry.get("image_sha256"))
        if vision is not None:
            reply.answer = vision
        tool = find_tool_answer(body, question) if tag in (None, "[nousage]") else None
        if tool is not None:
            entry["tool_call"] = tool
            reply.set_tool_call(TOOL_ANSWERS[f"[{tool}]"])
            if body.get("stream") is True:
                self._stream_tool_call(reply)
            else:
                self._send_json(200, reply.completion())
        elif body.get("stream") is True:
            self._stream(tag, reply)
        elif tag == "[stall]":
            self._stall()  # no headers at all: a server that never answers
        else:
            # The other tags only change how a stream is framed.
            self._send_json(200, reply.completion())

    def _refuse(self, entry, error):
        """Log a request as refused and answer 400 saying why."""
        entry["rejected"] = str(error)
        self.state.record(entry)
        self._send_json(400, error_body(str(error), "invalid_request_error",
                                        param=error.param))

    # ---- audio transcriptions and translations ----------------------------

    def _audio(self, raw, translate):
        entry = {"path": self.path, "headers": self._lower_headers(), "t_arrival": self.arrived}
        try:
            self._check_audio(raw, translate, entry)
        except BadRequest as error:
            self._refuse(entry, error)
            return
        self.state.record(entry)
        text = self.state.get_transcript(entry.get("duration_s"))
        tag = find_tag(text)
        # The *once tags count each endpoint apart from chat's questions.
        kind = "translations" if translate else "transcriptions"
        if self._send_tagged_error(tag, f"{kind}: {text}"):
            return
        answer = ("translated: " + text) if translate else text
        if tag == "[stall]":
            self._stall()
        elif tag == "[malformed]":
            self._send_bytes(200, "application/json", b"{this is not json")
        elif tag == "[midstream]":
            # Promise more than is sent, then close: a body cut short.
            data = to_json({"text": answer}).encode("utf-8")
            self._send_bytes(200, "application/json", data[:len(data) // 2],
                             length=len(data))
            self.close_connection = True
        else:
            if tag == "[slow]" and self.state.stopping.wait(
                    SLOW_PIECES * SLOW_DELAY):
                self.close_connection = True
                return
            if entry["fields"].get("response_format", "json") == "text":
                self._send_bytes(200, "text/plain; charset=utf-8",
                                 answer.encode("utf-8"))
            else:
                self._send_json(200, {"text": answer})

    def _check_audio(self, raw, translate, entry):
        """Fill `entry` from the upload; BadRequest if the spec or this
        server would refuse it."""
        allowed = TRANSLATION_FIELDS if translate else TRANSCRIPTION_FIELDS
        fields, upload = {}, None
        for name, filename, ctype, content in parse_multipart(
                self.headers.get("Content-Type"), raw):
            if name not in allowed:
                raise BadRequest(
                    f"Unrecognized request argument supplied: {name}", name)
            if name in fields or (name == "file" and upload):
                raise BadRequest(f"Field {name!r} is given twice.", name)
            if name == "file":
                upload = (filename, ctype, content)
                continue
            try:
                fields[name] = content.decode("utf-8")
            except UnicodeDecodeError:
                raise BadRequest(f"Field {name!r} is not UTF-8.",
                                 name) from None
        entry["fields"] = fields
        entry["model"] = fields.get("model")
        if not fields.get("model"):
            raise BadRequest("Missing required parameter: 'model'.", "model")
        if upload is None:
            raise BadRequest("Missing required parameter: 'file'.", "file")
        filename, ctype, content = upload
        entry.update(file_name=filename, file_type=ctype,
                     file_bytes=len(content))
        if not filename or not filename.lower().endswith(".wav"):
            raise BadRequest("'file' must be an upload whose file name ends "
                             f"in .wav, got {filename!r}.", "file")
        fmt = fields.get("response_format", "json")
        if fmt not in AUDIO_FORMATS:
            raise BadRequest(f"response_format {fmt!r} is not supported here "
                             f"(use one of {sorted(AUDIO_FORMATS)}).",
                             "response_format")
        language = fields.get("language")
        if language is not None and not re.fullmatch("[a-z]{2}", language):
            raise BadRequest("language must be an ISO-639-1 code such as "
                             f"'en', got {language!r}.", "language")
        rate, channels, bits, seconds, start = check_wav(content)
        entry.update(duration_s=seconds, wav_rate=rate,
                     wav_channels=channels, wav_bits=bits,
                     wav_high_band=high_band(content[start:]))

    # ---- text to speech ---------------------------------------------------

    def _speech(self, raw):
        entry = {"path": self.path, "headers": self._lower_headers(),
                 "t_arrival": self.arrived}
        self.entry = entry
        settings = self.state.get_speech()
        if settings["missing"]:
            self.state.record(dict(entry, rejected="no speech endpoint"))
            self._send_json(404, error_body(
                f"Unknown request URL: POST {self.path}.",
                "invalid_request_error", code="unknown_url"))
            return
        try:
            body = check_speech(raw)
        except BadRequest as error:
            self._refuse(entry, error)
            return
        entry["body"] = body
        self.state.record(entry)
        text = body["input"]
        tag = find_tag(text)
        if self._send_tagged_error(tag, f"speech: {text}"):
            return
        if tag == "[stall]":
            self._stall()
            return
        if settings["delay_ms"] and self.state.stopping.wait(
                settings["delay_ms"] / 1000):
            self.close_connection = True
            return
        audio = tone(len(text) * settings["ms_per_char"]
                     / body.get("speed", 1) / 1000)
        wav = body.get("response_format", "wav") == "wav"
        if wav:
            audio = streamed_wav_header() + audio
        self.send_response(200)
        self.send_header("Content-Type", "audio/wav" if wav else "audio/pcm")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        piece = SPEECH_RATE * 2 * SPEECH_PIECE_MS // 1000
        pieces = [audio[i:i + piece] for i in range(0, len(audio), piece)]
        if tag == "[midstream]":
            pieces = pieces[:max(1, len(pieces) // 2)]
        with self.state.lock:
            entry["audio_bytes"] = len(audio)
        for i, data in enumerate(pieces):
            if i == 1 and settings["hold"]:
                self.state.speech_release.wait(STALL_SECONDS)
                if self.state.stopping.is_set():
                    self.close_connection = True
                    return
            # Stamped before it goes: a client that read the piece finds it counted.
            self.state.stamp(entry, "t_pieces")
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        if tag == "[midstream]":
            self.close_connection = True  # no closing chunk: a body cut short
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _set_speech(self, raw):
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict) or any(
                key not in SPEECH_DEFAULTS
                or type(value) is not type(SPEECH_DEFAULTS[key])
                for key, value in body.items()):
            self._send_json(400, error_body(
                "Expected a JSON body with any of " + to_json(SPEECH_DEFAULTS)
                + ".", "invalid_request_error"))
            return
        self.state.set_speech(body)
        self.send_response(204)
        self.end_headers()

    def _set_vision(self, raw):
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict) or not all(isinstance(v, str) for v in body.values()):
            self._send_json(400, error_body(
                'Expected a JSON body {"<sha256>": "answer", ...}.', "invalid_request_error"))
            return
        self.state.set_vision(body)
        self.send_response(204)
        self.end_headers()

    def _set_transcript(self, raw):
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            self._send_json(400, error_body(
                'Expected a JSON body {"text": "..."}.',
                "invalid_request_error"))
            return
        partial = None
        if isinstance(body.get("partial"), str) and isinstance(body.get("partial_below_s"), (int, float)):
            partial = (body["partial"], float(body["partial_below_s"]))
        self.state.set_transcript(body["text"], partial)
        self.send_response(204)
        self.end_headers()

    def _lower_headers(self):
        headers = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        return headers

    def _send_tagged_error(self, tag, question):
        """Answer with an HTTP error if the tag asks for one; True if so."""
        if tag in ("[401]", "[403]"):
            self._send_json(int(tag[1:4]), AUTH_ERROR)
        elif tag == "[429]" or (tag == "[429once]"
                                and self.state.first_time(question)):
            self._send_json(429, RATE_LIMIT_ERROR, [("Retry-After", "1")])
        elif tag == "[500]" or (tag == "[500once]"
                                and self.state.first_time(question)):
            self._send_json(500, SERVER_ERROR)
        elif tag == "[leakkey]":
            # A careless server that quotes the credentials back: the client must not pass them on.
            auth = self.headers.get("Authorization", "")
            self._send_json(400, {"error": {"message": f"bad request with header {auth}", "type": "invalid_request_error",
                                            "param": None, "code": None}})
        else:
            return False
        return True

    def _stream(self, tag, reply):
        if tag == "[midstream]":
            self._stream_midstream(reply)
        elif tag == "[stall]":
            out = self._start_sse(chunked=False)
            out.data(reply.chunk({"content": "thinking"}))
            self._stall()
        elif tag == "[malformed]":
            out = self._start_sse(chunked=True)
            out.raw("data: {this is not json\n\n")
            out.data("[DONE]")
            out.end()
        elif tag in ("[slow]", "[paced]"):
            self._stream_answer(reply, pieces=split_into(reply.answer,
                                                         SLOW_PIECES),
                                delay=SLOW_DELAY)
        elif tag == "[crlf]":
            self._stream_answer(reply, eol="\r\n")
        elif tag == "[nodone]":
            self._stream_answer(reply, done=False)
        else:
            self._stream_answer(reply)

    def _stream_answer(self, reply, pieces=None, delay=0.0, eol="\n",
                       done=True):
        """A well-formed stream; without [DONE] it just closes at the end."""
        out = self._start_sse(chunked=done, eol=eol)
        out.comment("ping")
        out.data(reply.chunk({"role": "assistant", "content": ""}))
        for i, piece in enumerate(pieces or split_every(reply.answer,
                                                        PIECE_LEN)):
            # Waiting on the stop Event (not sleep) lets SIGTERM cut it short.
            if delay and i and self.state.stopping.wait(delay):
                self.close_connection = True
                return
            out.data(reply.chunk({"content": piece}))
            self.state.stamp(self.entry, "t_pieces")
        out.data(reply.chunk({}, "stop"))
        if reply.include_usage:
            self.entry["usage"] = reply.usage
            out.data(reply.usage_chunk())
        if done:
            out.data("[DONE]")
            out.end()

    def _stream_tool_call(self, reply):
        """A show_answer call: the name first, the arguments in pieces."""
        out = self._start_sse(chunked=True)
        out.data(reply.chunk({"role": "assistant", "content": None,
                              "tool_calls": [reply.tool_call("", True)]}))
        for piece in split_into(reply.arguments, TOOL_PIECES):
            out.data(reply.chunk({"tool_calls": [reply.tool_call(piece, False)]}))
            self.state.stamp(self.entry, "t_pieces")
        out.data(reply.chunk({}, "tool_calls"))
        if reply.include_usage:
            self.entry["usage"] = reply.usage
            out.data(reply.usage_chunk())
        out.data("[DONE]")
        out.end()

    def _stream_midstream(self, reply):
        out = self._start_sse(chunked=False)
        out.data(reply.chunk({"role": "assistant", "content": ""}))
        out.data(reply.chunk({"content": "partial "}))
        out.data(reply.chunk({"content": "answer "}))
        out.data(MIDSTREAM_ERROR)  # then close, no [DONE]

    def _stall(self):
        """Hold the connection without sending more, until the client
        disconnects, the server stops, or STALL_SECONDS pass."""
        self.close_connection = True
        wake = threading.Event()
        self.state.add_stall(wake)
        watcher = threading.Thread(target=set_when_readable,
                                   args=(self.connection, wake), daemon=True)
        watcher.start()
        try:
            wake.wait(STALL_SECONDS)
        finally:
            self.state.remove_stall(wake)
            # Shutting the socket down makes it readable, which ends the
            # watcher's select() instead of leaving it behind.
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            watcher.join(1.0)


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # SIGTERM must not wait for open requests
    request_queue_size = 128  # benchmarks open many connections at once

    def __init__(self, address, verbose=False):
        self.verbose = verbose
        self.state = State()
        super().__init__(address, Handler)

    def handle_error(self, request, client_address):
        # Clients dropping connections is normal in these tests; stay quiet.
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Fake OpenAI-compatible chat server for tests.")
    parser.add_argument("--port", type=int, default=0,
                        help="port on 127.0.0.1 (default 0 = ephemeral)")
    parser.add_argument("--verbose", action="store_true",
                        help="log each request to stderr")
    parser.add_argument("--self-test", action="store_true",
                        help="check the audio and photo endpoints, then exit")
    return parser.parse_args(argv)


# --------------------------------------------------------------------------
# Self-test (--self-test): the request checks, against a server of its own
# --------------------------------------------------------------------------

def make_wav(seconds=0.5, rate=16000, channels=1, bits=16, tag=1):
    data = bytes(int(seconds * rate) * channels * bits // 8)
    align = channels * bits // 8
    fmt = struct.pack("<HHIIHH", tag, channels, rate, rate * align, align,
                      bits)
    return (b"RIFF" + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(data))
            + b"WAVEfmt " + struct.pack("<I", len(fmt)) + fmt
            + b"data" + struct.pack("<I", len(data)) + data)


def make_multipart(fields, wav, boundary="self-test-boundary"):
    """(body, content type) of an upload as curl -F would send it."""
    out = b""
    for name, value in fields.items():
        out += (f'--{boundary}\r\nContent-Disposition: form-data; '
                f'name="{name}"\r\n\r\n{value}\r\n').encode()
    if wav is not None:
        out += (f'--{boundary}\r\nContent-Disposition: form-data; '
                f'name="file"; filename="audio.wav"\r\n'
                f'Content-Type: audio/wav\r\n\r\n').encode() + wav + b"\r\n"
    return (out + f"--{boundary}--\r\n".encode(),
            f"multipart/form-data; boundary={boundary}")


def self_test():
    server = FakeServer(("127.0.0.1", 0))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    failures = []

    def call(path, body=b"", ctype="application/json"):
        conn = http.client.HTTPConnection("127.0.0.1",
                                          server.server_address[1], timeout=5)
        conn.request("POST", path, body, {"Content-Type": ctype})
        response = conn.getresponse()
        data = response.read()
        conn.close()
        return response.status, data

    def expect(what, status, path, body=b"", ctype="application/json",
               text=None, error=None):
        got, data = call(path, body, ctype)
        if got == status and text is not None:
            ok = json.loads(data) == {"text": text}
        elif got == status and error is not None:
            ok = error in json.loads(data)["error"]["message"]
        else:
            ok = got == status
        if not ok:
            failures.append(f"{what}: HTTP {got} {data[:200]!r}")

    audio = "/v1/audio/transcriptions"
    ok_fields = {"model": "whisper-1", "response_format": "json"}
    upload = make_multipart(ok_fields, make_wav())
    expect("transcription", 200, audio, *upload, text=DEFAULT_TRANSCRIPT)
    call("/_transcript", b'{"text": "hello there"}')
    expect("translation", 200, "/v1/audio/translations", *upload,
           text="translated: hello there")
    bad = [
        ("no model", {"response_format": "json"}, make_wav(), "'model'"),
        ("no file", ok_fields, None, "'file'"),
        ("stereo", ok_fields, make_wav(channels=2), "channels is 2"),
        ("8 kHz", ok_fields, make_wav(rate=8000), "sample rate is 8000"),
        ("8 bit", ok_fields, make_wav(bits=8), "bits per sample is 8"),
        ("float", ok_fields, make_wav(tag=3), "format is 3"),
        ("short", ok_fields, make_wav(seconds=0.05), "too short"),
        ("truncated", ok_fields, make_wav()[:-2], "RIFF size"),
        ("not wav", ok_fields, b"ID3" + bytes(100), "RIFF/WAVE"),
        ("extra field", dict(ok_fields, bogus="1"), make_wav(), "bogus"),
    ]
    for what, fields, wav, error in bad:
        expect(what, 400, audio, *make_multipart(fields, wav), error=error)
    body, ctype = upload
    expect("no closing boundary", 400, audio, body[:-4] + b"\r\n", ctype,
           error="closing boundary")
    expect("language on translations", 400, "/v1/audio/translations",
           *make_multipart(dict(ok_fields, language="en"), make_wav()),
           error="language")
    call("/_transcript", b'{"text": "[401] hi"}')
    expect("tagged transcript", 401, audio, *upload)

    # The share above 4.5 kHz: a 6 kHz tone is nearly all of it, a 1 kHz one none of it.
    def tone(hz):
        return struct.pack("<1600h", *(round(8000 * math.sin(2 * math.pi * hz * n / 16000)) for n in range(1600)))
    high, low = high_band(tone(6000)), high_band(tone(1000))
    if not (high > 0.9 and low < 0.001 and high_band(b"") == 0.0):
        failures.append(f"high band: 6 kHz {high}, 1 kHz {low}")

    jpeg = b"\xff\xd8" + bytes(50) + b"\xff\xd9"

    def chat(*parts):
        return to_json({"model": "m", "messages": [
            {"role": "user", "content": list(parts)}]}).encode()

    text = {"type": "text", "text": "what is this"}

    def image(data, prefix=JPEG_DATA_URI):
        return {"type": "image_url", "image_url": {
            "url": prefix + base64.b64encode(data).decode()}}

    expect("photo", 200, "/v1/chat/completions", chat(text, image(jpeg)))
    logged = server.state.snapshot()[-1]
    if logged.get("image_sha256") != hashlib.sha256(jpeg).hexdigest() \
            or logged.get("image_bytes") != len(jpeg):
        failures.append(f"photo log entry: {logged.get('image_sha256')}")
    for what, body, error in [
        ("two texts", chat(text, text, image(jpeg)), "exactly one text"),
        ("no text", chat(image(jpeg)), "exactly one text"),
        ("two images", chat(text, image(jpeg), image(jpeg)), "at most one"),
        ("png", chat(text, image(b"\x89PNG" + bytes(9))), "not a JPEG"),
        ("png uri", chat(text, image(jpeg, "data:image/png;base64,")),
         "must start with"),
        ("bad base64", chat(text, {"type": "image_url", "image_url": {
            "url": JPEG_DATA_URI + "/9j/4A="}}), "base64"),
    ]:
        expect(what, 400, "/v1/chat/completions", body, error=error)

    def streamed(question, **extra):
        return to_json(dict({"model": "m", "stream": True, "messages": [
            {"role": "user", "content": question}]}, **extra)).encode()

    usage = {"stream_options": {"include_usage": True}}
    for question, sent in (("hi", True), ("[nousage] hi", False)):
        status, data = call("/v1/chat/completions", streamed(question, **usage))
        events = [line[6:] for line in data.decode().splitlines()
                  if line.startswith("data: ")]
        reported = json.loads(events[-2]).get("usage") if len(events) > 1 else None
        if status != 200 or events[-1:] != ["[DONE]"] or (reported is not None) != sent:
            failures.append(f"usage chunk for {question!r}: {data[-200:]!r}")
    for what, body, error in [
        ("options without stream", to_json({"model": "m", "messages": [], **usage}).encode(), "only allowed"),
        ("options not bool", streamed("hi", stream_options={"include_usage": 1}), "boolean"),
        ("strict server", streamed("[rejectoptions] hi", **usage), "stream_options"),
    ]:
        expect(what, 400, "/v1/chat/completions", body, error=error)
    expect("strict server, no options", 200, "/v1/chat/completions", streamed("[rejectoptions] hi"))

    tools = {"tools": [{"type": "function", "function": {"name": "show_answer", "parameters": {}}}],
             "tool_choice": "auto"}
    expect("no tool support", 400, "/v1/chat/completions", streamed("[notools] hi", **tools), error="tools")
    expect("no tools, no refusal", 200, "/v1/chat/completions", streamed("[notools] hi"))
    status, data = call("/v1/chat/completions", streamed("[table] hi", **tools))
    deltas = [json.loads(line[6:])["choices"][0]["delta"] for line in data.decode().splitlines()
              if line.startswith("data: {")]
    calls = [d["tool_calls"][0]["function"] for d in deltas if "tool_calls" in d]
    arguments = "".join(c.get("arguments", "") for c in calls)
    if status != 200 or calls[0].get("name") != "show_answer" or len(calls) < 4 \
            or json.loads(arguments) != TOOL_ANSWERS["[table]"]:
        failures.append(f"streamed tool call: {data[:300]!r}")
    status, data = call("/v1/chat/completions",
                        to_json({"model": "m", "messages": [{"role": "user", "content": "[list]"}], **tools}).encode())
    message = json.loads(data)["choices"][0]["message"] if status == 200 else {}
    whole = (message.get("tool_calls") or [{}])[0].get("function", {})
    if whole.get("name") != "show_answer" or json.loads(whole.get("arguments", "null")) != TOOL_ANSWERS["[list]"]:
        failures.append(f"whole tool call: {data[:300]!r}")
    if "tool_call" in server.state.snapshot()[-3] or server.state.snapshot()[-1].get("tool_call") != "list":
        failures.append("tool_call in the log")

    def speech(**fields):
        return to_json(dict({"model": "tts-1", "voice": "alloy"}, **fields)).encode()

    status, data = call("/v1/audio/speech", speech(input="hello", response_format="pcm"))
    if status != 200 or len(data) != 5 * SPEECH_MS_PER_CHAR * SPEECH_RATE * 2 // 1000:
        failures.append(f"pcm speech: HTTP {status}, {len(data)} bytes")
    status, data = call("/v1/audio/speech", speech(input="hello", speed=2))
    if status != 200 or data[:4] != b"RIFF" or data[40:44] != b"\xff" * 4 \
            or len(data) != 44 + 5 * SPEECH_MS_PER_CHAR * SPEECH_RATE // 1000:
        failures.append(f"wav speech: HTTP {status}, {data[:44]!r}")
    for what, body, error in [
        ("mp3", speech(input="hi", response_format="mp3"), "not made here"),
        ("no input", speech(), "'input'"),
        ("long input", speech(input="x" * 4097), "longer than"),
        ("slow", speech(input="hi", speed=0.1), "speed"),
        ("extra", speech(input="hi", volume=3), "volume"),
    ]:
        expect(what, 400, "/v1/audio/speech", body, error=error)
    call("/_speech", b'{"delay_ms": 200}')
    started = time.monotonic()
    status, _ = call("/v1/audio/speech", speech(input="hi"))
    if status != 200 or time.monotonic() - started < 0.2:
        failures.append(f"speech delay: HTTP {status} after {time.monotonic() - started:.3f} s")
    call("/_speech", b'{"delay_ms": 0, "missing": true}')
    expect("no speech endpoint", 404, "/v1/audio/speech", speech(input="hi"))
    expect("bad speech settings", 400, "/_speech", b'{"missing": 1}')

    server.shutdown()
    server.server_close()
    for failure in failures:
        print("FAIL", failure, file=sys.stderr)
    print("self-test", "failed" if failures else "ok")
    return 1 if failures else 0


def main(argv=None):
    args = parse_args(argv)
    if args.self_test:
        return self_test()
    server = FakeServer(("127.0.0.1", args.port), verbose=args.verbose)

    def on_signal(signum, frame):
        server.state.stop()
        # shutdown() blocks until serve_forever() returns, and that runs on
        # this same (main) thread, so it has to be called from another one.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
