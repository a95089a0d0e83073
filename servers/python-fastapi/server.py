"""netbench reference server: FastAPI on uvicorn (uvloop + httptools).

Follows contract/CONTRACT.md: listens on HOST:PORT (defaults 127.0.0.1 and
1234), serves /blank, /work and /echo/<text>, exits on SIGTERM. An optional
first argument "0" or "1" makes "/" answer as /blank or /work.

`python server.py` starts uvicorn with one worker process per CPU this
process may run on (len(os.sched_getaffinity(0))), access log off, otherwise
uvicorn's defaults: uvicorn[standard] makes its "auto" loop and HTTP parser
uvloop and httptools. The uvicorn main process binds the socket and supervises
the workers; each worker is one asyncio (uvloop) event loop in one thread.

The /work document is validated by a strict pydantic model (lax mode would
take "1" as a number and "yes" as a boolean); FastAPI's 422 for a document it
cannot validate is answered as 400, as the contract wants.
"""

import os
import re
import sys
from datetime import datetime, timedelta
from typing import Annotated

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

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


# -- the app ----------------------------------------------------------------

# redirect_slashes is on by default: it would answer /echo (and /blank/) with
# a 307 to /echo/ (and /blank), where the contract wants a 404. Turning it off
# changes nothing for the paths that are measured.
app = FastAPI(redirect_slashes=False)


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


app.add_api_route("/blank", blank, methods=["GET"])
app.add_api_route("/work", work, methods=["POST"])
app.add_api_route("/echo/{text:path}", echo, methods=["GET"])
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
    # Run from this folder, whatever the working directory: the workers
    # import "server:app".
    here = os.path.dirname(os.path.abspath(__file__))
    uvicorn.run(
        "server:app",
        host=os.environ.get("HOST") or "127.0.0.1",
        port=int(os.environ.get("PORT") or "1234"),
        workers=len(os.sched_getaffinity(0)),
        access_log=False,
        app_dir=here,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
