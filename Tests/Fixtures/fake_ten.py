#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Fake TEN agent server (HTTP API + the graph's websocket_server extension)
for glassd's integration tests.

Usage: fake_ten.py [--http-port 0] [--ws-port 0] [--worker-timeout 60]
                   [--reaper-seconds 5] [--workers-max 1] [--verbose]

Binds 127.0.0.1 (port 0 = ephemeral), prints one line
"ready http=<port> ws=<port>" to stdout, then serves until killed (SIGTERM or
SIGINT: exit status 0). Needs the PyPI package websockets (the test world's
venv has it: Tests/World/setup). Tests/World/README.md ("Fake TEN agent
server") documents the control API; Tests/Fixtures/fake_ten_selfcheck.py
exercises all of it.

The API behaves as the Go server does (every reply
{"code": "<string>", "msg": ..., "data": ...}; "0" is success), with the
checks in the same order: JSON binding (10000, 400), empty channel (10004,
400), workers limit (10001, 429), channel existed (10003, 400), unknown graph
or a channel name unusable as a file name (10100, 500). It is stricter than
the real one in one way: request_id, channel_name, graph_name and user_uid
must all be present (the real server takes a missing one as its zero value).
Every deviation from the contract is listed in the request's "violations".

Written from the real server's documented behaviour; it contains no TEN code.
"""

import argparse
import array
import asyncio
import base64
import binascii
import json
import math
import os
import random
import re
import signal
import sys
import time
import uuid

try:
    from websockets.asyncio.server import serve as ws_serve
    from websockets.exceptions import ConnectionClosed
except ImportError:  # pragma: no cover - depends on the venv
    sys.stderr.write("fake_ten.py needs the 'websockets' package "
                     "(run Tests/World/setup and use .venv/bin/python)\n")
    sys.exit(2)

GRAPHS = ("voice_assistant", "transcription")
UINT32_MAX = 2**32 - 1
MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 16 * 1024 * 1024
SAMPLE_RATE = 16000
BYTES_PER_MS = SAMPLE_RATE * 2 // 1000   # 16 kHz mono s16le: 32 bytes per ms
MIN_PIECE_MS, MAX_PIECE_MS = 20, 100

# code -> (message, HTTP status), as the real server answers them.
CODES = {
    "0": ("success", 200),
    "10000": ("params invalid", 400),
    "10001": ("workers limit", 429),
    "10002": ("channel not existed", 400),
    "10003": ("channel existed", 400),
    "10004": ("channel empty", 400),
    "10005": ("generate token failed", 400),
    "10100": ("process property json failed", 500),
    "10101": ("start worker failed", 500),
    "10102": ("stop worker failed", 500),
}

UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                     r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

VERBOSE = False


def log(text):
    if VERBOSE:
        sys.stderr.write("fake_ten: " + text + "\n")
        sys.stderr.flush()


# --------------------------------------------------------------------------
# A very small HTTP/1.1 server on asyncio streams (one request per connection)
# --------------------------------------------------------------------------

class HTTPError(Exception):
    def __init__(self, status, text):
        super().__init__(text)
        self.status = status


class Request:
    def __init__(self, method, path, headers, body):
        self.method = method
        self.path = path
        self.headers = headers  # lower-case name -> value
        self.body = body        # bytes

    def json(self):
        """The body parsed as JSON, or None when it is empty or not JSON."""
        if not self.body:
            return None
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None


class Response:
    def __init__(self, status, body, content_type="application/json"):
        self.status = status
        self.body = body
        self.content_type = content_type
        self.after = None  # called once the response was written


REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 408: "Request Timeout",
           409: "Conflict", 411: "Length Required", 413: "Payload Too Large",
           429: "Too Many Requests", 500: "Internal Server Error",
           503: "Service Unavailable"}


def json_response(status, obj):
    return Response(status, json.dumps(obj).encode("utf-8"),
                    "application/json; charset=utf-8")


def ten_reply(code, data=None, msg=None, status=None):
    """A reply in the TEN shape: {"code": "<string>", "msg", "data"}."""
    code = str(code)
    default_msg, default_status = CODES.get(code, ("error", 500))
    return json_response(status or default_status,
                         {"code": code, "msg": msg or default_msg, "data": data})


async def read_request(reader, writer):
    line = await reader.readline()
    if not line:
        return None
    try:
        method, target, _version = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    except ValueError:
        raise HTTPError(400, "bad request line")
    headers = {}
    total = 0
    while True:
        h = await reader.readline()
        total += len(h)
        if total > MAX_HEADER_BYTES:
            raise HTTPError(400, "headers too long")
        if h in (b"\r\n", b"\n", b""):
            break
        name, sep, value = h.decode("latin-1").partition(":")
        if not sep:
            raise HTTPError(400, "bad header line")
        headers[name.strip().lower()] = value.strip()
    body = b""
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        while True:
            size_line = await reader.readline()
            try:
                size = int(size_line.split(b";")[0].strip(), 16)
            except ValueError:
                raise HTTPError(400, "bad chunk size")
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
                break
            body += await reader.readexactly(size)
            await reader.readline()
            if len(body) > MAX_BODY_BYTES:
                raise HTTPError(413, "body too large")
    elif "content-length" in headers:
        try:
            length = int(headers["content-length"])
        except ValueError:
            raise HTTPError(400, "bad Content-Length")
        if length < 0 or length > MAX_BODY_BYTES:
            raise HTTPError(413, "body too large")
        body = await reader.readexactly(length)
    elif method in ("POST", "PUT", "PATCH"):
        # No length: the body runs to... nothing we can know. Take it as empty.
        body = b""
    path = target.split("?", 1)[0]
    return Request(method.upper(), path, headers, body)


async def write_response(writer, response):
    head = (f"HTTP/1.1 {response.status} {REASONS.get(response.status, 'Status')}\r\n"
            f"Content-Type: {response.content_type}\r\n"
            f"Content-Length: {len(response.body)}\r\n"
            "Connection: close\r\n\r\n")
    writer.write(head.encode("latin-1") + response.body)
    await writer.drain()


# --------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------

class Worker:
    def __init__(self, channel, request_id, graph, user_uid, properties, timeout):
        self.channel = channel
        self.request_id = request_id
        self.graph = graph
        self.user_uid = user_uid
        self.properties = properties
        self.timeout = timeout
        self.create_ts = int(time.time())
        self.last_ping = time.monotonic()
        self.pings = 0
        self.alive = True
        self.reaped = False
        self.stopped_by = None
        self.clients = 0

    def view(self):
        return {"channel": self.channel, "request_id": self.request_id,
                "request_id_uuid": bool(UUID_RE.match(self.request_id)),
                "graph": self.graph, "user_uid": self.user_uid,
                "properties": self.properties, "timeout": self.timeout,
                "create_ts": self.create_ts, "pings": self.pings,
                "alive": self.alive, "reaped": self.reaped,
                "stopped_by": self.stopped_by, "clients": self.clients}


class Audio:
    def __init__(self):
        self.reset()

    def reset(self):
        self.messages = 0
        self.valid = 0
        self.invalid = []
        self.durations_ms = []
        self.pcm = bytearray()

    def rms_dbfs(self):
        n = len(self.pcm) // 2
        if n == 0:
            return None
        samples = array.array("h")
        samples.frombytes(bytes(self.pcm[:n * 2]))
        if sys.byteorder != "little":
            samples.byteswap()
        square_sum = math.fsum(s * s for s in samples)
        rms = math.sqrt(square_sum / n)
        if rms <= 0:
            return -120.0
        return round(max(-120.0, 20 * math.log10(rms / 32768.0)), 2)

    def view(self):
        return {"messages": self.messages, "bytes": len(self.pcm), "valid": self.valid,
                "invalid": list(self.invalid), "durations_ms": list(self.durations_ms),
                "rms_dbfs": self.rms_dbfs()}


class FakeTEN:
    def __init__(self, args):
        self.args = args
        self.workers = {}          # channel -> running Worker
        self.all_workers = []      # every Worker ever started, oldest first
        self.requests = []         # API requests, oldest first
        self.audio = Audio()
        self.client = None         # the connected websocket client
        self.client_worker = None
        self.clients_total = 0
        self.pings_total = 0
        self.stops_total = 0
        self.fail_pings = 0
        self.refuse_start = None
        self.channel_exists_once = False
        self.changed = asyncio.Condition()
        self.ws_port = None

    async def notify(self):
        async with self.changed:
            self.changed.notify_all()

    # ---------------------------------------------------------------- HTTP

    async def handle_connection(self, reader, writer):
        response = None
        try:
            try:
                request = await read_request(reader, writer)
            except HTTPError as e:
                response = json_response(e.status, {"code": str(e.status), "msg": str(e), "data": None})
                request = None
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            if request is not None:
                try:
                    response = await self.route(request)
                except Exception as e:  # a bug here must not kill the server
                    log(f"error handling {request.method} {request.path}: {e!r}")
                    response = json_response(500, {"code": "500", "msg": f"fake_ten error: {e!r}",
                                                   "data": None})
            if response is not None:
                await write_response(writer, response)
        except ConnectionError:
            pass
        finally:
            try:
                writer.close()
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass
            if response is not None and response.after is not None:
                response.after()

    async def route(self, req):
        if req.path.startswith("/_"):
            return await self.route_control(req)
        return await self.route_api(req)

    # ---------------------------------------------------------------- API

    async def route_api(self, req):
        entry = {"path": req.path, "method": req.method,
                 "headers": dict(req.headers), "body": req.json(), "violations": [],
                 "t": time.time()}
        if req.body and entry["body"] is None:
            entry["raw_body"] = req.body.decode("utf-8", "replace")[:4096]
        self.requests.append(entry)
        log(f"{req.method} {req.path} {req.body[:300]!r}")
        key = (req.method, req.path)
        if key in (("GET", "/"), ("GET", "/health")):
            response = ten_reply("0", msg="ok")
        elif key == ("GET", "/graphs"):
            response = ten_reply("0", [{"name": g, "graph_id": g, "auto_start": False} for g in GRAPHS])
        elif key == ("GET", "/list"):
            # The Go handler makes a slice of len(workers) and then appends to it.
            items = [None] * len(self.workers)
            items += [{"channelName": w.channel, "createTs": w.create_ts} for w in self.workers.values()]
            response = ten_reply("0", items)
        elif key == ("POST", "/start"):
            response = await self.api_start(req, entry)
        elif key == ("POST", "/ping"):
            response = await self.api_ping(req, entry)
        elif key == ("POST", "/stop"):
            response = await self.api_stop(req, entry)
        else:
            response = json_response(404, {"code": "404", "msg": "404 page not found", "data": None})
        entry["status"] = response.status
        try:
            entry["reply_code"] = json.loads(response.body)["code"]
        except (ValueError, KeyError, TypeError):
            pass
        return response

    @staticmethod
    def check_json_request(req, body, violations):
        """Content-Type and body shape; returns False when the body cannot be bound."""
        ctype = req.headers.get("content-type")
        if ctype is None:
            violations.append("no Content-Type (must be application/json)")
        elif ctype.split(";")[0].strip().lower() != "application/json":
            violations.append(f"Content-Type is {ctype!r}, not application/json")
        if not req.body:
            violations.append("empty body")
            return False
        if body is None:
            violations.append("body is not JSON")
            return False
        if not isinstance(body, dict):
            violations.append("body is not a JSON object")
            return False
        return True

    @staticmethod
    def check_string(body, name, violations, required=True):
        """Returns the string value, or None (with a violation) when absent/ill-typed."""
        if name not in body or (body[name] is None and not required):
            if required:
                violations.append(f"{name} missing")
            return None
        value = body[name]
        if not isinstance(value, str):
            violations.append(f"{name} is not a string: {value!r}")
            return None
        return value

    @staticmethod
    def check_uint32(body, name, violations, required=True):
        if name not in body or (body[name] is None and not required):
            if required:
                violations.append(f"{name} missing")
            return None
        value = body[name]
        if isinstance(value, bool) or not isinstance(value, int):
            violations.append(f"{name} is not an integer: {value!r}")
            return None
        if not 0 <= value <= UINT32_MAX:
            violations.append(f"{name} out of uint32 range: {value}")
            return None
        return value

    def check_ids(self, body, violations, entry):
        """request_id and channel_name of start, ping and stop. Returns (bind_ok, channel)."""
        ok = True
        request_id = self.check_string(body, "request_id", violations)
        if request_id is None:
            ok = False
        elif request_id.strip() == "":
            violations.append("request_id is empty")
            ok = False
        else:
            entry["request_id_uuid"] = bool(UUID_RE.match(request_id))
        channel = self.check_string(body, "channel_name", violations)
        if channel is None:
            ok = False
        elif channel.strip() == "":
            violations.append("channel_name is empty")
        return ok, channel, request_id

    async def api_start(self, req, entry):
        v = entry["violations"]
        body = entry["body"]
        if not self.check_json_request(req, body, v):
            return ten_reply("10000")
        bind_ok, channel, request_id = self.check_ids(body, v, entry)
        graph = self.check_string(body, "graph_name", v)
        if graph is None:
            bind_ok = False
        user_uid = self.check_uint32(body, "user_uid", v)
        if user_uid is None:
            bind_ok = False
        if self.check_uint32(body, "bot_uid", v, required=False) is None and \
                body.get("bot_uid") is not None:
            bind_ok = False
        if "token" in body and body["token"] is not None and not isinstance(body["token"], str):
            v.append(f"token is not a string: {body['token']!r}")
            bind_ok = False
        properties = body.get("properties")
        if properties is not None:
            if not isinstance(properties, dict):
                v.append("properties is not an object")
                bind_ok = False
            else:
                for ext, props in properties.items():
                    if not isinstance(props, dict):
                        v.append(f"properties.{ext} is not an object")
                        bind_ok = False
        timeout = body.get("timeout")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int)):
            v.append(f"timeout is not an integer: {timeout!r}")
            bind_ok = False
        if graph is not None and graph not in GRAPHS:
            v.append(f"graph_name {graph!r} is not a known graph ({', '.join(GRAPHS)})")
        bad_name = channel_name_problem(channel) if channel else None
        if bad_name:
            v.append(f"channel_name {bad_name}")

        # Forced outcomes (POST /_control) come first.
        if self.refuse_start is not None:
            code, self.refuse_start = self.refuse_start, None
            return ten_reply(code)
        if self.channel_exists_once:
            self.channel_exists_once = False
            return ten_reply("10003")
        # Then the real server's order of checks.
        if not bind_ok:
            return ten_reply("10000")
        if channel.strip() == "":
            return ten_reply("10004")
        if len(self.workers) >= self.args.workers_max:
            return ten_reply("10001")
        if channel in self.workers:
            return ten_reply("10003")
        if graph not in GRAPHS or bad_name:
            return ten_reply("10100")
        worker = Worker(channel, request_id, graph, user_uid, properties,
                        timeout if timeout and timeout > 0 else self.args.worker_timeout)
        self.workers[channel] = worker
        self.all_workers.append(worker)
        log(f"worker started: {channel} (timeout {worker.timeout} s)")
        await self.notify()
        return ten_reply("0")

    async def api_ping(self, req, entry):
        v = entry["violations"]
        body = entry["body"]
        self.pings_total += 1
        await self.notify()
        if not self.check_json_request(req, body, v):
            return ten_reply("10000")
        bind_ok, channel, _ = self.check_ids(body, v, entry)
        if self.fail_pings > 0:
            self.fail_pings -= 1
            return ten_reply("10101", status=500)
        if not bind_ok:
            return ten_reply("10000")
        if channel.strip() == "":
            return ten_reply("10004")
        worker = self.workers.get(channel)
        if worker is None:
            return ten_reply("10002")
        worker.last_ping = time.monotonic()
        worker.pings += 1
        await self.notify()
        return ten_reply("0")

    async def api_stop(self, req, entry):
        v = entry["violations"]
        body = entry["body"]
        if not self.check_json_request(req, body, v):
            return ten_reply("10000")
        bind_ok, channel, _ = self.check_ids(body, v, entry)
        if not bind_ok:
            return ten_reply("10000")
        if channel.strip() == "":
            return ten_reply("10004")
        worker = self.workers.get(channel)
        if worker is None:
            return ten_reply("10002")
        await self.stop_worker(worker, "stop")
        return ten_reply("0")

    async def stop_worker(self, worker, by):
        if not worker.alive:
            return
        worker.alive = False
        worker.stopped_by = by
        worker.reaped = by == "reaper"
        self.workers.pop(worker.channel, None)
        self.stops_total += 1
        log(f"worker stopped: {worker.channel} by {by}")
        if self.client is not None and self.client_worker is worker:
            # The close frame goes out at once; the answer waits a little for the closing
            # handshake, not for a client that never answers it.
            closing = asyncio.create_task(self.client.close(1000))
            await asyncio.wait({closing}, timeout=0.5)
        await self.notify()

    async def reaper(self):
        while True:
            await asyncio.sleep(self.args.reaper_seconds)
            now = time.monotonic()
            for worker in list(self.workers.values()):
                if worker.last_ping + worker.timeout < now:
                    await self.stop_worker(worker, "reaper")

    # ---------------------------------------------------------------- websocket

    def ws_process_request(self, connection, request):
        if not self.workers:
            return connection.respond(503, "no worker running\n")
        return None

    async def ws_handler(self, ws):
        if self.client is not None:
            await self.ws_send_error(ws, "Connection rejected: server only accepts one connection at a time")
            await ws.close(1008, "Only one connection allowed")
            return
        # The extension belongs to the newest running worker.
        worker = self.all_workers[-1] if self.all_workers and self.all_workers[-1].alive \
            else next(iter(self.workers.values()), None)
        if worker is None:
            await ws.close(1008, "no worker running")
            return
        self.client = ws
        self.client_worker = worker
        worker.clients += 1
        self.clients_total += 1
        log("websocket client connected")
        await self.notify()
        try:
            async for message in ws:
                await self.ws_message(ws, message)
        except ConnectionClosed:
            pass
        finally:
            if self.client is ws:
                self.client = None
                self.client_worker = None
            log("websocket client gone")
            await self.notify()

    @staticmethod
    async def ws_send_error(ws, text):
        try:
            await ws.send(json.dumps({"type": "error", "error": text}))
        except ConnectionClosed:
            pass

    async def ws_message(self, ws, message):
        audio = self.audio
        audio.messages += 1
        n = audio.messages
        if isinstance(message, bytes):
            audio.invalid.append(f"message {n}: binary frame ({len(message)} bytes), not text")
            await self.ws_send_error(ws, "Invalid JSON: binary frame")
            await self.notify()
            return
        try:
            data = json.loads(message)
        except ValueError as e:
            audio.invalid.append(f"message {n}: not JSON")
            await self.ws_send_error(ws, f"Invalid JSON: {e}")
            await self.notify()
            return
        if not isinstance(data, dict) or "audio" not in data:
            audio.invalid.append(f"message {n}: no \"audio\" field")
            await self.ws_send_error(ws, 'Missing required field: "audio" with base64 data')
            await self.notify()
            return
        b64 = data["audio"]
        if not isinstance(b64, str):
            audio.invalid.append(f"message {n}: \"audio\" is not a string")
            await self.ws_send_error(ws, "Invalid base64 audio data: not a string")
            await self.notify()
            return
        try:
            pcm = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError) as e:
            audio.invalid.append(f"message {n}: bad base64 ({e})")
            try:
                base64.b64decode(b64)  # the extension decodes leniently
            except (binascii.Error, ValueError) as e2:
                await self.ws_send_error(ws, f"Invalid base64 audio data: {e2}")
            await self.notify()
            return
        duration = len(pcm) / BYTES_PER_MS
        audio.durations_ms.append(duration)
        problems = []
        if len(pcm) % 2:
            problems.append(f"odd length {len(pcm)} (not whole s16le samples)")
        if not MIN_PIECE_MS <= duration <= MAX_PIECE_MS:
            problems.append(f"{duration:g} ms, outside {MIN_PIECE_MS}-{MAX_PIECE_MS} ms")
        if "metadata" in data and not isinstance(data["metadata"], dict):
            problems.append("metadata is not an object")
        if problems:
            audio.invalid.append(f"message {n}: " + "; ".join(problems))
        else:
            audio.valid += 1
        if len(pcm) % 2 == 0:
            audio.pcm += pcm
        await self.notify()

    # ---------------------------------------------------------------- control

    async def route_control(self, req):
        key = (req.method, req.path)
        body = req.json() if req.body else {}
        if req.method == "POST" and not isinstance(body, dict):
            return json_response(400, {"code": "1", "msg": "body must be a JSON object", "data": None})
        if key == ("GET", "/_requests"):
            return json_response(200, self.requests)
        if key == ("GET", "/_workers"):
            return json_response(200, [w.view() for w in self.all_workers])
        if key == ("GET", "/_audio"):
            return json_response(200, self.audio.view())
        if key == ("GET", "/_audio.pcm"):
            return Response(200, bytes(self.audio.pcm), "application/octet-stream")
        if key == ("POST", "/_audio/reset"):
            self.audio.reset()
            await self.notify()
            return json_response(200, {"code": "0", "msg": "ok", "data": None})
        if key == ("POST", "/_control"):
            return await self.control(body)
        if key == ("POST", "/_send"):
            return await self.send(body)
        if key == ("POST", "/_wait"):
            return await self.wait(body)
        return json_response(404, {"code": "404", "msg": "no such control endpoint", "data": None})

    async def control(self, body):
        known = {"fail_pings", "refuse_start", "channel_exists_once", "die", "drop_ws"}
        unknown = set(body) - known
        if unknown:
            return json_response(400, {"code": "1", "msg": f"unknown keys {sorted(unknown)}", "data": None})
        if "fail_pings" in body:
            n = body["fail_pings"]
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                return json_response(400, {"code": "1", "msg": "fail_pings must be an integer >= 0", "data": None})
            self.fail_pings = n
        if "refuse_start" in body:
            code = body["refuse_start"]
            if code is None:
                self.refuse_start = None
            else:
                code = str(code)
                if code not in CODES or code == "0":
                    return json_response(400, {"code": "1", "msg": f"unknown code {code!r}", "data": None})
                self.refuse_start = code
        if "channel_exists_once" in body:
            self.channel_exists_once = bool(body["channel_exists_once"])
        dropped = False
        if body.get("drop_ws"):
            if self.client is not None:
                self.client.transport.abort()
                dropped = True
        state = {"fail_pings": self.fail_pings, "refuse_start": self.refuse_start,
                 "channel_exists_once": self.channel_exists_once, "dropped_ws": dropped}
        response = json_response(200, {"code": "0", "msg": "ok", "data": state})
        if body.get("die"):
            def die():
                sys.stderr.write("fake_ten: dying as asked (/_control die)\n")
                sys.stderr.flush()
                os._exit(3)
            response.after = die
        return response

    async def send(self, body):
        frames = []
        extra = {}
        try:
            for m in body.get("messages", []):
                frames.append(m if isinstance(m, str) else json.dumps(m))
            if "transcript" in body:
                t = dict(body["transcript"])
                t.setdefault("data_type", "transcribe")
                t.setdefault("role", "user")
                t.setdefault("is_final", True)
                t.setdefault("stream_id", 0)
                t.setdefault("text_ts", int(time.time() * 1000))
                if body.get("chunked"):
                    chunks, msg_id = chunk_transcript(
                        t, int(body.get("chunk_bytes", 1024)), bool(body.get("shuffle")),
                        bool(body.get("duplicate")), bool(body.get("unknown_total_first")),
                        body.get("seed"))
                    extra["msg_id"] = msg_id
                    extra["chunks"] = chunks
                    frames += [json.dumps({"type": "data", "name": "text_data", "data": c}) for c in chunks]
                else:
                    frames.append(json.dumps({"type": "data", "name": "text_data", "data": t}))
            if "audio_reply" in body:
                a = body["audio_reply"]
                samples = int(a.get("samples", 1600))
                rate = int(a.get("sample_rate", SAMPLE_RATE))
                pcm = tone(samples, rate)
                frames.append(json.dumps({
                    "type": "audio", "audio": base64.b64encode(pcm).decode("ascii"),
                    "metadata": {"sample_rate": rate, "channels": 1, "bytes_per_sample": 2,
                                 "samples_per_channel": samples}}))
            if "error" in body:
                frames.append(json.dumps({"type": "error", "error": str(body["error"])}))
        except (TypeError, ValueError, AttributeError) as e:
            return json_response(400, {"code": "1", "msg": f"bad /_send body: {e}", "data": None})
        ws = self.client
        if ws is None:
            return json_response(409, {"code": "10002", "msg": "no websocket client connected", "data": None})
        interval = float(body.get("interval_ms", 0)) / 1000.0
        sent = 0
        try:
            for i, f in enumerate(frames):
                if i and interval:
                    await asyncio.sleep(interval)
                await ws.send(f)
                sent += 1
        except ConnectionClosed:
            return json_response(409, {"code": "10002", "msg": "websocket client went away",
                                       "data": {"sent": sent}})
        # When the last frame was handed to the socket, on the clock Swift's ContinuousClock
        # reads on Linux (CLOCK_BOOTTIME), so a test can time what glassd did with it.
        sent_ns = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        return json_response(200, {"code": "0", "msg": "ok",
                                   "data": dict(sent=sent, frames=frames, sent_boottime_ns=sent_ns, **extra)})

    def counters(self):
        return {"clients": self.clients_total, "connected": self.client is not None,
                "audio_bytes": len(self.audio.pcm), "audio_messages": self.audio.messages,
                "pings": self.pings_total,
                "stops": self.stops_total}

    async def wait(self, body):
        what = body.get("for")
        field = {"client": "clients", "connected": "connected", "audio_bytes": "audio_bytes",
                 "audio_messages": "audio_messages", "pings": "pings", "stop": "stops"}.get(what)
        if field is None:
            return json_response(400, {"code": "1", "msg": f"unknown 'for': {what!r}", "data": None})
        at_least = body.get("at_least", 1)
        timeout = float(body.get("timeout", 10))
        try:
            async with self.changed:
                await asyncio.wait_for(
                    self.changed.wait_for(lambda: self.counters()[field] >= at_least), timeout)
        except asyncio.TimeoutError:
            return json_response(408, {"code": "1", "msg": f"timed out waiting for {what} >= {at_least}",
                                       "data": self.counters()})
        return json_response(200, {"code": "0", "msg": "ok", "data": self.counters()})


def channel_name_problem(name):
    """Why the real server could not use this channel as part of a file name (10100), or None."""
    if len(name) > 100:
        return "is longer than 100 characters"
    for bad in ("..", "/", "\\", "\x00"):
        if bad in name:
            return f"contains {bad!r}"
    if name.startswith("."):
        return "starts with a dot"
    return None


def tone(samples, rate, freq=440.0, amplitude=0.3):
    pcm = array.array("h", (int(amplitude * 32767 * math.sin(2 * math.pi * freq * i / rate))
                            for i in range(samples)))
    if sys.byteorder != "little":
        pcm.byteswap()
    return pcm.tobytes()


def chunk_transcript(obj, chunk_bytes, shuffle=False, duplicate=False, unknown_total_first=False, seed=None):
    """Split a transcript as TEN's message collector does: UTF-8 JSON -> base64 ->
    "msg_id|part_index|total_parts|slice" strings of at most chunk_bytes bytes,
    part_index 1-based. Returns (chunks in sending order, msg_id)."""
    msg_id = uuid.uuid4().hex[:8]
    obj = dict(obj)
    obj.setdefault("message_id", msg_id)
    b64 = base64.b64encode(json.dumps(obj, ensure_ascii=False).encode("utf-8")).decode("ascii")
    # The longest slice such that every "id|index|total|" header plus the slice fits.
    size = chunk_bytes
    while True:
        size -= 1
        if size < 1:
            raise ValueError(f"chunk_bytes {chunk_bytes} too small")
        total = max(1, math.ceil(len(b64) / size))
        # The total is sized as at least "???" (the placeholder for an unknown total).
        header = len(f"{msg_id}|{total}|") + max(3, len(str(total))) + 1
        if header + size <= chunk_bytes:
            break
    parts = [f"{msg_id}|{i + 1}|{total}|{b64[i * size:(i + 1) * size]}" for i in range(total)]
    rng = random.Random(seed)
    order = list(parts)
    if shuffle and len(order) > 1:
        while order == parts:
            rng.shuffle(order)
    if duplicate:
        order.insert(1, order[0])
    if unknown_total_first:
        first = parts[0].split("|", 3)
        order.insert(0, f"{first[0]}|{first[1]}|???|{first[3]}")
    return order, msg_id


async def main_async(args):
    fake = FakeTEN(args)
    http = await asyncio.start_server(fake.handle_connection, "127.0.0.1", args.http_port,
                                      limit=MAX_HEADER_BYTES)
    ws = await ws_serve(fake.ws_handler, "127.0.0.1", args.ws_port,
                        process_request=fake.ws_process_request, max_size=2**22)
    http_port = http.sockets[0].getsockname()[1]
    ws_port = ws.sockets[0].getsockname()[1]
    fake.ws_port = ws_port
    print(f"ready http={http_port} ws={ws_port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    reaper = asyncio.create_task(fake.reaper())
    await stop.wait()
    reaper.cancel()
    # Killed: the client's connection just ends (no closing handshake to wait for).
    if fake.client is not None:
        fake.client.transport.abort()
    http.close()
    ws.close(close_connections=False)


def main():
    global VERBOSE
    p = argparse.ArgumentParser(description="Fake TEN agent server for glassd's tests")
    p.add_argument("--http-port", type=int, default=0)
    p.add_argument("--ws-port", type=int, default=0)
    p.add_argument("--worker-timeout", type=float, default=60.0,
                   help="seconds without a ping before the reaper stops a worker (default 60)")
    p.add_argument("--reaper-seconds", type=float, default=5.0,
                   help="how often the reaper looks (default 5)")
    p.add_argument("--workers-max", type=int, default=1)
    p.add_argument("--verbose", "-v", action="store_true", help="log requests to stderr")
    args = p.parse_args()
    VERBOSE = args.verbose
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
