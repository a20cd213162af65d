#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Fake OpenAI-compatible chat server for glassd's integration tests and benchmark.

Usage: fake_openai.py [--port N] [--verbose]

Binds 127.0.0.1 (port 0 = ephemeral), prints one line "PORT <n>" to stdout,
then serves until SIGTERM or SIGINT (exit status 0).

The answer is always "echo: <question>", where the question is the last user
message.  Tags inside the question (see TAGS) select failure modes such as
"[429once]" or "[stall]".  GET /_requests lists the chat requests seen so far
and POST /_reset forgets them, so tests can check what glassd actually sent.
"""

import argparse
import json
import select
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PIECE_LEN = 5          # normal streams send the answer in pieces of <= 5 chars
SLOW_PIECES = 6        # [slow] sends about this many pieces ...
SLOW_DELAY = 0.3       # ... this many seconds apart
STALL_SECONDS = 120.0  # longest a [stall] request is held open
DEFAULT_MODEL = "fake-model"

# Checked in this order; the first tag found in the question wins.
TAGS = (
    "[401]", "[403]", "[429]", "[429once]", "[500]", "[500once]",
    "[midstream]", "[stall]", "[malformed]", "[slow]", "[crlf]", "[nodone]",
    "[leakkey]",
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


def last_user_text(messages):
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return content_text(message.get("content"))
    return ""


def find_tag(question):
    return next((tag for tag in TAGS if tag in question), None)


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

    def _envelope(self, obj_type):
        return {"id": "chatcmpl-fake", "object": obj_type,
                "created": self.created, "model": self.model}

    def completion(self):
        body = self._envelope("chat.completion")
        body["choices"] = [{"index": 0,
                            "message": {"role": "assistant",
                                        "content": self.answer},
                            "finish_reason": "stop"}]
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
        self.requests = []     # recorded chat requests, arrival order
        self.seen = {}         # question -> times seen, for the *once tags
        self.stalls = set()    # wake-up Events of requests held by [stall]
        self.stopping = threading.Event()

    def record(self, entry):
        with self.lock:
            self.requests.append(entry)

    def snapshot(self):
        with self.lock:
            return list(self.requests)

    def reset(self):
        with self.lock:
            self.requests.clear()
            self.seen.clear()

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
        self.state.record({
            "path": self.path,
            "headers": self._lower_headers(),
            "body": body,
        })
        question = last_user_text(body.get("messages"))
        tag = find_tag(question)
        if self._send_tagged_error(tag, question):
            return
        reply = Reply(body, question)
        if body.get("stream") is True:
            self._stream(tag, reply)
        elif tag == "[stall]":
            self._stall()  # no headers at all: a server that never answers
        else:
            # The other tags only change how a stream is framed.
            self._send_json(200, reply.completion())

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
        elif tag == "[slow]":
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
        out.data(reply.chunk({}, "stop"))
        out.data(reply.usage_chunk())
        if done:
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
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
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
