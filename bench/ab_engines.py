#!/usr/bin/env python3
"""Two netbench builds against each other: client CPU per request of build B
over build A, alternating, so the machine's drift between runs cancels.

For an engine change: build the old tree (a git worktree with its own
CARGO_TARGET_DIR: sharing the new tree's can leave its binary stale) and copy
its binary aside, build the new one, then

    python3 bench/ab_engines.py OLD NEW                    # cleartext, 2 B
    python3 bench/ab_engines.py OLD NEW --sizes 2,65536 --io uring,epoll
    python3 bench/ab_engines.py OLD NEW --tls              # HTTPS keep-alive
    python3 bench/ab_engines.py OLD NEW --tls --h2 100     # h2 over TLS, 100 streams each
    python3 bench/ab_engines.py OLD NEW --connections 1    # one connection: latency

Each round runs every (size, backend) cell with A then B (B then A on odd
rounds) against one private nginx worker on CPU 0, the client on CPU 1 with
one thread and --connections connections (100). CPU is the client's user +
sys from wait4 over the requests it completed. Prints the medians and B / A
per cell: CPU per request, requests/s, and latency at p50 and p99 (an
engine change that saves CPU by holding answers back shows there).
Standard library only; Linux only.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load_vs_wrk as lw  # noqa: E402
import tls_clients as tc  # noqa: E402


def one_run(binary: Path, io: str, url: str, seconds: int, cert: Path | None,
            connections: int, h2_streams: int | None) -> dict[str, float]:
    """CPU µs per request, requests/s and latency p50/p99 in µs of one run."""
    tls = ["--cacert", str(cert)] if cert else []
    h2 = []
    if h2_streams:
        h2 = ["--h2" if cert else "--h2c", "--streams", str(h2_streams)]
    cmd = ["taskset", "-c", lw.CLIENT_CPU, str(binary), "load", "--io", io, "-t", "1",
           "-c", str(connections), "-d", f"{seconds}s", *tls, *h2, "--json", url]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # netbench writes little to stderr, so reading stdout first cannot
    # block; wait4 reaps the child itself to get its own CPU.
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise lw.BenchError(f"{' '.join(cmd)} exited with {code}: {err.strip()[-300:]}")
    result = json.loads(out[out.find("{"):])
    return {
        "cpu": (usage.ru_utime + usage.ru_stime) / max(result["requests"], 1) * 1e6,
        "rps": result["rps"],
        "p50": result["latency_us"]["p50"],
        "p99": result["latency_us"]["p99"],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ab_engines.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", type=Path, help="build A's netbench binary (the baseline)")
    p.add_argument("b", type=Path, help="build B's netbench binary")
    p.add_argument("--sizes", default="2", help="answer sizes in bytes, comma-separated")
    p.add_argument("--io", default="uring", help="backends, comma-separated (uring, epoll)")
    p.add_argument("--tls", action="store_true", help="HTTPS keep-alive (2 B answers) instead")
    p.add_argument("--connections", type=int, default=100)
    p.add_argument("--h2", type=int, metavar="STREAMS",
                   help="HTTP/2 with this many streams per connection (h2 with --tls, else h2c)")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--duration", type=int, default=8, metavar="SECONDS")
    args = p.parse_args(argv)
    for binary in (args.a, args.b):
        if not binary.exists():
            print(f"ab_engines: {binary} does not exist", file=sys.stderr)
            return 2
    sizes = [2] if args.tls else [int(x) for x in args.sizes.split(",")]
    ios = args.io.split(",")
    nginx = shutil.which("nginx")
    if not nginx:
        print("ab_engines: nginx is not installed (bench/clients.py installs it)", file=sys.stderr)
        return 2
    if args.h2:
        import h2_clients as hc  # the bench's nginx with HTTP/2 listeners
        sizes = [2]
        server = hc.H2Nginx(nginx) if args.tls else hc.H2cNginx(nginx)
    else:
        server = (tc.TlsNginx(nginx) if args.tls
                  else lw.Nginx(nginx, sizes=tuple(s for s in sizes if s != 2)))
    runs: dict[tuple[int, str, str], list[dict[str, float]]] = {}
    try:
        with server:
            cert = getattr(server, "cert", None) if args.tls else None
            for rnd in range(args.rounds):
                order = [("A", args.a), ("B", args.b)]
                if rnd % 2:
                    order.reverse()
                for size in sizes:
                    url = server.url if size == 2 else f"{server.url}bytes/{size}"
                    for io in ios:
                        for name, binary in order:
                            got = one_run(binary, io, url, args.duration, cert,
                                          args.connections, args.h2)
                            runs.setdefault((size, io, name), []).append(got)
                            print(f"[ab_engines] round {rnd + 1} {size} B {io} {name}: "
                                  f"{got['cpu']:.2f} µs CPU/request, {got['rps']:,.0f}/s, "
                                  f"p50 {got['p50']:,.0f} µs, p99 {got['p99']:,.0f} µs",
                                  file=sys.stderr, flush=True)
                            time.sleep(1)
    except lw.BenchError as e:
        print(f"ab_engines: {e}", file=sys.stderr)
        return 2
    proto = ("h2" if args.tls else "h2c") + f", {args.h2} streams" if args.h2 else (
        "HTTPS" if args.tls else "cleartext")
    print(f"{proto}, {args.connections} connections, medians of {args.rounds} alternating "
          f"rounds of {args.duration} s; client CPU µs per request, requests/s and latency "
          "in µs\n")
    print("| answer | backend | figure | A | B | B ÷ A |\n|---:|---|---|---:|---:|---:|")
    for size in sizes:
        for io in ios:
            for key, label, fmt in (("cpu", "CPU µs/request", ".2f"), ("rps", "requests/s", ",.0f"),
                                    ("p50", "latency p50", ",.0f"), ("p99", "latency p99", ",.0f")):
                a = statistics.median(r[key] for r in runs[(size, io, "A")])
                b = statistics.median(r[key] for r in runs[(size, io, "B")])
                print(f"| {size:,} B | {io} | {label} | {a:{fmt}} | {b:{fmt}} | {b / a:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
