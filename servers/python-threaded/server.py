"""netbench reference server: the Python standard library's http.server.

ThreadingHTTPServer with a BaseHTTPRequestHandler, protocol_version
"HTTP/1.1" (persistent connections). One OS thread per connection, blocking
I/O.

Follows contract/CONTRACT.md: listens on HOST:PORT (defaults 127.0.0.1 and
1234), serves /blank, /work and /echo/<text>, exits on SIGTERM. An optional
first argument "0" or "1" makes "/" answer as /blank or /work.

http.server does not decode request bodies at all: the handler reads
Content-Length bodies and decodes Transfer-Encoding: chunked itself.

The optional parts, each as plainly as the standard library allows:

- db, fortunes, queries, updates: PostgreSQL (DATABASE_URL) through psycopg 3
  and psycopg_pool's ConnectionPool of DATABASE_POOL_SIZE connections, shared
  by the connection threads (a thread blocks until a connection is free).
  Without DATABASE_URL the server runs all the same and these paths answer
  503. fortunes renders a Jinja2 template (templates/fortunes.html,
  autoescape on).
- static: /static/<name> read from ./static (the build writes the contract's
  files there), with Content-Length, an ETag from the file's mtime and size,
  Last-Modified, and 304 for a matching If-None-Match. http.server's
  SimpleHTTPRequestHandler derives no ETag, so this is done by hand; the
  bytes are copied as it copies them (shutil.copyfileobj).
- upload: the body streamed through hashlib.sha256; a Content-Length over
  16 MiB is refused with 413 from the head, and the connection closed.
- json-comp: the /work answer compressed with the gzip module when
  Accept-Encoding allows gzip.
- app: GET /app?page=K finds (or creates) the session the sid cookie names
  in a dict of this process (http.server has no sessions), counts the visit
  and renders templates/app.html with Jinja2 under the session's own lock,
  then gzips the page with the gzip module when Accept-Encoding allows gzip;
  POST /app/logout ends the session.
"""

import email.utils
import gzip
import hashlib
import json
import math
import os
import random
import re
import secrets
import shutil
import signal
import socket
import stat
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple
from urllib.parse import parse_qsl

import jinja2
import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

#: This folder: ./static and ./templates are found from it, whatever the
#: working directory.
HERE = Path(__file__).resolve().parent

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


# -- db, fortunes, queries, updates ----------------------------------------------

#: The pool size when DATABASE_POOL_SIZE is unset (the contract's minimum).
DEFAULT_POOL_SIZE = 4
#: /db/list's count when the query has none, and its largest allowed value.
DEFAULT_COUNT = 100
MAX_COUNT = 1000
# Beyond PostgreSQL's integer range the query itself would fail; the contract
# wants such a number answered 400 like any other bad parameter.
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INTEGER_RE = re.compile(r"-?[0-9]+")

ROW_SQL = "SELECT id, name, description, quantity, price, updated FROM items WHERE id = %s"
LIST_SQL = "SELECT id, name, description, quantity, price, updated FROM items WHERE id >= %s ORDER BY id LIMIT %s"

#: The fortune table (contract, "fortunes"), and the row each page adds.
FORTUNES_SQL = "SELECT id, message FROM fortune"
ADDED_FORTUNE = "Additional fortune added at request time."

#: The world table of queries and updates (contract, "queries", "updates").
WORLD_ROWS = 10_000
MAX_QUERIES = 500
WORLD_SQL = "SELECT id, randomnumber FROM world WHERE id = %s"
UPDATE_SQL = "UPDATE world SET randomnumber = %s WHERE id = %s"

EPOCH_UTC = datetime(1970, 1, 1, tzinfo=timezone.utc)


def parse_int32(s):
    """A decimal integer that fits a 32-bit signed integer, or None."""
    if not isinstance(s, str) or INTEGER_RE.fullmatch(s) is None:
        return None
    try:
        n = int(s)
    except ValueError:  # more digits than int() takes: far out of range anyway
        return None
    return n if INT32_MIN <= n <= INT32_MAX else None


def parse_row_query(params):
    """The id of /db?id=N (a mapping of the query parameters), or None for a 400."""
    return parse_int32(params.get("id"))


def parse_list_query(params):
    """(from, count) of /db/list?from=N&count=M, or None for a 400."""
    start = parse_int32(params.get("from"))
    if start is None:
        return None
    count = params.get("count")
    count = DEFAULT_COUNT if count is None else parse_int32(count)
    if count is None or not 1 <= count <= MAX_COUNT:
        return None
    return start, count


def queries_param(params):
    """?queries=N clamped as TechEmpower does: missing, empty, not an integer
    or below 1 is 1; above 500 is 500."""
    s = params.get("queries")
    if not s or not s.isascii() or not s.isdigit():
        return 1
    s = s.lstrip("0") or "0"
    n = int(s) if len(s) <= 4 else MAX_QUERIES + 1  # no int() of a huge number
    return min(max(n, 1), MAX_QUERIES)


def format_timestamp(t):
    """An aware datetime as YYYY-MM-DDTHH:MM:SS.sssZ (UTC, milliseconds cut)."""
    return format_date((t - EPOCH_UTC) // ONE_MS)


def render_row(row):
    """A row of `items` as psycopg returns it (numeric as Decimal, timestamptz
    as an aware datetime) in the contract's JSON shape."""
    item_id, name, description, quantity, price, updated = row
    return {
        "id": item_id,
        "name": name,
        "description": description,
        "quantity": quantity,
        # Prices have two decimals and stay below 100,000: a double holds them.
        "price": float(price),
        "updated": format_timestamp(updated),
    }


def pool_size(env):
    """DATABASE_POOL_SIZE (default 4); raises ValueError for a value that is
    not a positive integer."""
    value = env.get("DATABASE_POOL_SIZE") or str(DEFAULT_POOL_SIZE)
    size = parse_int32(value)
    if size is None or size < 1:
        raise ValueError(f"DATABASE_POOL_SIZE={value!r}: not a positive integer")
    return size


def open_pool(env):
    """psycopg_pool's ConnectionPool for DATABASE_URL, or None when there is
    none. Raises ValueError for a bad DATABASE_POOL_SIZE."""
    url = env.get("DATABASE_URL")
    if not url:
        return None
    size = pool_size(env)
    # psycopg_pool's default is a pool of fixed size (max_size follows
    # min_size); it is kept, at DATABASE_POOL_SIZE. Its other defaults stay
    # (a 30 s wait for a free connection, psycopg's prepare_threshold of 5:
    # a statement is prepared on a connection from its fifth use). The
    # connections run in autocommit: every statement is its own transaction,
    # with no BEGIN and COMMIT round trips around a read.
    pool = ConnectionPool(url, min_size=size, max_size=size, kwargs={"autocommit": True},
                          open=False, name="netbench")
    pool.open()
    try:
        # The pool connects in the background; waiting here makes a wrong URL
        # or a database that is down show in the log at once rather than as
        # 500s later. It is not fatal: the other paths do not need it.
        pool.wait(timeout=10)
    except PoolTimeout:
        print("server: the database is not reachable yet (its paths answer 500 until it is)",
              file=sys.stderr)
    return pool


class Fortune(NamedTuple):
    id: int
    message: str


def sorted_fortunes(rows):
    """The rows read ((id, message) pairs) and the added one, sorted by
    message (Python compares strings by code point, as the contract sorts)."""
    fortunes = [Fortune(*row) for row in rows]
    fortunes.append(Fortune(0, ADDED_FORTUNE))
    fortunes.sort(key=attrgetter("message"))
    return fortunes


#: Jinja2 with autoescape on: every {{ }} is HTML-escaped. Rendering a
#: template from several threads at once is safe.
TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True)
FORTUNES_PAGE = TEMPLATES.get_template("fortunes.html")


def render_fortunes(rows):
    """The fortunes page (bytes, UTF-8) for the rows read."""
    return FORTUNES_PAGE.render(fortunes=sorted_fortunes(rows)).encode()


def read_world(cursor, n):
    """n random rows of `world`, each read with its own query."""
    rows = []
    for _ in range(n):
        cursor.execute(WORLD_SQL, (random.randint(1, WORLD_ROWS),))
        row = cursor.fetchone()
        if row is None:
            raise LookupError("a world row is missing")
        rows.append({"id": row[0], "randomNumber": row[1]})
    return rows


# -- static, upload, json-comp ---------------------------------------------------

#: The contract's static files, written by the build (contract/static/make.py).
STATIC_DIR = HERE / "static"
#: A name served from STATIC_DIR: no slash, no leading dot, so nothing outside
#: the folder and nothing hidden.
STATIC_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
#: An entity-tag in If-None-Match, weak or strong.
ETAG_RE = re.compile(r'(?:W/)?("[^"]*")')

#: The largest upload body read (contract, "upload"): 16 MiB.
UPLOAD_LIMIT = 16 * 1024 * 1024
#: How much of a body is read at once (and handed to the digest).
PIECE = 64 * 1024
#: How long a connection closed after a refused body goes on being read (and
#: the bytes dropped) after the answer, so that the client reads the answer
#: rather than a reset (Apache's lingering close reads for 2 s at most).
LINGER_SECONDS = 2.0


def etag_matches(header, etag):
    """Whether an If-None-Match value names `etag`, by weak comparison
    (RFC 9110 §13.1.2: W/ is ignored on both sides), or is *."""
    if header.strip() == "*":
        return True
    opaque = etag[2:] if etag.startswith("W/") else etag
    return opaque in ETAG_RE.findall(header)


def accepts_gzip(values):
    """Whether the Accept-Encoding header lines `values` allow gzip (RFC 9110
    §12.5.3): gzip (or x-gzip, or *) listed without q=0. A coding named
    explicitly wins over *."""
    star = False
    for line in values:
        for item in line.split(","):
            name, _, params = item.partition(";")
            name = name.strip().lower()
            if name not in ("gzip", "x-gzip", "*"):
                continue
            allowed = not q_zero(params)
            if name == "*":
                star = allowed
                continue
            return allowed
    return star


def q_zero(params):
    """Whether the parameters of an Accept-Encoding item set q to 0."""
    for param in params.split(";"):
        key, sep, value = param.partition("=")
        if sep and key.strip().lower() == "q":
            try:
                return float(value.strip()) == 0
            except ValueError:
                return False
    return False


def to_json(value):
    return json.dumps(value, separators=(",", ":")).encode()


# -- app -------------------------------------------------------------------------

#: The contract's stylesheet and script, put into every page byte for byte:
#: read once at start-up, from the repository's contract/app.
APP_DIR = HERE.parent.parent / "contract" / "app"
APP_CSS = (APP_DIR / "app.css").read_text(encoding="utf-8")
APP_JS = (APP_DIR / "app.js").read_text(encoding="utf-8")
APP_PAGE = TEMPLATES.get_template("app.html")

#: The session cookie's name.
SESSION_COOKIE = "sid"
#: A session unused this long may be dropped (the contract's floor: never sooner).
SESSION_IDLE_SECONDS = 600
#: How often, at most, the store looks for idle sessions.
SWEEP_SECONDS = 60

ITEMS_PER_PAGE = 50
MAX_PAGE = 100_000
LABELS = (
    "Tom & Jerry's cheese board",
    "<b>bold</b> move of the week",
    '"Quoted" goods, boxed',
    "O'Brien's pick for winter",
    "a < b > c, the ordered set",
)


class Item(NamedTuple):
    number: int
    label: str
    quantity: int
    price: str
    total: str


def parse_page(params):
    """K of /app?page=K (a mapping of the query parameters), 1 to 100,000,
    or None for a 400."""
    s = params.get("page")
    if not s or not s.isascii() or not s.isdigit():
        return None
    s = s.lstrip("0")
    if not s or len(s) > 6:  # no int() of a huge number
        return None
    k = int(s)
    return k if k <= MAX_PAGE else None


def session_id(values):
    """The session id the Cookie header lines `values` name, or None."""
    for line in values:
        for part in line.split(";"):
            name, sep, value = part.partition("=")
            if sep and name.strip() == SESSION_COOKIE:
                return value.strip()
    return None


def format_cents(cents):
    """Cents as <cents / 100>.<two digits>, in integers."""
    return f"{cents // 100}.{cents % 100:02d}"


def page_items(k):
    """The 50 item rows of page K, from the contract's formula."""
    items = []
    for i in range(1, ITEMS_PER_PAGE + 1):
        quantity = (k * 7 + i * 13) % 100 + 1
        cents = (k * 7919 + i * 104729) % 100_000
        items.append(Item((k - 1) * ITEMS_PER_PAGE + i, f"{LABELS[(k + i) % len(LABELS)]}, no. {k}.{i}",
                          quantity, format_cents(cents), format_cents(quantity * cents)))
    return items


def render_app(k, visits, since):
    """The page (bytes, UTF-8) for K and a session's counter and creation time."""
    return APP_PAGE.render(page=k, visits=visits, since=since, items=page_items(k),
                           css=APP_CSS, js=APP_JS).encode()


class Session:
    """A session's state and the lock a request holds from reading `visits`
    to the end of its page."""

    __slots__ = ("lock", "visits", "since", "seen")

    def __init__(self, now):
        self.lock = threading.Lock()
        self.visits = 0
        self.since = time.time_ns() // 1_000_000  # ms since the epoch
        self.seen = now  # time.monotonic() of its last request, for the sweep


class SessionStore:
    """Sessions in this process's memory, shared by the connection threads:
    one lock over the dict (find, add, drop), held only for that, so that
    pages of different sessions render at once."""

    def __init__(self):
        self._lock = threading.Lock()
        self._sessions = {}
        self._swept = time.monotonic()

    def open(self, sid, now=None):
        """(id, session, created): the live session `sid` names, or a new
        one under a fresh id (128 bits from the secrets module), never `sid`."""
        if now is None:
            now = time.monotonic()
        with self._lock:
            if now - self._swept >= SWEEP_SECONDS:
                self._sweep(now)
            session = self._sessions.get(sid) if sid is not None else None
            if session is not None:
                session.seen = now
                return sid, session, False
            fresh = secrets.token_hex(16)
            while fresh == sid or fresh in self._sessions:
                fresh = secrets.token_hex(16)
            session = self._sessions[fresh] = Session(now)
            return fresh, session, True

    def drop(self, sid):
        with self._lock:
            self._sessions.pop(sid, None)

    def _sweep(self, now):
        # Called with the lock held; lazily, from open, so no thread of its own.
        self._swept = now
        idle = [sid for sid, s in self._sessions.items() if now - s.seen > SESSION_IDLE_SECONDS]
        for sid in idle:
            del self._sessions[sid]


# -- the handler ---------------------------------------------------------------


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
    #: The ConnectionPool, or None without DATABASE_URL (set by make_server).
    pool = None
    #: The app's SessionStore (set by make_server).
    sessions = None

    def log_request(self, code="-", size="-"):
        # No request logging (errors still go to stderr through log_error).
        pass

    # -- bodies -------------------------------------------------------------

    def body_pieces(self, limit):
        """The request body as it arrives, in pieces of at most PIECE bytes,
        framed by Content-Length or chunked. Raises BodyError, for a body over
        `limit` bytes (413) before reading it."""
        te = self.headers.get("Transfer-Encoding")
        if te is not None:
            if te.strip().lower() != "chunked":
                raise BodyError(501, "only chunked transfer coding is supported")
            yield from self.chunked_pieces(limit)
            return
        length = self.headers.get("Content-Length")
        if length is None:
            return
        length = length.strip()
        if _DIGITS.fullmatch(length) is None:
            raise BodyError(400, "bad Content-Length")
        n = int(length)
        if n > limit:
            raise BodyError(413, "body too large")
        while n:
            piece = self.rfile.read(min(n, PIECE))
            if not piece:
                raise BodyError(400, "body shorter than Content-Length")
            n -= len(piece)
            yield piece

    def chunked_pieces(self, limit):
        """Decodes a Transfer-Encoding: chunked body (RFC 9112 §7.1)."""
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
            if size > limit:
                raise BodyError(413, "body too large")
            while n:
                data = self.rfile.read(min(n, PIECE))
                if not data:
                    raise BodyError(400, "bad chunk")
                n -= len(data)
                yield data
            if self.rfile.readline(3) not in (b"\r\n", b"\n"):
                raise BodyError(400, "bad chunk")
        # Trailer fields, ignored, up to the empty line.
        for _ in range(100):
            line = self.rfile.readline(65537)
            if line in (b"\r\n", b"\n"):
                return
            if not line.endswith(b"\n"):
                break
        raise BodyError(400, "bad chunked trailer")

    def read_body(self):
        return b"".join(self.body_pieces(MAX_BODY_BYTES))

    def has_body(self):
        return "Transfer-Encoding" in self.headers or self.headers.get("Content-Length", "0").strip() != "0"

    def refuse(self, error):
        """Answers a BodyError and closes the connection: its answer, then a
        lingering close (the sending side shut down, what the client still
        sends read and dropped for a while), so that a client still sending
        the body reads the answer rather than a reset."""
        self.close_connection = True
        message = error.message.encode()
        self.send_response(error.status)
        self.send_header("Connection", "close")
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(message)))
        self.end_headers()
        self.wfile.write(message)
        sock = self.connection
        try:
            sock.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + LINGER_SECONDS
            while (left := deadline - time.monotonic()) > 0:
                sock.settimeout(left)
                if not sock.recv(PIECE):
                    break  # the client closed its side
        except OSError:
            pass  # a reset, or the time is up

    # -- answers ------------------------------------------------------------

    def respond(self, status, content_type, body, headers=()):
        self.send_response(status)  # adds Date (and Server)
        self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def params(self):
        """The query string's parameters, the first of each name."""
        _, _, query = self.path.partition("?")
        params = {}
        for name, value in parse_qsl(query, keep_blank_values=True):
            params.setdefault(name, value)
        return params

    def blank(self):
        self.respond(200, "text/plain", b"OK")

    def work(self):
        try:
            body = self.read_body()
        except BodyError as e:
            self.refuse(e)
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
        out = to_json(answer)
        headers = [("Vary", "Accept-Encoding")]
        # json-comp: gzip (the gzip module at its default level, 9), whatever
        # the size, when the request allows it; no brotli in the standard
        # library, so a request allowing only br gets the plain answer.
        if accepts_gzip(self.headers.get_all("Accept-Encoding", [])):
            out = gzip.compress(out)
            headers.append(("Content-Encoding", "gzip"))
        self.respond(200, "application/json", out, headers)

    def upload(self):
        # A Content-Length over the limit is refused before a byte of the body
        # is read (body_pieces raises at once), a chunked body once it grows
        # past it.
        digest = hashlib.sha256()
        length = 0
        try:
            for piece in self.body_pieces(UPLOAD_LIMIT):
                digest.update(piece)
                length += len(piece)
        except BodyError as e:
            self.refuse(e)
            return
        self.respond(200, "application/json", to_json({"length": length, "sha256": digest.hexdigest()}))

    def static(self, name):
        """/static/<name>: the file from STATIC_DIR, read for every request."""
        if STATIC_NAME.fullmatch(name) is None:
            self.respond(404, "text/plain", b"not found")
            return
        try:
            f = open(STATIC_DIR / name, "rb")
        except OSError:
            self.respond(404, "text/plain", b"not found")
            return
        with f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                self.respond(404, "text/plain", b"not found")
                return
            # Derived from the file's mtime and size, as nginx and Apache do.
            etag = f'"{st.st_mtime_ns:x}-{st.st_size:x}"'
            validators = [("ETag", etag), ("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True))]
            if_none_match = self.headers.get_all("If-None-Match")
            if if_none_match and etag_matches(",".join(if_none_match), etag):
                self.send_response(304)
                for header in validators:
                    self.send_header(*header)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(st.st_size))
            for header in validators:
                self.send_header(*header)
            self.end_headers()
            if self.command != "HEAD":
                # As SimpleHTTPRequestHandler copies a file.
                shutil.copyfileobj(f, self.wfile)

    # -- app ----------------------------------------------------------------

    def app(self):
        k = parse_page(self.params())
        if k is None:
            # Before the session is looked at: a bad page leaves sessions untouched.
            self.respond(400, "text/plain", b"page must be an integer from 1 to 100000")
            return
        sid, session, created = self.sessions.open(session_id(self.headers.get_all("Cookie", [])))
        # Two requests on one session (two connections, two threads) must
        # never see the same count: the count and the page it shows are done
        # under the session's lock.
        with session.lock:
            session.visits += 1
            page = render_app(k, session.visits, session.since)
        headers = [("Cache-Control", "no-store"), ("Vary", "Accept-Encoding")]
        if created:
            headers.append(("Set-Cookie", f"{SESSION_COOKIE}={sid}; Path=/; HttpOnly"))
        # gzip as /work's json-comp: the gzip module at its default level (9).
        if accepts_gzip(self.headers.get_all("Accept-Encoding", [])):
            page = gzip.compress(page)
            headers.append(("Content-Encoding", "gzip"))
        self.respond(200, "text/html; charset=utf-8", page, headers)

    def app_logout(self):
        if self.has_body():  # none is expected; read so the next request starts right
            try:
                self.read_body()
            except BodyError as e:
                self.refuse(e)
                return
        self.sessions.drop(session_id(self.headers.get_all("Cookie", [])))
        self.respond(200, "text/plain", b"logged out",
                     [("Set-Cookie", f"{SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly")])

    # -- the database's paths ---------------------------------------------------

    def with_database(self, answer):
        """Runs answer(connection) on a connection from the pool, or answers
        503 without one and 500 when the database fails."""
        if self.pool is None:
            self.respond(503, "text/plain", b"no database: DATABASE_URL is not set")
            return
        try:
            with self.pool.connection() as conn:
                status, content_type, body = answer(conn)
        except (psycopg.Error, LookupError) as e:
            self.log_error("database: %s", e)
            self.respond(500, "text/plain", b"database error")
            return
        self.respond(status, content_type, body)

    def db_row(self):
        item_id = parse_row_query(self.params())
        if item_id is None:
            self.respond(400, "text/plain", b"id must be a 32-bit integer")
            return

        def answer(conn):
            row = conn.execute(ROW_SQL, (item_id,)).fetchone()
            if row is None:
                return 404, "text/plain", b"no such row"
            return 200, "application/json", to_json(render_row(row))

        self.with_database(answer)

    def db_list(self):
        query = self.params()
        query = parse_list_query(query)
        if query is None:
            self.respond(400, "text/plain", b"from must be a 32-bit integer, count one from 1 to 1000")
            return
        self.with_database(lambda conn: (
            200, "application/json", to_json([render_row(row) for row in conn.execute(LIST_SQL, query)])))

    def fortunes(self):
        self.with_database(lambda conn: (
            200, "text/html; charset=utf-8", render_fortunes(conn.execute(FORTUNES_SQL).fetchall())))

    def queries(self):
        n = queries_param(self.params())
        self.with_database(lambda conn: (200, "application/json", to_json(read_world(conn.cursor(), n))))

    def updates(self):
        n = queries_param(self.params())

        def answer(conn):
            cursor = conn.cursor()
            rows = read_world(cursor, n)
            for row in rows:
                row["randomNumber"] = random.randint(1, WORLD_ROWS)
            # One UPDATE per row, sent together: psycopg's executemany
            # pipelines them (one round trip). In id order, so that two
            # requests writing the same rows lock them in the same order.
            cursor.executemany(UPDATE_SQL, [(row["randomNumber"], row["id"])
                                            for row in sorted(rows, key=lambda row: row["id"])])
            return 200, "application/json", to_json(rows)

        self.with_database(answer)

    # -- routing ------------------------------------------------------------

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
        if path == "/db":
            return self.db_row, ("GET",)
        if path == "/db/list":
            return self.db_list, ("GET",)
        if path.startswith("/static/"):
            name = path[len("/static/"):]
            return (lambda: self.static(name)), ("GET", "HEAD")
        if path == "/upload":
            return self.upload, ("POST",)
        if path == "/fortunes":
            return self.fortunes, ("GET",)
        if path == "/queries":
            return self.queries, ("GET",)
        if path == "/updates":
            return self.updates, ("GET",)
        if path == "/app":
            return self.app, ("GET",)
        if path == "/app/logout":
            return self.app_logout, ("POST",)
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


def make_server(host, port, root=None, pool=None):
    """A ThreadingHTTPServer bound to host:port (not yet serving)."""
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
    handler = type("RootHandler", (Handler,), {"root": root, "pool": pool, "sessions": SessionStore()})
    server_class = type("Server", (ThreadingHTTPServer,), {"address_family": family})
    return server_class((host, port), handler)


def main(argv):
    root = argv[1] if len(argv) > 1 else None
    if root not in (None, "0", "1"):
        print(f"server: unknown argument {root!r} (expected 0 or 1)", file=sys.stderr)
        return 1
    host = os.environ.get("HOST") or "127.0.0.1"
    port = int(os.environ.get("PORT") or "1234")
    if not STATIC_DIR.is_dir():
        print(f"server: no {STATIC_DIR} (the build writes it), /static/ answers 404", file=sys.stderr)
    try:
        pool = open_pool(os.environ)
    except ValueError as e:
        print(f"server: {e}", file=sys.stderr)
        return 1
    try:
        server = make_server(host, port, root, pool)
    except OSError as e:
        print(f"server: {host}:{port}: {e}", file=sys.stderr)
        if pool is not None:
            pool.close()
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
        if pool is not None:
            # Waits a little for connections in use; a query stuck on a dead
            # database must not hold up the exit.
            pool.close(timeout=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
