#!/usr/bin/env python3
"""How long a resident server needs to be loaded again after waiting its
turn, before a measured window is fair to it (issue 43: the re-warm of
`[warmup] process = "run"`).

Servers are started once, pinned to CPU 0, and warmed (30 s, or 60 s for a
JIT runtime) by `netbench load` from CPU 1. Then, for each wait in --waits
(in an order shuffled per round), every server is left idle that long and
loaded in short back-to-back slices (`netbench load -c 100 -d SLICE`, each on
fresh connections warmed for 50 ms): the first slices after the wait against
the median of the last ones show what the wait cost. Prints, per server and
wait, each of the first slices as a share of that steady level, and the
slices' spread (CV) once steady, which is the noise a short window starts
from.

    python3 bench/resident_rewarm.py
    python3 bench/resident_rewarm.py rust-hyper java-netty --waits 0,60 --rounds 2

Needs target/release/netbench (`make netbench`); builds a server whose
artefact is missing with its manifest's build line. About 8 minutes with the
defaults: do not run it beside other measurements. Exit status 0, or 2 when a
server could not be started.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jvm_warm import (  # noqa: E402  (the same start and stop as the JVM check)
    NETBENCH, READY_TIMEOUT_S, SERVERS_DIR, ensure_built, free_port, load_manifest, run_line,
    stop, wait_ready,
)

DEFAULT_SERVERS = ["rust-hyper", "go-nethttp", "node-http", "java-netty", "java-spring"]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("servers", nargs="*", default=DEFAULT_SERVERS)
    p.add_argument("--waits", default="0,30,90", help="idle waits in seconds, comma-separated")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--slice", default="200ms", help="each load's measured window")
    p.add_argument("--slices", type=int, default=12, help="loads after each wait")
    p.add_argument("--server-cpu", default="0")
    p.add_argument("--client-cpu", default="1")
    p.add_argument("--seed", type=int, default=1)
    return p.parse_args(argv)


def load(url, args, duration, warmup="50ms"):
    out = subprocess.run(
        ["taskset", "-c", args.client_cpu, NETBENCH, "load", "-c", "100", "-d", duration,
         "--warmup", warmup, "--json", url],
        check=True, capture_output=True, text=True,
    ).stdout
    return float(json.loads(out)["rps"])


def main(argv):
    args = parse_args(argv)
    waits = [float(w) for w in args.waits.split(",")]
    rng = random.Random(args.seed)
    log = open(os.path.join(os.path.dirname(NETBENCH), "..", "resident_rewarm.log"), "w")
    procs, urls = {}, {}
    try:
        for name in args.servers:
            manifest = load_manifest(name)
            ensure_built(name, manifest, log)
            port = free_port()
            env = dict(os.environ, HOST="127.0.0.1", PORT=str(port))
            procs[name] = subprocess.Popen(
                ["taskset", "-c", args.server_cpu, "sh", "-c", run_line(manifest)],
                cwd=os.path.join(SERVERS_DIR, name), env=env, stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, start_new_session=True,
            )
            urls[name] = f"http://127.0.0.1:{port}/blank"
            wait_ready(urls[name], procs[name], READY_TIMEOUT_S)
            jit = bool(manifest.get("jit", False))
            warm = "60s" if jit else "30s"
            print(f"{name}: warming {warm}", file=sys.stderr, flush=True)
            load(urls[name], args, warm, warmup="0s")
        rows = {}
        for r in range(args.rounds):
            order = waits[:]
            rng.shuffle(order)
            for wait in order:
                print(f"round {r + 1}: every server idle {wait:.0f} s", file=sys.stderr, flush=True)
                time.sleep(wait)
                names = args.servers[:]
                rng.shuffle(names)
                for name in names:
                    # Each server's own wait starts when the last load of
                    # the others ended; the shuffle spreads that extra.
                    series = [load(urls[name], args, args.slice) for _ in range(args.slices)]
                    rows.setdefault((name, wait), []).append(series)
        print(f"\nslices of {args.slice} on 100 connections after each wait, as a share of the "
              f"median of the last half; CV of the last half")
        print(f"{'server':<14} {'wait':>5}  {'1st':>5} {'2nd':>5} {'3rd':>5} {'4th':>5}  {'CV':>5}")
        for (name, wait), runs in sorted(rows.items()):
            for series in runs:
                tail = series[len(series) // 2:]
                level = statistics.median(tail)
                cv = statistics.stdev(tail) / statistics.mean(tail)
                firsts = " ".join(f"{x / level:5.2f}" for x in series[:4])
                print(f"{name:<14} {wait:>4.0f}s  {firsts}  {cv * 100:4.1f}%")
        return 0
    except (RuntimeError, subprocess.CalledProcessError) as e:
        print(f"resident_rewarm: {e}", file=sys.stderr)
        return 2
    finally:
        for p in procs.values():
            stop(p)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
