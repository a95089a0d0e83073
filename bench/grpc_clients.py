#!/usr/bin/env python3
"""Client CPU per gRPC call (issue 32): netbench's `load --grpc` beside ghz
against one server's gRPC listener, as ratios.

The server is go-nethttp's grpc-go listener (servers/go-nethttp, built by
its own build command when its binary is missing), pinned to CPU 0; each
client runs on CPU 1 (ghz with --cpus 1, netbench with one thread) for
--duration seconds over --connections connections, 1 and 10 calls in
flight on each (ghz: --connections N and -c N times the streams; netbench:
--streams), medians of --reps runs in rotated order. CPU per call is the
client process's user + system time over the calls it completed. ghz
v0.120.0 is built once from its Go module into target/bench-tools/bin.

Both call netbench.Work/Compute (contract/grpc/work.proto). They do not do
the same work per call, and the table says so: ghz sends one fixed message
and does not look at the reply beyond its status; netbench sends its
generated work documents (100 by default) and checks each reply field by
field against its own document's answer.

    python3 bench/grpc_clients.py                # 1 and 10 streams, ~4 minutes
    python3 bench/grpc_clients.py --check        # a short self-test
    python3 bench/grpc_clients.py --json-out F   # every run's numbers too
"""

import argparse
import json
import os
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import time
import tomllib
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import clients as cl  # noqa: E402
import load_vs_wrk as lw  # noqa: E402

GHZ_VERSION = "v0.120.0"
SERVER = lw.REPO_ROOT / "servers" / "go-nethttp"
PROTO = lw.REPO_ROOT / "contract" / "grpc" / "work.proto"
CLIENTS = ["ghz", "netbench-epoll", "netbench-uring"]
LABEL = {"ghz": "ghz", "netbench-epoll": "netbench epoll", "netbench-uring": "netbench io_uring"}
# One valid work request (CONTRACT.md, "grpc"): what ghz sends every call.
MESSAGE = {
    "product": "netbench",
    "request_id": "bench-1",
    "group": {"kind": "retail", "default": False, "balance": 1234.5,
              "dates": ["2026-01-02T03:04:05.678Z", "2025-06-07T08:09:10.111Z"]},
}


def log(msg: str) -> None:
    print(f"[grpc_clients] {msg}", file=sys.stderr, flush=True)


def ensure_ghz() -> str:
    """ghz from its Go module, built once."""
    ghz = cl.TOOLS_ROOT / "bin" / "ghz"
    if ghz.is_file():
        return str(ghz)
    if not shutil.which("go"):
        raise lw.BenchError("ghz needs Go to be built")
    env = dict(os.environ, GOBIN=str(ghz.parent))
    cmd = ["go", "install", f"github.com/bojand/ghz/cmd/ghz@{GHZ_VERSION}"]
    log(f"building ghz {GHZ_VERSION} once (a few minutes on 2 cores): {shlex.join(cmd)}")
    if subprocess.run(cmd, env=env, stdout=sys.stderr, stderr=sys.stderr).returncode != 0:
        raise lw.BenchError("go install ghz failed (its output is above)")
    return str(ghz)


class GrpcServer:
    """go-nethttp on CPU 0 with its gRPC listener on a free port."""

    def __init__(self) -> None:
        self.manifest = tomllib.loads((SERVER / "server.toml").read_text())
        self.port = lw.free_port()
        self.grpc_port = lw.free_port()
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "GrpcServer":
        if not (SERVER / self.manifest["artefact"]).exists():
            log(f"building go-nethttp: {self.manifest['build']}")
            if subprocess.run(self.manifest["build"], shell=True, cwd=SERVER,
                              stdout=sys.stderr, stderr=sys.stderr).returncode != 0:
                raise lw.BenchError("go-nethttp's build failed (its output is above)")
        env = dict(os.environ, PORT=str(self.port), GRPC_PORT=str(self.grpc_port))
        cmd = ["taskset", "-c", lw.SERVER_CPU, *shlex.split(self.manifest["run"])]
        log(f"starting go-nethttp (gRPC on {self.grpc_port}, CPU {lw.SERVER_CPU})")
        self.proc = subprocess.Popen(cmd, cwd=SERVER, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise lw.BenchError(f"go-nethttp exited with {self.proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.grpc_port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.1)
        raise lw.BenchError("go-nethttp's gRPC listener did not accept within 20 s")

    def __exit__(self, *exc) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()

    def check_alive(self) -> None:
        if self.proc and self.proc.poll() is not None:
            raise lw.BenchError(f"go-nethttp exited with {self.proc.returncode} mid-bench")


def command(key: str, ghz: str, netbench: str, port: int, n: int, streams: int,
            seconds: int) -> list[str]:
    pin = ["taskset", "-c", lw.CLIENT_CPU]
    if key == "ghz":
        return [*pin, ghz, "--insecure", "--proto", str(PROTO), "--call", "netbench.Work/Compute",
                "-d", json.dumps(MESSAGE), "--cpus", "1", "--connections", str(n),
                "-c", str(n * streams), "-z", f"{seconds}s", "-O", "json",
                f"127.0.0.1:{port}"]
    io = "epoll" if key == "netbench-epoll" else "uring"
    return [*pin, netbench, "load", "--io", io, "-t", "1", "-c", str(n), "--grpc",
            "--streams", str(streams), "-d", f"{seconds}s", "--json", f"http://127.0.0.1:{port}/"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="grpc_clients.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--connections", type=int, default=100)
    p.add_argument("--streams", default="1,10", help="calls in flight per connection, comma-separated")
    p.add_argument("--duration", type=int, default=8, metavar="SECONDS")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--netbench", type=Path, default=lw.DEFAULT_NETBENCH)
    p.add_argument("--pause", type=float, default=2.0, metavar="SECONDS")
    p.add_argument("--check", action="store_true", help="a short self-test: 2 s runs, one repetition")
    p.add_argument("--json-out", type=Path, metavar="FILE")
    args = p.parse_args(argv)
    if args.check:
        args.duration, args.reps = 2, 1
    try:
        streams = [int(s) for s in args.streams.split(",")]
    except ValueError:
        log(f"--streams takes whole numbers separated by commas, not '{args.streams}'")
        return 2
    if not args.netbench.exists():
        log(f"{args.netbench} is missing: build it with `make netbench`")
        return 2
    rows: list[dict] = []
    runs: list[cl.ClientRun] = []
    started = time.monotonic()
    try:
        ghz = ensure_ghz()
        with GrpcServer() as server:
            for m in streams:
                got: dict[str, list[cl.ClientRun]] = {k: [] for k in CLIENTS}
                for rep in range(1, args.reps + 1):
                    for key in cl.rotated(CLIENTS, rep, args.reps):
                        cmd = command(key, ghz, str(args.netbench), server.grpc_port,
                                      args.connections, m, args.duration)
                        log(f"{m} streams {LABEL[key]}, rep {rep}: {shlex.join(cmd)}")
                        run = cl.run_client(key, cmd, args.connections, rep, args.duration)
                        server.check_alive()
                        if run.ok:
                            log(f"    {run.requests:,} calls, {run.cpu_us_per_request:.2f} µs CPU/call"
                                + (f", not OK: {run.errors}" if run.errors else ""))
                            got[key].append(run)
                        else:
                            log(f"    FAILED: {run.failure}: {run.stderr_tail.strip()[-400:]}")
                        runs.append(run)
                        cl.settle(server.grpc_port, args.connections, args.pause)
                for key in CLIENTS:
                    good = got[key]
                    rows.append({
                        "streams": m, "client": key, "runs": len(good),
                        "cpu_us_per_call": statistics.median(r.cpu_us_per_request for r in good)
                        if good else None,
                        "calls_per_s": statistics.median(r.rps for r in good) if good else None,
                        "not_ok": sum(sum(r.errors.values()) for r in good),
                    })
    except lw.BenchError as e:
        log(str(e))
        return 2
    if args.json_out:
        args.json_out.write_text(json.dumps({"rows": rows, "runs": [asdict(r) for r in runs]},
                                            indent=1))
    print(f"gRPC unary Compute, {args.connections} connections, {args.duration} s, medians of "
          f"{args.reps}: client CPU µs per call, and netbench's over ghz's\n")
    print("| streams | ghz | calls/s | netbench epoll | ÷ ghz | calls/s | netbench io_uring | ÷ ghz | calls/s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in streams:
        by = {r["client"]: r for r in rows if r["streams"] == m}
        base = by["ghz"]["cpu_us_per_call"]
        cells = [str(m)]
        for key in CLIENTS:
            cpu, rate = by[key]["cpu_us_per_call"], by[key]["calls_per_s"]
            cells.append("-" if cpu is None else f"{cpu:.2f}")
            if key != "ghz":
                cells.append("-" if cpu is None or not base else f"{cpu / base:.2f}×")
            cells.append("-" if rate is None else f"{rate:,.0f}")
        print("| " + " | ".join(cells) + " |")
    print(f"\nHost: {socket.gethostname()}, {time.strftime('%Y-%m-%d')}, "
          f"{time.monotonic() - started:.0f} s; go-nethttp (grpc-go) on CPU {lw.SERVER_CPU}, "
          f"clients on CPU {lw.CLIENT_CPU}. ghz sends one fixed message unchecked; netbench "
          f"checks every reply against its own document's.")
    failed = any(r["runs"] == 0 for r in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
