#!/usr/bin/env python3
"""Issue 28's acceptance check: is a JVM server's figure in the table its
steady-state throughput? For each server, in turn and back to back (the
machine's speed moves by 20% and more over an hour here, so a table figure
from a run long before says little):

1. the table's way: `netbench run` of a suite made from suites/standard.toml
   (its [warmup], placement and repetitions, the blank scenario, this one
   server) into a private store, and the table's figure for the cell (the
   median over the repetitions);
2. by hand: the server started alone pinned to CPU 0 and loaded from CPU 1
   with `netbench load -c 100 -d 5s` twelve times in a row (60 s, so the JIT
   has long finished); the figure is the median of the last three loads'
   requests/s (45 to 60 s: one 5 s window alone moves by 15% here);

and prints table / hand. --rounds N does both N times per server and judges
the median ratio. The table's way stores its runs in
target/jvm_warm-<server>.sqlite (warm-up curves included) and logs both
ways to target/jvm_warm-<server>.log. A run that measured the server while it was still warming
shows a ratio well below 1 (java-spring before the issue: 849 against
21,614, 0.04).

    python3 bench/jvm_warm.py                   # the five JVM servers
    python3 bench/jvm_warm.py java-spring go-gin --rounds 2 --min-ratio 0.9
    python3 bench/jvm_warm.py --from-store      # against the latest stored run instead
    python3 bench/jvm_warm.py --from-store --run 12
    python3 bench/jvm_warm.py --check           # self-test, no server started

Needs target/release/netbench (`make netbench`). A server whose artefact is
missing is built with its manifest's build line first (as `netbench run`
does, in servers/<name>/). Takes about 2.5 minutes per server and round: do
not run it beside other measurements. Exit status: 0 when every ratio is at
least --min-ratio, 1 when one is below it, 2 when a server could not be
measured or has no figure.
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
    p.add_argument("--db", default=DEFAULT_DB, help="with --from-store: the results store (default: %(default)s)")
    p.add_argument("--rounds", type=int, default=1, help="table-then-hand rounds per server; the median ratio is judged (default: %(default)s)")
    p.add_argument("--suite", default=os.path.join(ROOT, "suites", "standard.toml"), help="the suite whose warm-up and placement the table's way uses (default: %(default)s)")
    p.add_argument("--from-store", action="store_true", help="compare with a run already in --db instead of running the table's way now")
    p.add_argument("--run", type=int, help="with --from-store: the stored run (default: the latest run with the cell)")
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


# --- the table's way, now ------------------------------------------------


def toml_value(v):
    """A TOML literal for the scalars and flat lists a suite file holds."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise ValueError(f"a suite value this script cannot write: {v!r}")


def one_server_suite(suite, server, scenario, connections):
    """The suite file text: `suite` (parsed) with only `server` and only the
    scenario `scenario` at `connections`, everything else (warm-up,
    placement, repetitions, cooldown) as it is."""
    out = []
    tables = {}
    for key, value in suite.items():
        if isinstance(value, dict):
            tables[key] = value
        elif key == "scenarios":
            continue
        elif key == "servers":
            out.append(f"servers = {toml_value([server])}")
        else:
            out.append(f"{key} = {toml_value(value)}")
    for name, table in tables.items():
        out.append(f"\n[{name}]")
        out.extend(f"{k} = {toml_value(v)}" for k, v in table.items())
    chosen = [s for s in suite.get("scenarios", []) if s.get("name") == scenario]
    if not chosen:
        raise KeyError(f"the suite has no scenario named {scenario!r}")
    for sc in chosen:
        out.append("\n[[scenarios]]")
        for k, v in sc.items():
            out.append(f"{k} = {toml_value([connections] if k == 'connections' else v)}")
    return "\n".join(out) + "\n"


def measure_table_way(name, args, suite, log, db):
    """(median requests/s, repetitions) of `netbench run` of the one-server
    suite, stored in `db` (kept: its warm-up curves show where a low ratio
    comes from)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"jvm-warm-{name}.toml")
        with open(path, "w") as f:
            f.write(one_server_suite(suite, name, args.scenario, args.connections))
        print(f"{name}: the table's way (netbench run, {suite.get('repetitions', 1)} repetitions)", file=sys.stderr, flush=True)
        code = subprocess.run([NETBENCH, "run", path, "--db", db, "--no-wait"], cwd=ROOT,
                              stdout=log, stderr=log).returncode
        if code not in (0, 1):
            raise RuntimeError(f"netbench run exited {code}")
        stored = table_figure(db, name, args.scenario, args.connections)
        if stored is None:
            raise RuntimeError("netbench run stored no successful measurement")
        _, rps, reps = stored
        return rps, reps


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


def hand_figure(figures):
    """What the hand-run reaches at the end: the median of its last three
    loads (the last 15 s of 60), so that one noisy 5 s window (they move by
    15% here) does not decide the ratio either way."""
    return statistics.median(figures[-3:])


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


def server_ratios(rows):
    """{server: [ratio of each of its rows]} for the rows measured."""
    ratios = {}
    for server, _, table, _, hand, error in rows:
        if not error:
            ratios.setdefault(server, []).append(verdict(table, hand, 0)[0])
    return ratios


def judged(ratios, min_ratio):
    """(median ratio, ok) of one server's rounds."""
    if any(r is None for r in ratios):
        return None, False
    m = statistics.median(ratios)
    return m, m >= min_ratio


def format_rows(rows, min_ratio):
    """The printed table. Each row: (server, run, table rps, repetitions,
    hand rps, error message or None); `run` is the stored run's id, or
    `now N` for round N of the table's way run now. A server with several
    rounds gets a line with their median ratio, which is what is judged."""
    lines = [f"{'server':<14} {'run':>6} {'table req/s':>12} {'reps':>4} {'by hand req/s':>14} {'ratio':>6}  verdict"]
    ratios = server_ratios(rows)
    for i, (server, run, table, reps, hand, error) in enumerate(rows):
        if error:
            lines.append(f"{server:<14} {'-':>6} {'-':>12} {'-':>4} {'-':>14} {'-':>6}  {error}")
            continue
        ratio, _ = verdict(table, hand, min_ratio)
        shown = f"{ratio:.2f}" if ratio is not None else "-"
        rounds = ratios[server]
        last = all(r[0] != server or r[5] for r in rows[i + 1:])
        if len(rounds) == 1:
            _, ok = judged(rounds, min_ratio)
            mark = "ok" if ok else f"below {min_ratio:.2f}"
        else:
            mark = ""
        lines.append(f"{server:<14} {run!s:>6} {table:>12,.0f} {reps:>4} {hand:>14,.0f} {shown:>6}  {mark}".rstrip())
        if len(rounds) > 1 and last:
            m, ok = judged(rounds, min_ratio)
            mark = "ok" if ok else f"below {min_ratio:.2f}"
            shown = f"{m:.2f}" if m is not None else "-"
            lines.append(f"{server:<14} {'median':>6} {'':>12} {'':>4} {'':>14} {shown:>6}  {mark}")
    return "\n".join(lines)


def exit_status(rows, min_ratio):
    if any(error for *_, error in rows):
        return 2
    return 0 if all(judged(r, min_ratio)[1] for r in server_ratios(rows).values()) else 1


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
    assert hand_figure([100.0, 5000.0, 6000.0, 9000.0, 5500.0]) == 6000.0
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

    # Rounds: the median ratio is judged (0.80, 0.90, 0.88 -> 0.88, ok).
    rounds = [
        ("java-vertx", "now 1", 80.0, 2, 100.0, None),
        ("java-vertx", "now 2", 90.0, 2, 100.0, None),
        ("java-vertx", "now 3", 88.0, 2, 100.0, None),
    ]
    text = format_rows(rounds, 0.85)
    assert "median" in text and "0.88  ok" in text, text
    assert exit_status(rounds, 0.85) == 0
    assert exit_status(rounds[:1] + [("java-vertx", "now 2", 70.0, 2, 100.0, None)], 0.85) == 1

    # The one-server suite keeps standard's warm-up, placement and
    # repetitions, and has only the server and the scenario asked for.
    with open(os.path.join(ROOT, "suites", "standard.toml"), "rb") as f:
        standard = tomllib.load(f)
    made = tomllib.loads(one_server_suite(standard, "java-vertx", "blank", 100))
    assert made["servers"] == ["java-vertx"], made
    assert made["warmup"] == standard["warmup"] and made["placement"] == standard["placement"]
    assert made["repetitions"] == standard["repetitions"]
    assert [sc["name"] for sc in made["scenarios"]] == ["blank"]
    assert made["scenarios"][0]["connections"] == [100]
    try:
        one_server_suite(standard, "java-vertx", "nope", 100)
        raise AssertionError("an unknown scenario was accepted")
    except KeyError:
        pass

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
    if args.from_store and not os.path.exists(args.db):
        print(f"{args.db} does not exist: `make run` stores a run there", file=sys.stderr)
        return 2
    if args.rounds < 1:
        print("--rounds must be at least 1", file=sys.stderr)
        return 2
    suite = None
    if not args.from_store:
        with open(args.suite, "rb") as f:
            suite = tomllib.load(f)
    rows = []
    os.makedirs(os.path.join(ROOT, "target"), exist_ok=True)
    for name in args.servers or JVM_SERVERS:
        log_path = os.path.join(ROOT, "target", f"jvm_warm-{name}.log")
        db = os.path.join(ROOT, "target", f"jvm_warm-{name}.sqlite")
        if not args.from_store and os.path.exists(db):
            os.remove(db)
        if args.from_store:
            stored = table_figure(args.db, name, args.scenario, args.connections, args.run)
            if stored is None:
                where = f"run {args.run}" if args.run else "the store"
                rows.append((name, None, None, None, None, f"no {args.scenario} figure at {args.connections} connections in {where}"))
                continue
        for r in range(args.rounds):
            try:
                with open(log_path, "a" if r else "w") as log:
                    if args.from_store:
                        run, table, reps = stored
                    else:
                        ensure_built(name, load_manifest(name), log)
                        table, reps = measure_table_way(name, args, suite, log, db)
                        run = f"now {r + 1}"
                    figures = measure_by_hand(name, args, log)
            except (OSError, RuntimeError, subprocess.CalledProcessError, KeyError) as e:
                rows.append((name, None, None, None, None, f"not measured: {e} (log: {log_path})"))
                break
            hand = hand_figure(figures)
            rows.append((name, run, table, reps, hand, None))
            print(f"{name}: round {r + 1}: table {table:,.0f}, by hand {hand:,.0f} (the last load alone "
                  f"{figures[-1]:,.0f}), ratio {table / hand:.2f}", file=sys.stderr, flush=True)
    print(format_rows(rows, args.min_ratio))
    return exit_status(rows, args.min_ratio)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
