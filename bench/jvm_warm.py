#!/usr/bin/env python3
"""Issue 28's acceptance check: is a JVM server's figure in the table its
steady-state throughput? For each server, start it alone pinned to CPU 0,
load it from CPU 1 with `netbench load -c 100 -d 5s` twelve times in a row
(60 s, so the JIT has long finished), keep the last load's requests/s (the
figure "by hand"), read the latest stored run's table figure for the same
cell (the median over its repetitions) from the SQLite store, and print
table / hand. A run that measured the server while it was still warming
shows a ratio well below 1 (java-spring before the issue: 849 against
21,614, 0.04).

    python3 bench/jvm_warm.py                   # the five JVM servers
    python3 bench/jvm_warm.py java-spring go-gin --min-ratio 0.9
    python3 bench/jvm_warm.py --run 12          # against run 12, not the latest
    python3 bench/jvm_warm.py --check           # self-test, no server started

Needs target/release/netbench (`make netbench`) and a store with a run
(`make run`). A server whose artefact is missing is built with its
manifest's build line first (as `netbench run` does, in servers/<name>/).
Takes about 70 s per server plus start-up: do not run it beside other
measurements. Exit status: 0 when every ratio is at least --min-ratio, 1
when one is below it, 2 when a server could not be measured or has no
figure in the store.
"""

import argparse
import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETBENCH = os.path.join(ROOT, "target", "release", "netbench")
SERVERS_DIR = os.path.join(ROOT, "servers")
DEFAULT_DB = os.path.join(ROOT, "results", "netbench.sqlite")
JVM_SERVERS = ["kotlin-ktor", "java-spring", "java-vertx", "java-netty", "java-helidon"]

# As long as the runner waits for a server to answer (suite's READY_WITHIN is
# 60 s); a first JVM start on a cold disk can take most of it.
READY_TIMEOUT_S = 90.0


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("servers", nargs="*", help=f"servers to check (default: {' '.join(JVM_SERVERS)})")
    p.add_argument("--db", default=DEFAULT_DB, help="the results store (default: %(default)s)")
    p.add_argument("--run", type=int, help="the stored run to compare with (default: the latest run with the cell)")
    p.add_argument("--scenario", default="blank", help="the stored scenario (default: %(default)s)")
    p.add_argument("--path", default="/blank", help="the path loaded by hand (default: %(default)s)")
    p.add_argument("--connections", type=int, default=100, help="connections, stored and by hand (default: %(default)s)")
    p.add_argument("--loads", type=int, default=12, help="loads in a row; the last one counts (default: %(default)s)")
    p.add_argument("--duration", default="5s", help="length of each load (default: %(default)s)")
    p.add_argument("--min-ratio", type=float, default=0.85, help="the lowest acceptable table / hand ratio (default: %(default)s)")
    p.add_argument("--server-cpu", default="0", help="CPU list the server is pinned to (default: %(default)s)")
    p.add_argument("--client-cpu", default="1", help="CPU list the load is pinned to (default: %(default)s)")
    p.add_argument("--check", action="store_true", help="self-test the parsing and the comparison on a tiny fake store, start nothing")
    return p.parse_args(argv)


# --- the stored figure -----------------------------------------------------

# The table's figure for a cell: the median over the repetitions that
# succeeded of the stored LoadResult's rps (crates/report/src/suite_table.rs),
# for the server's default variant ('').
CELL_RPS_SQL = """
SELECT run_id, json_extract(result, '$.rps') AS rps
FROM measurements
WHERE server = :server AND variant = '' AND scenario = :scenario
  AND connections = :connections AND status = 'ok'
  AND run_id = coalesce(:run, (
      SELECT max(run_id) FROM measurements
      WHERE server = :server AND variant = '' AND scenario = :scenario
        AND connections = :connections AND status = 'ok'))
"""


def table_figure(db, server, scenario, connections, run=None):
    """(run id, median requests/s, repetitions) of the stored cell, or None
    when the store has no successful measurement of it."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(
            CELL_RPS_SQL,
            {"server": server, "scenario": scenario, "connections": connections, "run": run},
        ).fetchall()
    values = [r["rps"] for r in rows if r["rps"] is not None]
    if not values:
        return None
    return rows[0]["run_id"], statistics.median(values), len(values)


# --- the figure by hand ----------------------------------------------------


def load_manifest(name):
    path = os.path.join(SERVERS_DIR, name, "server.toml")
    with open(path, "rb") as f:
        return tomllib.load(f)


def run_line(manifest):
    """The manifest's run command as `netbench run` starts it: `exec`
    prepended unless it starts with an assignment or `exec` already
    (crates/suite/src/server.rs, shell_line)."""
    run = manifest["run"].strip()
    first = run.split()[0] if run else ""
    name, eq, _ = first.partition("=")
    assignment = eq and name and not name[0].isdigit() and all(c.isalnum() or c == "_" for c in name)
    return run if assignment or first == "exec" else f"exec {run}"


def ensure_built(name, manifest, log):
    """Builds the server with its manifest's build line unless its artefact
    is already there."""
    folder = os.path.join(SERVERS_DIR, name)
    artefact = manifest.get("artefact", "")
    if artefact and os.path.exists(os.path.join(folder, artefact)):
        return
    build = manifest.get("build", "").strip()
    if not build:
        return
    print(f"{name}: building ({build})", file=sys.stderr, flush=True)
    subprocess.run(["sh", "-c", build], cwd=folder, check=True, stdout=log, stderr=log)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url, proc, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with status {proc.returncode} before answering")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"no 200 from {url} within {timeout_s:.0f} s")


def stop(proc):
    """Stops the server's whole process group: TERM, then KILL."""
    if proc.poll() is not None:
        return
    for sig, wait_s in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def load_rps(output):
    """requests/s from `netbench load --json` output (load-result.v1)."""
    return float(json.loads(output)["rps"])


def measure_by_hand(name, args, log):
    """The requests/s of each of `args.loads` loads in a row against a fresh
    server."""
    manifest = load_manifest(name)
    ensure_built(name, manifest, log)
    port = free_port()
    env = dict(os.environ, HOST="127.0.0.1", PORT=str(port))
    proc = subprocess.Popen(
        ["taskset", "-c", args.server_cpu, "sh", "-c", run_line(manifest)],
        cwd=os.path.join(SERVERS_DIR, name),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}{args.path}"
    try:
        wait_ready(url, proc, READY_TIMEOUT_S)
        figures = []
        for i in range(args.loads):
            out = subprocess.run(
                ["taskset", "-c", args.client_cpu, NETBENCH, "load",
                 "-c", str(args.connections), "-d", args.duration, "--json", url],
                check=True, capture_output=True, text=True,
            ).stdout
            figures.append(load_rps(out))
            print(f"{name}: load {i + 1}/{args.loads}: {figures[-1]:,.0f} requests/s", file=sys.stderr, flush=True)
        return figures
    finally:
        stop(proc)


# --- the comparison --------------------------------------------------------


def verdict(table, hand, min_ratio):
    """(ratio, ok) of a stored figure against the figure by hand."""
    if hand <= 0:
        return None, False
    ratio = table / hand
    return ratio, ratio >= min_ratio


def format_rows(rows, min_ratio):
    """The printed table. Each row: (server, run, table rps, repetitions,
    hand rps, error message or None)."""
    lines = [f"{'server':<14} {'run':>4} {'table req/s':>12} {'reps':>4} {'by hand req/s':>14} {'ratio':>6}  verdict"]
    for server, run, table, reps, hand, error in rows:
        if error:
            lines.append(f"{server:<14} {'-':>4} {'-':>12} {'-':>4} {'-':>14} {'-':>6}  {error}")
            continue
        ratio, ok = verdict(table, hand, min_ratio)
        shown = f"{ratio:.2f}" if ratio is not None else "-"
        mark = "ok" if ok else f"below {min_ratio:.2f}"
        lines.append(f"{server:<14} {run:>4} {table:>12,.0f} {reps:>4} {hand:>14,.0f} {shown:>6}  {mark}")
    return "\n".join(lines)


def exit_status(rows, min_ratio):
    if any(error for *_, error in rows):
        return 2
    return 0 if all(verdict(t, h, min_ratio)[1] for _, _, t, _, h, _ in rows) else 1


# --- self-test -------------------------------------------------------------


def check():
    """Runs the parsing and comparison code on a tiny fake store: no server,
    no netbench binary needed."""
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "fake.sqlite")
        with sqlite3.connect(db) as c:
            # The columns the query reads, as crates/suite/src/store/schema.rs
            # names them.
            c.execute("""CREATE TABLE measurements (id INTEGER PRIMARY KEY, run_id INTEGER,
                server TEXT, variant TEXT, scenario TEXT, connections INTEGER,
                repetition INTEGER, status TEXT, result TEXT)""")
            rows = [
                (1, "java-spring", "", "blank", 100, 1, "ok", 500.0),
                (2, "java-spring", "", "blank", 100, 1, "ok", 849.0),
                (2, "java-spring", "", "blank", 100, 2, "ok", 900.0),
                (2, "java-spring", "", "blank", 100, 3, "ok", 700.0),
                (2, "java-spring", "", "blank", 100, 4, "failed", None),
                (2, "java-spring", "nodelay", "blank", 100, 1, "ok", 99999.0),
                (2, "java-spring", "", "work", 100, 1, "ok", 88888.0),
                (2, "java-netty", "", "blank", 100, 1, "ok", 20000.0),
                (3, "java-netty", "", "blank", 100, 1, "ok", 21000.0),
            ]
            c.executemany(
                "INSERT INTO measurements (run_id, server, variant, scenario, connections,"
                " repetition, status, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(*r[:7], None if r[7] is None else json.dumps({"rps": r[7]})) for r in rows],
            )
        assert table_figure(db, "java-spring", "blank", 100) == (2, 849.0, 3)
        assert table_figure(db, "java-spring", "blank", 100, run=1) == (1, 500.0, 1)
        assert table_figure(db, "java-netty", "blank", 100) == (3, 21000.0, 1)
        assert table_figure(db, "java-vertx", "blank", 100) is None
        assert table_figure(db, "java-spring", "blank", 1) is None

    assert load_rps('{"rps": 21614.5, "requests": 108072}') == 21614.5
    ratio, ok = verdict(849.0, 21614.0, 0.85)
    assert abs(ratio - 0.0393) < 1e-3 and not ok
    assert verdict(20000.0, 21000.0, 0.85)[1]
    assert verdict(1.0, 0.0, 0.85) == (None, False)

    rows = [
        ("java-spring", 2, 849.0, 3, 21614.0, None),
        ("java-netty", 3, 21000.0, 1, 21500.0, None),
    ]
    text = format_rows(rows, 0.85)
    assert "0.04" in text and "below 0.85" in text and "0.98" in text, text
    assert exit_status(rows, 0.85) == 1
    assert exit_status(rows[1:], 0.85) == 0
    assert exit_status(rows + [("x", None, None, None, None, "no figure")], 0.85) == 2

    # Every JVM server's manifest reads, and its run line is what the runner
    # would execute.
    for name in JVM_SERVERS:
        line = run_line(load_manifest(name))
        assert line.startswith("exec ") and "target/server.jar" in line, (name, line)
    assert run_line({"run": "FOO=1 ./server"}) == "FOO=1 ./server"
    assert run_line({"run": "exec ./server"}) == "exec ./server"
    print(text)
    print("check ok")
    return 0


def main(argv):
    args = parse_args(argv)
    if args.check:
        return check()
    if not os.access(NETBENCH, os.X_OK):
        print(f"{NETBENCH} is missing: build it with `make netbench`", file=sys.stderr)
        return 2
    if not os.path.exists(args.db):
        print(f"{args.db} does not exist: `make run` stores a run there", file=sys.stderr)
        return 2
    rows = []
    os.makedirs(os.path.join(ROOT, "target"), exist_ok=True)
    for name in args.servers or JVM_SERVERS:
        stored = table_figure(args.db, name, args.scenario, args.connections, args.run)
        if stored is None:
            where = f"run {args.run}" if args.run else "the store"
            rows.append((name, None, None, None, None, f"no {args.scenario} figure at {args.connections} connections in {where}"))
            continue
        log_path = os.path.join(ROOT, "target", f"jvm_warm-{name}.log")
        try:
            with open(log_path, "w") as log:
                figures = measure_by_hand(name, args, log)
        except (OSError, RuntimeError, subprocess.CalledProcessError, KeyError) as e:
            rows.append((name, None, None, None, None, f"not measured: {e} (log: {log_path})"))
            continue
        run, table, reps = stored
        rows.append((name, run, table, reps, figures[-1], None))
    print(format_rows(rows, args.min_ratio))
    return exit_status(rows, args.min_ratio)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
