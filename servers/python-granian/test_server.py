"""Tests of the python-granian server: its date and document rules, then the
contract over real connections to `python server.py` (Granian and its
workers) in a child process.

Run with `.venv/bin/python -m unittest` in this folder, after the build.
"""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from email.utils import parsedate_to_datetime
from pathlib import Path

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
    def test_json_constants_are_not_json(self):
        for text in ["NaN", "Infinity", "-Infinity", '{"balance": NaN}']:
            with self.subTest(text), self.assertRaises(ValueError):
                server.parse_json(text.encode())

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

    @unittest.skipUnless(FIXTURES.is_dir(), "contract/fixtures not found")
    def test_contract_fixtures(self):
        for line in (FIXTURES / "work.jsonl").read_text().splitlines():
            case = json.loads(line)
            with self.subTest(case["name"]):
                self.assertEqual(server.compute(case["request"]), case["answer"])
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
    """`python server.py [arg]` on a free loopback port."""

    def __init__(self, *args):
        self.port = free_port()
        env = {**os.environ, "HOST": "127.0.0.1", "PORT": str(self.port)}
        self.log = tempfile.TemporaryFile()  # Granian's own log (no access log)
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
        status 0, or by SIGTERM itself."""
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

    def test_head_blank(self):
        r = self.request("HEAD", "/blank")
        self.assertEqual((r.status, r.body), (200, b""))

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
    """Process ids of Granian's worker processes under `pid` (Linux /proc):
    all its children (workers are forked)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        found += [int(child) for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
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
            want = cpus
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


if __name__ == "__main__":
    unittest.main()
