#!/usr/bin/env python3
"""A/A check of netbench's comparison: runs the same suite twice in a row (or
reads two runs already stored) and counts how many cells a two-sided
Mann-Whitney test at p < 0.05 calls changed, on raw requests/s and on each
machine-speed control's normalised figures (every repetition of both runs
scaled to run A's median probe, as `netbench compare` does). Nothing changed
between the runs, so chance alone gives 5% of the tests; more than that means
the machine moved between the runs in a way those figures did not correct.

    python3 bench/aa_check.py                      # build, run suites/aa.toml twice, compare
    python3 bench/aa_check.py --runs 7 8           # two runs already in the store
    python3 bench/aa_check.py --suite quick --db results/aa.sqlite

It also counts `netbench compare`'s own verdicts (requests/s and p99), beyond
the run-wide shift (its default) and as measured (--absolute), and checks the
table's tiers the same way (crates/netbench/examples/aa_tiers.rs): each cell's
odd repetitions against its even ones within a run, and its repetitions in
run A against those in run B, tiered as the table tiers a row; a correct
method splits at most about 5% of those rows.
"""

import argparse
import itertools
import math
import os
import sqlite3
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETBENCH = os.path.join(ROOT, "target", "release", "netbench")


def mann_whitney_p(a, b):
    """Two-sided exact p of the U test (ties by mid-rank), by enumerating every
    split of the pooled values: fine for the 5 to 8 repetitions a side this
    check uses."""
    pooled = a + b
    order = sorted(range(len(pooled)), key=lambda i: pooled[i])
    ranks = [0.0] * len(pooled)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and pooled[order[j + 1]] == pooled[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    n = len(a)
    observed = sum(ranks[:n])
    mean = n * (len(pooled) + 1) / 2
    dist = abs(observed - mean)
    splits = list(itertools.combinations(range(len(pooled)), n))
    extreme = sum(abs(sum(ranks[i] for i in s) - mean) >= dist - 1e-9 for s in splits)
    return extreme / len(splits)


def latest_run(db):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return c.execute("SELECT max(id) FROM runs").fetchone()[0]


def run_suite(suite, db):
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "netbench"], cwd=ROOT, check=True)
    ids = []
    for _ in range(2):
        # Exit 1 (a cell failed) still leaves a run to compare; 2 and 130 do not.
        code = subprocess.run([NETBENCH, "run", suite, "--db", db], cwd=ROOT).returncode
        if code not in (0, 1):
            sys.exit(f"aa_check: netbench run {suite} exited {code}")
        ids.append(latest_run(os.path.join(ROOT, db)))
    return ids


def read(db, run):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        columns = {r[1] for r in c.execute("PRAGMA table_info(measurements)")}
        loopback = "probe_loopback_ns" if "probe_loopback_ns" in columns else "NULL"
        rows = c.execute(
            f"""SELECT scenario, connections, server || CASE variant WHEN '' THEN '' ELSE ':' || variant END,
                       json_extract(result, '$.rps'), probe_server_ns, {loopback}
                FROM measurements WHERE run_id = ? AND status = 'ok'""",
            (run,),
        ).fetchall()
    cells = {}
    for test, conns, server, rps, cpu, loop in rows:
        if rps is not None:
            cells.setdefault((test, conns, server), []).append({"raw": rps, "cpu": cpu, "loopback": loop})
    return cells


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="aa", help="the suite run twice (default: aa)")
    ap.add_argument("--db", default="results/aa.sqlite", help="the store (default: results/aa.sqlite)")
    ap.add_argument("--runs", nargs=2, type=int, metavar=("A", "B"), help="compare these stored runs instead of running")
    a = ap.parse_args()
    ra, rb = a.runs if a.runs else run_suite(a.suite, a.db)
    db = os.path.join(ROOT, a.db)
    ca, cb = read(db, ra), read(db, rb)
    shared = sorted(set(ca) & set(cb))
    if not shared:
        sys.exit(f"aa_check: runs {ra} and {rb} share no cell")
    print(f"A/A: runs {ra} and {rb} of {a.db}, {len(shared)} cells in both\n")
    print("| control | significant (p < 0.05) | expected by chance | median |change| | largest |change| |")
    print("|---|---:|---:|---:|---:|")
    for control in ("raw", "cpu", "loopback"):
        reps = [r for k in shared for r in ca[k] + cb[k]]
        if control != "raw" and any(r[control] is None for r in reps):
            print(f"| {control} | (not recorded in both runs) | | | |")
            continue
        ref = statistics.median(r[control] for k in shared for r in ca[k]) if control != "raw" else None

        def value(r):
            return r["raw"] if ref is None else r["raw"] * r[control] / ref

        significant, changes = 0, []
        for k in shared:
            va, vb = [value(r) for r in ca[k]], [value(r) for r in cb[k]]
            changes.append(abs(statistics.median(vb) / statistics.median(va) - 1))
            if min(len(va), len(vb)) >= 2 and mann_whitney_p(va, vb) < 0.05:
                significant += 1
        print(f"| {control} | {significant} of {len(shared)} | {0.05 * len(shared):.1f} | "
              f"{statistics.median(changes):.1%} | {max(changes):.1%} |")
    print()
    # netbench compare itself, requests/s and p99: beyond the run-wide shift
    # (its default) and as measured.
    for extra in ([], ["--absolute"]):
        out = subprocess.run([NETBENCH, "compare", str(ra), str(rb), "--db", db, *extra],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"aa_check: netbench compare exited {out.returncode}: {out.stderr.strip()}")
        verdicts = [l for l in out.stdout.splitlines() if l.endswith((" better", " worse"))]
        tests = sum(1 for l in out.stdout.splitlines() if l.endswith((" better", " worse", "  ~")))
        how = "as measured (--absolute)" if extra else "beyond the run-wide shift"
        print(f"netbench compare {ra} {rb}, {how}: {len(verdicts)} of {tests} tests significant")
        for l in verdicts:
            print("   ", l.strip())
    print()
    print(out.stdout)
    # The tiers, on the same two runs.
    tiers = subprocess.run(["cargo", "run", "--release", "-q", "-p", "netbench",
                            "--example", "aa_tiers", "--", db, str(ra), str(rb)], cwd=ROOT)
    if tiers.returncode != 0:
        sys.exit(f"aa_check: aa_tiers exited {tiers.returncode}")


if __name__ == "__main__":
    main()
