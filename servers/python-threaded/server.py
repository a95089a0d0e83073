"""netbench reference server: the Python standard library's http.server.

ThreadingHTTPServer with a BaseHTTPRequestHandler, protocol_version
"HTTP/1.1" (persistent connections), no dependencies. One OS thread per
connection, blocking I/O.

Follows contract/CONTRACT.md: listens on HOST:PORT (defaults 127.0.0.1 and
1234), serves /blank, /work and /echo/<text>, exits on SIGTERM. An optional
first argument "0" or "1" makes "/" answer as /blank or /work.

http.server does not decode request bodies at all: the handler reads
Content-Length bodies and decodes Transfer-Encoding: chunked itself.
"""

import json
import math
import os
import re
import signal
import socket
import sys
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: Largest request body accepted (413 above it, as the contract allows).
MAX_BODY_BYTES = 1 << 20

#: The contract's timestamp shape, YYYY-MM-DDTHH:MM:SS.sssZ, ASCII digits only
#: (\d would also take other scripts' digits).
DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")

EPOCH = datetime(1970, 1, 1)
ONE_MS = timedelta(milliseconds=1)
# datetime has no year 0, which the proleptic Gregorian calendar (and the
# contract) has. The calendar repeats every 400 years, so year 0 is checked
# and computed as year 400, then moved back by one 400-year cycle.
CYCLE_MS = 146_097 * 86_400_000
YEAR_1_MS = (datetime(1, 1, 1) - EPOCH) // ONE_MS


def parse_date(s):
    """A contract timestamp as milliseconds since the epoch, or None."""
    if not isinstance(s, str) or DATE_RE.fullmatch(s) is None:
        return None
    year = int(s[0:4])
    try:
        # datetime rejects month 13, 30 February, hour 24, second 60, ...
        t = datetime(year or 400, int(s[5:7]), int(s[8:10]), int(s[11:13]),
                     int(s[14:16]), int(s[17:19]), int(s[20:23]) * 1000)
    except ValueError:
        return None
    ms = (t - EPOCH) // ONE_MS
    return ms if year else ms - CYCLE_MS


def format_date(ms):
    """Milliseconds since the epoch as YYYY-MM-DDTHH:MM:SS.sssZ."""
    shift = 0
    if ms < YEAR_1_MS:
        ms += CYCLE_MS
        shift = 400
    t = EPOCH + timedelta(milliseconds=ms)
    return (f"{t.year - shift:04d}-{t.month:02d}-{t.day:02d}T"
            f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}.{t.microsecond // 1000:03d}Z")


def _no_constants(name):
    # json.loads takes NaN, Infinity and -Infinity by default; JSON has none.
    raise ValueError(f"not JSON: {name}")


def parse_json(body):
    """The JSON document in `body` (bytes), or raises ValueError."""
    try:
        return json.loads(body, parse_constant=_no_constants)
    except RecursionError as e:
        raise ValueError("nested too deeply") from e


def compute(doc):
    """The answer to a /work document (already JSON-parsed), or None when the
    document breaks the contract."""
    if not isinstance(doc, dict):
        return None
    product = doc.get("product")
    request_id = doc.get("requestId")
    group = doc.get("group")
    if not isinstance(product, str) or not isinstance(request_id, str) or not isinstance(group, dict):
        return None
    balance = group.get("balance")
    dates = group.get("dates")
    if (
        not isinstance(group.get("kind"), str)
        or not isinstance(group.get("default"), bool)
        # bool is a subclass of int: true is not a balance.
        or isinstance(balance, bool)
        or not isinstance(balance, (int, float))
        or not math.isfinite(balance)
        or not isinstance(dates, list)
        or not dates
    ):
        return None
    lo = hi = None
    for s in dates:
        t = parse_date(s)
        if t is None:
            return None
        if lo is None or t < lo:
            lo = t
        if hi is None or t > hi:
            hi = t
    return {
        "product": product,
        "requestId": request_id,
        "client": {"balance": balance, "minDate": format_date(lo), "maxDate": format_date(hi)},
    }


class BodyError(Exception):
    """A request body that cannot be read; the connection is closed after the
    answer, since where the next request starts is unknown."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]+")
_DIGITS = re.compile(r"[0-9]+")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    # The handler writes the head and the body of an answer in two sends
    # (the wfile is unbuffered by default). With Nagle's algorithm on, the
    # second small send waits for the client's delayed ACK: about 40 ms per
    # answer on a keep-alive connection. socketserver's own switch for
    # TCP_NODELAY turns that off.
    disable_nagle_algorithm = True

    #: "0", "1" or None: what "/" answers as (set by make_server).
    root = None

    def log_request(self, code="-", size="-"):
        # No request logging (errors still go to stderr through log_error).
        pass

    # -- bodies -------------------------------------------------------------

    def read_body(self):
        te = self.headers.get("Transfer-Encoding")
        if te is not None:
            if te.strip().lower() != "chunked":
                raise BodyError(501, "only chunked transfer coding is supported")
            return self.read_chunked()
        length = self.headers.get("Content-Length")
        if length is None:
            return b""
        length = length.strip()
        if _DIGITS.fullmatch(length) is None:
            raise BodyError(400, "bad Content-Length")
        n = int(length)
        if n > MAX_BODY_BYTES:
            raise BodyError(413, "body too large")
        body = self.rfile.read(n)
        if len(body) < n:
            raise BodyError(400, "body shorter than Content-Length")
        return body

    def read_chunked(self):
        """Decodes a Transfer-Encoding: chunked body (RFC 9112 §7.1)."""
        chunks = []
        size = 0
        while True:
            line = self.rfile.readline(1024)
            if not line.endswith(b"\n"):
                raise BodyError(400, "bad chunk size line")
            text = line.split(b";", 1)[0].strip()  # chunk extensions ignored
            if _CHUNK_SIZE.fullmatch(text) is None:
                raise BodyError(400, "bad chunk size")
            n = int(text, 16)
            if n == 0:
                break
            size += n
            if size > MAX_BODY_BYTES:
                raise BodyError(413, "body too large")
            data = self.rfile.read(n)
            if len(data) < n or self.rfile.readline(3) not in (b"\r\n", b"\n"):
                raise BodyError(400, "bad chunk")
            chunks.append(data)
        # Trailer fields, ignored, up to the empty line.
        for _ in range(100):
            line = self.rfile.readline(65537)
            if line in (b"\r\n", b"\n"):
                return b"".join(chunks)
            if not line.endswith(b"\n"):
                break
        raise BodyError(400, "bad chunked trailer")

    def has_body(self):
        return "Transfer-Encoding" in self.headers or self.headers.get("Content-Length", "0").strip() != "0"

    # -- answers ------------------------------------------------------------

    def respond(self, status, content_type, body):
        self.send_response(status)  # adds Date (and Server)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def blank(self):
        self.respond(200, "text/plain", b"OK")

    def work(self):
        try:
            body = self.read_body()
        except BodyError as e:
            self.close_connection = True
            self.send_response(e.status)
            self.send_header("Connection", "close")
            self.send_header("Content-Type", "text/plain")
            message = e.message.encode()
            self.send_header("Content-Length", str(len(message)))
            self.end_headers()
            self.wfile.write(message)
            return
        try:
            doc = parse_json(body)
        except ValueError:
            self.respond(400, "text/plain", b"bad request: not JSON")
            return
        answer = compute(doc)
        if answer is None:
            self.respond(400, "text/plain", b"bad request")
            return
        self.respond(200, "application/json", json.dumps(answer, separators=(",", ":")).encode())

    def route(self):
        """The path's handler and the methods it takes, or (None, None)."""
        path = self.path.split("?", 1)[0]
        if path == "/blank":
            return self.blank, ("GET", "HEAD")
        if path == "/work":
            return self.work, ("POST",)
        if path.startswith("/echo/"):
            text = path[len("/echo/"):].encode("latin-1")
            return (lambda: self.respond(200, "text/plain", text)), ("GET", "HEAD")
        if path == "/" and self.root == "0":
            return self.blank, ("GET", "HEAD")
        if path == "/" and self.root == "1":
            return self.work, ("POST",)
        return None, None

    def dispatch(self):
        handler, methods = self.route()
        if handler is not None and self.command in methods:
            handler()
            return
        # Not answered from the body: read it anyway, so that the next request
        # on the connection starts where it should.
        if self.has_body():
            try:
                self.read_body()
            except BodyError:
                self.close_connection = True
        if handler is None:
            self.respond(404, "text/plain", b"not found")
        else:
            self.send_response(405)
            self.send_header("Allow", ", ".join(methods))
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "18")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(b"method not allowed")

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = dispatch


def make_server(host, port, root=None):
    """A ThreadingHTTPServer bound to host:port (not yet serving)."""
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
    handler = type("RootHandler", (Handler,), {"root": root})
    server_class = type("Server", (ThreadingHTTPServer,), {"address_family": family})
    return server_class((host, port), handler)


def main(argv):
    root = argv[1] if len(argv) > 1 else None
    if root not in (None, "0", "1"):
        print(f"server: unknown argument {root!r} (expected 0 or 1)", file=sys.stderr)
        return 1
    host = os.environ.get("HOST") or "127.0.0.1"
    port = int(os.environ.get("PORT") or "1234")
    try:
        server = make_server(host, port, root)
    except OSError as e:
        print(f"server: {host}:{port}: {e}", file=sys.stderr)
        return 1

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever()
    finally:
        # Connection threads are daemon threads: they end with the process.
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
