#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Fake SUSI.AI server for glassd's integration tests.

Usage: fake_susi.py [--port N]

Binds 127.0.0.1 (port 0 = ephemeral), prints one line "listening on <port>"
to stdout, then serves until SIGTERM or SIGINT (exit status 0).

GET /susi/chat.json?q=...
    Answers the way SUSI does (query, query_date, answer_date, answer_time,
    session, answers[0] with data, metadata, actions and skills), chosen by
    the question q (trimmed, case ignored):
      text       one answer action
      link       answer + anchor
      news       answer + rss naming the keys of its data rows
      table      answer + table (columns object key -> header) over data rows
      map        answer + map with coordinates and zoom as strings
      search     websearch
      mixed      answer, anchor, rss, table and map in one answer
      unknown    answer, an unknown type with an expression, one without
      malformed  a 200 whose body is cut-off JSON
      empty      answers: []
      slow       waits SLOW_SECONDS, then an echo answer
      error500   HTTP 500
    Anything else: one answer action echoing the question.  Without q: 400.

GET /_requests lists the query parameters of every chat request so far
(each an object name -> value, the last value when repeated); POST /_reset
forgets them.
"""

import argparse
import json
import signal
import sys
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

SLOW_SECONDS = 2.0

NEWS = [
    {"headline": "Rain expected in the north", "summary": "Bring an umbrella", "url": "https://news.test/rain"},
    {"headline": "Bridge reopens", "url": "https://news.test/bridge"},
    {"headline": "Library extends hours", "summary": "Open until 22:00", "url": "https://news.test/library"},
]
# Keys deliberately not alphabetical: the client must keep the columns object's order.
CITIES = [
    {"city": "Berlin", "population": "3645000", "country": "Germany"},
    {"city": "Paris", "population": "2161000", "country": "France"},
    {"city": "Madrid", "population": "3223000", "country": "Spain"},
]
TABLE = {"type": "table", "columns": {"population": "Population", "city": "City", "country": "Country"}, "count": -1}
RSS = {"type": "rss", "title": "headline", "description": "summary", "link": "url", "count": -1}
MAP = {"type": "map", "latitude": "52.5200", "longitude": "13.4050", "zoom": "13"}


def answer(text):
    return {"type": "answer", "expression": text}


def script(question):
    """(actions, data, skill) for a question, or None when it has no canned answer."""
    return {
        "text": ([answer("Hello, I am SUSI.")], [], "/en_conversation/hello.txt"),
        "link": ([answer("Here is the project page."), {"type": "anchor", "link": "https://susi.test/", "text": "SUSI.AI"}],
                 [], "/en_knowledge/links.txt"),
        "news": ([answer("Here are the headlines:"), RSS], NEWS, "/en_news/headlines.txt"),
        "table": ([answer("The largest cities:"), TABLE], CITIES, "/en_knowledge/cities.txt"),
        "map": ([answer("Berlin"), MAP], [], "/en_locations/where.txt"),
        "search": ([{"type": "websearch", "query": "glassd smart glasses", "count": -1}], [], "/en_web/search.txt"),
        "mixed": ([answer("Everything at once:"), {"type": "anchor", "link": "https://susi.test/", "text": "SUSI.AI"},
                   dict(RSS, count=2), TABLE, MAP], NEWS, "/en_test/mixed.txt"),
        "unknown": ([answer("Playing music."), {"type": "emotion", "expression": "happy"},
                     {"type": "audio_play", "identifier": "abc", "identifier_type": "youtube"}], [], "/en_music/play.txt"),
    }.get(question)


def stamp(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def response(question, actions, data, skill, started):
    ended = datetime.now(timezone.utc)
    return {
        "query": question,
        "client_id": "aG9zdF8xMjcuMC4wLjE=",
        "query_date": stamp(started),
        "answers": [{
            "data": data,
            "metadata": {"count": len(data), "offset": 0, "hits": len(data)},
            "actions": actions,
            "skills": [skill],
            "persona": {},
        }],
        "answer_date": stamp(ended),
        "answer_time": int((ended - started).total_seconds() * 1000),
        "query_language": "en",
        "session": {"identity": {"type": "host", "name": "127.0.0.1", "anonymous": True}},
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass  # stdout carries the port line only; tests read /_requests instead

    def send(self, status, body, content_type="application/json; charset=utf-8"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/_requests":
            with self.server.lock:
                self.send(200, json.dumps(self.server.requests))
            return
        if url.path != "/susi/chat.json":
            self.send(404, "not found\n", "text/plain")
            return
        params = dict(parse_qsl(url.query, keep_blank_values=True))
        with self.server.lock:
            self.server.requests.append(params)
        started = datetime.now(timezone.utc)
        question = params.get("q", "").strip()
        if not question:
            self.send(400, "q is required\n", "text/plain")
            return
        key = question.lower()
        if key == "error500":
            self.send(500, "Internal Server Error\n", "text/plain")
        elif key == "malformed":
            self.send(200, '{"query":"malformed","answers":[{"actions":[{"type":"answer","expr')
        elif key == "empty":
            body = response(question, [], [], "", started)
            body["answers"] = []
            self.send(200, json.dumps(body))
        else:
            if key == "slow":
                time.sleep(SLOW_SECONDS)
            canned = script(key) or ([answer(f"You said: {question}")], [], "/en_conversation/echo.txt")
            self.send(200, json.dumps(response(question, *canned, started)))

    def do_POST(self):
        if urlsplit(self.path).path == "/_reset":
            with self.server.lock:
                self.server.requests.clear()
            self.send(200, "{}")
        else:
            self.send(404, "not found\n", "text/plain")


def main(argv=None):
    parser = argparse.ArgumentParser(description="Fake SUSI.AI server")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.lock = threading.Lock()
    server.requests = []

    def on_signal(signum, frame):
        # shutdown() waits for serve_forever(), which runs on this thread: ask from another.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    print(f"listening on {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
