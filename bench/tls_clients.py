#!/usr/bin/env python3
"""Client CPU over HTTPS (issue 30): netbench beside wrk and h2load against
one nginx worker with a certificate made for the run, as ratios.

Two tables, each client pinned to CPU 1 and nginx to CPU 0, medians of
--reps runs in rotated order:

  keep-alive   --connections connections for --duration seconds, each
               reusing its connection: CPU per request (user + sys of the
               client process) and its ratio to wrk's and to h2load's.
  handshakes   a storm of --storm clients, each one new TLS connection and
               one request (h2load -n N -c N; netbench -c N -n N
               --requests-per-connection 1): handshakes per client
               CPU-second, resumption off; then netbench with 100
               connections at a time, each slot connecting again after its
               answer, resumption off and on (--tls-resume).

The certificate is ECDSA P-256 for localhost and 127.0.0.1, made with the
openssl command into nginx's private prefix and thrown away with it. nginx
offers TLS 1.2 and 1.3 with a session cache and tickets, so a client that
resumes can.

  memory       netbench holding --memory-connections more connections than
               a baseline run at a low rate (-R 200), cleartext and TLS, on
               each backend: its resident memory (sampled during the run)
               per connection, and TLS's cost over cleartext. Medians of
               --reps runs.

    python3 bench/tls_clients.py                  # all three tables, ~7 minutes
    python3 bench/tls_clients.py --check          # a 40-second self-test
    python3 bench/tls_clients.py --only memory    # one table
    python3 bench/tls_clients.py --json-out F     # every run's numbers too
"""

import argparse
import json
import shlex
import socket
import ssl
import statistics
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import clients as cl  # noqa: E402
import load_vs_wrk as lw  # noqa: E402

KEEPALIVE = ["wrk", "h2load", "netbench-epoll", "netbench-uring"]
STORM = ["h2load", "netbench-epoll", "netbench-uring", "netbench-uring-serial",
         "netbench-uring-resume"]
# The resumption rows open SERIAL connections at a time, each slot again
# after its answer: a session can only resume once an earlier connection
# got its ticket, which a storm of simultaneous clients never has.
SERIAL = 100
LABEL = {
    "wrk": "wrk",
    "h2load": "h2load --h1",
    "netbench-epoll": "netbench epoll",
    "netbench-uring": "netbench io_uring",
    "netbench-uring-serial": f"netbench io_uring, {SERIAL} at a time",
    "netbench-uring-resume": f"netbench io_uring, {SERIAL} at a time, --tls-resume",
}


def log(msg: str) -> None:
    print(f"[tls_clients] {msg}", file=sys.stderr, flush=True)


class TlsNginx(lw.Nginx):
    """The benchmark's nginx, listening with TLS on a certificate it makes."""

    def write_conf(self) -> Path:
        cert, key = self.prefix / "cert.pem", self.prefix / "key.pem"
        made = subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-days", "2", "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert),
             "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
             # A server's certificate, not a CA's (openssl's default), so
             # that it can be its own --cacert: webpki refuses a CA
             # certificate as a server's.
             "-addext", "basicConstraints=critical,CA:FALSE"],
            capture_output=True, text=True)
        if made.returncode != 0:
            raise lw.BenchError(f"openssl could not make the certificate: {made.stderr.strip()}")
        # nginx's worker runs as another user: it reads the files through
        # the private prefix.
        self.prefix.chmod(0o711)
        for f in (cert, key):
            f.chmod(0o644)
        self.cert = cert
        self.listen_extra = " ssl"
        self.server_tls = (
            f"ssl_certificate {cert}; ssl_certificate_key {key}; "
            "ssl_protocols TLSv1.2 TLSv1.3; ssl_session_cache shared:SSL:10m; "
            "ssl_session_tickets on;")
        return super().write_conf()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/"

    def wait_ready(self, timeout: float = 10.0) -> None:
        ctx = ssl.create_default_context(cafile=str(self.cert))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise lw.BenchError(f"nginx exited with {self.proc.returncode}{self.error_log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as raw:
                    with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                        s.sendall(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                        reply = s.recv(4096)
                if reply.startswith(b"HTTP/1.1 200") and reply.endswith(b"OK"):
                    return
                raise lw.BenchError(f"nginx answered unexpectedly: {reply[:200]!r}")
            except (OSError, ssl.SSLError):
                time.sleep(0.05)
        raise lw.BenchError(f"nginx did not answer on {self.url}{self.error_log_tail()}")

    def check_sizes(self) -> None:
        """Only `/` is asked for here."""


def command(key: str, netbench: str, url: str, cert: Path, n: int, seconds: int,
            storm: bool) -> list[str]:
    pin = ["taskset", "-c", lw.CLIENT_CPU]
    if key == "wrk":
        return [*pin, "wrk", "-t1", "-c", str(n), "-d", f"{seconds}s", url]
    if key == "h2load":
        shape = ["-n", str(n), "-c", str(n)] if storm else ["-c", str(n), "-D", str(seconds)]
        return [*pin, "h2load", "--h1", "-t", "1", *shape, url]
    io = "epoll" if key == "netbench-epoll" else "uring"
    tls = ["--cacert", str(cert)] + (["--tls-resume"] if key.endswith("-resume") else [])
    at_once = SERIAL if key.endswith(("-serial", "-resume")) else n
    shape = (["-c", str(at_once), "-n", str(n), "--requests-per-connection", "1"] if storm
             else ["-c", str(n), "-d", f"{seconds}s"])
    return [*pin, netbench, "load", "--io", io, "-t", "1", *shape, *tls, "--json", url]


def run_once(key: str, cmd: list[str], n: int, rep: int, seconds: int) -> cl.ClientRun:
    # The netbench variants parse as netbench (the backend is checked).
    parse_key = "netbench-uring" if key.startswith("netbench-uring") else key
    run = cl.run_client(parse_key, cmd, n, rep, seconds)
    run.client = key
    if run.ok and key.startswith("netbench"):
        try:
            tls = cl._json_object(run.stdout_tail).get("tls") or {}
        except ValueError:
            tls = {}
        run.note = f"{tls.get('resumed', 0)} of {tls.get('handshakes', 0)} resumed"
    return run


def table(runs: list[cl.ClientRun], keys: list[str], storm: bool) -> list[dict]:
    rows = []
    for key in keys:
        good = [r for r in runs if r.client == key and r.ok]
        if not good:
            rows.append({"client": key, "runs": 0})
            continue
        cpu = [r.cpu_user_s + r.cpu_sys_s for r in good]
        per = [r.cpu_us_per_request for r in good]
        rows.append({
            "client": key,
            "runs": len(good),
            "cpu_us_per_request": statistics.median(per),
            # One handshake per request in the storm.
            "per_cpu_second": statistics.median(r.requests / c for r, c in zip(good, cpu) if c > 0)
            if storm else None,
            "rps": statistics.median(r.rps for r in good),
            "errors": sum(sum(r.errors.values()) for r in good),
            "note": good[0].note,
        })
    return rows


def ratio(row: dict, base: dict | None) -> str:
    if not base or not base.get("runs") or not row.get("runs"):
        return "n/a"
    return f"{row['cpu_us_per_request'] / base['cpu_us_per_request']:.2f}×"


def markdown(keep: list[dict], storm: list[dict], args) -> str:
    by = {r["client"]: r for r in keep}
    out = [] if not keep else [f"Keep-alive, {args.connections} connections, {args.duration} s, medians of {args.reps}:", "",
           "| client | requests/s | CPU µs per request | ÷ wrk | ÷ h2load | errors |",
           "|---|---:|---:|---:|---:|---:|"]
    for r in keep:
        if not r["runs"]:
            out.append(f"| {LABEL[r['client']]} | failed | | | | |")
            continue
        out.append(f"| {LABEL[r['client']]} | {r['rps']:,.0f} | {r['cpu_us_per_request']:.2f} | "
                   f"{ratio(r, by.get('wrk'))} | {ratio(r, by.get('h2load'))} | {r['errors']} |")
    if not storm:
        return "\n".join(out) + "\n"
    by = {r["client"]: r for r in storm}
    out += ["", f"Handshakes: {args.storm} clients, one new TLS connection and one request each, "
            f"medians of {args.reps}:", "",
            "| client | handshakes per client CPU-second | ÷ h2load's | resumed | errors |",
            "|---|---:|---:|---|---:|"]
    h2 = by.get("h2load")
    for r in storm:
        if not r["runs"]:
            out.append(f"| {LABEL[r['client']]} | failed | | | |")
            continue
        rel = (f"{r['per_cpu_second'] / h2['per_cpu_second']:.2f}×"
               if h2 and h2.get("runs") else "n/a")
        out.append(f"| {LABEL[r['client']]} | {r['per_cpu_second']:,.0f} | {rel} | "
                   f"{r['note'] or 'n/a'} | {r['errors']} |")
    return "\n".join(out) + "\n"


MEMORY_IO = ("epoll", "uring")
MEMORY_BASE = 100          # connections every memory run holds anyway
MEMORY_SECONDS = 5
MEMORY_SAMPLE_AT = 3.5     # seconds: every connection made, none finished


def memory_command(netbench: str, io: str, url: str, cert: Path | None, n: int) -> list[str]:
    tls = ["--cacert", str(cert)] if cert else []
    return ["taskset", "-c", lw.CLIENT_CPU, netbench, "load", "--io", io, "-t", "1", "-c", str(n),
            "-R", "200", "-d", f"{MEMORY_SECONDS}s", *tls, "--json", url]


def resident_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise lw.BenchError(f"no VmRSS for process {pid}")


def resident_while_holding(cmd: list[str]) -> int | None:
    """The client's resident memory MEMORY_SAMPLE_AT seconds into a run (its
    connections made, a few requests a second on them), or None if it failed.
    Sampled, not the peak: the process's peak is set before it connects (its
    start-up buffers), so it hides what the connections cost."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(MEMORY_SAMPLE_AT)
    # taskset execs netbench, so the pid is netbench's.
    rss = resident_bytes(proc.pid) if proc.poll() is None else None
    out, err = proc.communicate(timeout=60)
    if proc.returncode != 0 or rss is None:
        log(f"    FAILED ({proc.returncode}): {err.strip()[-400:]}")
        return None
    errors = cl._json_object(out).get("errors") or {}
    if sum(v for v in errors.values() if isinstance(v, int)):
        log(f"    errors: {errors}")
    return rss


def memory_table(netbench: str, tls: "TlsNginx", plain: lw.Nginx, n: int, reps: int,
                 pause: float) -> list[dict]:
    """Per connection: (resident with n + MEMORY_BASE connections − resident
    with MEMORY_BASE) / n, so what every run has anyway cancels out."""
    growth: dict[tuple[str, str], list[float]] = {}
    for rep in range(1, reps + 1):
        for io in cl.rotated(list(MEMORY_IO), rep, reps):
            for scheme, server in (("cleartext", plain), ("tls", tls)):
                cert = tls.cert if scheme == "tls" else None
                held = {}
                for level in (MEMORY_BASE, MEMORY_BASE + n):
                    cmd = memory_command(netbench, io, server.url, cert, level)
                    log(f"memory {io} {scheme}, rep {rep}: {shlex.join(cmd)}")
                    held[level] = resident_while_holding(cmd)
                    server.check_alive()
                    cl.settle(server.port, level, pause)
                if None not in held.values():
                    g = (held[MEMORY_BASE + n] - held[MEMORY_BASE]) / n
                    log(f"    {g:,.0f} B per connection")
                    growth.setdefault((io, scheme), []).append(g)
    rows = []
    for io in MEMORY_IO:
        clear, tls_g = growth.get((io, "cleartext")), growth.get((io, "tls"))
        rows.append({
            "io": io,
            "cleartext": statistics.median(clear) if clear else None,
            "tls": statistics.median(tls_g) if tls_g else None,
            "runs": min(len(clear or []), len(tls_g or [])),
        })
    return rows


def memory_markdown(rows: list[dict], n: int, reps: int) -> str:
    out = [f"Memory per connection: the client's resident memory {MEMORY_SAMPLE_AT} s into a run "
           f"holding {MEMORY_BASE + n} connections (200 requests/s in all), less one holding "
           f"{MEMORY_BASE}, over {n}; medians of {reps}:", "",
           "| backend | cleartext | TLS | TLS's cost | ≤ 8 KiB |", "|---|---:|---:|---:|---|"]
    for r in rows:
        if not r["runs"]:
            out.append(f"| {r['io']} | failed | | | |")
            continue
        cost = r["tls"] - r["cleartext"]
        out.append(f"| {r['io']} | {r['cleartext']:,.0f} B | {r['tls']:,.0f} B | {cost:,.0f} B | "
                   f"{'yes' if cost <= 8192 else 'no'} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tls_clients.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--connections", type=int, default=100)
    p.add_argument("--duration", type=int, default=10, metavar="SECONDS")
    p.add_argument("--storm", type=int, default=3000, metavar="CLIENTS")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--netbench", type=Path, default=lw.DEFAULT_NETBENCH)
    p.add_argument("--pause", type=float, default=2.0, metavar="SECONDS")
    p.add_argument("--check", action="store_true",
                   help="a short self-test: 2 s runs, 300 clients, one repetition")
    p.add_argument("--memory-connections", type=int, default=3000, metavar="N")
    p.add_argument("--only", choices=("keep-alive", "handshakes", "memory"),
                   help="run one table only")
    p.add_argument("--json-out", type=Path, metavar="FILE")
    args = p.parse_args(argv)
    if args.check:
        args.duration, args.storm, args.reps, args.memory_connections = 2, 300, 1, 300
    for tool in ("wrk", "h2load", "nginx", "openssl", "taskset"):
        if not lw.shutil.which(tool):
            log(f"{tool} is not installed (bench/clients.py installs wrk, h2load and nginx)")
            return 2
    if not args.netbench.exists():
        log(f"{args.netbench} is missing: build it with `make netbench`")
        return 2
    nginx_bin = lw.shutil.which("nginx")
    runs: list[cl.ClientRun] = []
    memory: list[dict] = []
    started = time.monotonic()
    try:
        with TlsNginx(nginx_bin) as server:
            for storm, keys, n in ((False, KEEPALIVE, args.connections), (True, STORM, args.storm)):
                if args.only and args.only != ("handshakes" if storm else "keep-alive"):
                    continue
                for rep in range(1, args.reps + 1):
                    for key in cl.rotated(keys, rep, args.reps):
                        cmd = command(key, str(args.netbench), server.url, server.cert, n,
                                      args.duration, storm)
                        log(f"{'storm' if storm else 'keep-alive'} {LABEL[key]}, rep {rep}: "
                            f"{shlex.join(cmd)}")
                        run = run_once(key, cmd, n, rep, args.duration)
                        run.size = -1 if storm else 2
                        server.check_alive()
                        if run.ok:
                            log(f"    {run.requests:,} requests, {run.cpu_us_per_request:.2f} µs "
                                f"CPU/request {run.note}")
                        else:
                            log(f"    FAILED: {run.failure}: {run.stderr_tail.strip()[-400:]}")
                        runs.append(run)
                        cl.settle(server.port, n, args.pause)
            if args.only in (None, "memory"):
                with lw.Nginx(nginx_bin) as plain:
                    memory = memory_table(str(args.netbench), server, plain,
                                          args.memory_connections, args.reps, args.pause)
    except lw.BenchError as e:
        log(str(e))
        return 2
    keep = (table([r for r in runs if r.size != -1], KEEPALIVE, storm=False)
            if args.only in (None, "keep-alive") else [])
    storm = (table([r for r in runs if r.size == -1], STORM, storm=True)
             if args.only in (None, "handshakes") else [])
    if keep or storm:
        print(markdown(keep, storm, args))
    if memory:
        print(memory_markdown(memory, args.memory_connections, args.reps))
    print(f"Host: {socket.gethostname()}, {time.strftime('%Y-%m-%d')}, "
          f"{time.monotonic() - started:.0f} s; nginx 1 worker on CPU {lw.SERVER_CPU}, "
          f"clients on CPU {lw.CLIENT_CPU}.")
    if args.json_out:
        args.json_out.write_text(json.dumps(
            {"keepalive": keep, "storm": storm, "memory": memory,
             "runs": [asdict(r) for r in runs]}, indent=1))
    failed = [r for r in keep + storm + memory if not r["runs"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
