#!/usr/bin/env python3
"""Issue 43's paired A/B targets: does `netbench compare RUN --pair A B
--fail-on 'rps<-5%'` pass an A/A pair and fail a planted 5% slowdown, run
after run, on this machine?

One server (netbench's contract test server, thread per connection) is run
three times in each suite run, resident, in rounds of 1 s windows in random
order: `gate` (A), `gate:twin` (the same build and settings in another
process: the A/A pair) and `gate:slow` (the same server spending a planted
extra share of CPU time on every request, `--burn-ns`). Before the runs, the
server's CPU per request is measured (from its cgroup, in a calibration run
of `gate` alone), and the burn is set to --slowdown percent of it: on one
CPU the server is CPU-bound, so its requests/s falls by about that share.

For each of --runs suite runs it gates both pairs and prints their paired
ratio with its interval and the gate's exit code; at the end, how many A/A
pairs passed (exit 0) and how many planted slowdowns failed (exit 1). It
asserts nothing: the counts are figures to read against the targets (9 of
10 each).

    python3 bench/ab_gate.py                  # 10 runs of 10 rounds, a 5.5% burn
    python3 bench/ab_gate.py --runs 3 --rounds 8 --slowdown 5.5

Needs target/release/netbench and target/release/netbench-contract-server
(`cargo build --release -p netbench -p netbench-testkit`). About a minute
per run: do not run it beside other measurements. The store and the suite
are left in a temporary folder whose path is printed. Exit status 0, or 2
when a run or a gate could not be made.
"""

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release")
NETBENCH = os.path.join(RELEASE, "netbench")
SERVER = os.path.join(RELEASE, "netbench-contract-server")
RULE = "rps<-5%"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--slowdown", type=float, default=5.5,
                   help="the planted extra CPU per request, in percent of the measured cost")
    p.add_argument("--connections", type=int, default=50)
    return p.parse_args(argv)


def manifest(burn_ns):
    variant = ""
    if burn_ns is not None:
        variant = (f'\n[[variants]]\nname = "slow"\ndescription = "{burn_ns} ns more CPU per request"\n'
                   f'args = ["--burn-ns", "{burn_ns}"]\n')
    return (f'name = "gate"\nlanguage = "Rust"\nframework = "netbench contract test server"\n'
            f'description = "a thread-per-connection contract server"\nmodel = "thread-per-connection"\n'
            f'build = ""\nrun = "{SERVER} --tag ab-gate"\n{variant}')


def suite(servers, rounds, connections):
    names = ", ".join(f'"{s}"' for s in servers)
    return f'''description = "paired A/B gate check"
servers = [{names}]
repetitions = {rounds}
cooldown = "0s"
quiet_wait = "5s"
[warmup]
until = "steady"
window = "500ms"
min = "2s"
cap = "20s"
process = "run"
[placement]
server_cpus = "auto"
client_cpus = "auto"
[[scenarios]]
name = "blank"
endpoint = "blank"
connections = [{connections}]
warmup = "500ms"
duration = "1s"
'''


def run_suite(work, text, db):
    path = os.path.join(work, "suite.toml")
    with open(path, "w") as f:
        f.write(text)
    subprocess.run([NETBENCH, "run", path, "--db", db, "--servers", os.path.join(work, "servers")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return sqlite3.connect(db).execute("SELECT max(id) FROM runs").fetchone()[0]


def cpu_per_request_ns(db, run):
    rows = sqlite3.connect(db).execute(
        "SELECT server_cpu_s, json_extract(result, '$.requests') FROM measurements "
        "WHERE run_id = ? AND status = 'ok' AND repetition > 1", (run,)).fetchall()
    per = sorted(cpu / n * 1e9 for cpu, n in rows if cpu and n)
    return per[len(per) // 2]


def gate(db, run, a, b):
    out = subprocess.run([NETBENCH, "compare", str(run), "--db", db, "--pair", a, b,
                          "--fail-on", RULE, "--format", "json"],
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"compare --pair {a} {b} exited {out.returncode}: {out.stderr.strip()}")
    rows = json.loads(out.stdout).get("rows", [])
    row = next((r for r in rows if r.get("metric", "rps") == "rps"), rows[0] if rows else {})
    return out.returncode, row


def describe(row):
    ci = row.get("change_ci95") or [float("nan"), float("nan")]
    return f"{row.get('change', float('nan')) * 100:+.1f}% [{ci[0] * 100:+.1f}%, {ci[1] * 100:+.1f}%]"


def main(argv):
    args = parse_args(argv)
    for binary in (NETBENCH, SERVER):
        if not os.path.exists(binary):
            print(f"ab_gate: {binary} is missing: cargo build --release -p netbench -p netbench-testkit",
                  file=sys.stderr)
            return 2
    work = tempfile.mkdtemp(prefix="netbench-ab-gate-")
    db = os.path.join(work, "gate.sqlite")
    os.makedirs(os.path.join(work, "servers", "gate"))
    write = lambda text: open(os.path.join(work, "servers", "gate", "server.toml"), "w").write(text)
    print(f"ab_gate: store and suites in {work}", file=sys.stderr)
    try:
        write(manifest(None))
        calibration = run_suite(work, suite(["gate"], 4, args.connections), db)
        base = cpu_per_request_ns(db, calibration)
        burn = int(base * args.slowdown / 100)
        print(f"gate's CPU per request at {args.connections} connections: {base / 1000:.2f} µs; "
              f"the slow variant burns {burn} ns more ({args.slowdown}%)")
        write(manifest(burn))
        aa_pass = ab_fail = 0
        for i in range(1, args.runs + 1):
            run = run_suite(work, suite(["gate", "gate:twin", "gate:slow"], args.rounds, args.connections), db)
            aa, aa_row = gate(db, run, "gate", "gate:twin")
            ab, ab_row = gate(db, run, "gate", "gate:slow")
            aa_pass += aa == 0
            ab_fail += ab == 1
            print(f"run {i} (stored {run}): A/A {describe(aa_row)} exit {aa}; "
                  f"planted {describe(ab_row)} exit {ab}", flush=True)
        print(f"\nA/A pairs passing {RULE}: {aa_pass} of {args.runs}")
        print(f"planted {args.slowdown}% slowdowns failing it: {ab_fail} of {args.runs}")
        return 0
    except (subprocess.CalledProcessError, RuntimeError, ValueError) as e:
        print(f"ab_gate: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
