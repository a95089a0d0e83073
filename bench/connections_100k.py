#!/usr/bin/env python3
"""100,000 connections from one `netbench load`, against nginx with 8 workers.

One process may hold at most its open-file limit (20,000 here, and the hard
limit cannot be raised), and one source address reaches one target from at
most the ephemeral port range (about 28,000 ports). So netbench splits the
connections over child processes and spreads them over source addresses
(--source 127.0.0.1-127.0.0.8); nginx runs 8 workers with reuseport, each
under its own limit. nginx is pinned to CPU 0 and netbench to CPU 1.

Prints a Markdown table: connections established and answered, the share in
flight, errors by kind, throughput, latency, the client's CPU and memory per
connection, and the kernel's count of TCP sockets in use mid-run.

Usage: python3 bench/connections_100k.py [--connections N] [--duration S]
Standard library only; uses bench/load_vs_wrk.py's private nginx.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load_vs_wrk as lw  # noqa: E402


def sockets_in_use() -> int:
    """TCP sockets the kernel has in use (both ends of loopback count)."""
    for line in Path("/proc/net/sockstat").read_text().splitlines():
        if line.startswith("TCP:"):
            fields = line.split()
            return int(fields[fields.index("inuse") + 1])
    return 0


def nginx_rss_kib(master_pid: int) -> int:
    """Resident memory of nginx's master and workers, in KiB."""
    pids = [master_pid]
    children = Path(f"/proc/{master_pid}/task/{master_pid}/children")
    try:
        pids += [int(p) for p in children.read_text().split()]
    except OSError:
        pass
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def processes_for(connections: int, per_process: int = 19_936) -> int:
    """The processes netbench splits `connections` over (the open-file
    limit less netbench's reserve of 64, per process)."""
    return -(-connections // per_process)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connections", type=int, default=100_000)
    ap.add_argument("--sources", type=int, default=8, help="source addresses 127.0.0.1..N")
    ap.add_argument("--nginx-workers", type=int, default=8)
    # 100,000 connects at once overflow the listen queues; the handshakes
    # that stall take a retransmit or a 10 s timeout and a reconnect to
    # settle. With 15 s a few were still settling in the measured window
    # (8 timeouts, 99,999 answered); with 25 s none were.
    ap.add_argument("--warmup", default="25s")
    ap.add_argument("--duration", type=float, default=20.0, help="seconds measured")
    ap.add_argument("--netbench", default=str(lw.DEFAULT_NETBENCH))
    ap.add_argument("--io", default="auto", choices=["auto", "epoll", "uring"])
    args = ap.parse_args()

    nginx = lw.find_tool("nginx")
    if not nginx:
        lw.apt_install(["nginx-light"])
        nginx = lw.find_tool("nginx")
    if not nginx or not Path(args.netbench).exists():
        print(f"need nginx and {args.netbench} (make build)", file=sys.stderr)
        return 2
    per_worker = args.connections // args.nginx_workers + 1000
    if per_worker > 19_000:
        print(f"{per_worker} connections per nginx worker exceed its open-file limit; "
              "give more --nginx-workers", file=sys.stderr)
        return 2

    with lw.Nginx(nginx, workers=args.nginx_workers, worker_connections=per_worker) as srv:
        # Resident memory moves by megabytes with where the allocator's
        # arenas land (transparent huge pages), whatever the connections: the
        # cost of a connection is the difference between this run and one of
        # the same processes with few connections, per connection added.
        small = 1000 * processes_for(args.connections)
        base_cmd = ["taskset", "-c", lw.CLIENT_CPU, args.netbench, "load", "-c", str(small),
                    "--processes", str(processes_for(args.connections)),
                    "--source", f"127.0.0.1-127.0.0.{args.sources}", "--warmup", "2s",
                    "-d", "3s", "--io", args.io, "--json", "--quiet", srv.url]
        lw.log("baseline: " + " ".join(base_cmd))
        base = json.loads(subprocess.run(base_cmd, capture_output=True, text=True).stdout)
        cmd = ["taskset", "-c", lw.CLIENT_CPU, args.netbench, "load",
               "-c", str(args.connections),
               "--source", f"127.0.0.1-127.0.0.{args.sources}",
               "--warmup", args.warmup, "-d", f"{args.duration}s", "--timeout", "10s",
               "--expect-body", "OK", "--io", args.io, "--json", "--quiet", srv.url]
        lw.log("running: " + " ".join(cmd))
        mid = {}

        def sample() -> None:
            # Halfway through measuring: every connection is open by then.
            warm = float(args.warmup.rstrip("s"))
            time.sleep(2 + warm + args.duration / 2)
            mid["sockets"] = sockets_in_use()
            mid["nginx_rss_kib"] = nginx_rss_kib(srv.proc.pid)

        t = threading.Thread(target=sample, daemon=True)
        t.start()
        started = time.monotonic()
        out = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.monotonic() - started
        t.join(timeout=1)
        srv.check_alive()
    if out.returncode not in (0, 1):
        print(out.stderr, file=sys.stderr)
        return 2
    r = json.loads(out.stdout)
    c = r["concurrency"]
    errors = {k: v for k, v in r["errors"].items() if v}
    rows = [
        ("connections asked", f"{c['configured']:,}"),
        ("client processes (open-file limit 20,000 each)", f"{r['memory']['processes']}"),
        ("source addresses", f"{args.sources}"),
        ("kernel interface", r["client"]["io"]),
        ("TCP sockets in use mid-run (both ends)", f"{mid.get('sockets', 0):,}"),
        ("connections answered while measuring", f"{r['connections_answered']:,}"),
        ("in flight on average", f"{c['achieved']:,.0f} ({c['achieved'] / c['configured']:.1%})"),
        ("errors", ", ".join(f"{k} {v:,}" for k, v in errors.items()) or "0"),
        ("requests/s", f"{r['rps']:,.0f}"),
        ("latency p50 / p99 / p99.9",
         " / ".join(f"{r['latency_us'][p] / 1000:.1f} ms" for p in ("p50", "p99", "p999"))),
        ("client CPU per request", f"{r['client']['cpu_us_per_request']:.2f} µs"),
        ("client memory, peak (all processes)", f"{r['memory']['peak_rss_bytes'] / 2**20:.1f} MiB"),
        (f"client memory per connection (over {small:,} connections in as many processes)",
         f"{(r['memory']['peak_rss_bytes'] - base['memory']['peak_rss_bytes']) / (args.connections - small):.0f} B"),
        ("nginx memory mid-run (8 workers)", f"{mid.get('nginx_rss_kib', 0) / 1024:.1f} MiB"),
        ("client-bound", "yes" if r["verdict"]["client_bound"] else "no"),
        ("wall time", f"{wall:.1f} s"),
    ]
    print(f"\n{args.connections:,} connections, nginx {args.nginx_workers} workers on CPU "
          f"{lw.SERVER_CPU}, netbench on CPU {lw.CLIENT_CPU}, warm-up {args.warmup}, "
          f"{args.duration:g} s measured\n")
    print("| | |\n|---|---|")
    for k, v in rows:
        print(f"| {k} | {v} |")
    print(f"\nverdict: {'; '.join(r['verdict']['reasons'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
