"""Tests of the python-threaded server: its date, document and db parameter
rules, then the contract over real connections to `python server.py` in a
child process, static files, uploads, compressed /work answers, the fortunes
page, queries and updates included.

Run with `.venv/bin/python -m unittest` in this folder, after the build (which
also writes ./static). The tests against PostgreSQL (db, fortunes, queries,
updates) run only when DATABASE_URL is set (for one: `scripts/pg-dev.sh
start` from the repository's root).
"""

import gzip
import hashlib
import html.parser
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from email.utils import parsedate_to_datetime
from pathlib import Path

import psycopg

import server

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


class Compute(unittest.TestCase):
    def test_example(self):
        self.assertEqual(server.compute(EXAMPLE), EXAMPLE_ANSWER)

    def test_balance_is_the_same_number(self):
        for balance in [0, -1500, 1234.56, -0.01, 999999.99, 1e3, 0.1]:
            with self.subTest(balance):
                answer = server.compute(doc_with(balance=balance))
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
                self.assertIsNone(server.compute(doc))

    def test_json_constants_are_not_json(self):
        for text in ["NaN", "Infinity", "-Infinity", '{"balance": NaN}']:
            with self.subTest(text), self.assertRaises(ValueError):
                server.parse_json(text.encode())

    @unittest.skipUnless(FIXTURES.is_dir(), "contract/fixtures not found")
    def test_contract_fixtures(self):
        for line in (FIXTURES / "work.jsonl").read_text().splitlines():
            case = json.loads(line)
            with self.subTest(case["name"]):
                self.assertEqual(server.compute(server.parse_json(case["request"].encode())
                                                if isinstance(case["request"], str) else case["request"]),
                                 case["answer"])
        for line in (FIXTURES / "rejected.jsonl").read_text().splitlines():
            case = json.loads(line)
            with self.subTest(case["name"]):
                try:
                    doc = server.parse_json(case["body"].encode())
                except ValueError:
                    continue
                self.assertIsNone(server.compute(doc))


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
        self.proc = subprocess.Popen([sys.executable, "server.py", *args], cwd=HERE, env=env)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.proc.kill()
                    raise RuntimeError("server did not start")
                time.sleep(0.05)

    def stop(self):
        """SIGTERM; returns the exit status."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=10)
        finally:
            self.proc.kill()


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
        status = running.stop()
        if status != 0:
            raise AssertionError(f"server exited with {status} on SIGTERM")

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
        self.assertEqual((r.status, r.body, r.getheader("Content-Type")), (200, b"OK", "text/plain"))
        self.assertEqual(r.getheader("Content-Length"), "2")

    def test_head_blank(self):
        r = self.request("HEAD", "/blank")
        self.assertEqual((r.status, r.body), (200, b""))

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

    def test_too_large(self):
        # The server answers from the headers alone, and closes the connection.
        r = raw(self.server.port, b"POST /work HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                  b"Content-Length: %d\r\n\r\n" % (2 << 20))
        self.assertEqual(r.status, 413)
        self.assertEqual(r.getheader("Connection"), "close")

    def test_echo(self):
        for path, want in [("/echo/abc-1.2_x~y", b"abc-1.2_x~y"), ("/echo/hello?q=1&r", b"hello"),
                           ("/echo/", b""), ("/echo/Z9-._~Z9-._~", b"Z9-._~Z9-._~")]:
            with self.subTest(path):
                r = self.request("GET", path)
                self.assertEqual((r.status, r.body, r.getheader("Content-Type")), (200, want, "text/plain"))

    def test_not_found(self):
        for path in ["/nope", "/", "/echo", "/blank/x", "/workx"]:
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
        # delayed ACK (4 s here); see Handler.disable_nagle_algorithm.
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


class RootArgument(unittest.TestCase):
    def test_0_blank(self):
        running = Running("0")
        try:
            r = raw(running.port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            self.assertEqual((r.status, r.body), (200, b"OK"))
        finally:
            self.assertEqual(running.stop(), 0)

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
            self.assertEqual(running.stop(), 0)

    def test_bad_argument(self):
        proc = subprocess.run([sys.executable, "server.py", "2"], cwd=HERE, capture_output=True, timeout=10)
        self.assertEqual(proc.returncode, 1)


def stopped_cleanly(running):
    return running.stop() == 0


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


#: Puts the world table back as contract/db/schema.sql seeds it.
RESEED_WORLD = "UPDATE world SET randomnumber = 1 + mod(id * 7919 + 13, 10000)"


def seeded_number(i):
    """world's randomnumber for row i as contract/db/schema.sql seeds it."""
    return 1 + (i * 7919 + 13) % 10000


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

    def test_queries_clamped_as_techempower_does(self):
        for params, want in [({}, 1), ({"queries": ""}, 1), ({"queries": "foo"}, 1), ({"queries": "0"}, 1),
                             ({"queries": "-5"}, 1), ({"queries": "1.5"}, 1), ({"queries": "١٢"}, 1),
                             ({"queries": "1"}, 1), ({"queries": "20"}, 20), ({"queries": "007"}, 7),
                             ({"queries": "000"}, 1), ({"queries": "500"}, 500), ({"queries": "501"}, 500),
                             ({"queries": "99999999999"}, 500), ({"queries": "9" * 5000}, 500)]:
            with self.subTest(params):
                self.assertEqual(server.queries_param(params), want)

    def test_pool_size(self):
        self.assertEqual(server.pool_size({}), 4)
        self.assertEqual(server.pool_size({"DATABASE_POOL_SIZE": ""}), 4)
        self.assertEqual(server.pool_size({"DATABASE_POOL_SIZE": "8"}), 8)
        self.assertEqual(server.pool_size({"DATABASE_POOL_SIZE": "1"}), 1)
        for value in ["0", "-1", "x", "2.5"]:
            with self.subTest(value), self.assertRaises(ValueError):
                server.pool_size({"DATABASE_POOL_SIZE": value})
        self.assertIsNone(server.open_pool({}))

    def test_row_as_psycopg_returns_it(self):
        # numeric arrives as a Decimal, timestamptz as an aware datetime.
        row = (1, "item-1", 'Row 1 of the netbench items table: "seeded", fixed & checked.', 31, Decimal("79.19"),
               datetime(2020, 1, 1, 0, 20, 34, 567000, tzinfo=timezone.utc))
        item = server.render_row(row)
        self.assertEqual(item, json.loads(ROW_1_JSON))
        self.assertEqual(item, expected_row(1))
        self.assertEqual(json.loads(server.to_json(item)), json.loads(ROW_1_JSON))
        # Three digits of milliseconds even when they are zero; UTC whatever
        # the datetime's zone; a price that is a whole number stays a number.
        other = server.render_row(row[:4] + (Decimal("1000.00"),
                                             datetime(2021, 6, 1, 12, tzinfo=timezone(timedelta(hours=2)))))
        self.assertEqual(other["updated"], "2021-06-01T10:00:00.000Z")
        self.assertEqual(json.loads(server.to_json(other))["price"], 1000)


def get(port, path):
    """One GET on a new connection: (status, body, Content-Type)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
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
            for path in ["/db?id=1", "/db/list?from=1", "/fortunes", "/queries?queries=2", "/updates"]:
                with self.subTest(path):
                    self.assertEqual(get(running.port, path)[0], 503)
            self.assertEqual(get(running.port, "/db?id=abc")[0], 400)
            self.assertEqual(get(running.port, "/db/list?from=1&count=0")[0], 400)
            self.assertEqual(get(running.port, "/blank")[:2], (200, b"OK"))
        finally:
            self.assertTrue(stopped_cleanly(running))

    def test_bad_pool_size(self):
        env = {**os.environ, "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "DATABASE_POOL_SIZE": "zero"}
        proc = subprocess.run([sys.executable, "server.py"], cwd=HERE, env=env, capture_output=True, timeout=10)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(b"DATABASE_POOL_SIZE", proc.stderr)


DATABASE_URL = os.environ.get("DATABASE_URL")


def setUpModule():
    # unittest shows a skip's reason only with -v; `make test` runs it without.
    if not DATABASE_URL:
        print("test_server: DATABASE_URL is not set, so the tests against PostgreSQL are skipped",
              file=sys.stderr)


def execute(sql, *params):
    """One statement through a connection of the test's own."""
    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        cursor = conn.execute(sql, params)
        return cursor.fetchall() if cursor.description is not None else None


class WithDatabase(unittest.TestCase):
    """A server with DATABASE_URL and a pool of 4."""

    @classmethod
    def setUpClass(cls):
        cls.server = Running(env={"DATABASE_POOL_SIZE": "4"})

    @classmethod
    def tearDownClass(cls):
        if not stopped_cleanly(cls.server):
            raise AssertionError("server did not exit with status 0 on SIGTERM")

    def json(self, path, status=200):
        got, body, content_type = get(self.server.port, path)
        self.assertEqual(got, status, f"{path}: {body!r}")
        if status != 200:
            return body
        self.assertEqual(content_type.split(";")[0], "application/json")
        return json.loads(body)


@unittest.skipUnless(DATABASE_URL, "DATABASE_URL is not set: the db tests against PostgreSQL need one "
                                   "(scripts/pg-dev.sh start, from the repository's root)")
class Db(WithDatabase):
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
        sql = "UPDATE items SET name = %s, quantity = %s, price = %s, updated = %s WHERE id = %s"
        try:
            execute(sql, "changed", 1, Decimal("12345.60"),
                    datetime.fromisoformat("1999-12-31T23:59:59.001+00:00"), item_id)
            self.assertEqual(self.json(f"/db?id={item_id}"), {**want, "name": "changed", "quantity": 1,
                                                              "price": 12345.6,
                                                              "updated": "1999-12-31T23:59:59.001Z"})
        finally:
            execute(sql, want["name"], want["quantity"], Decimal(str(want["price"])),
                    datetime.fromisoformat(want["updated"].replace("Z", "+00:00")), item_id)
        self.assertEqual(self.json(f"/db?id={item_id}"), want)

    def test_concurrent_connections_share_the_pool(self):
        # More connection threads than pooled connections: each waits its turn.
        import threading
        errors = []

        def client(i):
            try:
                for _ in range(5):
                    status, body, _ = get(self.server.port, f"/db?id={i}")
                    if status != 200 or json.loads(body) != expected_row(i):
                        errors.append((i, status, body))
            except OSError as e:
                errors.append((i, e))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(1, 17)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


# -- queries, updates -----------------------------------------------------------


@unittest.skipUnless(DATABASE_URL, "DATABASE_URL is not set: the queries and updates tests against "
                                   "PostgreSQL need one (scripts/pg-dev.sh start, from the repository's root)")
class World(WithDatabase):
    def rows(self, path, n):
        rows = self.json(path)
        self.assertIsInstance(rows, list)
        self.assertEqual(len(rows), n, path)
        for row in rows:
            self.assertEqual(set(row), {"id", "randomNumber"})
            self.assertIs(type(row["id"]), int)
            self.assertIs(type(row["randomNumber"]), int)
            self.assertTrue(1 <= row["id"] <= 10000)
        return rows

    def test_queries(self):
        # The table may have been changed by updates; compare with what it holds.
        for n in [1, 5, 20]:
            rows = self.rows(f"/queries?queries={n}", n)
            held = dict(execute("SELECT id, randomnumber FROM world WHERE id = ANY(%s)", [r["id"] for r in rows]))
            for row in rows:
                self.assertEqual(row["randomNumber"], held[row["id"]])
        # Random ids, not one row repeated.
        self.assertGreater(len({row["id"] for row in self.rows("/queries?queries=20", 20)}), 10)

    def test_clamped(self):
        for path, n in [("/queries", 1), ("/queries?queries=", 1), ("/queries?queries=foo", 1),
                        ("/queries?queries=0", 1), ("/queries?queries=501", 500), ("/updates?queries=0", 1),
                        ("/updates?queries=bar", 1), ("/updates", 1)]:
            with self.subTest(path):
                self.rows(path, n)

    def test_queries_follow_the_database(self):
        item_id = 4242
        try:
            execute("UPDATE world SET randomnumber = 0 WHERE id <= 10000")
            for row in self.rows("/queries?queries=50", 50):
                self.assertEqual(row["randomNumber"], 0)
        finally:
            execute(RESEED_WORLD)
        self.assertEqual(execute("SELECT randomnumber FROM world WHERE id = %s", item_id), [(seeded_number(item_id),)])

    def test_updates_written(self):
        try:
            rows = self.rows("/updates?queries=20", 20)
            held = dict(execute("SELECT id, randomnumber FROM world WHERE id = ANY(%s)", [r["id"] for r in rows]))
            answered = {}
            for row in rows:
                self.assertTrue(1 <= row["randomNumber"] <= 10000)
                answered.setdefault(row["id"], set()).add(row["randomNumber"])
            for item_id, numbers in answered.items():
                self.assertIn(held[item_id], numbers)  # an id drawn twice: either number
            # New numbers, not the old ones written back (a chance one may be).
            self.assertGreater(sum(held[i] != seeded_number(i) for i in held), len(held) // 2)
        finally:
            execute(RESEED_WORLD)

    def test_concurrent_updates_do_not_deadlock(self):
        import threading
        errors = []

        def client():
            try:
                for _ in range(10):
                    status, body, _ = get(self.server.port, "/updates?queries=50")
                    if status != 200:
                        errors.append((status, body))
            except OSError as e:
                errors.append(e)

        try:
            threads = [threading.Thread(target=client) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            execute(RESEED_WORLD)
        self.assertEqual(errors, [])


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


class EntityTags(unittest.TestCase):
    def test_weak_comparison(self):
        for header in ['"a-1"', 'W/"a-1"', '"x", "a-1"', '"x",W/"a-1" , "y"', "*", " * "]:
            with self.subTest(header):
                self.assertTrue(server.etag_matches(header, '"a-1"'))
        self.assertTrue(server.etag_matches('"a-1"', 'W/"a-1"'))
        for header in ['"a-2"', '"a-1x"', 'a-1', '"A-1"', '""', '"x", "y"']:
            with self.subTest(header):
                self.assertFalse(server.etag_matches(header, '"a-1"'))


@unittest.skipUnless((HERE / "static").is_dir(), "./static not found: the build writes it "
                                                  "(python3 ../../contract/static/make.py static)")
class Apps(unittest.TestCase):
    """static, upload and json-comp over real connections."""

    @classmethod
    def setUpClass(cls):
        cls.server = Running()

    @classmethod
    def tearDownClass(cls):
        if not stopped_cleanly(cls.server):
            raise AssertionError("server did not exit with status 0 on SIGTERM")

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

    def test_static_head(self):
        r = self.request("HEAD", "/static/1m")
        self.assertEqual((r.status, r.body, r.getheader("Content-Length")), (200, b"", str(1024 * 1024)))
        self.assertIsNotNone(r.getheader("ETag"))
        self.assertEqual(self.request("GET", "/blank").body, b"OK")

    def test_static_304(self):
        etag = self.request("GET", "/static/14k").getheader("ETag")
        for tags in [etag, "W/" + etag, f'"other", {etag}', "*"]:
            with self.subTest(tags):
                r = self.request("GET", "/static/14k", headers={"If-None-Match": tags})
                self.assertEqual((r.status, r.body), (304, b""))
                self.assertEqual(r.getheader("ETag"), etag)
        # Another tag, on the same connection: the file.
        r = self.request("GET", "/static/14k", headers={"If-None-Match": '"not-the-etag"'})
        self.assertEqual((r.status, len(r.body)), (200, 14 * 1024))
        self.assertEqual(self.request("GET", "/blank").body, b"OK")

    def test_static_not_found(self):
        for path in ["/static/nope", "/static", "/static/", "/static/../server.py", "/static/%2e%2e/server.py",
                     "/static/.", "/static/..", "/static/14k/x"]:
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
        for size in [0, 1024, 1025, 65536, 100_000, 1_234_567, 8 * 1024 * 1024]:
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
                    resp = http.client.HTTPResponse(sock)
                    resp.begin()  # the answer comes while the body is still owed
                    self.assertLess(time.monotonic() - start, 5)
                    self.assertEqual(resp.status, 413)
                    self.assertEqual(resp.getheader("Connection"), "close")
                    resp.read()
                    self.assertEqual(read_all(sock), b"")  # then the server closes

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

    def test_other_paths_keep_the_1_mib_limit(self):
        r = raw(self.server.port, b"POST /work HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                  b"Content-Length: %d\r\n\r\n" % (2 << 20))
        self.assertEqual(r.status, 413)

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
        return server.render_fortunes(list(table.items())).decode()  # (id, message) rows, as psycopg's

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
        fortunes = server.sorted_fortunes([(1, "b"), (2, "B"), (3, "é"), (4, "a")])
        self.assertEqual([f.id for f in fortunes], [0, 2, 4, 1, 3])  # "Additional..." < "B" < "a" < "b" < "é"


@unittest.skipUnless(DATABASE_URL, "DATABASE_URL is not set: the fortunes tests against PostgreSQL need one "
                                   "(scripts/pg-dev.sh start, from the repository's root)")
class Fortunes(WithDatabase):
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
        try:
            execute("INSERT INTO fortune (id, message) VALUES (%s, %s)", 1000, markup)
            self.assertEqual(self.page(), expected_fortunes({**SEEDED_FORTUNES, 1000: markup}))
        finally:
            execute("DELETE FROM fortune WHERE id = %s", 1000)
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


class AppUnits(unittest.TestCase):
    def test_parse_page(self):
        for query, want in [("1", 1), ("100000", 100000), ("007", 7), ("100001", None), ("0", None),
                            ("", None), (None, None), ("-1", None), ("1.5", None), ("+1", None),
                            ("1e3", None), ("٣", None), ("9" * 5000, None)]:
            with self.subTest(query):
                self.assertEqual(server.parse_page({} if query is None else {"page": query}), want)

    def test_session_id(self):
        self.assertIsNone(server.session_id([]))
        self.assertEqual(server.session_id(["a=1; sid=abc ;b=2"]), "abc")
        self.assertEqual(server.session_id(["a=1", "sid=x"]), "x")
        self.assertIsNone(server.session_id(["xsid=abc"]))

    def test_format_cents(self):
        for cents, want in [(0, "0.00"), (5, "0.05"), (99999, "999.99"), (9999900, "99999.00"), (1200, "12.00")]:
            self.assertEqual(server.format_cents(cents), want)

    def test_idle_sessions_swept_not_sooner(self):
        store = server.SessionStore()
        # The store's clock, at a value whose sums with the idle time are
        # exact: with time.monotonic()'s own value, (t0 + idle) - t0 can
        # round to a hair over idle, and the session is swept at exactly
        # idle (seen failing on a machine up for a day).
        t0 = 1024.0
        store._swept = t0
        sid, _, created = store.open(None, now=t0)
        self.assertTrue(created)
        idle = server.SESSION_IDLE_SECONDS
        self.assertFalse(store.open(sid, now=t0 + idle)[2])
        again, _, created = store.open(sid, now=t0 + 2 * idle + 1)
        self.assertTrue(created)
        self.assertNotEqual(again, sid)


class App(unittest.TestCase):
    """GET /app and POST /app/logout over real connections."""

    @classmethod
    def setUpClass(cls):
        cls.server = Running()
        cls.css = (APP_DIR / "app.css").read_text(encoding="utf-8")
        cls.js = (APP_DIR / "app.js").read_text(encoding="utf-8")

    @classmethod
    def tearDownClass(cls):
        if not stopped_cleanly(cls.server):
            raise AssertionError("server did not exit with status 0 on SIGTERM")

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
        self.assertRegex(cookie, r"^sid=[0-9a-f]{32}$")
        self.assertRegex(resp.getheader("Set-Cookie"), r"; Path=/; HttpOnly$")
        (_, visits), (_, since) = app_rows(page)[:2]
        self.assertEqual(visits, "1")
        self.assertTrue(before <= int(since) <= time.time_ns() // 1_000_000, since)
        for want in ["2", "3"]:
            _, page, again = self.page(7, cookie)
            self.assertIsNone(again)
            self.assertEqual(app_rows(page)[:2], [["visits", want], ["since", since]])

    def test_two_sessions_apart(self):
        a = self.page(1)[2]
        b = self.page(1)[2]
        self.assertNotEqual(a, b)
        self.assertEqual(self.visits(self.page(2, a)[1]), 2)
        self.assertEqual(self.visits(self.page(2, f"theme=dark; {b}; lang=en")[1]), 2)
        self.assertEqual(self.visits(self.page(2, a)[1]), 3)

    def test_made_up_cookie_gets_a_new_session(self):
        made_up = "sid=00112233445566778899aabbccddeeff"
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
        seen, errors = [], []

        def browse():
            conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
            try:
                for _ in range(25):
                    resp, page, again = self.page(5, cookie, "gzip", conn)
                    if again is not None:
                        errors.append(again)
                    seen.append(self.visits(page))
            except Exception as e:  # noqa: BLE001 - reported by the main thread
                errors.append(e)
            finally:
                conn.close()

        threads = [threading.Thread(target=browse) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
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


if __name__ == "__main__":
    unittest.main()
