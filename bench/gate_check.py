#!/usr/bin/env python3
"""Regression gate check (issue 29): what `netbench compare --fail-on` says on
a real A/A pair and on a planted 20% slowdown. Prints figures and the gate's
decisions; it asserts nothing about timing, and exits 0 whatever the gate
said (an A/A pair on a busy machine may trip a rule by chance: that is a
figure to read, not a failure of this script).

    python3 bench/gate_check.py                    # build, run suites/aa.toml twice into a temp store
    python3 bench/gate_check.py --db results/aa.sqlite --runs 7 8   # two runs already stored
    flock /tmp/netbench-heavy.lock python3 bench/gate_check.py      # on a shared machine

Steps:
  1. the A/A pair: run A against run B with --fail-on RULES (expect exit 0);
  2. one server slower: a copy of the store in which one server's requests/s
     in run B is scaled by 0.8 in every cell (expect exit 1 naming its cells);
  3. every server slower: a copy in which every cell of run B is scaled by
     0.8 (expect exit 0 under the run-wide shift, with a note that the rows
     moved together; exit 1 with --absolute).

Each case prints the gate's noise floor line (the smallest change it could
call beyond noise, per rule). Case 2 is also run with --max-floor 20%: on a
machine whose floor is above 20% the gate cannot see the planted 20% and
must say so (exit 1, "cannot judge a change of 20.0% here") rather than
pass. The A/A pair's largest change beyond the run-wide shift, per metric,
is printed as a calibration: what `--noise-floor` would take from it.

The slowdown is planted by editing a copy of the stored run (json_set on the
stored result's rps), not by slowing a server down: a real planted slowdown
would cost two more runs of the suite, and a server slowed by burning CPU
changes its latency and CPU use too, which would test more than the gate.
Only requests/s is scaled, so the p99 rule stays as measured. The stores
are left in the temporary folder, whose path is printed.
"""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The build's folder, as cargo chooses it.
NETBENCH = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
                        "release", "netbench")
RULES = "rps<-5%,p99>+10%"


def build():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "netbench"], cwd=ROOT, check=True)


def latest_run(db):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return c.execute("SELECT max(id) FROM runs").fetchone()[0]


def run_twice(suite, db):
    # The servers' own builds must not inherit a CARGO_TARGET_DIR meant for
    # netbench: rust-hyper's `cargo build` would put its binary there, and
    # its `run` (./target/release/rust-hyper) would not find it.
    env = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
    ids = []
    for _ in range(2):
        # Exit 1 (a cell failed, a server left out) still leaves a run.
        code = subprocess.run([NETBENCH, "run", suite, "--db", db], cwd=ROOT, env=env).returncode
        if code not in (0, 1):
            sys.exit(f"gate_check: netbench run {suite} exited {code}")
        ids.append(latest_run(db))
    return ids


def copy_store(src, dst):
    """A consistent copy through SQLite's backup (a WAL beside the file
    included)."""
    with sqlite3.connect(f"file:{src}?mode=ro", uri=True) as s, sqlite3.connect(dst) as d:
        s.backup(d)


def scale_rps(db, run, factor, server=None):
    """Scales the stored requests/s of run `run` (of one server, or all)."""
    with sqlite3.connect(db) as c:
        where = "run_id = ? AND status = 'ok' AND result IS NOT NULL"
        args = [factor, run]
        if server is not None:
            where += " AND server = ?"
            args.append(server)
        n = c.execute(
            f"UPDATE measurements SET result = json_set(result, '$.rps', "
            f"json_extract(result, '$.rps') * ?) WHERE {where}",
            args,
        ).rowcount
    return n


def servers_of(db, run):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return [r[0] for r in c.execute(
            "SELECT DISTINCT server FROM measurements WHERE run_id = ? AND status = 'ok' ORDER BY server",
            (run,))]


def gate(db, a, b, *extra):
    out = subprocess.run([NETBENCH, "compare", str(a), str(b), "--db", db, "--fail-on", RULES, *extra],
                         capture_output=True, text=True)
    section = out.stdout[out.stdout.find("Regression gate"):] if "Regression gate" in out.stdout else out.stderr
    return out.returncode, section.rstrip()


def floor_line(text):
    return next((l.strip() for l in text.splitlines() if l.strip().startswith("noise floor (")),
                "noise floor: none printed")


def calibration(db, a, b):
    """The largest change of any row of the A/A pair, per metric, as the
    gate judges it (beyond the run-wide shift where a row has one)."""
    out = subprocess.run([NETBENCH, "compare", str(a), str(b), "--db", db, "--format", "json"],
                         capture_output=True, text=True, check=True)
    worst = {}
    for r in json.loads(out.stdout)["rows"]:
        if r["metric"] in ("requests_per_s", "latency_p99") and r["change"] is not None:
            c = r["change"]
            # As the rules' side sees it (a fall for rps<, a rise for p99>):
            # the same noise is a smaller fall than rise.
            if r["metric"] == "requests_per_s":
                size = 1 - 1 / (1 + c) if c > 0 else -c
            else:
                size = c if c > 0 else 1 / (1 + c) - 1
            key = r["metric"]
            if size > worst.get(key, (0, ""))[0]:
                worst[key] = (size, f"{r['test']} c={r['connections']} {r['server']} {c * 100:+.1f}%")
    return worst


def failing(text):
    """The (cell, rule) pairs of a gate section's FAIL lines."""
    pairs = set()
    for line in text.splitlines():
        if line.startswith("  FAIL "):
            cell, _, rest = line[len("  FAIL "):].partition(": ")
            pairs.add((cell, rest.split(" ")[0]))
    return pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="aa", help="the suite run twice (default: aa)")
    ap.add_argument("--db", help="a store holding --runs (default: run the suite into a temp store)")
    ap.add_argument("--runs", nargs=2, type=int, metavar=("A", "B"), help="two stored runs of --db")
    ap.add_argument("--no-build", action="store_true", help="use the netbench already built")
    a = ap.parse_args()
    if not a.no_build:
        build()
    tmp = tempfile.mkdtemp(prefix="netbench-gate-check-")
    if a.runs:
        if not a.db:
            sys.exit("gate_check: --runs needs --db")
        db = os.path.join(tmp, "aa.sqlite")
        copy_store(os.path.abspath(a.db), db)
        ra, rb = a.runs
    else:
        db = os.path.join(tmp, "aa.sqlite")
        ra, rb = run_twice(a.suite, db)
    print(f"stores in {tmp}; runs {ra} (A) and {rb} (B); rules {RULES}")
    # The run-wide shift needs 4 or more servers in a row in both runs;
    # with fewer, every figure is judged as measured, host drift included.
    shared = sorted(set(servers_of(db, ra)) & set(servers_of(db, rb)))
    how = "beyond the run-wide shift" if len(shared) >= 4 else "as measured (fewer than 4 servers: no shift)"
    print(f"servers in both runs: {', '.join(shared)}; rows judged {how}\n")

    code, text = gate(db, ra, rb)
    aa = failing(text)
    print(f"== 1. A/A pair: exit {code} (0 expected: the gate's 5% is split over every row)\n{text}\n")
    summary = [("A/A pair", code, "0; a FAIL line is noise beyond the floor (1 pair in 20 by chance)")]
    floors = [("A/A pair", floor_line(text))]
    for metric, (size, row) in calibration(db, ra, rb).items():
        side = "fall" if metric == "requests_per_s" else "rise"
        print(f"   calibration: the largest {metric} change of the A/A pair, as a {side}, was "
              f"{size * 100:.1f}% ({row}): --noise-floor {size * 100:.0f}% would take it as noise")
    print()

    servers = servers_of(db, rb)
    if not servers:
        sys.exit(f"gate_check: run {rb} has no good measurement")
    one = servers[0]
    slow = os.path.join(tmp, "one-slower.sqlite")
    copy_store(db, slow)
    n = scale_rps(slow, rb, 0.8, one)
    code, text = gate(slow, ra, rb)
    named = sorted(c for c, r in failing(text) - aa if c.endswith(f" {one}") and r.startswith("rps"))
    print(f"== 2. {one} 20% slower in B ({n} repetitions scaled): exit {code} (1 expected where its rows' floor is below 20%)\n{text}")
    print(f"   {one}'s cells failing now and not in the A/A pair: {', '.join(named) or 'none'}\n")
    summary.append((f"{one} 20% slower", code,
                    f"1 naming {one} where the floor is below 20% (new FAIL cells {len(named)})"))
    floors.append((f"{one} 20% slower", floor_line(text)))
    code, text = gate(slow, ra, rb, "--max-floor", "20%")
    print(f"== 2b. the same with --max-floor 20%: exit {code} (1: either the slowdown, or "
          f"'cannot judge a change of 20.0% here')\n{text}\n")
    summary.append((f"{one} 20% slower, --max-floor 20%", code, "1, and the last line says which"))

    every = os.path.join(tmp, "all-slower.sqlite")
    copy_store(db, every)
    n = scale_rps(every, rb, 0.8)
    code, text = gate(every, ra, rb)
    same = failing(text) == aa
    print(f"== 3a. every server 20% slower in B ({n} repetitions scaled): exit {code} "
          f"(under the run-wide shift, what the A/A pair gave, with a note per row moved)\n{text}")
    print(f"   the same FAIL lines as the A/A pair: {'yes' if same else 'no'}\n")
    summary.append(("every server 20% slower", code, f"as the A/A pair: {'yes' if same else 'no'}"))
    code, text = gate(every, ra, rb, "--absolute")
    print(f"== 3b. the same with --absolute: exit {code} (1 expected unless the host's own drift "
          f"between the runs went the other way by as much)\n{text}\n")
    summary.append(("every server 20% slower, --absolute", code, "1 unless the host drifted up"))

    print("| case | exit | what to expect |")
    print("|---|---:|---|")
    for name, code, want in summary:
        print(f"| {name} | {code} | {want} |")
    print()
    for name, line in floors:
        print(f"{name}: {line}")


if __name__ == "__main__":
    main()
