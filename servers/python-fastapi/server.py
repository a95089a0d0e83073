"""netbench reference server: FastAPI on uvicorn (uvloop + httptools).

Follows contract/CONTRACT.md: listens on HOST:PORT (defaults 127.0.0.1 and
1234), serves /blank, /work and /echo/<text>, exits on SIGTERM. An optional
first argument "0" or "1" makes "/" answer as /blank or /work.

`python server.py` starts uvicorn with one worker process per CPU this
process may run on (len(os.sched_getaffinity(0))), access log off and log
level "warning" (no line per WebSocket connection either), otherwise
uvicorn's defaults: uvicorn[standard] makes its "auto" loop and HTTP parser
uvloop and httptools. The uvicorn main process binds the socket and supervises
the workers; each worker is one asyncio (uvloop) event loop in one thread.

The /work document is validated by a strict pydantic model (lax mode would
take "1" as a number and "yes" as a boolean); FastAPI's 422 for a document it
cannot validate is answered as 400, as the contract wants.

The optional parts of contract 1.1: /db and /db/list read PostgreSQL through
an asyncpg pool per worker (DATABASE_URL; the workers share
DATABASE_POOL_SIZE connections between them); /ws is FastAPI's WebSocket route
on uvicorn's websockets-based protocol, without permessage-deflate. Without
DATABASE_URL the server runs all the same and /db answers 503.

The optional parts of contract 1.2 and 1.3, each with the framework's own
facility where it has one: /static/ is Starlette's StaticFiles on ./static
(the build writes the contract's files there; without them /static/ answers
404); /upload streams the body through hashlib.sha256, refusing a
Content-Length over 16 MiB from the head; /work is compressed by Starlette's
GZipMiddleware (minimum size 0) when Accept-Encoding allows gzip; /fortunes
reads the fortune table through the same asyncpg pool and renders it with
FastAPI's Jinja2Templates (Jinja2, autoescape on for .html), and answers 503
without DATABASE_URL as /db does. /queries and /updates read the world table
through the same pool, one fetchrow per row on one acquired connection
(random.randint ids); /updates writes the new numbers with executemany. Both
answer 503 without DATABASE_URL.

The optional part of contract 1.4: GET /app?page=K finds (or creates) the
session the sid cookie names in a store all the workers share (sessions.py:
FastAPI has no server-side sessions, and a worker's own dict would not know
a session another worker made), counts the visit and renders
templates/app.html through the same Jinja2Templates while the session's
slot is locked; the same GZipMiddleware compresses it. POST /app/logout
ends the session.
"""

import asyncio
import hashlib
import os
import random
import re
import sys
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Annotated, NamedTuple

import asyncpg
import sessions
from fastapi import FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import PlainTextResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from starlette.datastructures import Headers
from starlette.middleware.gzip import GZipMiddleware, GZipResponder, IdentityResponder
from starlette.requests import ClientDisconnect

#: The environment variable through which `python server.py 0|1` tells the
#: worker processes (which import this module afresh) what "/" answers as.
ROOT_ENV = "NETBENCH_ROOT"
#: The environment variable through which `python server.py` tells the worker
#: processes how many of them share DATABASE_POOL_SIZE.
WORKERS_ENV = "NETBENCH_WORKERS"
#: The environment variable through which `python server.py` tells the worker
#: processes where the session store they share is.
SESSIONS_ENV = "NETBENCH_SESSIONS"
#: This folder: ./static and ./templates are found from it, whatever the
#: working directory.
HERE = Path(__file__).resolve().parent

# -- dates ------------------------------------------------------------------

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


def _timestamp(value):
    t = parse_date(value)
    if t is None:
        raise ValueError("not a YYYY-MM-DDTHH:MM:SS.sssZ timestamp")
    return t


#: A contract timestamp in the document, as milliseconds since the epoch.
Timestamp = Annotated[int, BeforeValidator(_timestamp)]

# -- the /work document -----------------------------------------------------


class Group(BaseModel):
    # Strict: no "1" for 1, no 1 or "true" for true. Extra keys are ignored.
    model_config = ConfigDict(strict=True)

    kind: str
    default: bool
    balance: float = Field(allow_inf_nan=False)  # ints are taken, booleans not
    dates: list[Timestamp] = Field(min_length=1)


class Work(BaseModel):
    model_config = ConfigDict(strict=True)

    product: str
    requestId: str
    group: Group


class Client(BaseModel):
    balance: float
    minDate: str
    maxDate: str


class Answer(BaseModel):
    product: str
    requestId: str
    client: Client


# -- db ---------------------------------------------------------------------

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

ROW_SQL = "SELECT id, name, description, quantity, price, updated FROM items WHERE id = $1"
LIST_SQL = "SELECT id, name, description, quantity, price, updated FROM items WHERE id >= $1 ORDER BY id LIMIT $2"

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


def format_timestamp(t):
    """An aware datetime as YYYY-MM-DDTHH:MM:SS.sssZ (UTC, milliseconds cut)."""
    return format_date((t - EPOCH_UTC) // ONE_MS)


class Item(BaseModel):
    id: int
    name: str
    description: str
    quantity: int
    price: float
    updated: str


def render_row(row):
    """A row of `items` as asyncpg returns it (numeric as Decimal, timestamptz
    as an aware datetime) in the contract's JSON shape."""
    return Item(
        id=row["id"],
        name=row["name"],
        description=row["description"],
        quantity=row["quantity"],
        # Prices have two decimals and stay below 100,000: a double holds them.
        price=float(row["price"]),
        updated=format_timestamp(row["updated"]),
    )


def pool_size(env):
    """This worker's share of DATABASE_POOL_SIZE: the workers of one server
    together open at most that many connections. Raises ValueError for a value
    that is not a positive integer."""
    value = env.get("DATABASE_POOL_SIZE") or str(DEFAULT_POOL_SIZE)
    total = parse_int32(value)
    if total is None or total < 1:
        raise ValueError(f"DATABASE_POOL_SIZE={value!r}: not a positive integer")
    workers = int(env.get(WORKERS_ENV) or "1")
    return max(1, total // workers)


async def create_pool(env):
    """asyncpg's pool for DATABASE_URL, or None when there is none."""
    url = env.get("DATABASE_URL")
    if not url:
        return None
    size = pool_size(env)
    # asyncpg's defaults (min_size=10, max_size=10) open the whole pool up
    # front; min_size follows the smaller max_size to keep that.
    return await asyncpg.create_pool(url, min_size=size, max_size=size)


@asynccontextmanager
async def lifespan(app):
    # The store `python server.py` made for all its workers; under another
    # runner (uvicorn server:app), one of this process's own.
    shared = os.environ.get(SESSIONS_ENV)
    path = shared or sessions.create_file()
    app.state.sessions = sessions.SessionStore(path)
    if not shared:
        os.unlink(path)  # mapped and open: it stays until this process ends
    app.state.pool = await create_pool(os.environ)
    try:
        yield
    finally:
        app.state.sessions.close()
        if app.state.pool is not None:
            try:
                # close() waits for connections in use; a query stuck on a
                # dead database must not hold up the exit.
                await asyncio.wait_for(app.state.pool.close(), timeout=5)
            except TimeoutError:
                app.state.pool.terminate()


# -- static, upload, json-comp, fortunes (contract 1.2 and 1.3) ---------------

#: The contract's static files, written by the build (contract/static/make.py).
STATIC_DIR = HERE / "static"

#: The largest upload body read (contract, "upload"): 16 MiB.
UPLOAD_LIMIT = 16 * 1024 * 1024


def declared_too_large(content_length):
    """Whether a Content-Length header value (or None) announces a body over
    UPLOAD_LIMIT. The HTTP parser has already refused one that is not a
    number."""
    return (content_length is not None and content_length.isascii() and content_length.isdigit()
            and int(content_length) > UPLOAD_LIMIT)


class UploadAnswer(BaseModel):
    length: int
    sha256: str


def accepts_gzip(values):
    """Whether the Accept-Encoding header lines `values` allow gzip (RFC 9110
    §12.5.3): gzip (or x-gzip, or *) listed without q=0. A coding named
    explicitly wins over *. Starlette's GZipMiddleware only looks for the
    substring "gzip", so it would compress for "gzip;q=0" as well."""
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


class WorkGZipMiddleware(GZipMiddleware):
    """Starlette's GZipMiddleware, for the paths in `paths` only, and choosing
    gzip by accepts_gzip. Other paths pass through untouched: on the whole app
    the middleware would also compress a /static/ file into a chunked answer
    and give a 304 a gzip body."""

    def __init__(self, app, paths, **kwargs):
        super().__init__(app, **kwargs)
        self.paths = frozenset(paths)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        if accepts_gzip(Headers(scope=scope).getlist("accept-encoding")):
            responder = GZipResponder(self.app, self.minimum_size, compresslevel=self.compresslevel,
                                      thread_minimum_size=self.thread_minimum_size,
                                      exclude_content_types=self.exclude_content_types)
        else:
            # Adds Vary: Accept-Encoding to the plain answer too.
            responder = IdentityResponder(self.app, self.minimum_size,
                                          exclude_content_types=self.exclude_content_types)
        await responder(scope, receive, send)


#: The fortune table (contract, "fortunes"), and the row each page adds.
FORTUNES_SQL = "SELECT id, message FROM fortune"
ADDED_FORTUNE = "Additional fortune added at request time."

#: FastAPI's (Starlette's) Jinja2 templates: select_autoescape() turns HTML
#: escaping on for .html templates.
TEMPLATES = Jinja2Templates(directory=HERE / "templates")


class Fortune(NamedTuple):
    id: int
    message: str


def sorted_fortunes(rows):
    """The rows read (as asyncpg returns them) and the added one, sorted by
    message (Python compares strings by code point, as the contract sorts)."""
    fortunes = [Fortune(row["id"], row["message"]) for row in rows]
    fortunes.append(Fortune(0, ADDED_FORTUNE))
    fortunes.sort(key=attrgetter("message"))
    return fortunes


# -- queries and updates (contract 1.3) ---------------------------------------

#: TechEmpower's World table: ids 1 to WORLD_ROWS, and a new randomNumber is
#: drawn from the same range.
WORLD_ROWS = 10000
MAX_QUERIES = 500
WORLD_SQL = "SELECT id, randomnumber FROM world WHERE id = $1"
WORLD_UPDATE_SQL = "UPDATE world SET randomnumber = $1 WHERE id = $2"


def parse_queries(params):
    """N of /queries?queries=N and /updates?queries=N, clamped as TechEmpower
    does: missing, empty, not an integer or below 1 is 1; above 500 is 500
    (however many digits it has)."""
    value = params.get("queries")
    if value is None or INTEGER_RE.fullmatch(value) is None or value.startswith("-"):
        return 1
    digits = value.lstrip("0")
    if len(digits) > len(str(MAX_QUERIES)):  # int() refuses over 4,300 digits
        return MAX_QUERIES
    return max(1, min(int(digits or "0"), MAX_QUERIES))


class WorldRow(BaseModel):
    id: int
    randomNumber: int


def random_row():
    """A random id, or a random new number: 1 to 10,000."""
    return random.randint(1, WORLD_ROWS)


async def read_world(conn, n):
    """n random rows, each read with its own query: asyncpg prepares the
    statement once per connection and keeps it in its statement cache."""
    rows = []
    for _ in range(n):
        row = await conn.fetchrow(WORLD_SQL, random_row())
        rows.append(WorldRow(id=row["id"], randomNumber=row["randomnumber"]))
    return rows


def update_args(rows):
    """executemany's arguments for the rows: one (number, id) per row, in id
    order. asyncpg runs an executemany as one implicit transaction, so two
    requests writing rows they share in different orders could deadlock;
    in id order each waits for the other instead."""
    return sorted(((row.randomNumber, row.id) for row in rows), key=itemgetter(1))


# -- app (contract 1.4) -------------------------------------------------------

#: The contract's stylesheet and script, put into every page byte for byte:
#: read once at start-up, from the repository's contract/app.
APP_DIR = HERE.parent.parent / "contract" / "app"
APP_CSS = (APP_DIR / "app.css").read_text(encoding="utf-8")
APP_JS = (APP_DIR / "app.js").read_text(encoding="utf-8")

#: The session cookie's name.
SESSION_COOKIE = "sid"
ITEMS_PER_PAGE = 50
MAX_PAGE = 100_000
LABELS = (
    "Tom & Jerry's cheese board",
    "<b>bold</b> move of the week",
    '"Quoted" goods, boxed',
    "O'Brien's pick for winter",
    "a < b > c, the ordered set",
)


class AppItem(NamedTuple):
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


def format_cents(cents):
    """Cents as <cents / 100>.<two digits>, in integers."""
    return f"{cents // 100}.{cents % 100:02d}"


def page_items(k):
    """The 50 item rows of page K, from the contract's formula."""
    items = []
    for i in range(1, ITEMS_PER_PAGE + 1):
        quantity = (k * 7 + i * 13) % 100 + 1
        cents = (k * 7919 + i * 104729) % 100_000
        items.append(AppItem((k - 1) * ITEMS_PER_PAGE + i, f"{LABELS[(k + i) % len(LABELS)]}, no. {k}.{i}",
                             quantity, format_cents(cents), format_cents(quantity * cents)))
    return items


# -- the app ----------------------------------------------------------------

# redirect_slashes is on by default: it would answer /echo (and /blank/) with
# a 307 to /echo/ (and /blank), where the contract wants a 404. Turning it off
# changes nothing for the paths that are measured.
app = FastAPI(redirect_slashes=False, lifespan=lifespan)
# json-comp: /work gzip-compressed when the request allows it, whatever its
# size (the middleware's default minimum is 500 B, a /work answer ~200 B), at
# the middleware's default level.
# app: the page likewise (about 10 KB, so over the default minimum anyway).
app.add_middleware(WorkGZipMiddleware, paths=["/work", "/app"], minimum_size=0)


@app.exception_handler(RequestValidationError)
async def bad_request(request: Request, exc: RequestValidationError):
    # Not JSON, not an object, a missing field, a wrong type, a bad date.
    return PlainTextResponse("bad request", status_code=400)


async def blank():
    return PlainTextResponse("OK")


async def work(doc: Work) -> Answer:
    dates = doc.group.dates
    return Answer(
        product=doc.product,
        requestId=doc.requestId,
        client=Client(balance=doc.group.balance, minDate=format_date(min(dates)), maxDate=format_date(max(dates))),
    )


async def echo(text: str):
    return PlainTextResponse(text)


def database(request: Request):
    pool = request.app.state.pool
    if pool is None:
        raise HTTPException(503, "no database: DATABASE_URL is not set")
    return pool


async def db_row(request: Request) -> Item:
    # The query string is parsed by hand: FastAPI's int parameters would take
    # any size and answer a bad one with its own 422 body.
    item_id = parse_row_query(request.query_params)
    if item_id is None:
        raise HTTPException(400, "id must be a 32-bit integer")
    row = await database(request).fetchrow(ROW_SQL, item_id)
    if row is None:
        raise HTTPException(404, "no such row")
    return render_row(row)


async def db_list(request: Request) -> list[Item]:
    query = parse_list_query(request.query_params)
    if query is None:
        raise HTTPException(400, "from must be a 32-bit integer, count one from 1 to 1000")
    return [render_row(row) for row in await database(request).fetch(LIST_SQL, *query)]


def too_large():
    # Connection: close makes uvicorn close the connection after the answer:
    # the rest of the body is not read, nor taken for another request.
    return PlainTextResponse("body too large", status_code=413, headers={"Connection": "close"})


async def upload(request: Request) -> UploadAnswer:
    # Refused from the head: not a byte of the body is read.
    if declared_too_large(request.headers.get("content-length")):
        return too_large()
    digest = hashlib.sha256()
    length = 0
    try:
        # The body as it arrives (Content-Length or chunked), never held whole.
        async for chunk in request.stream():
            length += len(chunk)
            if length > UPLOAD_LIMIT:  # a chunked body past the limit
                return too_large()
            digest.update(chunk)
    except ClientDisconnect:
        # The client went away mid-body: a 400 that no one reads, as FastAPI
        # answers a JSON body it cannot read, rather than a logged 500.
        raise HTTPException(400, "the body was cut short")
    return UploadAnswer(length=length, sha256=digest.hexdigest())


async def fortunes(request: Request):
    rows = await database(request).fetch(FORTUNES_SQL)
    return TEMPLATES.TemplateResponse(request, "fortunes.html", {"fortunes": sorted_fortunes(rows)})


async def queries(request: Request) -> list[WorldRow]:
    n = parse_queries(request.query_params)
    # One connection for all the rows, given back before the answer is
    # serialized.
    async with database(request).acquire() as conn:
        return await read_world(conn, n)


async def updates(request: Request) -> list[WorldRow]:
    n = parse_queries(request.query_params)
    async with database(request).acquire() as conn:
        rows = await read_world(conn, n)
        for row in rows:
            row.randomNumber = random_row()
        # One UPDATE per row, all in one executemany (atomic since asyncpg 0.22).
        await conn.executemany(WORLD_UPDATE_SQL, update_args(rows))
    return rows


async def app_page(request: Request):
    k = parse_page(request.query_params)
    if k is None:
        # Before the session is looked at: a bad page leaves sessions untouched.
        raise HTTPException(400, "page must be an integer from 1 to 100000")
    try:
        held = request.app.state.sessions.open(request.cookies.get(SESSION_COOKIE))
    except sessions.StoreFull:
        raise HTTPException(503, "too many sessions")
    # Locked from here to the rendered page, with no await in between: the
    # slot's record lock keeps the other workers out, the event loop this
    # worker's other requests. TemplateResponse renders when it is made.
    with held:
        visits = held.count()
        response = TEMPLATES.TemplateResponse(
            request, "app.html",
            {"page": k, "visits": visits, "since": held.since, "items": page_items(k), "css": APP_CSS, "js": APP_JS},
            headers={"Cache-Control": "no-store"})
    if held.created:
        # Starlette's set_cookie: sid=<id>; HttpOnly; Path=/; SameSite=lax
        response.set_cookie(SESSION_COOKIE, held.id, httponly=True)
    return response


async def app_logout(request: Request):
    request.app.state.sessions.drop(request.cookies.get(SESSION_COOKIE))
    response = PlainTextResponse("logged out")
    response.delete_cookie(SESSION_COOKIE, httponly=True)
    return response


async def ws_echo(websocket: WebSocket):
    # uvicorn's protocol answers pings and closes, reassembles fragments and
    # closes the connection on a protocol error (an unmasked frame) by itself.
    await websocket.accept()
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("text") is not None:
                await websocket.send_text(message["text"])
            else:
                await websocket.send_bytes(message["bytes"])
    except WebSocketDisconnect:
        pass  # the client went away mid-echo


app.add_api_route("/blank", blank, methods=["GET"])
app.add_api_route("/work", work, methods=["POST"])
app.add_api_route("/echo/{text:path}", echo, methods=["GET"])
app.add_api_route("/db", db_row, methods=["GET"])
app.add_api_route("/db/list", db_list, methods=["GET"])
app.add_api_websocket_route("/ws", ws_echo)
app.add_api_route("/upload", upload, methods=["POST"])
app.add_api_route("/fortunes", fortunes, methods=["GET"])
app.add_api_route("/queries", queries, methods=["GET"])
app.add_api_route("/updates", updates, methods=["GET"])
app.add_api_route("/app", app_page, methods=["GET"])
app.add_api_route("/app/logout", app_logout, methods=["POST"])
if STATIC_DIR.is_dir():
    # Starlette's StaticFiles: FileResponse sets Content-Length, Last-Modified
    # and an ETag (from mtime and size), and StaticFiles answers a matching
    # If-None-Match (weak comparison) with 304.
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
else:
    print(f"server: no {STATIC_DIR} (the build writes it), /static/ answers 404", file=sys.stderr)
if os.environ.get(ROOT_ENV) == "0":
    app.add_api_route("/", blank, methods=["GET"])
elif os.environ.get(ROOT_ENV) == "1":
    app.add_api_route("/", work, methods=["POST"])


def main(argv):
    import uvicorn

    root = argv[1] if len(argv) > 1 else None
    if root not in (None, "0", "1"):
        print(f"server: unknown argument {root!r} (expected 0 or 1)", file=sys.stderr)
        return 1
    if root is None:
        os.environ.pop(ROOT_ENV, None)
    else:
        os.environ[ROOT_ENV] = root
    workers = len(os.sched_getaffinity(0))
    os.environ[WORKERS_ENV] = str(workers)
    try:
        pool_size(os.environ)
    except ValueError as e:
        print(f"server: {e}", file=sys.stderr)
        return 1
    # Run from this folder, whatever the working directory: the workers
    # import "server:app".
    here = os.path.dirname(os.path.abspath(__file__))
    # One session store for all the workers (sessions.py), made before they
    # start and removed when they have ended.
    os.environ[SESSIONS_ENV] = sessions.create_file()
    try:
        uvicorn.run(
            "server:app",
            host=os.environ.get("HOST") or "127.0.0.1",
            port=int(os.environ.get("PORT") or "1234"),
            workers=workers,
            access_log=False,
            # At "info" uvicorn logs every WebSocket connection (access_log covers
            # HTTP requests only); the contract wants no per-request logging.
            log_level="warning",
            app_dir=here,
            # uvicorn offers permessage-deflate by default; the contract's client
            # asks for none, and a compressing server would do other work.
            ws_per_message_deflate=False,
        )
    finally:
        os.unlink(os.environ[SESSIONS_ENV])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
