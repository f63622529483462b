"""An HTTP proxy in front of the S3 test server that counts, delays and breaks requests.

    python s3_proxy.py PORT UPSTREAM_URL        # serves until killed

Clients talk to http://127.0.0.1:PORT as to the server itself (path-style S3); every
request is forwarded to UPSTREAM_URL unchanged, Host header included, so signatures made
for the proxy's address are the ones the server sees (moto does not check them).

The proxy answers its own paths under /__proxy/:
    GET /__proxy/stats        {"requests": N, "bytes_in": B, "bytes_out": B, "by_method": {...},
                               "max_in_flight": most requests being answered at once}
    GET /__proxy/log          one line per request: METHOD PATH?QUERY RANGE STATUS BYTES_OUT
                              @START+TOOKms (milliseconds since the reset, latency included)
    POST /__proxy/reset       zeroes the counters and the log, removes every fault
    POST /__proxy/set?latency_ms=20&fail_every=3&fail_status=503&drop_every=0&fail_method=PUT
                              latency before each answer; answer every Nth request (of
                              fail_method, when given) with fail_status instead of
                              forwarding it; cut every Nth body (GETs) halfway;
                              strip_conditional=1 drops If-None-Match, as a server that
                              ignores conditional writes would; shift_ranges=N asks for
                              an explicit range N bytes later than the client did, as a
                              server answering the wrong bytes would (its Content-Range
                              says which it sent).
The counters count requests forwarded; refused and cut ones are in the log too."""
import http.client
import http.server
import json
import re
import sys
import threading
import time
import urllib.parse


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.requests = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self.by_method = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self.log = []
        self.latency_ms = 0
        self.fail_every = 0
        self.fail_status = 503
        self.fail_method = ""
        self.drop_every = 0
        self.strip_conditional = 0
        self.shift_ranges = 0
        self.seen = 0
        self.seen_gets = 0
        self.t0 = time.monotonic()


STATE = State()
UPSTREAM = None
LOCAL = threading.local()


def upstream():
    conn = getattr(LOCAL, "conn", None)
    if conn is None:
        conn = LOCAL.conn = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=60)
    return conn


def timing(began):
    now = time.monotonic()
    return f" @{(began - STATE.t0) * 1000:.0f}+{(now - began) * 1000:.0f}ms"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One write per answer, sent at once: headers and body written apart would wait out
    # the client's delayed ACK (Nagle), adding 40 ms to requests the proxy should not slow.
    wbufsize = 1 << 20
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def answer(self, status, body, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def control(self):
        url = urllib.parse.urlsplit(self.path)
        with STATE.lock:
            if url.path == "/__proxy/stats":
                body = json.dumps({"requests": STATE.requests, "bytes_in": STATE.bytes_in,
                                   "bytes_out": STATE.bytes_out, "by_method": STATE.by_method,
                                   "max_in_flight": STATE.max_in_flight}).encode()
            elif url.path == "/__proxy/log":
                body = ("\n".join(STATE.log) + "\n").encode()
            elif url.path == "/__proxy/reset":
                STATE.reset()
                body = b"{}"
            elif url.path == "/__proxy/set":
                for k, v in urllib.parse.parse_qsl(url.query):
                    setattr(STATE, k, v if k == "fail_method" else int(v))
                STATE.seen = STATE.seen_gets = 0
                body = b"{}"
            else:
                return self.answer(404, b"unknown proxy path")
        self.answer(200, body, [("Content-Type", "application/json")])

    def forward(self):
        if self.path.startswith("/__proxy/"):
            return self.control()
        with STATE.lock:
            STATE.in_flight += 1
            STATE.max_in_flight = max(STATE.max_in_flight, STATE.in_flight)
        try:
            self.relay()
        finally:
            with STATE.lock:
                STATE.in_flight -= 1

    def relay(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        rng = self.headers.get("Range", "-")
        began = time.monotonic()
        with STATE.lock:
            latency = STATE.latency_ms
            counts = not STATE.fail_method or STATE.fail_method == self.command
            if counts:
                STATE.seen += 1
            fail = counts and STATE.fail_every and STATE.seen % STATE.fail_every == 0
            status = STATE.fail_status
            if self.command == "GET":
                STATE.seen_gets += 1
            drop = self.command == "GET" and STATE.drop_every and STATE.seen_gets % STATE.drop_every == 0
        if latency:
            time.sleep(latency / 1000)
        if fail:
            with STATE.lock:
                STATE.log.append(f"{self.command} {self.path} {rng} {status}(injected) 0{timing(began)}")
            return self.answer(status, b"<Error><Code>SlowDown</Code><Message>injected</Message></Error>",
                               [("Content-Type", "application/xml")])
        dropped = ("connection", "expect") + (("if-none-match",) if STATE.strip_conditional else ())
        headers = {k: v for k, v in self.headers.items() if k.lower() not in dropped}
        explicit = re.fullmatch(r"bytes=(\d+)-(\d+)", rng)
        if self.command == "GET" and STATE.shift_ranges and explicit:
            first, last = (int(g) + STATE.shift_ranges for g in explicit.groups())
            headers = {k: (f"bytes={first}-{last}" if k.lower() == "range" else v) for k, v in headers.items()}
        for attempt in range(2):
            try:
                conn = upstream()
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                break
            except (http.client.HTTPException, OSError):
                LOCAL.conn = None
                if attempt:
                    raise
        with STATE.lock:
            STATE.requests += 1
            STATE.bytes_in += len(body)
            STATE.bytes_out += len(data)
            STATE.by_method[self.command] = STATE.by_method.get(self.command, 0) + 1
            STATE.log.append(f"{self.command} {self.path} {rng} {resp.status}{'(cut)' if drop else ''} {len(data)}"
                             f"{timing(began)}")
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                self.send_header(k, v)
        # A HEAD's answer names the object's length, not its own (empty) body's.
        length = resp.getheader("Content-Length") if self.command == "HEAD" else None
        self.send_header("Content-Length", length or str(len(data)))
        self.end_headers()
        if drop and len(data) > 1:
            self.wfile.write(data[: len(data) // 2])
            self.close_connection = True
            return
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward


def main():
    global UPSTREAM
    port, UPSTREAM = int(sys.argv[1]), urllib.parse.urlsplit(sys.argv[2])
    # socketserver's listen backlog of 5 drops the SYNs of a client opening more
    # connections at once, which then wait a second to retry: a stall no S3 endpoint has.
    http.server.ThreadingHTTPServer.request_queue_size = 128
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"s3_proxy: 127.0.0.1:{port} -> {sys.argv[2]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
