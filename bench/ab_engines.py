#!/usr/bin/env python3
"""Two netbench builds against each other: client CPU per request of build B
over build A, alternating, so the machine's drift between runs cancels.

For an engine change: build the old tree and copy its binary aside, build the
new one, then

    python3 bench/ab_engines.py OLD NEW                    # cleartext, 2 B
    python3 bench/ab_engines.py OLD NEW --sizes 2,65536 --io uring,epoll
    python3 bench/ab_engines.py OLD NEW --tls              # HTTPS keep-alive

Each round runs every (size, backend) cell with A then B (B then A on odd
rounds) against one private nginx worker on CPU 0, the client on CPU 1 with
one thread and 100 connections. CPU is the client's user + sys from wait4
over the requests it completed. Prints the medians and B / A per cell.
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


def cpu_per_request(binary: Path, io: str, url: str, seconds: int, cert: Path | None) -> float:
    tls = ["--cacert", str(cert)] if cert else []
    cmd = ["taskset", "-c", lw.CLIENT_CPU, str(binary), "load", "--io", io, "-t", "1",
           "-c", "100", "-d", f"{seconds}s", *tls, "--json", url]
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
    return (usage.ru_utime + usage.ru_stime) / max(result["requests"], 1) * 1e6


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ab_engines.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", type=Path, help="build A's netbench binary (the baseline)")
    p.add_argument("b", type=Path, help="build B's netbench binary")
    p.add_argument("--sizes", default="2", help="answer sizes in bytes, comma-separated")
    p.add_argument("--io", default="uring", help="backends, comma-separated (uring, epoll)")
    p.add_argument("--tls", action="store_true", help="HTTPS keep-alive (2 B answers) instead")
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
    server = (tc.TlsNginx(nginx) if args.tls
              else lw.Nginx(nginx, sizes=tuple(s for s in sizes if s != 2)))
    cpu: dict[tuple[int, str, str], list[float]] = {}
    try:
        with server:
            cert = server.cert if args.tls else None
            for rnd in range(args.rounds):
                order = [("A", args.a), ("B", args.b)]
                if rnd % 2:
                    order.reverse()
                for size in sizes:
                    url = server.url if size == 2 else f"{server.url}bytes/{size}"
                    for io in ios:
                        for name, binary in order:
                            us = cpu_per_request(binary, io, url, args.duration, cert)
                            cpu.setdefault((size, io, name), []).append(us)
                            print(f"[ab_engines] round {rnd + 1} {size} B {io} {name}: "
                                  f"{us:.2f} µs", file=sys.stderr, flush=True)
                            time.sleep(1)
    except lw.BenchError as e:
        print(f"ab_engines: {e}", file=sys.stderr)
        return 2
    print(f"{'HTTPS' if args.tls else 'cleartext'}, 100 connections, medians of {args.rounds} "
          f"alternating rounds of {args.duration} s; client CPU µs per request\n")
    print("| answer | backend | A | B | B ÷ A |\n|---:|---|---:|---:|---:|")
    for size in sizes:
        for io in ios:
            a = statistics.median(cpu[(size, io, "A")])
            b = statistics.median(cpu[(size, io, "B")])
            print(f"| {size:,} B | {io} | {a:.2f} | {b:.2f} | {b / a:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
