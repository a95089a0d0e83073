"""Tests of the python-fastapi server: its date, document and db parameter
rules, then the contract over real connections to `python server.py`
(uvicorn and its workers) in a child process, WebSocket echo, static files,
uploads, compressed /work answers, the fortunes page, queries and updates
included.

Run with `.venv/bin/python -m unittest` in this folder, after the build (which
also writes ./static). The db, fortunes, queries and updates tests against
PostgreSQL run only when DATABASE_URL is set (for one: `scripts/pg-dev.sh
start` from the repository's root).
"""

import asyncio
import base64
import gzip
import hashlib
import html.parser
import http.client
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from email.utils import parsedate_to_datetime
from pathlib import Path

import asyncpg
from pydantic import ValidationError
from websockets.sync.client import connect as ws_connect

import server
import sessions

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent.parent / "contract" / "fixtures"

EXAMPLE = {
    "product": "WidgetPro-7",
    "requestId": "5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59",
    "group": {
        "kind": "retail",
        "default": True,
        "balance": 1234.56,
        "dates": ["2020-01-12T10:53:17.773Z", "2019-03-01T00:00:00.000Z", "2021-07-30T23:59:59.999Z"],
    },
}
EXAMPLE_ANSWER = {
    "product": "WidgetPro-7",
    "requestId": "5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59",
    "client": {"balance": 1234.56, "minDate": "2019-03-01T00:00:00.000Z", "maxDate": "2021-07-30T23:59:59.999Z"},
}
GOOD_GROUP = {"kind": "k", "default": True, "balance": 1, "dates": ["2020-01-12T10:53:17.773Z"]}


def doc_with(**group):
    return {"product": "p", "requestId": "r", "group": {**GOOD_GROUP, **group}}


class Dates(unittest.TestCase):
    def test_valid(self):
        for s in [
            "2020-01-12T10:53:17.773Z",
            "2020-02-29T00:00:00.000Z",  # leap year
            "2000-02-29T23:59:59.999Z",  # leap year (divisible by 400)
            "1969-12-31T23:59:59.999Z",
            "0001-01-01T00:00:00.000Z",
            "0000-02-29T12:00:00.000Z",  # year 0 is a leap year
            "9999-12-31T23:59:59.999Z",
        ]:
            with self.subTest(s):
                t = server.parse_date(s)
                self.assertIsNotNone(t)
                self.assertEqual(server.format_date(t), s)

    def test_epoch_millis(self):
        self.assertEqual(server.parse_date("1970-01-01T00:00:00.000Z"), 0)
        self.assertEqual(server.parse_date("2020-01-12T10:53:17.773Z"), 1578826397773)
        self.assertEqual(server.parse_date("1969-12-31T23:59:59.999Z"), -1)
        self.assertEqual(server.parse_date("0000-01-01T00:00:00.000Z"), -62167219200000)

    def test_invalid(self):
        for s in [
            "2020-13-45T99:00:00.000Z",
            "2021-02-29T00:00:00.000Z",  # not a leap year
            "1900-02-29T00:00:00.000Z",  # not a leap year (divisible by 100)
            "2020-04-31T00:00:00.000Z",
            "2020-00-10T00:00:00.000Z",
            "2020-01-00T00:00:00.000Z",
            "2020-01-01T24:00:00.000Z",
            "2020-01-01T23:60:00.000Z",
            "2016-12-31T23:59:60.000Z",  # leap second
            "2020-01-12T10:53:17Z",
            "2020-01-12T10:53:17.77Z",
            "2020-01-12T10:53:17.7730Z",
            "2020-01-12T10:53:17.773z",
            "2020-01-12t10:53:17.773Z",
            "2020-01-12 10:53:17.773Z",
            "2020-01-12T10:53:17.773+00:00",
            "2020-01-12T10:53:17.773",
            " 2020-01-12T10:53:17.773Z",
            "2020-01-12T10:53:17.773Z\n",
            "+2020-01-12T10:53:17.773Z",
            "２020-01-12T10:53:17.773Z",  # a full-width digit
            "2020-01-١2T10:53:17.773Z",  # an Arabic-Indic digit
            "yesterday",
            "",
            None,
            1578826397773,
        ]:
            with self.subTest(s):
                self.assertIsNone(server.parse_date(s))


def compute(doc):
    """The answer to a document as the /work route makes it, or None when the
    route's model rejects it (FastAPI's 422, answered as 400)."""
    try:
        work = server.Work.model_validate(doc)
    except ValidationError:
        return None
    return asyncio.run(server.work(work)).model_dump()


class Compute(unittest.TestCase):
    def test_example(self):
        self.assertEqual(compute(EXAMPLE), EXAMPLE_ANSWER)

    def test_balance_is_the_same_number(self):
        for balance in [0, -1500, 1234.56, -0.01, 999999.99, 1e3, 0.1]:
            with self.subTest(balance):
                answer = compute(doc_with(balance=balance))
                self.assertEqual(json.loads(json.dumps(answer))["client"]["balance"], balance)

    def test_rejected(self):
        cases = {
            "balance true": doc_with(balance=True),
            "balance false": doc_with(balance=False),
            "balance a string": doc_with(balance="1"),
            "balance null": doc_with(balance=None),
            "balance NaN": doc_with(balance=float("nan")),
            "balance infinite": doc_with(balance=float("inf")),
            "default 1": doc_with(default=1),
            "default 0": doc_with(default=0),
            "default a string": doc_with(default="true"),
            "default null": doc_with(default=None),
            "kind a number": doc_with(kind=1),
            "dates empty": doc_with(dates=[]),
            "dates a string": doc_with(dates="2020-01-12T10:53:17.773Z"),
            "dates an object": doc_with(dates={"a": "2020-01-12T10:53:17.773Z"}),
            "one bad date": doc_with(dates=["2020-01-12T10:53:17.773Z", "2020-02-30T00:00:00.000Z"]),
            "group a list": {"product": "p", "requestId": "r", "group": [GOOD_GROUP]},
            "product null": {"product": None, "requestId": "r", "group": GOOD_GROUP},
            "requestId a number": {"product": "p", "requestId": 1, "group": GOOD_GROUP},
            "a list": [EXAMPLE],
            "a string": "x",
            "null": None,
        }
        for name, doc in cases.items():
            with self.subTest(name):
                self.assertIsNone(compute(doc))

    @unittest.skipUnless(FIXTURES.is_dir(), "contract/fixtures not found")
    def test_contract_fixtures(self):
        for line in (FIXTURES / "work.jsonl").read_text().splitlines():
            case = json.loads(line)
            with self.subTest(case["name"]):
                self.assertEqual(compute(case["request"]), case["answer"])
        for line in (FIXTURES / "rejected.jsonl").read_text().splitlines():
            case = json.loads(line)
            with self.subTest(case["name"]):
                try:
                    doc = json.loads(case["body"])
                except ValueError:
                    continue
                self.assertIsNone(compute(doc))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Running:
    """`python server.py [arg]` on a free loopback port; `env` is added to (or,
    with None values, taken from) this process's environment."""

    def __init__(self, *args, env=None):
        self.port = free_port()
        env = {**os.environ, **(env or {}), "HOST": "127.0.0.1", "PORT": str(self.port)}
        env = {k: v for k, v in env.items() if v is not None}
        self.log = tempfile.TemporaryFile()  # uvicorn's own log (no access log)
        self.proc = subprocess.Popen([sys.executable, "server.py", *args], cwd=HERE, env=env, stderr=self.log)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.proc.kill()
                    self.log.seek(0)
                    raise RuntimeError("server did not start:\n" + self.log.read().decode(errors="replace"))
                time.sleep(0.05)

    def stop(self):
        """SIGTERM; returns whether the server then exited as it should: with
        status 0, or (uvicorn as a single process, which re-raises the signal
        after its graceful shutdown) by SIGTERM itself."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=10) in (0, -signal.SIGTERM)
        finally:
            self.proc.kill()
            self.log.close()


def raw(port, data, pause=0.0):
    """Sends `data` (bytes, or a list of pieces written `pause` apart) on a new
    connection and returns the http.client response (read)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    with sock:
        for piece in data if isinstance(data, list) else [data]:
            sock.sendall(piece)
            time.sleep(pause)
        resp = http.client.HTTPResponse(sock)
        resp.begin()
        resp.body = resp.read()
        return resp


class Contract(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Running()

    @classmethod
    def tearDownClass(cls):
        cls.assert_stopped(cls.server)

    def setUp(self):
        # One keep-alive connection per test.
        self.conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=10)

    def tearDown(self):
        self.conn.close()

    @staticmethod
    def assert_stopped(running):
        if not running.stop():
            raise AssertionError("server did not exit cleanly on SIGTERM")

    def request(self, method, path, body=None, headers=None):
        """One request on the test's keep-alive connection."""
        headers = {"Content-Type": "application/json", **(headers or {})} if body is not None else headers or {}
        self.conn.request(method, path, body=body, headers=headers)
        resp = self.conn.getresponse()
        resp.body = resp.read()
        self.check_framing(resp)
        return resp

    def check_framing(self, resp):
        self.assertTrue(resp.getheader("Content-Length") or resp.getheader("Transfer-Encoding"))
        date = resp.getheader("Date")
        self.assertIsNotNone(date)
        self.assertIsNotNone(parsedate_to_datetime(date))

    def test_blank(self):
        r = self.request("GET", "/blank")
        self.assertEqual((r.status, r.body), (200, b"OK"))
        self.assertEqual(r.getheader("Content-Type").split(";")[0], "text/plain")
        self.assertEqual(r.getheader("Content-Length"), "2")

    def test_work(self):
        r = self.request("POST", "/work", json.dumps(EXAMPLE))
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("Content-Type").split(";")[0], "application/json")
        self.assertEqual(json.loads(r.body), EXAMPLE_ANSWER)

    def test_work_media_type_parameters(self):
        r = self.request("POST", "/work", json.dumps(EXAMPLE),
                         {"Content-Type": "application/json; charset=utf-8"})
        self.assertEqual((r.status, json.loads(r.body)), (200, EXAMPLE_ANSWER))

    def test_work_millis_000_and_same_product(self):
        for dates, lo, hi in [
            (["2000-01-01T00:00:00.000Z"], "2000-01-01T00:00:00.000Z", "2000-01-01T00:00:00.000Z"),
            (["2030-12-31T23:59:59.999Z", "2000-01-01T00:00:00.000Z"], "2000-01-01T00:00:00.000Z",
             "2030-12-31T23:59:59.999Z"),
        ]:
            r = self.request("POST", "/work", json.dumps(doc_with(dates=dates, balance=-1.5e3, extra=[1])))
            self.assertEqual(r.status, 200)
            self.assertEqual(json.loads(r.body)["client"], {"balance": -1500, "minDate": lo, "maxDate": hi})

    def test_work_rejected(self):
        good = json.dumps(doc_with())
        bodies = {
            "not JSON": '{"product":',
            "trailing garbage": good + "x",
            "empty": "",
            "not an object": "[1,2]",
            "null": "null",
            "NaN balance": good.replace('"balance": 1', '"balance": NaN'),
            "balance 1e400": good.replace('"balance": 1', '"balance": 1e400'),
            "balance true": json.dumps(doc_with(balance=True)),
            "default 1": json.dumps(doc_with(default=1)),
            "missing requestId": json.dumps({"product": "p", "group": GOOD_GROUP}),
            "empty dates": json.dumps(doc_with(dates=[])),
            "bad date": json.dumps(doc_with(dates=["2020-13-45T99:00:00.000Z"])),
            "hour 24": json.dumps(doc_with(dates=["2020-01-01T24:00:00.000Z"])),
            "leap second": json.dumps(doc_with(dates=["2016-12-31T23:59:60.000Z"])),
            "not UTF-8": b'{"product":"\xff"}',
        }
        for name, body in bodies.items():
            with self.subTest(name):
                r = self.request("POST", "/work", body)
                self.assertEqual(r.status, 400, r.body)

    def test_chunked_body(self):
        body = json.dumps(EXAMPLE).encode()
        chunks = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (body[:10], body[10:30], body[30:]))
        r = raw(self.server.port, b"POST /work HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                  b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n")
        self.assertEqual((r.status, json.loads(r.body)), (200, EXAMPLE_ANSWER))

    def test_chunked_body_with_extension_and_trailer(self):
        body = json.dumps(EXAMPLE).encode()
        r = raw(self.server.port, b"POST /work HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                  b"transfer-encoding: chunked\r\n\r\n"
                                  b"%X;name=value\r\n%s\r\n0\r\nX-Trailer: 1\r\n\r\n" % (len(body), body))
        self.assertEqual((r.status, json.loads(r.body)), (200, EXAMPLE_ANSWER))

    def test_split_request(self):
        body = json.dumps(EXAMPLE).encode()
        req = b"POST /work HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
            len(body), body)
        r = raw(self.server.port, [req[:20], req[20:90], req[90:]], pause=0.05)
        self.assertEqual((r.status, json.loads(r.body)), (200, EXAMPLE_ANSWER))

    def test_echo(self):
        for path, want in [("/echo/abc-1.2_x~y", b"abc-1.2_x~y"), ("/echo/hello?q=1&r", b"hello"),
                           ("/echo/", b""), ("/echo/Z9-._~Z9-._~", b"Z9-._~Z9-._~")]:
            with self.subTest(path):
                r = self.request("GET", path)
                self.assertEqual((r.status, r.body), (200, want))
                self.assertEqual(r.getheader("Content-Type").split(";")[0], "text/plain")

    def test_not_found(self):
        for path in ["/nope", "/", "/echo", "/blank/", "/blank/x", "/workx"]:
            with self.subTest(path):
                self.assertEqual(self.request("GET", path).status, 404)
        self.assertEqual(self.request("POST", "/", json.dumps(EXAMPLE)).status, 404)
        self.assertIn(self.request("GET", "/work").status, (404, 405))
        self.assertIn(self.request("POST", "/blank", "x").status, (404, 405))
        # The connection still works after answers that did not read the body.
        self.assertEqual(self.request("GET", "/blank").body, b"OK")

    def test_keep_alive(self):
        conn = self.conn
        conn.request("GET", "/blank")
        conn.getresponse().read()
        sock = conn.sock
        start = time.monotonic()
        for i in range(100):
            conn.request("GET", f"/echo/n{i}")
            self.assertEqual(conn.getresponse().read(), f"n{i}".encode())
        self.assertIs(conn.sock, sock)
        # With Nagle's algorithm on, each answer would wait ~40 ms for a
        # delayed ACK (4 s here).
        self.assertLess(time.monotonic() - start, 3.0)

    def test_connection_close(self):
        sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        with sock:
            sock.sendall(b"GET /blank HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := sock.recv(4096):  # ends when the server closes
                data += chunk
        self.assertTrue(data.startswith(b"HTTP/1.1 200"))
        self.assertTrue(data.endswith(b"\r\n\r\nOK"))


def workers_of(pid):
    """Process ids of uvicorn's worker processes under `pid` (Linux /proc)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split():
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            except FileNotFoundError:
                continue
            if b"spawn_main" in cmdline:
                found.append(int(child))
    return found


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


class Workers(unittest.TestCase):
    def test_one_worker_per_cpu_all_gone_after_sigterm(self):
        cpus = len(os.sched_getaffinity(0))
        running = Running()
        try:
            # uvicorn runs a single process (no supervisor) for one worker.
            want = cpus if cpus > 1 else 0
            deadline = time.monotonic() + 10
            while len(workers := workers_of(running.proc.pid)) != want and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(len(workers), want)
            for i in range(4 * cpus):
                r = raw(running.port, b"GET /echo/w%d HTTP/1.1\r\nHost: x\r\n\r\n" % i)
                self.assertEqual((r.status, r.body), (200, b"w%d" % i))
        finally:
            self.assertTrue(running.stop())
        deadline = time.monotonic() + 10
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual([w for w in workers if alive(w)], [])


class RootArgument(unittest.TestCase):
    def test_0_blank(self):
        running = Running("0")
        try:
            r = raw(running.port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            self.assertEqual((r.status, r.body), (200, b"OK"))
        finally:
            self.assertTrue(running.stop())

    def test_1_work(self):
        running = Running("1")
        try:
            body = json.dumps(EXAMPLE).encode()
            r = raw(running.port, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                  b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            self.assertEqual((r.status, json.loads(r.body)), (200, EXAMPLE_ANSWER))
            r = raw(running.port, b"GET /blank HTTP/1.1\r\nHost: x\r\n\r\n")
            self.assertEqual((r.status, r.body), (200, b"OK"))
        finally:
            self.assertTrue(running.stop())

    def test_bad_argument(self):
        proc = subprocess.run([sys.executable, "server.py", "2"], cwd=HERE, capture_output=True, timeout=10)
        self.assertEqual(proc.returncode, 1)


# -- db ---------------------------------------------------------------------

#: The contract's example row, id 1, as JSON text.
ROW_1_JSON = (
    '{"id":1,"name":"item-1","description":"Row 1 of the netbench items table: \\"seeded\\", fixed & checked.",'
    '"quantity":31,"price":79.19,"updated":"2020-01-01T00:20:34.567Z"}'
)


def expected_row(i):
    """Row i of contract/db/schema.sql, as the contract says /db answers it."""
    return {
        "id": i,
        "name": f"item-{i}",
        "description": f'Row {i} of the netbench items table: "seeded", fixed & checked.',
        "quantity": (i * 31) % 1000,
        "price": ((i * 7919) % 100000) / 100,
        "updated": server.format_date(server.parse_date("2020-01-01T00:00:00.000Z") + i * 1234567),
    }


class DbParameters(unittest.TestCase):
    def test_int32(self):
        for s, want in [("1", 1), ("10000", 10000), ("0", 0), ("007", 7), ("2147483647", 2**31 - 1),
                        ("-2147483648", -(2**31))]:
            with self.subTest(s):
                self.assertEqual(server.parse_int32(s), want)
        for s in [None, "", "abc", "1.5", "1e3", " 1", "1 ", "+1", "0x10", "1_000", "١", "2147483648",
                  "-2147483649", "9" * 5000]:
            with self.subTest(s):
                self.assertIsNone(server.parse_int32(s))

    def test_row_query(self):
        self.assertEqual(server.parse_row_query({"id": "42"}), 42)
        for params in [{}, {"id": ""}, {"id": "abc"}, {"id": "1.5"}, {"id": "2147483648"}, {"from": "1"}]:
            with self.subTest(params):
                self.assertIsNone(server.parse_row_query(params))

    def test_list_query(self):
        self.assertEqual(server.parse_list_query({"from": "1"}), (1, 100))
        self.assertEqual(server.parse_list_query({"from": "9999", "count": "1"}), (9999, 1))
        self.assertEqual(server.parse_list_query({"from": "5", "count": "1000"}), (5, 1000))
        for params in [{}, {"count": "5"}, {"from": ""}, {"from": "x"}, {"from": "1", "count": ""},
                       {"from": "1", "count": "0"}, {"from": "1", "count": "1001"}, {"from": "1", "count": "-1"},
                       {"from": "1", "count": "1.5"}, {"from": "2147483648"}]:
            with self.subTest(params):
                self.assertIsNone(server.parse_list_query(params))

    def test_pool_size(self):
        self.assertEqual(server.pool_size({}), 4)
        self.assertEqual(server.pool_size({"DATABASE_POOL_SIZE": ""}), 4)
        self.assertEqual(server.pool_size({"DATABASE_POOL_SIZE": "8"}), 8)
        # The workers share the pool size: together they stay within it.
        self.assertEqual(server.pool_size({"DATABASE_POOL_SIZE": "8", server.WORKERS_ENV: "2"}), 4)
        self.assertEqual(server.pool_size({"DATABASE_POOL_SIZE": "5", server.WORKERS_ENV: "2"}), 2)
        self.assertEqual(server.pool_size({"DATABASE_POOL_SIZE": "4", server.WORKERS_ENV: "8"}), 1)
        for value in ["0", "-1", "x", "2.5"]:
            with self.subTest(value), self.assertRaises(ValueError):
                server.pool_size({"DATABASE_POOL_SIZE": value})
        self.assertIsNone(asyncio.run(server.create_pool({})))

    def test_row_as_asyncpg_returns_it(self):
        # numeric arrives as a Decimal, timestamptz as an aware datetime in UTC.
        row = {
            "id": 1,
            "name": "item-1",
            "description": 'Row 1 of the netbench items table: "seeded", fixed & checked.',
            "quantity": 31,
            "price": Decimal("79.19"),
            "updated": datetime(2020, 1, 1, 0, 20, 34, 567000, tzinfo=timezone.utc),
        }
        item = server.render_row(row)
        self.assertEqual(item.model_dump(), json.loads(ROW_1_JSON))
        self.assertEqual(json.loads(item.model_dump_json()), json.loads(ROW_1_JSON))
        self.assertEqual(item.model_dump(), expected_row(1))
        # Three digits of milliseconds even when they are zero; UTC whatever
        # the datetime's zone; a price that is a whole number stays a number.
        other = server.render_row({**row, "price": Decimal("1000.00"),
                                   "updated": datetime(2021, 6, 1, 12, tzinfo=timezone(timedelta(hours=2)))})
        self.assertEqual(other.updated, "2021-06-01T10:00:00.000Z")
        self.assertEqual(json.loads(other.model_dump_json())["price"], 1000)


def get(port, path):
    """One GET on a new connection: (status, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read(), resp.getheader("Content-Type")
    finally:
        conn.close()


class DbWithoutDatabase(unittest.TestCase):
    def test_503_and_400(self):
        running = Running(env={"DATABASE_URL": None})
        try:
            self.assertEqual(get(running.port, "/db?id=1")[0], 503)
            self.assertEqual(get(running.port, "/db/list?from=1")[0], 503)
            self.assertEqual(get(running.port, "/fortunes")[0], 503)
            self.assertEqual(get(running.port, "/queries?queries=5")[0], 503)
            self.assertEqual(get(running.port, "/updates")[0], 503)
            self.assertEqual(get(running.port, "/db?id=abc")[0], 400)
            self.assertEqual(get(running.port, "/db/list?from=1&count=0")[0], 400)
            self.assertEqual(get(running.port, "/blank")[:2], (200, b"OK"))
        finally:
            self.assertTrue(running.stop())

    def test_bad_pool_size(self):
        env = {**os.environ, "DATABASE_POOL_SIZE": "zero"}
        proc = subprocess.run([sys.executable, "server.py"], cwd=HERE, env=env, capture_output=True, timeout=10)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(b"DATABASE_POOL_SIZE", proc.stderr)


DATABASE_URL = os.environ.get("DATABASE_URL")


def setUpModule():
    # unittest shows a skip's reason only with -v; `make test` runs it without.
    if not DATABASE_URL:
        print("test_server: DATABASE_URL is not set, so the db tests against PostgreSQL are skipped",
              file=sys.stderr)


@unittest.skipUnless(DATABASE_URL, "DATABASE_URL is not set: the db tests against PostgreSQL need one "
                                   "(scripts/pg-dev.sh start, from the repository's root)")
class Db(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Running(env={"DATABASE_POOL_SIZE": "4"})

    @classmethod
    def tearDownClass(cls):
        if not cls.server.stop():
            raise AssertionError("server did not exit cleanly on SIGTERM")

    def json(self, path, status=200):
        got, body, content_type = get(self.server.port, path)
        self.assertEqual(got, status, f"{path}: {body!r}")
        if status != 200:
            return body
        self.assertEqual(content_type.split(";")[0], "application/json")
        return json.loads(body)

    def test_row(self):
        self.assertEqual(self.json("/db?id=1"), json.loads(ROW_1_JSON))
        for i in [2, 1000, 4321, 10000]:
            with self.subTest(i):
                self.assertEqual(self.json(f"/db?id={i}"), expected_row(i))

    def test_list(self):
        self.assertEqual(self.json("/db/list?from=1"), [expected_row(i) for i in range(1, 101)])
        self.assertEqual(self.json("/db/list?from=500&count=1"), [expected_row(500)])
        self.assertEqual(self.json("/db/list?from=9999&count=5"), [expected_row(9999), expected_row(10000)])
        self.assertEqual(self.json("/db/list?from=10001"), [])
        self.assertEqual(len(self.json("/db/list?from=1&count=1000")), 1000)

    def test_errors(self):
        for path in ["/db?id=0", "/db?id=10001", "/db?id=-5", "/db?id=2147483647"]:
            with self.subTest(path):
                self.json(path, 404)
        for path in ["/db?id=abc", "/db?id=1.5", "/db?id=", "/db", "/db?id=2147483648", "/db/list",
                     "/db/list?from=1&count=0", "/db/list?from=1&count=1001"]:
            with self.subTest(path):
                self.json(path, 400)

    def test_follows_the_database(self):
        item_id = 7777
        want = expected_row(item_id)

        async def update(name, quantity, price, updated):
            conn = await asyncpg.connect(DATABASE_URL)
            try:
                await conn.execute("UPDATE items SET name = $2, quantity = $3, price = $4, updated = $5 WHERE id = $1",
                                   item_id, name, quantity, Decimal(price), datetime.fromisoformat(updated))
            finally:
                await conn.close()

        try:
            asyncio.run(update("changed", 1, "12345.60", "1999-12-31T23:59:59.001+00:00"))
            self.assertEqual(self.json(f"/db?id={item_id}"), {**want, "name": "changed", "quantity": 1,
                                                              "price": 12345.6,
                                                              "updated": "1999-12-31T23:59:59.001Z"})
        finally:
            asyncio.run(update(want["name"], want["quantity"], str(want["price"]),
                               want["updated"].replace("Z", "+00:00")))
        self.assertEqual(self.json(f"/db?id={item_id}"), want)


# -- queries and updates ------------------------------------------------------

#: contract/db/schema.sql's world table, as the runner puts it back after an
#: updates cell.
RESEED_WORLD = "UPDATE world SET randomnumber = 1 + (id * 7919 + 13) % 10000"


def seeded_number(i):
    """randomNumber of world row i as contract/db/schema.sql seeds it."""
    return 1 + (i * 7919 + 13) % 10000


class WorldParameters(unittest.TestCase):
    """The clamping of N and the rows' shape, without a database."""

    def test_counts(self):
        for value, n in [("1", 1), ("5", 5), ("20", 20), ("499", 499), ("500", 500), ("501", 500),
                         ("10000", 500), ("2147483648", 500), ("9" * 5000, 500), ("007", 7), ("0" * 10 + "12", 12)]:
            with self.subTest(value[:20]):
                self.assertEqual(server.parse_queries({"queries": value}), n)

    def test_clamped_to_one(self):
        for params in [{}, {"queries": ""}, {"queries": "0"}, {"queries": "000"}, {"queries": "-1"},
                       {"queries": "-600"}, {"queries": "-"}, {"queries": "foo"}, {"queries": "1.5"},
                       {"queries": "+5"}, {"queries": "1e3"}, {"queries": " 5"}, {"queries": "5x"},
                       {"queries": "٥"}, {"query": "5"}]:
            with self.subTest(params):
                self.assertEqual(server.parse_queries(params), 1)

    def test_random_row(self):
        drawn = {server.random_row() for _ in range(200_000)}
        self.assertEqual((min(drawn), max(drawn)), (1, 10000))
        self.assertGreater(len(drawn), 9900)

    def test_json(self):
        row = server.WorldRow(id=4174, randomNumber=331)
        self.assertEqual(row.model_dump_json(), '{"id":4174,"randomNumber":331}')

    def test_updates_in_id_order(self):
        rows = [server.WorldRow(id=i, randomNumber=n) for i, n in [(9, 1), (3, 2), (9, 3), (1, 4)]]
        self.assertEqual(server.update_args(rows), [(4, 1), (2, 3), (1, 9), (3, 9)])


@unittest.skipUnless(DATABASE_URL, "DATABASE_URL is not set: the queries and updates tests against PostgreSQL "
                                   "need one (scripts/pg-dev.sh start, from the repository's root)")
class World(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Running(env={"DATABASE_POOL_SIZE": "4"})

    @classmethod
    def tearDownClass(cls):
        if not cls.server.stop():
            raise AssertionError("server did not exit cleanly on SIGTERM")

    def rows(self, path, n):
        """The rows of a /queries or /updates answer, checked for its shape:
        n objects of exactly {id, randomNumber}, integers 1 to 10,000."""
        status, body, content_type = get(self.server.port, path)
        self.assertEqual(status, 200, f"{path}: {body!r}")
        self.assertEqual(content_type.split(";")[0], "application/json")
        rows = json.loads(body)
        self.assertIsInstance(rows, list)
        self.assertEqual(len(rows), n, path)
        for row in rows:
            self.assertEqual(set(row), {"id", "randomNumber"})
            for key in ("id", "randomNumber"):
                self.assertIs(type(row[key]), int, row)
                self.assertTrue(1 <= row[key] <= 10000, row)
        return [(row["id"], row["randomNumber"]) for row in rows]

    @staticmethod
    def execute(sql, *args):
        async def run():
            conn = await asyncpg.connect(DATABASE_URL)
            try:
                return await conn.fetch(sql, *args)
            finally:
                await conn.close()

        return asyncio.run(run())

    def test_queries(self):
        # The database is shared (with the other tests here, and in the
        # runner's conformance test with other servers' tests): start from
        # the seeded table rather than assume it.
        self.execute(RESEED_WORLD)
        ids = set()
        for path, n in [("/queries?queries=1", 1), ("/queries?queries=5", 5), ("/queries?queries=20", 20),
                        ("/queries?queries=500", 500), ("/queries?queries=501", 500), ("/queries", 1),
                        ("/queries?queries=", 1), ("/queries?queries=foo", 1), ("/queries?queries=0", 1)]:
            with self.subTest(path):
                for i, number in self.rows(path, n):
                    self.assertEqual(number, seeded_number(i), (path, i))
                    ids.add(i)
        self.assertGreater(len(ids), 900)  # random ids: about 980 distinct of 1,030

    def test_queries_follow_the_table(self):
        try:
            self.execute("UPDATE world SET randomnumber = 10001 - id")
            for i, number in self.rows("/queries?queries=500", 500):
                self.assertEqual(number, 10001 - i)
        finally:
            self.execute(RESEED_WORLD)
        for i, number in self.rows("/queries?queries=20", 20):
            self.assertEqual(number, seeded_number(i))

    def test_updates_are_written(self):
        try:
            for n in [20, 1, 500]:
                with self.subTest(n):
                    answered = {}
                    rows = self.rows(f"/updates?queries={n}", n)
                    for i, number in rows:
                        answered.setdefault(i, set()).add(number)
                    changed = sum(number != seeded_number(i) for i, number in rows)
                    self.assertGreaterEqual(changed, n - 2)
                    held = dict(self.execute("SELECT id, randomnumber FROM world WHERE id = ANY($1)", list(answered)))
                    for i, numbers in answered.items():
                        self.assertIn(held[i], numbers, i)
                    self.execute(RESEED_WORLD)
        finally:
            self.execute(RESEED_WORLD)

    def test_updates_are_clamped(self):
        try:
            for path, n in [("/updates", 1), ("/updates?queries=", 1), ("/updates?queries=foo", 1),
                            ("/updates?queries=0", 1), ("/updates?queries=5", 5), ("/updates?queries=501", 500)]:
                with self.subTest(path):
                    self.rows(path, n)
        finally:
            self.execute(RESEED_WORLD)

    def test_concurrent_updates(self):
        """Updates of overlapping rows in flight together neither deadlock nor fail."""

        def many(_):
            for _ in range(5):
                self.rows("/updates?queries=500", 500)

        try:
            with ThreadPoolExecutor(4) as pool:
                list(pool.map(many, range(4)))
        finally:
            self.execute(RESEED_WORLD)


# -- ws ---------------------------------------------------------------------

#: The handshake key of RFC 6455's example, and the accept value it must get.
WS_KEY = "dGhlIHNhbXBsZSBub25jZQ=="
WS_ACCEPT = base64.b64encode(hashlib.sha1((WS_KEY + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()


def ws_frame(opcode, payload, fin=True, mask=True):
    """One client frame; masked unless told otherwise."""
    head = bytes([(0x80 if fin else 0) | opcode])
    bit = 0x80 if mask else 0
    n = len(payload)
    if n < 126:
        head += bytes([bit | n])
    elif n < 1 << 16:
        head += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", n)
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


class RawWs:
    """A WebSocket written and read frame by frame over a plain socket."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(f"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          f"Sec-WebSocket-Key: {WS_KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self.buf += self.recv_some()
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        self.status_line, *lines = head.decode("latin-1").split("\r\n")
        self.headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}

    def recv_some(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError
        return data

    def read(self, n):
        while len(self.buf) < n:
            self.buf += self.recv_some()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def frame(self):
        """The next server frame: (fin, opcode, payload)."""
        b0, b1 = self.read(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self.read(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self.read(8))[0]
        return bool(b0 & 0x80), b0 & 0x0F, self.read(n)

    def message(self):
        """The next data message, (opcode, payload), with any frames of
        another kind before it in `self.others`."""
        self.others = []
        while True:
            fin, opcode, payload = self.frame()
            if opcode in (1, 2):
                while not fin:
                    fin, _, more = self.frame()
                    payload += more
                return opcode, payload
            self.others.append((opcode, payload))

    def close(self):
        self.sock.close()


class WebSocketEcho(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Running()
        cls.url = f"ws://127.0.0.1:{cls.server.port}/ws"

    @classmethod
    def tearDownClass(cls):
        if not cls.server.stop():
            raise AssertionError("server did not exit cleanly on SIGTERM")

    def test_handshake_without_extension(self):
        # websockets' client offers permessage-deflate unless told not to.
        with ws_connect(self.url) as ws:
            self.assertIsNone(ws.response.headers.get("Sec-WebSocket-Extensions"))
        raw = RawWs(self.server.port)
        try:
            self.assertTrue(raw.status_line.startswith("HTTP/1.1 101 "), raw.status_line)
            self.assertEqual(raw.headers["sec-websocket-accept"], WS_ACCEPT)
            self.assertEqual(raw.headers["upgrade"].lower(), "websocket")
            self.assertNotIn("sec-websocket-extensions", raw.headers)
        finally:
            raw.close()

    def test_text_and_binary_keep_type_and_payload(self):
        with ws_connect(self.url, compression=None) as ws:
            for payload in ["hello", "ünïcödé ✓", "", b"", os.urandom(125), os.urandom(126), os.urandom(70000),
                            "x" * 65536, os.urandom(65536)]:
                with self.subTest(type(payload).__name__, size=len(payload)):
                    ws.send(payload)
                    got = ws.recv(timeout=10)
                    self.assertIs(type(got), type(payload))
                    self.assertEqual(got, payload)

    def test_in_order(self):
        with ws_connect(self.url, compression=None) as ws:
            for i in range(50):
                ws.send(f"m{i}")
            self.assertEqual([ws.recv(timeout=10) for _ in range(50)], [f"m{i}" for i in range(50)])

    def test_ping(self):
        with ws_connect(self.url, compression=None) as ws:
            pong = ws.ping(b"are you there")
            self.assertTrue(pong.wait(10))
        raw = RawWs(self.server.port)
        try:
            raw.sock.sendall(ws_frame(0x9, b"payload"))
            self.assertEqual(raw.frame(), (True, 0xA, b"payload"))
        finally:
            raw.close()

    def test_fragmented_with_a_ping_between(self):
        raw = RawWs(self.server.port)
        try:
            raw.sock.sendall(ws_frame(0x1, b"one-", fin=False) + ws_frame(0x9, b"mid")
                             + ws_frame(0x0, b"two-", fin=False) + ws_frame(0x0, b"three"))
            self.assertEqual(raw.message(), (0x1, b"one-two-three"))
            self.assertEqual(raw.others, [(0xA, b"mid")])
        finally:
            raw.close()

    def test_close_gets_the_same_code(self):
        raw = RawWs(self.server.port)
        try:
            raw.sock.sendall(ws_frame(0x8, struct.pack("!H", 4001) + b"bye"))
            fin, opcode, payload = raw.frame()
            self.assertEqual((fin, opcode, payload[:2]), (True, 0x8, struct.pack("!H", 4001)))
            self.assertRaises(EOFError, raw.recv_some)  # then the connection ends
        finally:
            raw.close()

    def test_unmasked_frame_closes_without_echo(self):
        raw = RawWs(self.server.port)
        try:
            raw.sock.sendall(ws_frame(0x1, b"hi", mask=False))
            rest = raw.buf
            try:
                while True:
                    rest += raw.recv_some()
            except EOFError:
                pass
            # Either nothing or a close frame with 1002, never the echo.
            if rest:
                self.assertEqual(rest[0], 0x88, rest)
                self.assertEqual(struct.unpack("!H", rest[2:4])[0], 1002)
        finally:
            raw.close()

    def test_ws_without_upgrade(self):
        self.assertIn(get(self.server.port, "/ws")[0], (400, 404, 426))


# -- static, upload, json-comp ------------------------------------------------

#: The contract's static files: name, size and SHA-256 (contract, "static").
STATIC_FILES = {
    "14k": (14 * 1024, "57a8ca1d858dbeaeac461a9c9cf2bb09a737493e9846b161c4ad840e42d613be"),
    "1m": (1024 * 1024, "3f055e97e631e61d7f5b9e428abbbcfb07255bc181245e235f5fa8d676d99f3c"),
}


def upload_head(length=None, extra=b""):
    """The head of a POST /upload, framed by Content-Length or chunked."""
    framing = b"Content-Length: %d" % length if length is not None else b"Transfer-Encoding: chunked"
    return (b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
            + framing + b"\r\n" + extra + b"\r\n")


def chunked(body, size=65536):
    return b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
                    for i in range(0, len(body), size)) + b"0\r\n\r\n"


def read_all(sock):
    """Everything the server sends until it closes the connection."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


class AcceptEncoding(unittest.TestCase):
    def test_allows_gzip(self):
        for header in ["gzip", "GZIP", "gzip, deflate, br", "br;q=1.0, gzip;q=0.5", "x-gzip", "*", "br, *",
                       "gzip;q=0.001", " gzip ; q=1 ", "identity, gzip"]:
            with self.subTest(header):
                self.assertTrue(server.accepts_gzip([header]))
        self.assertTrue(server.accepts_gzip(["br", "gzip"]))  # two header lines

    def test_does_not_allow_gzip(self):
        for header in ["", "identity", "br", "deflate, br", "gzip;q=0", "gzip; q=0.0", "GZIP;Q=0", "*;q=0",
                       "*, gzip;q=0", "gzip;q=0, *", "gzipx", "x-gzip;q=0"]:
            with self.subTest(header):
                self.assertFalse(server.accepts_gzip([header]))
        self.assertFalse(server.accepts_gzip([]))


class UploadLimit(unittest.TestCase):
    def test_declared_too_large(self):
        for value in [str(16 * 1024 * 1024 + 1), "10000000000", "9" * 40]:
            with self.subTest(value):
                self.assertTrue(server.declared_too_large(value))
        for value in [None, "", "0", "1024", str(8 * 1024 * 1024), str(16 * 1024 * 1024), "x", "-1",
                      "١٠٠٠٠٠٠٠٠٠٠"]:  # Arabic-Indic digits
            with self.subTest(value):
                self.assertFalse(server.declared_too_large(value))


@unittest.skipUnless((HERE / "static").is_dir(), "./static not found: the build writes it "
                                                  "(python3 ../../contract/static/make.py static)")
class Apps(unittest.TestCase):
    """static, upload and json-comp over real connections."""

    @classmethod
    def setUpClass(cls):
        cls.server = Running()

    @classmethod
    def tearDownClass(cls):
        if not cls.server.stop():
            raise AssertionError("server did not exit cleanly on SIGTERM")

    def setUp(self):
        self.conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=10)

    def tearDown(self):
        self.conn.close()

    def request(self, method, path, body=None, headers=None):
        self.conn.request(method, path, body=body, headers=headers or {})
        resp = self.conn.getresponse()
        resp.body = resp.read()
        return resp

    # static

    def test_static_files(self):
        for name, (size, digest) in STATIC_FILES.items():
            with self.subTest(name):
                first = self.request("GET", f"/static/{name}")
                self.assertEqual(first.status, 200)
                self.assertEqual(first.getheader("Content-Length"), str(size))
                self.assertIsNone(first.getheader("Transfer-Encoding"))
                self.assertEqual(hashlib.sha256(first.body).hexdigest(), digest)
                etag = first.getheader("ETag")
                self.assertRegex(etag, r'^(W/)?"[^"]*"$')
                modified = parsedate_to_datetime(first.getheader("Last-Modified"))
                self.assertLessEqual(modified, parsedate_to_datetime(first.getheader("Date")))
                second = self.request("GET", f"/static/{name}")
                self.assertEqual((second.status, second.getheader("ETag")), (200, etag))
                self.assertEqual(second.body, first.body)
                # The connection goes on right after the file.
                self.assertEqual(self.request("GET", "/blank").body, b"OK")

    def test_static_304(self):
        etag = self.request("GET", "/static/14k").getheader("ETag")
        for tags in [etag, "W/" + etag, f'"other", {etag}']:
            with self.subTest(tags):
                r = self.request("GET", "/static/14k", headers={"If-None-Match": tags})
                self.assertEqual((r.status, r.body), (304, b""))
        # Another tag, on the same connection: the file.
        r = self.request("GET", "/static/14k", headers={"If-None-Match": '"not-the-etag"'})
        self.assertEqual((r.status, len(r.body)), (200, 14 * 1024))
        self.assertEqual(self.request("GET", "/blank").body, b"OK")

    def test_static_not_found(self):
        for path in ["/static/nope", "/static", "/static/", "/static/../server.py", "/static/%2e%2e/server.py"]:
            with self.subTest(path):
                self.assertEqual(self.request("GET", path).status, 404)

    def test_static_not_compressed(self):
        r = self.request("GET", "/static/14k", headers={"Accept-Encoding": "gzip"})
        self.assertEqual((r.status, r.getheader("Content-Length")), (200, str(14 * 1024)))
        self.assertIsNone(r.getheader("Content-Encoding"))

    # upload

    def test_upload_1024_zero_bytes(self):
        r = self.request("POST", "/upload", bytes(1024), {"Content-Type": "application/octet-stream"})
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("Content-Type").split(";")[0], "application/json")
        self.assertEqual(json.loads(r.body),
                         {"length": 1024, "sha256": "5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef"})

    def test_upload_sizes(self):
        for size in [1024, 1025, 65536, 100_000, 1_234_567, 8 * 1024 * 1024]:
            with self.subTest(size):
                body = os.urandom(size)
                r = self.request("POST", "/upload", body, {"Content-Type": "application/octet-stream"})
                self.assertEqual((r.status, json.loads(r.body)),
                                 (200, {"length": size, "sha256": hashlib.sha256(body).hexdigest()}))

    def test_upload_chunked(self):
        body = os.urandom(300_000)
        r = raw(self.server.port, upload_head() + chunked(body, 70_000))
        self.assertEqual((r.status, json.loads(r.body)),
                         (200, {"length": len(body), "sha256": hashlib.sha256(body).hexdigest()}))

    def test_upload_answers_after_the_whole_body(self):
        body = os.urandom(65536)
        sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        with sock:
            sock.sendall(upload_head(len(body)) + body[:-1])
            sock.settimeout(0.5)
            with self.assertRaises(TimeoutError):
                sock.recv(1)
            sock.settimeout(10)
            sock.sendall(body[-1:])
            resp = http.client.HTTPResponse(sock)
            resp.begin()
            self.assertEqual((resp.status, json.loads(resp.read())["sha256"]),
                             (200, hashlib.sha256(body).hexdigest()))

    def test_upload_too_large_from_the_head(self):
        for length in [16 * 1024 * 1024 + 1, 10_000_000_000]:
            with self.subTest(length):
                sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
                with sock:
                    start = time.monotonic()
                    sock.sendall(upload_head(length) + b"x" * 65536)
                    data = read_all(sock)  # ends when the server closes
                    self.assertLess(time.monotonic() - start, 5)
                self.assertTrue(data.startswith(b"HTTP/1.1 413 "), data[:100])
                self.assertIn(b"\r\nconnection: close\r\n", data.lower())

    def test_upload_chunked_past_the_limit(self):
        sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        with sock:
            sock.sendall(upload_head())
            piece = b"%x\r\n%s\r\n" % (1 << 20, bytes(1 << 20))
            try:
                for _ in range(17):
                    sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server refused and closed while the body was coming
            data = read_all(sock)
        # A 413, or (when the answer was lost to the reset) the connection closed.
        if data:
            self.assertTrue(data.startswith(b"HTTP/1.1 413 "), data[:100])

    # json-comp

    def work(self, accept_encoding=None, body=None):
        headers = {"Content-Type": "application/json"}
        if accept_encoding is not None:
            headers["Accept-Encoding"] = accept_encoding
        return self.request("POST", "/work", json.dumps(EXAMPLE) if body is None else body, headers)

    def test_work_gzip(self):
        for accept in ["gzip", "gzip, br", "br;q=1, gzip;q=0.5", "*", "deflate, x-gzip"]:
            with self.subTest(accept):
                r = self.work(accept)
                self.assertEqual(r.status, 200)
                self.assertEqual(r.getheader("Content-Encoding"), "gzip")
                self.assertIn("accept-encoding", r.getheader("Vary").lower())
                self.assertEqual(r.getheader("Content-Type").split(";")[0], "application/json")
                self.assertEqual(r.getheader("Content-Length"), str(len(r.body)))
                self.assertEqual(json.loads(gzip.decompress(r.body)), EXAMPLE_ANSWER)

    def test_work_plain(self):
        for accept in [None, "identity", "br", "gzip;q=0", "*;q=0", "deflate"]:
            with self.subTest(accept):
                r = self.work(accept)
                self.assertEqual(r.status, 200)
                self.assertIn(r.getheader("Content-Encoding"), (None, "identity"))
                self.assertIn("accept-encoding", r.getheader("Vary").lower())
                self.assertEqual(json.loads(r.body), EXAMPLE_ANSWER)

    def test_work_gzip_bad_document(self):
        r = self.work("gzip", body='{"product":')
        self.assertEqual(r.status, 400)

    def test_only_work_compressed(self):
        r = self.request("GET", "/blank", headers={"Accept-Encoding": "gzip"})
        self.assertEqual((r.status, r.body), (200, b"OK"))
        self.assertIsNone(r.getheader("Content-Encoding"))


# -- fortunes -------------------------------------------------------------------

#: contract/db/schema.sql's fortune table.
SEEDED_FORTUNES = {
    1: "fortune: No such file or directory",
    2: "A computer scientist is someone who fixes things that aren't broken.",
    3: "After enough decimal places, nobody gives a damn.",
    4: "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1",
    5: "A computer program does what you tell it to do, not what you want it to do.",
    6: "Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen",
    7: "Any program that runs right is obsolete.",
    8: "A list is only as strong as its weakest link. — Donald Knuth",
    9: "Feature: A bug with seniority.",
    10: "Computers make very fast, very accurate mistakes.",
    11: '<script>alert("This should not be displayed in a browser alert box.");</script>',
    12: "フレームワークのベンチマーク",
}


def expected_fortunes(table):
    """The page's rows for a table {id: message}: the added row joins them,
    all sorted by message."""
    rows = [(i, m) for i, m in table.items()] + [(0, "Additional fortune added at request time.")]
    return sorted(rows, key=lambda row: row[1])


class Cells(html.parser.HTMLParser):
    """The text of each <tr>'s <td> cells, references decoded."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self.cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "td":
            self.rows[-1].append(self.cell.strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def page_rows(page):
    """The (id, message) rows of a fortunes page; the header row has no <td>."""
    cells = Cells()
    cells.feed(page)
    return [(int(row[0]), row[1]) for row in cells.rows if row]


def assert_escaped(test, page):
    """No raw markup in a cell: every < is a tag of the page, every & starts a
    reference."""
    test.assertNotIn("<script", page)
    for cell in page.split("<td>")[1:]:
        text = cell.split("</td>")[0]
        test.assertNotIn("<", text)
        for amp in text.split("&")[1:]:
            test.assertRegex(amp, r"^(#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z]+);")


class FortunesPage(unittest.TestCase):
    """The template and the sort, without a database."""

    def render(self, table):
        rows = [{"id": i, "message": m} for i, m in table.items()]  # as asyncpg's Records index
        return server.TEMPLATES.get_template("fortunes.html").render(fortunes=server.sorted_fortunes(rows))

    def test_seeded(self):
        page = self.render(SEEDED_FORTUNES)
        self.assertTrue(page.startswith("<!DOCTYPE html>"))
        self.assertIn("<title>Fortunes</title>", page)
        self.assertEqual(page_rows(page), expected_fortunes(SEEDED_FORTUNES))
        assert_escaped(self, page)
        self.assertIn("&lt;script&gt;alert(", page)

    def test_markup_is_escaped_by_the_template(self):
        table = {**SEEDED_FORTUNES, 13: '<b>bold</b> & "quoted" \'single\' </td></tr><tr><td>99'}
        page = self.render(table)
        self.assertEqual(page_rows(page), expected_fortunes(table))
        assert_escaped(self, page)

    def test_sorted_by_code_point(self):
        fortunes = server.sorted_fortunes([{"id": 1, "message": "b"}, {"id": 2, "message": "B"},
                                           {"id": 3, "message": "é"}, {"id": 4, "message": "a"}])
        self.assertEqual([f.id for f in fortunes], [0, 2, 4, 1, 3])  # "Additional..." < "B" < "a" < "b" < "é"


@unittest.skipUnless(DATABASE_URL, "DATABASE_URL is not set: the fortunes tests against PostgreSQL need one "
                                   "(scripts/pg-dev.sh start, from the repository's root)")
class Fortunes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Running(env={"DATABASE_POOL_SIZE": "4"})

    @classmethod
    def tearDownClass(cls):
        if not cls.server.stop():
            raise AssertionError("server did not exit cleanly on SIGTERM")

    def page(self):
        status, body, content_type = get(self.server.port, "/fortunes")
        self.assertEqual(status, 200, body)
        self.assertEqual(content_type.split(";")[0], "text/html")
        page = body.decode("utf-8")
        assert_escaped(self, page)
        return page_rows(page)

    def test_page(self):
        for _ in range(2):
            self.assertEqual(self.page(), expected_fortunes(SEEDED_FORTUNES))

    def test_follows_the_database(self):
        markup = '<b>new</b> & "fortune" \'x\' </td></tr>'

        async def execute(sql, *args):
            conn = await asyncpg.connect(DATABASE_URL)
            try:
                await conn.execute(sql, *args)
            finally:
                await conn.close()

        try:
            asyncio.run(execute("INSERT INTO fortune (id, message) VALUES ($1, $2)", 1000, markup))
            self.assertEqual(self.page(), expected_fortunes({**SEEDED_FORTUNES, 1000: markup}))
        finally:
            asyncio.run(execute("DELETE FROM fortune WHERE id = $1", 1000))
        self.assertEqual(self.page(), expected_fortunes(SEEDED_FORTUNES))


# -- app --------------------------------------------------------------------------

#: The contract's LABEL list (CONTRACT.md, "app"), written out here rather
#: than taken from the server.
APP_LABELS = [
    "Tom & Jerry's cheese board",
    "<b>bold</b> move of the week",
    '"Quoted" goods, boxed',
    "O'Brien's pick for winter",
    "a < b > c, the ordered set",
]
APP_DIR = HERE.parent.parent / "contract" / "app"


def expected_items(k):
    """Page K's item rows from the contract's formula, as the page's cell texts
    (prices through Decimal, a way of writing them other than the server's)."""
    rows = []
    for i in range(1, 51):
        q = (k * 7 + i * 13) % 100 + 1
        c = (k * 7919 + i * 104729) % 100000
        rows.append([str((k - 1) * 50 + i), f"{APP_LABELS[(k + i) % 5]}, no. {k}.{i}", str(q),
                     str(Decimal(c).scaleb(-2)), str(Decimal(q * c).scaleb(-2))])
    return rows


def app_rows(page):
    """Every <tr>'s <td> texts (references decoded), the header row left out."""
    cells = Cells()
    cells.feed(page)
    return [row for row in cells.rows if row]


def count_in_process(path, sid, n):
    """In a process of its own: n visits to the session `sid` of the store at
    `path`, each counted under the slot's lock; the counts seen."""
    store = sessions.SessionStore(path)
    seen = []
    try:
        for _ in range(n):
            with store.open(sid) as held:
                if held.created:
                    raise AssertionError("the session was not found")
                seen.append(held.count())
    finally:
        store.close()
    return seen


class AppUnits(unittest.TestCase):
    def test_parse_page(self):
        for query, want in [("1", 1), ("100000", 100000), ("007", 7), ("100001", None), ("0", None),
                            ("", None), (None, None), ("-1", None), ("1.5", None), ("+1", None),
                            ("1e3", None), ("٣", None), ("9" * 5000, None)]:
            with self.subTest(query):
                self.assertEqual(server.parse_page({} if query is None else {"page": query}), want)

    def test_format_cents(self):
        for cents, want in [(0, "0.00"), (5, "0.05"), (99999, "999.99"), (9999900, "99999.00"), (1200, "12.00")]:
            self.assertEqual(server.format_cents(cents), want)


class SessionStore(unittest.TestCase):
    """sessions.py's store, on a file of its own."""

    def store(self, capacity=sessions.CAPACITY):
        path = sessions.create_file(capacity)
        self.addCleanup(os.unlink, path)
        store = sessions.SessionStore(path)
        self.addCleanup(store.close)
        return store, path

    def test_new_session_then_found(self):
        store, _ = self.store()
        before = time.time_ns() // 1_000_000
        with store.open(None) as held:
            self.assertTrue(held.created)
            self.assertRegex(held.id, r"^[0-9a-f]{40}$")
            self.assertEqual(held.count(), 1)
            sid, since = held.id, held.since
        self.assertTrue(before <= since <= time.time_ns() // 1_000_000)
        for want in [2, 3]:
            with store.open(sid) as held:
                self.assertFalse(held.created)
                self.assertEqual((held.id, held.since, held.count()), (sid, since, want))

    def test_ids_distinct_and_never_the_one_sent(self):
        store, _ = self.store()
        ids = set()
        for _ in range(200):
            with store.open(None) as held:
                ids.add(held.id)
        self.assertEqual(len(ids), 200)
        live = next(iter(ids))
        for made_up in ["0" * 40, "00000001" + "0" * 32, "ffffffff" + "1" * 32, live[:8] + "1" * 32,
                        live.upper(), live + "0", "x", ""]:
            with self.subTest(made_up):
                with store.open(made_up) as held:
                    self.assertTrue(held.created)
                    self.assertNotEqual(held.id, made_up)
                    self.assertEqual(held.count(), 1)

    def test_drop(self):
        store, _ = self.store()
        with store.open(None) as held:
            sid = held.id
        store.drop(sid)
        store.drop(sid)
        store.drop("nonsense")
        store.drop(None)
        with store.open(sid) as held:
            self.assertTrue(held.created)
            self.assertNotEqual(held.id, sid)

    def test_full_then_idle_sessions_reused_not_sooner(self):
        store, _ = self.store(capacity=2)
        t0 = time.monotonic_ns()
        first = [store.open(None, now=t0) for _ in range(2)]
        for held in first:
            held.release()
        with self.assertRaises(sessions.StoreFull):
            store.open(None, now=t0 + sessions.IDLE_NS)
        with store.open(first[0].id, now=t0 + sessions.IDLE_NS) as held:  # seen again: stays
            self.assertFalse(held.created)
        with store.open(None, now=t0 + sessions.IDLE_NS + 1) as held:  # the other one, idle, goes
            self.assertTrue(held.created)
            self.assertEqual(held.slot, first[1].slot)
        # Its old id names nothing now: it would need a new session, and the
        # store is full again.
        with self.assertRaises(sessions.StoreFull):
            store.open(first[1].id, now=t0 + sessions.IDLE_NS + 2)

    def test_processes_count_one_session_in_turn(self):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        store, path = self.store()
        with store.open(None) as held:
            sid = held.id
            held.count()
        # spawn, as uvicorn starts its workers: nothing inherited but the path.
        with ProcessPoolExecutor(4, mp_context=multiprocessing.get_context("spawn")) as pool:
            seen = [v for part in pool.map(count_in_process, [path] * 4, [sid] * 4, [50] * 4) for v in part]
        self.assertEqual(sorted(seen), list(range(2, 202)))


class App(unittest.TestCase):
    """GET /app and POST /app/logout over real connections, to every worker."""

    @classmethod
    def setUpClass(cls):
        cls.server = Running()
        cls.css = (APP_DIR / "app.css").read_text(encoding="utf-8")
        cls.js = (APP_DIR / "app.js").read_text(encoding="utf-8")

    @classmethod
    def tearDownClass(cls):
        if not cls.server.stop():
            raise AssertionError("server did not exit cleanly on SIGTERM")

    def request(self, method, path, headers=None, conn=None):
        own = conn is None
        conn = conn or http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        try:
            conn.request(method, path, headers=headers or {})
            resp = conn.getresponse()
            resp.body = resp.read()
            return resp
        finally:
            if own:
                conn.close()

    def page(self, k, cookie=None, accept_encoding=None, conn=None):
        """GET /app?page=K: (response, the page decoded, the cookie it set or None)."""
        headers = {}
        if cookie is not None:
            headers["Cookie"] = cookie
        if accept_encoding is not None:
            headers["Accept-Encoding"] = accept_encoding
        resp = self.request("GET", f"/app?page={k}", headers, conn)
        self.assertEqual(resp.status, 200, resp.body)
        body = gzip.decompress(resp.body) if resp.getheader("Content-Encoding") == "gzip" else resp.body
        page = body.decode("utf-8")
        set_cookies = resp.headers.get_all("Set-Cookie") or []
        self.assertLessEqual(len(set_cookies), 1)
        return resp, page, set_cookies[0].split(";")[0] if set_cookies else None

    def visits(self, page):
        return int(app_rows(page)[0][1])

    def test_visits_1_2_3_one_set_cookie(self):
        before = time.time_ns() // 1_000_000
        resp, page, cookie = self.page(7)
        self.assertRegex(cookie, r"^sid=[0-9a-f]{40}$")
        self.assertIn("HttpOnly", resp.getheader("Set-Cookie"))
        self.assertIn("Path=/", resp.getheader("Set-Cookie"))
        (_, visits), (_, since) = app_rows(page)[:2]
        self.assertEqual(visits, "1")
        self.assertTrue(before <= int(since) <= time.time_ns() // 1_000_000, since)
        # Each on a new connection, so on any worker.
        for want in range(2, 9):
            _, page, again = self.page(7, cookie)
            self.assertIsNone(again)
            self.assertEqual(app_rows(page)[:2], [["visits", str(want)], ["since", since]])

    def test_two_sessions_apart(self):
        a = self.page(1)[2]
        b = self.page(1)[2]
        self.assertNotEqual(a, b)
        self.assertEqual(self.visits(self.page(2, a)[1]), 2)
        self.assertEqual(self.visits(self.page(2, f"theme=dark; {b}; lang=en")[1]), 2)
        self.assertEqual(self.visits(self.page(2, a)[1]), 3)

    def test_made_up_cookie_gets_a_new_session(self):
        for made_up in ["sid=00112233445566778899aabbccddeeff", "sid=" + "0" * 40]:
            with self.subTest(made_up):
                _, page, cookie = self.page(3, made_up)
                self.assertIsNotNone(cookie)
                self.assertNotEqual(cookie, made_up)
                self.assertEqual(self.visits(page), 1)

    def test_page_rows_files_and_head(self):
        for k in [1, 4711, 100000]:
            with self.subTest(k):
                resp, page, _ = self.page(k)
                self.assertEqual(resp.getheader("Content-Type"), "text/html; charset=utf-8")
                self.assertEqual(resp.getheader("Cache-Control"), "no-store")
                self.assertTrue(page.startswith("<!DOCTYPE html>"), page[:40])
                self.assertIn(f"<title>Orders, page {k}</title>", page)
                self.assertIn(f"<h1>Orders, page {k}</h1>", page)
                self.assertIn('<form method="post" action="/app/logout">', page)
                self.assertIn(f"<style>\n{self.css}</style>", page)
                self.assertIn(f"<script>\n{self.js}</script>", page)
                rows = app_rows(page)
                self.assertEqual(len(rows), 52)
                self.assertEqual(rows[2:], expected_items(k))
                assert_escaped(self, page.split("<script>")[0])

    def test_labels_escaped(self):
        page = self.page(1)[1]
        for markup in ["<b>", "a < b", "Tom & ", '"Quoted"']:
            self.assertNotIn(markup, page)
        self.assertIn("&lt;b&gt;bold", page)
        self.assertIn("Tom &amp; Jerry", page)

    def test_gzip_and_plain(self):
        plain, plain_page, _ = self.page(12)
        self.assertIsNone(plain.getheader("Content-Encoding"))
        self.assertEqual(plain.getheader("Vary"), "Accept-Encoding")
        self.assertEqual(plain.getheader("Content-Length"), str(len(plain.body)))
        for ae in ["gzip", "deflate, gzip;q=0.5", "*"]:
            with self.subTest(ae):
                resp, page, _ = self.page(12, accept_encoding=ae)
                self.assertEqual(resp.getheader("Content-Encoding"), "gzip")
                self.assertEqual(resp.getheader("Vary"), "Accept-Encoding")
                self.assertEqual(resp.getheader("Content-Length"), str(len(resp.body)))
                self.assertLess(len(resp.body), len(plain.body))
                self.assertEqual(app_rows(page)[2:], expected_items(12))
                # The same page but for its session's creation time.
                self.assertEqual(page.split("<td>since</td>")[0], plain_page.split("<td>since</td>")[0])
        for ae in ["identity", "gzip;q=0", "br", "*;q=0"]:
            with self.subTest(ae):
                resp, page, _ = self.page(12, accept_encoding=ae)
                self.assertIsNone(resp.getheader("Content-Encoding"))
                self.assertEqual(app_rows(page)[2:], expected_items(12))

    def test_concurrent_pages_on_one_session(self):
        cookie = self.page(5)[2]

        def browse(_):
            conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
            seen = []
            try:
                for _ in range(25):
                    _, page, again = self.page(5, cookie, "gzip", conn)
                    if again is not None:
                        raise AssertionError(f"another cookie: {again}")
                    seen.append(self.visits(page))
            finally:
                conn.close()
            return seen

        with ThreadPoolExecutor(8) as pool:
            seen = [v for part in pool.map(browse, range(8)) for v in part]
        self.assertEqual(sorted(seen), list(range(2, 202)))

    def test_logout(self):
        cookie = self.page(9)[2]
        self.assertEqual(self.visits(self.page(9, cookie)[1]), 2)
        out = self.request("POST", "/app/logout", {"Cookie": cookie, "Content-Length": "0"})
        self.assertEqual(out.status, 200)
        _, page, fresh = self.page(9, cookie)
        self.assertEqual(self.visits(page), 1)
        self.assertIsNotNone(fresh)
        self.assertNotEqual(fresh, cookie)
        # Without a cookie, or with a dead one: 200 all the same.
        self.assertEqual(self.request("POST", "/app/logout", {"Content-Length": "0"}).status, 200)
        self.assertEqual(self.request("POST", "/app/logout", {"Cookie": cookie, "Content-Length": "0"}).status, 200)
        self.assertEqual(self.request("GET", "/app/logout").status, 405)

    def test_bad_page_is_400_and_leaves_the_session(self):
        cookie = self.page(2)[2]
        for query in ["?page=0", "?page=100001", "?page=abc", "?page=", "", "?page=-1", "?page=1.5", "?page=%2B1",
                      "?x=1"]:
            with self.subTest(query):
                resp = self.request("GET", f"/app{query}", {"Cookie": cookie})
                self.assertEqual(resp.status, 400)
                self.assertIsNone(resp.getheader("Set-Cookie"))
        self.assertEqual(self.visits(self.page(2, cookie)[1]), 2)


class AppStoreFile(unittest.TestCase):
    def test_made_for_the_workers_and_removed_after(self):
        def files():
            return {p.name for p in Path(tempfile.gettempdir() if not os.path.isdir("/dev/shm") else "/dev/shm")
                    .glob("netbench-fastapi-sessions-*")}

        before = files()
        running = Running()
        try:
            self.assertEqual(len(files() - before), 1)
        finally:
            self.assertTrue(running.stop())
        self.assertEqual(files() - before, set())


if __name__ == "__main__":
    unittest.main()
