#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A loopback proxy in front of a real OpenAI-compatible server that keeps what it was asked.

  recording_proxy.py UPSTREAM_BASE_URL     (e.g. http://127.0.0.1:8080/v1)

Prints "listening on PORT" first. Every request under /v1 is passed on unchanged and the answer
streamed back piece by piece as it arrives (the connection closes at its end); GET /_requests lists
the JSON requests received, oldest first, as [{"path": ..., "body": {...}, "first_byte_seconds": ...,
"seconds": ...}] (as the fake server does; the times are the upstream's, from the request sent on to its
answer's first piece and to its end).
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

upstream = urllib.parse.urlsplit(sys.argv[1])
requests = []
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):
        sys.stderr.write("proxy: " + (fmt % args) + "\n")

    def do_GET(self):
        if self.path == "/_requests":
            with lock:
                data = json.dumps(requests).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.forward(None)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        entry = {"path": self.path}
        try:
            entry["body"] = json.loads(body)
            with lock:
                requests.append(entry)
        except ValueError:
            pass
        self.forward(body, entry)

    def forward(self, body, entry=None):
        entry = {} if entry is None else entry
        start = time.perf_counter()
        connection = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=120)
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization", "accept")}
        connection.request(self.command, self.path, body=body, headers=headers)
        response = connection.getresponse()
        self.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(key, value)
        self.send_header("Connection", "close")
        self.end_headers()
        while True:
            piece = response.read1(65536)
            if not piece:
                break
            entry.setdefault("first_byte_seconds", time.perf_counter() - start)
            self.wfile.write(piece)
            self.wfile.flush()
        connection.close()
        entry["seconds"] = time.perf_counter() - start


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()
