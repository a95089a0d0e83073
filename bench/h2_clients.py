#!/usr/bin/env python3
"""Client CPU over HTTP/2 (issue 32): netbench beside h2load against one
nginx worker, at 1, 10 and 100 streams per connection, as ratios.

nginx 1 worker on CPU 0 listens with HTTP/2 on cleartext (prior knowledge,
h2c) and over TLS (ALPN h2, a certificate made for the run and thrown away
with nginx's private prefix); each client runs with one thread on CPU 1,
--connections connections for --duration seconds, --streams N streams in
flight on each (h2load's -m), medians of --reps runs in rotated order. CPU
per request is the client process's user + system time over its answers.

    python3 bench/h2_clients.py                # h2c and h2, 1/10/100 streams, ~6 minutes
    python3 bench/h2_clients.py --check        # a 30-second self-test
    python3 bench/h2_clients.py --json-out F   # every run's numbers too
"""

import argparse
import json
import shlex
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import clients as cl  # noqa: E402
import load_vs_wrk as lw  # noqa: E402
import tls_clients as tc  # noqa: E402

CLIENTS = ["h2load", "netbench-epoll", "netbench-uring"]
LABEL = {
    "h2load": "h2load",
    "netbench-epoll": "netbench epoll",
    "netbench-uring": "netbench io_uring",
}


def log(msg: str) -> None:
    print(f"[h2_clients] {msg}", file=sys.stderr, flush=True)


class H2cNginx(lw.Nginx):
    """The benchmark's nginx, speaking HTTP/2 with prior knowledge."""

    def write_conf(self) -> Path:
        self.listen_extra = " http2"
        return super().write_conf()

    def wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise lw.BenchError(f"nginx exited with {self.proc.returncode}{self.error_log_tail()}")
            probe = subprocess.run(["h2load", "-n", "1", "-c", "1", self.url],
                                   capture_output=True, text=True)
            if "1 succeeded" in probe.stdout:
                return
            time.sleep(0.1)
        raise lw.BenchError(f"nginx did not answer HTTP/2 on {self.url}{self.error_log_tail()}")

    def check_sizes(self) -> None:
        """Only `/` is asked for here."""


class H2Nginx(tc.TlsNginx):
    """The benchmark's nginx with TLS and ALPN h2."""

    def write_conf(self) -> Path:
        conf = super().write_conf()
        text = conf.read_text().replace(" ssl;", " ssl http2;", 1)
        if " ssl http2;" not in text:
            raise lw.BenchError("could not add http2 to nginx's TLS listener")
        conf.write_text(text)
        return conf


def command(key: str, netbench: str, url: str, cert: Path | None, n: int, streams: int,
            seconds: int) -> list[str]:
    pin = ["taskset", "-c", lw.CLIENT_CPU]
    if key == "h2load":
        return [*pin, "h2load", "-t", "1", "-c", str(n), "-m", str(streams), "-D", str(seconds),
                url]
    io = "epoll" if key == "netbench-epoll" else "uring"
    proto = ["--h2", "--cacert", str(cert)] if cert else ["--h2c"]
    return [*pin, netbench, "load", "--io", io, "-t", "1", "-c", str(n), *proto,
            "--streams", str(streams), "-d", f"{seconds}s", "--json", url]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="h2_clients.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--connections", type=int, default=100)
    p.add_argument("--streams", default="1,10,100", help="streams per connection, comma-separated")
    p.add_argument("--duration", type=int, default=8, metavar="SECONDS")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--netbench", type=Path, default=lw.DEFAULT_NETBENCH)
    p.add_argument("--pause", type=float, default=2.0, metavar="SECONDS")
    p.add_argument("--check", action="store_true", help="a short self-test: 2 s runs, one repetition")
    p.add_argument("--json-out", type=Path, metavar="FILE")
    args = p.parse_args(argv)
    if args.check:
        args.duration, args.reps = 2, 1
    streams = [int(s) for s in args.streams.split(",")]
    for tool in ("h2load", "nginx", "openssl", "taskset"):
        if not lw.shutil.which(tool):
            log(f"{tool} is not installed (bench/clients.py installs h2load and nginx)")
            return 2
    if not args.netbench.exists():
        log(f"{args.netbench} is missing: build it with `make netbench`")
        return 2
    nginx_bin = lw.shutil.which("nginx")
    rows: list[dict] = []
    runs: list[cl.ClientRun] = []
    started = time.monotonic()
    try:
        for name, server_class in (("h2c", H2cNginx), ("h2", H2Nginx)):
            with server_class(nginx_bin) as server:
                cert = getattr(server, "cert", None) if name == "h2" else None
                for m in streams:
                    got: dict[str, list[cl.ClientRun]] = {k: [] for k in CLIENTS}
                    for rep in range(1, args.reps + 1):
                        for key in cl.rotated(CLIENTS, rep, args.reps):
                            cmd = command(key, str(args.netbench), server.url, cert,
                                          args.connections, m, args.duration)
                            log(f"{name} {m} streams {LABEL[key]}, rep {rep}: {shlex.join(cmd)}")
                            run = cl.run_client("netbench-uring" if key == "netbench-uring" else key,
                                                cmd, args.connections, rep, args.duration)
                            run.client = key
                            server.check_alive()
                            if run.ok:
                                log(f"    {run.requests:,} requests, {run.cpu_us_per_request:.2f} µs "
                                    f"CPU/request")
                                got[key].append(run)
                            else:
                                log(f"    FAILED: {run.failure}: {run.stderr_tail.strip()[-400:]}")
                            runs.append(run)
                            cl.settle(server.port, args.connections, args.pause)
                    for key in CLIENTS:
                        good = got[key]
                        rows.append({
                            "protocol": name, "streams": m, "client": key, "runs": len(good),
                            "cpu_us_per_request": statistics.median(r.cpu_us_per_request for r in good)
                            if good else None,
                            "rps": statistics.median(r.rps for r in good) if good else None,
                            "errors": sum(sum(r.errors.values()) for r in good),
                        })
    except lw.BenchError as e:
        log(str(e))
        return 2
    out = [f"HTTP/2, {args.connections} connections, {args.duration} s, medians of {args.reps}: "
           "client CPU µs per request, and netbench's over h2load's", "",
           "| protocol | streams | h2load | netbench epoll | ÷ h2load | netbench io_uring | ÷ h2load |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for name in ("h2c", "h2"):
        for m in streams:
            by = {r["client"]: r for r in rows if r["protocol"] == name and r["streams"] == m}
            base = by["h2load"]["cpu_us_per_request"]
            cells = []
            for key in CLIENTS:
                v = by[key]["cpu_us_per_request"]
                cells.append("failed" if v is None else f"{v:.2f}")
                if key != "h2load":
                    cells.append("n/a" if v is None or not base else f"{v / base:.2f}×")
            out.append(f"| {name} | {m} | " + " | ".join(cells) + " |")
    print("\n".join(out) + "\n")
    print(f"Host: {socket.gethostname()}, {time.strftime('%Y-%m-%d')}, "
          f"{time.monotonic() - started:.0f} s; nginx 1 worker on CPU {lw.SERVER_CPU}, "
          f"clients on CPU {lw.CLIENT_CPU}.")
    if args.json_out:
        args.json_out.write_text(json.dumps({"rows": rows, "runs": [asdict(r) for r in runs]},
                                            indent=1))
    return 1 if any(not r["runs"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
