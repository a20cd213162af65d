#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""End-to-end check of fake_ten.py with a websockets client.

  .venv/bin/python Tests/Fixtures/fake_ten_selfcheck.py [-v]

Starts fake_ten.py (with this same python) as a subprocess and goes through
its API, its websocket and its control endpoints; exits 0 when all is as
documented, 1 at the first failure. About 3 s.
"""

import array
import asyncio
import base64
import json
import math
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

HERE = os.path.dirname(os.path.abspath(__file__))
VERBOSE = "-v" in sys.argv[1:]


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)
    if VERBOSE:
        print("ok:", what)


class Fake:
    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "fake_ten.py"), "--reaper-seconds", "0.2"]
            + (["--verbose"] if VERBOSE else []),
            stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        parts = dict(p.split("=") for p in line.split()[1:]) if line.startswith("ready ") else {}
        if "http" not in parts or "ws" not in parts:
            raise Failure(f"first line is {line!r}, not 'ready http=N ws=N'")
        self.http = int(parts["http"])
        self.ws_url = f"ws://127.0.0.1:{parts['ws']}"

    def _request(self, method, path, body=None, content_type="application/json", raw=False):
        data = None
        headers = {}
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            if content_type:
                headers["Content-Type"] = content_type
        req = urllib.request.Request(f"http://127.0.0.1:{self.http}{path}", data=data,
                                     method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, payload, ctype = r.status, r.read(), r.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            status, payload, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
        if raw:
            return status, payload, ctype
        return status, json.loads(payload)

    async def req(self, method, path, body=None, **kw):
        return await asyncio.to_thread(self._request, method, path, body, **kw)

    async def get(self, path, **kw):
        return await self.req("GET", path, **kw)

    async def post(self, path, body=None, **kw):
        return await self.req("POST", path, {} if body is None else body, **kw)


def tone_pcm(ms, freq=440.0, amplitude=0.3):
    n = 16 * ms
    samples = array.array("h", (int(amplitude * 32767 * math.sin(2 * math.pi * freq * i / 16000))
                                for i in range(n)))
    return samples.tobytes()


def audio_msg(pcm):
    return json.dumps({"audio": base64.b64encode(pcm).decode()})


async def recv_json(ws, timeout=3):
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))


def start_body(channel, **extra):
    body = {"request_id": str(uuid.uuid4()), "channel_name": channel,
            "graph_name": "voice_assistant", "user_uid": 1234,
            "properties": {"websocket_server": {"port": 8765}}}
    body.update(extra)
    return body


async def run(fake):
    # --- health, graphs
    for path in ("/", "/health"):
        status, r = await fake.get(path)
        check(status == 200 and r["code"] == "0", f"GET {path} answers code \"0\"")
    status, r = await fake.get("/graphs")
    names = [g["name"] for g in r["data"]]
    check(status == 200 and r["code"] == "0" and names == ["voice_assistant", "transcription"]
          and all(set(g) == {"name", "graph_id", "auto_start"} for g in r["data"]),
          "GET /graphs lists voice_assistant and transcription")
    status, r = await fake.get("/nowhere")
    check(status == 404 and r["code"] == "404", "an unknown path is a JSON 404")

    # --- no worker: the websocket refuses
    try:
        async with connect(fake.ws_url, proxy=None, open_timeout=3):
            pass
        check(False, "websocket refused without a worker")
    except InvalidStatus as e:
        check(e.response.status_code == 503, "websocket refused (503) without a worker")

    # --- start
    status, r = await fake.post("/start", start_body("ch1"))
    check(status == 200 and r == {"code": "0", "msg": "success", "data": None}, "POST /start starts ch1")
    status, r = await fake.get("/list")
    check(r["code"] == "0" and r["data"][0] is None and r["data"][1]["channelName"] == "ch1"
          and isinstance(r["data"][1]["createTs"], int) and len(r["data"]) == 2,
          "GET /list starts with a null, as the Go server's does")
    status, r = await fake.post("/start", start_body("ch2"))
    check(status == 429 and r["code"] == "10001", "a second worker beyond --workers-max 1 is 10001/429")
    status, r = await fake.post("/start", start_body("ch1"))
    check(status == 429 and r["code"] == "10001", "workers limit is checked before channel existed, as in Go")
    status, r = await fake.post("/start", {"channel_name": "x", "user_uid": "7"}, content_type="text/plain")
    check(status == 400 and r["code"] == "10000", "an ill-typed start is 10000/400")
    status, r = await fake.post("/start", start_body(" "))
    check(status == 400 and r["code"] == "10004", "an empty channel is 10004/400")
    status, reqs = await fake.get("/_requests")
    good = [q for q in reqs if q["path"] == "/start"][0]
    check(good["violations"] == [] and good["request_id_uuid"] is True
          and good["headers"]["content-type"] == "application/json"
          and good["body"]["channel_name"] == "ch1", "/_requests: a correct start has no violations")
    bad = [q for q in reqs if q["path"] == "/start"][3]
    check(any("Content-Type" in v for v in bad["violations"])
          and "request_id missing" in bad["violations"]
          and any(v.startswith("user_uid is not an integer") for v in bad["violations"]),
          f"/_requests names what was wrong: {bad['violations']}")

    # --- ping
    status, r = await fake.post("/ping", {"request_id": str(uuid.uuid4()), "channel_name": "ch1"})
    check(status == 200 and r["code"] == "0", "POST /ping refreshes ch1")
    status, r = await fake.post("/ping", {"request_id": str(uuid.uuid4()), "channel_name": "nope"})
    check(status == 400 and r["code"] == "10002", "a ping of an unknown channel is 10002/400")
    status, r = await fake.post("/_control", {"fail_pings": 2})
    check(status == 200 and r["data"]["fail_pings"] == 2, "/_control fail_pings 2")
    results = []
    for _ in range(3):
        status, r = await fake.post("/ping", {"request_id": str(uuid.uuid4()), "channel_name": "ch1"})
        results.append((status, r["code"]))
    check(results == [(500, "10101"), (500, "10101"), (200, "0")],
          f"fail_pings: two pings fail with 500/10101, the third works ({results})")
    status, r = await fake.post("/_wait", {"for": "pings", "at_least": 5, "timeout": 2})
    check(status == 200 and r["data"]["pings"] == 5, "/_wait pings: all 5 pings counted")

    # --- websocket
    ws = await connect(fake.ws_url, proxy=None, open_timeout=3)
    status, r = await fake.post("/_wait", {"for": "client", "at_least": 1, "timeout": 3})
    check(status == 200 and r["data"]["connected"], "/_wait client: the websocket client is seen")
    async with connect(fake.ws_url, proxy=None, open_timeout=3) as second:
        msg = await recv_json(second)
        check(msg["type"] == "error", "a second client is told it is rejected")
        try:
            await asyncio.wait_for(second.recv(), 3)
        except ConnectionClosed:
            pass
        check(second.close_code == 1008, f"a second client is closed with 1008 ({second.close_code})")

    pcm1, pcm2 = tone_pcm(40), tone_pcm(60)
    await ws.send(audio_msg(pcm1))
    await ws.send(audio_msg(pcm2))
    status, r = await fake.post("/_wait", {"for": "audio_bytes", "at_least": len(pcm1) + len(pcm2),
                                           "timeout": 3})
    check(status == 200, "/_wait audio_bytes: both pieces arrived")
    status, a = await fake.get("/_audio")
    check(a["messages"] == 2 and a["valid"] == 2 and a["invalid"] == [] and a["bytes"] == 3200
          and a["durations_ms"] == [40, 60], f"/_audio counts two valid pieces of 40 and 60 ms ({a})")
    check(a["rms_dbfs"] is not None and abs(a["rms_dbfs"] - (-13.47)) < 0.2,
          f"/_audio rms of a 0.3 sine is about -13.5 dBFS ({a['rms_dbfs']})")
    status, raw, ctype = await fake.get("/_audio.pcm", raw=True)
    check(raw == pcm1 + pcm2 and ctype == "application/octet-stream", "/_audio.pcm gives the PCM back")
    await ws.send(audio_msg(tone_pcm(10)))
    await ws.send("not json")
    err = await recv_json(ws)
    check(err["type"] == "error" and "Invalid JSON" in err["error"], "a non-JSON message gets an error")
    await ws.send(json.dumps({"audio": base64.b64encode(b"\x01\x02\x03" * 301).decode()}))
    status, r = await fake.post("/_wait", {"for": "audio_messages", "at_least": 5, "timeout": 3})
    check(status == 200 and r["data"]["audio_bytes"] == 3520,
          "/_wait audio_messages; the odd-length piece added no bytes")
    status, a = await fake.get("/_audio")
    check(a["messages"] == 5 and a["valid"] == 2 and len(a["invalid"]) == 3
          and "10 ms" in a["invalid"][0] and "not JSON" in a["invalid"][1] and "odd length" in a["invalid"][2],
          f"/_audio lists the invalid pieces ({a['invalid']})")
    status, r = await fake.post("/_audio/reset")
    status, a = await fake.get("/_audio")
    check(a["messages"] == 0 and a["bytes"] == 0 and a["rms_dbfs"] is None, "/_audio/reset clears it")

    # --- /_send: plain messages and a plain transcript
    t1 = {"role": "user", "text": "hello there", "is_final": True, "text_ts": 123,
          "data_type": "transcribe", "stream_id": 1}
    status, r = await fake.post("/_send", {"messages": [{"type": "cmd", "name": "flush", "data": {}},
                                                        "raw text frame"],
                                           "transcript": t1, "chunked": False})
    check(status == 200 and r["data"]["sent"] == 3, "/_send sends 3 frames")
    f1 = await recv_json(ws)
    f2 = await asyncio.wait_for(ws.recv(), 3)
    f3 = await recv_json(ws)
    check(f1 == {"type": "cmd", "name": "flush", "data": {}} and f2 == "raw text frame"
          and f3 == {"type": "data", "name": "text_data", "data": t1},
          "the client gets the messages and the wrapped transcript in order")

    # --- /_send: a chunked, shuffled, duplicated transcript
    text = "Ein längerer Satz mit Umlauten – und noch mehr Text, damit es mehrere Teile gibt. " * 4
    t2 = {"role": "assistant", "text": text, "is_final": False, "text_ts": 456,
          "data_type": "transcribe", "stream_id": 0}
    status, r = await fake.post("/_send", {"transcript": t2, "chunked": True, "chunk_bytes": 128,
                                           "shuffle": True, "duplicate": True,
                                           "unknown_total_first": True, "seed": 7})
    n = r["data"]["sent"]
    msg_id = r["data"]["msg_id"]
    check(status == 200 and n >= 6, f"/_send chunked sends {n} frames")
    chunks = []
    for _ in range(n):
        m = await recv_json(ws)
        check(m["type"] == "data" and m["name"] == "text_data" and isinstance(m["data"], str),
              "each chunk is a text_data message with a string")
        chunks.append(m["data"])
    check(all(len(c.encode()) <= 128 for c in chunks), "every chunk is at most chunk_bytes")
    check(chunks[0].split("|")[2] == "???", "the first chunk has an unknown total (???)")
    parts = {}
    total = None
    indices = []
    for c in chunks:
        mid, index, tot, b64 = c.split("|", 3)
        check(mid == msg_id and len(mid) == 8 and all(ch in "0123456789abcdef" for ch in mid),
              "msg_id is the 8 hex characters reported")
        if tot == "???":
            continue
        total = int(tot)
        indices.append(int(index))
        parts[int(index)] = b64
    check(len(indices) == total + 1 and len(set(indices)) == total, "one part was sent twice")
    check(indices != sorted(indices), "the parts were shuffled")
    check(sorted(parts) == list(range(1, total + 1)), "parts are 1-based and complete")
    decoded = json.loads(base64.b64decode("".join(parts[i] for i in range(1, total + 1))).decode("utf-8"))
    check(decoded["text"] == text and decoded["role"] == "assistant" and decoded["is_final"] is False
          and decoded["text_ts"] == 456 and decoded["message_id"] == msg_id,
          "the reassembled transcript is the one sent")

    # --- audio reply and error
    status, r = await fake.post("/_send", {"audio_reply": {"samples": 800, "sample_rate": 16000},
                                           "error": "boom"})
    a = await recv_json(ws)
    check(a["type"] == "audio" and len(base64.b64decode(a["audio"])) == 1600
          and a["metadata"] == {"sample_rate": 16000, "channels": 1, "bytes_per_sample": 2,
                                "samples_per_channel": 800}, "audio_reply: 800 samples of tone")
    e = await recv_json(ws)
    check(e == {"type": "error", "error": "boom"}, "error: an error message")

    # --- stop closes the websocket with 1000
    status, r = await fake.post("/stop", {"request_id": str(uuid.uuid4()), "channel_name": "ch1"})
    check(status == 200 and r["code"] == "0", "POST /stop stops ch1")
    try:
        await asyncio.wait_for(ws.recv(), 3)
    except ConnectionClosed:
        pass
    check(ws.close_code == 1000, f"stop closes the websocket with 1000 ({ws.close_code})")
    status, r = await fake.post("/stop", {"request_id": str(uuid.uuid4()), "channel_name": "ch1"})
    check(status == 400 and r["code"] == "10002", "stopping it again is 10002")
    status, r = await fake.post("/_wait", {"for": "stop", "at_least": 1, "timeout": 2})
    check(status == 200, "/_wait stop")
    status, r = await fake.post("/_send", {"messages": ["x"]})
    check(status == 409 and r["code"] == "10002", "/_send without a client is 409")
    status, r = await fake.post("/_wait", {"for": "client", "at_least": 5, "timeout": 0.3})
    check(status == 408 and r["code"] == "1", "/_wait answers 408 at its timeout")

    # --- refuse_start, channel_exists_once
    await fake.post("/_control", {"refuse_start": "10001"})
    status, r = await fake.post("/start", start_body("ch3"))
    check(status == 429 and r["code"] == "10001", "refuse_start 10001: the next start is 429/10001")
    await fake.post("/_control", {"channel_exists_once": True})
    status, r = await fake.post("/start", start_body("ch3"))
    check(status == 400 and r["code"] == "10003", "channel_exists_once: the next start is 400/10003")
    status, r = await fake.post("/start", start_body("ch3", graph_name="nope"))
    check(status == 500 and r["code"] == "10100", "an unknown graph is 10100/500, as in Go")

    # --- the reaper
    status, r = await fake.post("/start", start_body("ch3", timeout=1))
    check(status == 200 and r["code"] == "0", "start ch3 with a 1 s timeout")
    status, r = await fake.post("/_wait", {"for": "stop", "at_least": 2, "timeout": 3})
    check(status == 200, "/_wait stop: the reaper stopped ch3")
    status, workers = await fake.get("/_workers")
    check([(w["channel"], w["alive"], w["reaped"], w["stopped_by"]) for w in workers]
          == [("ch1", False, False, "stop"), ("ch3", False, True, "reaper")]
          and workers[0]["pings"] == 2, f"/_workers lists both ({workers})")
    status, r = await fake.get("/list")
    check(r["data"] == [], "GET /list is empty with no worker")

    # --- drop_ws
    status, r = await fake.post("/start", start_body("ch4"))
    ws = await connect(fake.ws_url, proxy=None, open_timeout=3)
    status, r = await fake.post("/_control", {"drop_ws": True})
    check(r["data"]["dropped_ws"], "drop_ws dropped the client")
    try:
        await asyncio.wait_for(ws.recv(), 3)
    except ConnectionClosed as e:
        check(e.rcvd is None, "drop_ws: no close frame")
    ws = await connect(fake.ws_url, proxy=None, open_timeout=3)
    status, r = await fake.post("/_wait", {"for": "client", "at_least": 3, "timeout": 3})
    check(status == 200 and r["data"]["connected"], "a new client may connect after the drop")
    await ws.close()

    # --- die
    status, r = await fake.post("/_control", {"die": True})
    check(status == 200 and r["code"] == "0", "die answers first")
    code = await asyncio.to_thread(fake.proc.wait, 5)
    check(code == 3, f"die: the process exits with status 3 ({code})")


def main():
    t0 = time.monotonic()
    fake = Fake()
    try:
        asyncio.run(run(fake))
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    finally:
        if fake.proc.poll() is None:
            fake.proc.terminate()
            fake.proc.wait(5)
    print(f"fake_ten selfcheck: all passed ({time.monotonic() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
