"""netbench reference server: a plain RSGI app on Granian.

Follows contract/CONTRACT.md: listens on HOST:PORT (defaults 127.0.0.1 and
1234), serves /blank, /work and /echo/<text>, exits on SIGTERM. An optional
first argument "0" or "1" makes "/" answer as /blank or /work.

`python server.py` starts Granian with its default settings but for the
number of workers, one worker process per CPU this process may run on
(len(os.sched_getaffinity(0))), and a kill timeout for workers that ignore
SIGTERM (see main). Granian's defaults: the RSGI interface (its
own, the default one), access log off, and in each worker a single-threaded
Tokio runtime doing the HTTP/1.1 I/O in Rust (hyper), handing each request to
the app's coroutine on the worker's Python asyncio event loop. On Linux each
worker binds HOST:PORT itself with SO_REUSEPORT, so the kernel spreads the
connections over the workers; the main process only supervises them.

No web framework: the app routes on the path itself and uses the standard
library's json module.
"""

import json
import math
import os
import re
import sys
from datetime import datetime, timedelta
from pathlib import Path

#: The environment variable through which `python server.py 0|1` tells the
#: worker processes (which import this module afresh) what "/" answers as.
ROOT_ENV = "NETBENCH_ROOT"

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


# -- the /work document -----------------------------------------------------


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


# -- the RSGI app -----------------------------------------------------------

TEXT = [("content-type", "text/plain")]
JSON = [("content-type", "application/json")]
# Granian (hyper) adds Date and Content-Length to every answer.


async def blank(scope, protocol):
    protocol.response_str(200, TEXT, "OK")


async def work(scope, protocol):
    body = await protocol()  # the whole body, Content-Length or chunked
    try:
        doc = parse_json(body)
    except ValueError:
        protocol.response_str(400, TEXT, "bad request: not JSON")
        return
    answer = compute(doc)
    if answer is None:
        protocol.response_str(400, TEXT, "bad request")
        return
    protocol.response_bytes(200, JSON, json.dumps(answer, separators=(",", ":")).encode())


async def not_found(scope, protocol):
    # The body is read before answering, as for any request: an answer that
    # leaves a body unread lets Granian close the keep-alive connection when
    # the body arrives after the answer (the next request then meets a
    # closed socket; seen once in CI on `POST /` then `GET /work`).
    await protocol()
    protocol.response_str(404, TEXT, "not found")


def _method_not_allowed(allow):
    headers = TEXT + [("allow", allow)]

    async def answer(scope, protocol):
        await protocol()  # as in not_found
        protocol.response_str(405, headers, "method not allowed")

    return answer


_GET_ONLY = _method_not_allowed("GET, HEAD")
_POST_ONLY = _method_not_allowed("POST")


def make_app(root=None):
    """The RSGI app; `root` "0" makes "/" answer as /blank, "1" as /work."""
    routes = {"/blank": {"GET": blank, "HEAD": blank}, "/work": {"POST": work}}
    if root == "0":
        routes["/"] = routes["/blank"]
    elif root == "1":
        routes["/"] = routes["/work"]

    async def app(scope, protocol):
        path = scope.path  # without the query string
        methods = routes.get(path)
        if methods is not None:
            handler = methods.get(scope.method)
            if handler is None:
                handler = _POST_ONLY if "POST" in methods else _GET_ONLY
            await handler(scope, protocol)
        elif path.startswith("/echo/"):
            if scope.method in ("GET", "HEAD"):
                protocol.response_str(200, TEXT, path[6:])
            else:
                await _GET_ONLY(scope, protocol)
        else:
            await not_found(scope, protocol)

    return app


app = make_app(os.environ.get(ROOT_ENV))


#: Granian's own logging configuration (granian.log.LOGGING_CONFIG) with its
#: handlers moved from stdout to stderr, where the contract wants logs.
#: Level and format are Granian's defaults; the access log stays off.
LOG_TO_STDERR = {
    "handlers": {
        "console": {"formatter": "generic", "class": "logging.StreamHandler", "stream": "ext://sys.stderr"},
        "access": {"formatter": "access", "class": "logging.StreamHandler", "stream": "ext://sys.stderr"},
    },
}


def main(argv):
    from granian import Granian

    root = argv[1] if len(argv) > 1 else None
    if root not in (None, "0", "1"):
        print(f"server: unknown argument {root!r} (expected 0 or 1)", file=sys.stderr)
        return 1
    if root is None:
        os.environ.pop(ROOT_ENV, None)
    else:
        os.environ[ROOT_ENV] = root
    Granian(
        "server:app",
        address=os.environ.get("HOST") or "127.0.0.1",
        port=int(os.environ.get("PORT") or "1234"),
        workers=len(os.sched_getaffinity(0)),
        # The workers import "server:app" from this folder, whatever the
        # working directory.
        working_dir=Path(__file__).resolve().parent,
        log_dictconfig=LOG_TO_STDERR,
        # A worker forked while SIGTERM arrives still carries the main
        # process's handler, which only flags the main process's copy, until
        # it installs its own: Granian would then wait for it for ever. Past
        # this many seconds the main process kills such a worker, so the
        # server always exits on SIGTERM (tested by RootArgument).
        workers_kill_timeout=3,
    ).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
