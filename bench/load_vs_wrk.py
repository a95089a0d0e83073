#!/usr/bin/env python3
"""Benchmark `netbench load` against wrk on the same box, same server, same CPU.

This file owns the netbench-vs-wrk comparison: it installs its own
dependencies (Debian `nginx-light` and `wrk`), runs a private nginx on a free
loopback port pinned to CPU 0, then runs wrk and netbench alternately, pinned
to CPU 1, at each connection level, and prints a Markdown table of
requests/s, client CPU per request, achieved concurrency and errors.

Client CPU is measured the same external way for both tools (getrusage of
waited-for children around each run), so the comparison does not depend on
netbench reporting its own cost honestly; netbench's self-reported figure is
shown next to it as a cross-check.

Standard library only (Python 3.11). Linux only (taskset, /proc).
Run `python3 bench/load_vs_wrk.py --help` for the options.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import resource
import shlex
import shutil
import signal
import socket
import statistics
import string
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
TEMPLATE = BENCH_DIR / "nginx.conf.template"
DEFAULT_NETBENCH = REPO_ROOT / "target" / "release" / "netbench"

SERVER_CPU = "0"
CLIENT_CPU = "1"
WANTED_BACKLOG = 8192

class BenchError(Exception):
    """A setup problem that stops the whole benchmark (exit status 2)."""


def log(msg: str) -> None:
    """Progress goes to stderr so stdout carries only the table."""
    print(f"[load_vs_wrk] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Dependencies
# --------------------------------------------------------------------------

def find_tool(name: str) -> str | None:
    # nginx lives in /usr/sbin, which is not on every user's PATH.
    found = shutil.which(name)
    if found:
        return found
    for d in ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"):
        p = Path(d) / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def apt_install(packages: list[str]) -> None:
    """Install Debian packages without letting apt start the system nginx.

    nginx's postinst would start the packaged service on port 80; a
    policy-rc.d that exits 101 forbids that. We only add one if none exists,
    and remove exactly the one we added.
    """
    if os.geteuid() != 0:
        raise BenchError(f"missing {', '.join(packages)} and not root: "
                         f"run `sudo apt-get install -y {' '.join(packages)}` first")
    if not shutil.which("apt-get"):
        raise BenchError(f"missing {', '.join(packages)} and no apt-get: install them by hand")
    policy = Path("/usr/sbin/policy-rc.d")
    added_policy = False
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "--no-install-recommends", *packages]
    try:
        if not policy.exists():
            policy.write_text("#!/bin/sh\n# temporary, from bench/load_vs_wrk.py\nexit 101\n")
            policy.chmod(0o755)
            added_policy = True
        log(f"installing {' '.join(packages)} with apt-get")
        # stdout -> our stderr: apt's chatter is progress, not results.
        if subprocess.run(install, env=env, stdout=sys.stderr).returncode != 0:
            # Usually a stale or missing package list: refresh once and retry.
            log("apt-get install failed; running apt-get update and retrying")
            subprocess.run(["apt-get", "update"], env=env, stdout=sys.stderr, check=False)
            if subprocess.run(install, env=env, stdout=sys.stderr).returncode != 0:
                raise BenchError(f"apt-get install {' '.join(packages)} failed")
    finally:
        if added_policy:
            policy.unlink(missing_ok=True)


def ensure_deps(no_install: bool) -> tuple[str, str]:
    """Return paths to (nginx, wrk), installing the Debian packages if needed."""
    wanted = {"nginx": "nginx-light", "wrk": "wrk"}
    missing = [pkg for tool, pkg in wanted.items() if not find_tool(tool)]
    if missing:
        if no_install:
            raise BenchError(f"missing packages {', '.join(missing)} (and --no-install given)")
        apt_install(missing)
    nginx, wrk = find_tool("nginx"), find_tool("wrk")
    if not nginx or not wrk:
        raise BenchError("nginx or wrk still not found after installing")
    return nginx, wrk


def raise_nofile(needed: int) -> None:
    """Raise RLIMIT_NOFILE soft to hard; children (wrk, netbench, nginx) inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        try:  # only root can raise the hard limit; harmless to try
            resource.setrlimit(resource.RLIMIT_NOFILE, (needed, needed))
            return
        except (ValueError, OSError):
            log(f"warning: RLIMIT_NOFILE hard limit {hard} < {needed}; "
                "the largest level may fail to open its connections")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# --------------------------------------------------------------------------
# nginx
# --------------------------------------------------------------------------

def free_port() -> int:
    # Small race between close and nginx's bind; acceptable on a quiet box.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listen_backlog() -> int:
    # The kernel silently clamps listen() to somaxconn; say what we really get.
    try:
        somaxconn = int(Path("/proc/sys/net/core/somaxconn").read_text())
    except (OSError, ValueError):
        somaxconn = 4096
    return min(WANTED_BACKLOG, somaxconn)


def _set_pdeathsig() -> None:
    """In the child before exec: die if this script is SIGKILLed.

    try/finally and signal handlers cover every exit except SIGKILL; without
    this, nginx or a client would outlive the script and hold the port and
    the CPUs. The setting survives taskset's exec of the real program.
    """
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:  # noqa: BLE001 - best effort only
        pass


def body_bytes(size: int) -> bytes:
    """The body served at /bytes/SIZE: printable, so a client that logs it stays readable."""
    return (b"0123456789abcdef" * (size // 16 + 1))[:size]


class Nginx:
    """A private nginx in a temp prefix; context manager that always stops it."""

    def __init__(self, binary: str, keep_tmp: bool = False, workers: int = 1,
                 worker_connections: int = 19000, sizes: tuple[int, ...] = ()):
        self.binary = binary
        # Body sizes served at /bytes/N besides `/` ("OK").
        self.sizes = tuple(sizes)
        self.keep_tmp = keep_tmp
        self.workers = workers
        self.worker_connections = worker_connections
        self.prefix = Path(tempfile.mkdtemp(prefix="netbench-nginx-"))
        self.port = free_port()
        self.backlog = listen_backlog()
        self.proc: subprocess.Popen | None = None
        # TLS (bench/tls_clients.py): " ssl" on the listen line, and the
        # server block's certificate and settings.
        self.listen_extra = ""
        self.server_tls = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def write_conf(self) -> Path:
        try:
            conf = string.Template(TEMPLATE.read_text()).substitute(
                prefix=str(self.prefix), port=self.port, backlog=self.backlog,
                workers=self.workers, worker_connections=self.worker_connections,
                listen_options=(" reuseport" if self.workers > 1 else "") + self.listen_extra,
                server_tls=self.server_tls)
        except (OSError, KeyError, ValueError) as e:
            raise BenchError(f"cannot fill in {TEMPLATE}: {e!r}") from None
        path = self.prefix / "nginx.conf"
        path.write_text(conf)
        if self.sizes:
            # nginx's worker runs as another user: it must get through the
            # private (0700) prefix to the files, and read them.
            self.prefix.chmod(0o711)
            (self.prefix / "bytes").mkdir(mode=0o755, exist_ok=True)
        for size in self.sizes:
            f = self.prefix / "bytes" / str(size)
            f.write_bytes(body_bytes(size))
            f.chmod(0o644)
        return path

    def check_sizes(self) -> None:
        """Each /bytes/N answers 200 with exactly N bytes of body."""
        for size in self.sizes:
            path = f"/bytes/{size}"
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
                s.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
                reply = b""
                while chunk := s.recv(65536):
                    reply += chunk
            head, _, body = reply.partition(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 200") or body != body_bytes(size):
                raise BenchError(f"nginx's {path} is not {size} bytes of body: "
                                 f"{head[:200]!r}, {len(body)} bytes{self.error_log_tail()}")

    def start(self) -> None:
        conf = self.write_conf()
        error_log = self.prefix / "error.log"
        # -e: the log nginx uses before it has read our conf, so nothing
        # goes to /var/log/nginx. -p: the prefix for any relative path.
        cmd = ["taskset", "-c", SERVER_CPU, self.binary, "-c", str(conf),
               "-p", str(self.prefix), "-e", str(error_log)]
        log(f"starting nginx on {self.url} (CPU {SERVER_CPU}, backlog {self.backlog})")
        # Own session: we stop the whole process group (master + worker) ourselves.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, start_new_session=True,
                                     preexec_fn=_set_pdeathsig)
        self.wait_ready()
        self.check_sizes()

    def wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace")
                raise BenchError(f"nginx exited with {self.proc.returncode}:\n{err}{self.error_log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                    reply = s.recv(4096)
                if reply.startswith(b"HTTP/1.1 200") and reply.endswith(b"OK"):
                    return
                raise BenchError(f"nginx answered unexpectedly: {reply[:200]!r}")
            except OSError:
                time.sleep(0.05)
        raise BenchError(f"nginx did not answer on {self.url} within {timeout}s{self.error_log_tail()}")

    def check_alive(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            raise BenchError(f"nginx died during the benchmark{self.error_log_tail()}")

    def error_log_tail(self) -> str:
        try:
            lines = (self.prefix / "error.log").read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\nnginx error.log tail:\n" + "\n".join(lines[-20:]) if lines else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            log("stopping nginx")
            _kill_group(self.proc, signal.SIGTERM, grace=5.0)
        if self.proc is not None and self.proc.stderr:
            self.proc.stderr.close()
        if not self.keep_tmp:
            shutil.rmtree(self.prefix, ignore_errors=True)

    def __enter__(self) -> "Nginx":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _kill_group(proc: subprocess.Popen, sig: int, grace: float) -> None:
    """Signal a process group, then SIGKILL it if it outlives the grace period."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


# --------------------------------------------------------------------------
# Running a client and measuring it
# --------------------------------------------------------------------------

@dataclass
class RunResult:
    tool: str
    connections: int
    rep: int
    command: list[str]
    ok: bool = False
    failure: str = ""
    returncode: int | None = None
    wall_s: float = 0.0
    requests: int = 0
    duration_s: float = 0.0
    rps: float = 0.0
    mean_latency_us: float = 0.0
    latency_percentiles_us: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)
    cpu_user_s: float = 0.0
    cpu_sys_s: float = 0.0
    cpu_us_per_request: float = 0.0           # external, getrusage
    self_cpu_us_per_request: float | None = None  # netbench's own figure
    achieved_concurrency: float = 0.0         # rps * mean latency
    self_report: dict | None = None           # netbench's whole JSON
    stdout_tail: str = ""
    stderr_tail: str = ""

    @property
    def error_total(self) -> int:
        return sum(self.errors.values())


def run_measured(cmd: list[str], timeout: float) -> tuple[int, str, str, float, float, float]:
    """Run cmd to completion; return (rc, stdout, stderr, wall s, user s, sys s).

    RUSAGE_CHILDREN only counts children that have been waited for, so the
    delta around one Popen+wait is exactly that client's CPU (taskset execs
    the tool, so it is the same process; all its threads are included).
    nginx is never waited for until the end, so it never leaks in.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=_set_pdeathsig)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err += f"\n[load_vs_wrk] killed after {timeout:.0f}s timeout".encode()
    except BaseException:
        # Ctrl-C / SIGTERM: never leave a load generator running behind us.
        proc.kill()
        proc.wait()
        raise
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"),
            wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime)


_UNIT_US = {"us": 1.0, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6}
_WRK_TIME = r"([\d.]+)(us|ms|s|m|h)\b"


def parse_wrk(text: str, res: RunResult) -> None:
    """Fill res from wrk's human-readable output; raise ValueError if it lacks numbers."""
    m = re.search(r"^\s*Latency\s+" + _WRK_TIME, text, re.M)
    if not m:
        raise ValueError("no mean latency line")
    res.mean_latency_us = float(m.group(1)) * _UNIT_US[m.group(2)]
    m = re.search(r"^\s*(\d+) requests in " + _WRK_TIME, text, re.M)
    if not m:
        raise ValueError("no 'N requests in T' line")
    res.requests = int(m.group(1))
    res.duration_s = float(m.group(2)) * _UNIT_US[m.group(3)] / 1e6
    m = re.search(r"^Requests/sec:\s+([\d.]+)", text, re.M)
    if not m:
        raise ValueError("no Requests/sec line")
    res.rps = float(m.group(1))
    # --latency distribution: "50%  28.00us"
    for pct, val, unit in re.findall(r"^\s+([\d.]+)%\s+" + _WRK_TIME, text, re.M):
        res.latency_percentiles_us[f"p{pct}"] = float(val) * _UNIT_US[unit]
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        for kind, n in zip(("connect", "read", "write", "timeout"), m.groups()):
            if int(n):
                res.errors[kind] = int(n)
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m and int(m.group(1)):
        res.errors["non-2xx/3xx"] = int(m.group(1))


def parse_netbench(text: str, res: RunResult) -> None:
    """Fill res from `netbench load --json`; raise ValueError if it lacks numbers."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        # Tolerate stray lines around the JSON object.
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("stdout is not JSON") from None
        data = json.loads(text[start:end + 1])
    res.self_report = data
    try:
        res.requests = int(data["requests"])
        res.duration_s = float(data["duration_s"])
        res.rps = float(data["rps"])
        lat = data["latency_us"]
        res.mean_latency_us = float(lat["mean"])
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"missing or bad key in netbench JSON: {e}") from None
    res.latency_percentiles_us = {k: v for k, v in lat.items() if k.startswith("p")}
    res.errors = {str(k): int(v) for k, v in (data.get("errors") or {}).items() if int(v)}
    client = data.get("client") or {}
    if client.get("cpu_us_per_request") is not None:
        res.self_cpu_us_per_request = float(client["cpu_us_per_request"])


def run_client(tool: str, cmd: list[str], connections: int, rep: int, duration: int) -> RunResult:
    res = RunResult(tool=tool, connections=connections, rep=rep, command=cmd)
    # Generous: 10k connects plus a slow shutdown must not be mistaken for a hang.
    timeout = duration * 2 + 60
    rc, out, err, wall, utime, stime = run_measured(cmd, timeout)
    res.returncode, res.wall_s = rc, wall
    res.cpu_user_s, res.cpu_sys_s = utime, stime
    res.stdout_tail, res.stderr_tail = out[-4000:], err[-4000:]
    try:
        (parse_wrk if tool == "wrk" else parse_netbench)(out, res)
        if res.requests <= 0 or res.rps <= 0:
            raise ValueError("zero requests completed")
    except ValueError as e:
        res.failure = f"{e} (exit status {rc})"
        return res
    if rc != 0:
        # Numbers are there, so keep them, but say so.
        log(f"warning: {tool} exited with status {rc}: {err.strip()[-300:]}")
    res.ok = True
    res.cpu_us_per_request = (utime + stime) * 1e6 / res.requests
    # Little's law: in-flight requests = throughput x time in system.
    res.achieved_concurrency = res.rps * res.mean_latency_us / 1e6
    return res


def wrk_cmd(wrk: str, n: int, duration: int, url: str) -> list[str]:
    return ["taskset", "-c", CLIENT_CPU, wrk, "-t1", "-c", str(n), "-d", f"{duration}s",
            "--latency", url]


def netbench_cmd(netbench: str, n: int, duration: int, url: str) -> list[str]:
    return ["taskset", "-c", CLIENT_CPU, netbench, "load", "-t", "1", "-c", str(n),
            "-d", f"{duration}s", "--json", url]


# --------------------------------------------------------------------------
# Pacing between runs
# --------------------------------------------------------------------------

def time_wait_count(port: int) -> int:
    """TIME_WAIT sockets to or from the server port (state 06 in /proc/net/tcp)."""
    hexport = f":{port:04X}"
    count = 0
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f, None)
                for line in f:
                    parts = line.split()
                    if len(parts) > 3 and parts[3] == "06" and (
                            parts[1].endswith(hexport) or parts[2].endswith(hexport)):
                        count += 1
        except OSError:
            pass
    return count


def ephemeral_ports() -> int:
    try:
        lo, hi = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return hi - lo + 1
    except (OSError, ValueError):
        return 28232


def settle(port: int, next_connections: int, pause: float, max_wait: float = 90.0) -> None:
    """Pause between runs, and wait for TIME_WAIT to drain if the next run needs the ports.

    With keep-alive this is rarely needed, but a run that reconnects a lot
    could leave enough client ports in TIME_WAIT to make the next level's
    connects fail, which would be charged to the wrong tool.
    """
    time.sleep(pause)
    budget = ephemeral_ports() - 1000
    deadline = time.monotonic() + max_wait
    tw = time_wait_count(port)
    if tw + next_connections > budget:
        log(f"waiting for {tw} TIME_WAIT sockets to drain before {next_connections} connections")
    while tw + next_connections > budget and time.monotonic() < deadline:
        time.sleep(1)
        tw = time_wait_count(port)


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

def _cmd_output(cmd: list[str]) -> str:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        return p.stdout + p.stderr
    except (OSError, subprocess.TimeoutExpired):
        return ""


def environment(nginx: str, wrk: str) -> dict:
    model = "unknown"
    for line in _cmd_output(["lscpu"]).splitlines():
        if line.lower().startswith("model name:"):
            model = line.split(":", 1)[1].strip()
            break
    m = re.search(r"wrk\s+(\S+)", _cmd_output([wrk, "-v"]))
    wrk_version = m.group(1) if m else "unknown"
    m = re.search(r"nginx version:\s*(\S+)", _cmd_output([nginx, "-v"]))
    nginx_version = m.group(1) if m else "unknown"
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu_model": model,
        "nproc": os.cpu_count(),
        "kernel": os.uname().release,
        "wrk_version": wrk_version,
        "nginx_version": nginx_version,
        # orig_argv is the command exactly as typed, interpreter included.
        "command_line": shlex.join(sys.orig_argv),
    }


def summarize(results: list[RunResult]) -> list[dict]:
    """One row per (connections, tool): medians over successful reps, errors summed."""
    rows = []
    keys = sorted({(r.connections, r.tool) for r in results},
                  key=lambda k: (k[0], 0 if k[1] == "wrk" else 1))
    for conns, tool in keys:
        runs = [r for r in results if (r.connections, r.tool) == (conns, tool)]
        good = [r for r in runs if r.ok]
        row = {"connections": conns, "tool": tool, "runs": len(runs), "ok_runs": len(good)}
        if good:
            med = lambda attr: statistics.median(getattr(r, attr) for r in good)  # noqa: E731
            selfs = [r.self_cpu_us_per_request for r in good if r.self_cpu_us_per_request is not None]
            errors: dict[str, int] = {}
            for r in good:
                for k, v in r.errors.items():
                    errors[k] = errors.get(k, 0) + v
            row.update(rps=med("rps"), cpu_us_per_request=med("cpu_us_per_request"),
                       self_cpu_us_per_request=statistics.median(selfs) if selfs else None,
                       achieved_concurrency=med("achieved_concurrency"), errors=errors)
        rows.append(row)
    return rows


def _fmt_errors(errors: dict) -> str:
    total = sum(errors.values())
    if not total:
        return "0"
    return f"{total:,} (" + ", ".join(f"{k} {v:,}" for k, v in sorted(errors.items())) + ")"


def markdown_table(rows: list[dict], env: dict, reps: int) -> str:
    header = ["connections", "tool", "requests/s", "client CPU µs/request (external)",
              "self-reported µs/req", "achieved concurrency", "errors"]
    impossible = False
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(["---:", ":---", "---:", "---:", "---:", "---:", "---:"]) + "|"]
    for r in rows:
        if r["ok_runs"] == 0:
            cells = [f"{r['connections']:,}", r["tool"], "FAILED", "", "", "", ""]
        else:
            self_cpu = r["self_cpu_us_per_request"]
            conc = f"{r['achieved_concurrency']:,.1f}"
            # More requests in flight than connections is impossible: the
            # tool's mean latency is inflated (see the footnote).
            if r["achieved_concurrency"] > r["connections"] * 1.02:
                conc += " †"
                impossible = True
            cells = [f"{r['connections']:,}", r["tool"], f"{r['rps']:,.0f}",
                     f"{r['cpu_us_per_request']:.2f}",
                     "—" if self_cpu is None else f"{self_cpu:.2f}",
                     conc, _fmt_errors(r["errors"])]
            if r["ok_runs"] < r["runs"]:
                cells[1] += f" ({r['runs'] - r['ok_runs']} of {r['runs']} runs failed)"
        lines.append("| " + " | ".join(cells) + " |")
    note = f"medians over {reps} reps, errors summed; " if reps > 1 else ""
    lines.append("")
    if impossible:
        lines.append("† above the connection count, so not real: the mean latency it is "
                     "computed from is inflated. wrk 4 adds synthetic samples after any "
                     "stall (its coordinated-omission correction, `stats_correct`), so one "
                     "hiccup raises its mean. Use `--reps` and look at the raw runs in `--json-out`.")
        lines.append("")
    lines.append(f"{note}{env['date']}; {env['cpu_model']}, nproc {env['nproc']}, "
                 f"kernel {env['kernel']}; wrk {env['wrk_version']}; {env['nginx_version']}; "
                 f"nginx on CPU {SERVER_CPU}, client on CPU {CLIENT_CPU}; "
                 f"command: `{env['command_line']}`")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def parse_levels(text: str) -> list[int]:
    try:
        levels = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}") from None
    if not levels or any(n < 1 for n in levels):
        raise argparse.ArgumentTypeError("levels must be positive integers")
    return levels


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="load_vs_wrk.py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\n\n")[0] + """

Setup (all automatic, loopback only):
  * installs the Debian packages nginx-light and wrk with apt-get if nginx or
    wrk is not found (needs root; the system nginx service is never started);
  * starts a private nginx (1 worker, keep-alive, `return 200 "OK"`) from
    bench/nginx.conf.template in a temp dir, on a free 127.0.0.1 port,
    pinned to CPU 0 with taskset; it is stopped on exit, error or Ctrl-C;
  * raises the open-files soft limit to the hard limit for the clients.

Per connection level and repetition it runs, pinned to CPU 1:
  taskset -c 1 wrk -t1 -c N -d Ds --latency URL
  taskset -c 1 NETBENCH load -t 1 -c N -d Ds --json URL
pausing between runs (and waiting for TIME_WAIT to drain if ever needed).

Figures:
  requests/s            as each tool reports it
  client CPU µs/request user+sys CPU of the client process (getrusage of
                        waited-for children, identical for both tools)
                        x 1e6 / requests completed
  self-reported µs/req  netbench's own client.cpu_us_per_request
  achieved concurrency  requests/s x mean latency (Little's law)
  errors                wrk's socket errors + non-2xx; netbench's errors map

The Markdown table goes to stdout, progress to stderr.
Exit status: 0 all runs produced numbers, 1 some run did not, 2 setup error,
130 interrupted.""")
    p.add_argument("--levels", type=parse_levels, default=[1, 100, 1000, 10000],
                   help="comma-separated connection counts (default: 1,100,1000,10000)")
    p.add_argument("--duration", type=int, default=10, metavar="SECONDS",
                   help="length of each run in seconds (default: 10)")
    p.add_argument("--reps", type=int, default=1,
                   help="repetitions per level and tool; the table shows medians (default: 1)")
    p.add_argument("--netbench", type=Path, default=DEFAULT_NETBENCH, metavar="PATH",
                   help="netbench binary (default: target/release/netbench in the repo root, "
                        "built by `cargo build --release` or `make bench`)")
    p.add_argument("--skip-netbench", action="store_true",
                   help="run only wrk (checks the nginx/wrk side without a netbench build)")
    p.add_argument("--pause", type=float, default=2.0, metavar="SECONDS",
                   help="sleep between runs (default: 2)")
    p.add_argument("--json-out", type=Path, metavar="FILE",
                   help="also write every run's raw numbers, and the environment, to FILE")
    p.add_argument("--no-install", action="store_true",
                   help="fail instead of running apt-get when nginx or wrk is missing")
    p.add_argument("--keep-tmp", action="store_true",
                   help="keep nginx's temp dir (config, error.log) for inspection")
    return p


def _on_terminate(signum, _frame):
    # Turn SIGTERM/SIGHUP into the same unwinding path as Ctrl-C, so the
    # finally blocks stop the client and nginx.
    raise KeyboardInterrupt(f"signal {signum}")


def run_benchmark(args, nginx_bin: str, wrk_bin: str, netbench: str | None) -> list[RunResult]:
    results: list[RunResult] = []
    with Nginx(nginx_bin, keep_tmp=args.keep_tmp) as server:
        tools = [("wrk", lambda n: wrk_cmd(wrk_bin, n, args.duration, server.url))]
        if netbench:
            tools.append(("netbench", lambda n: netbench_cmd(netbench, n, args.duration, server.url)))
        total = len(args.levels) * args.reps * len(tools)
        done = 0
        for n in args.levels:
            for rep in range(1, args.reps + 1):
                for tool, make_cmd in tools:
                    if done:
                        settle(server.port, n, args.pause)
                    done += 1
                    cmd = make_cmd(n)
                    log(f"[{done}/{total}] {tool}, {n} connections, rep {rep}: {shlex.join(cmd)}")
                    res = run_client(tool, cmd, n, rep, args.duration)
                    server.check_alive()
                    results.append(res)
                    if res.ok:
                        extra = ""
                        if res.self_report and (res.self_report.get("verdict") or {}).get("client_bound"):
                            reasons = res.self_report["verdict"].get("reasons") or []
                            extra = f"; netbench says client-bound: {'; '.join(reasons)}"
                        log(f"    {res.rps:,.0f} req/s, {res.cpu_us_per_request:.2f} µs CPU/req, "
                            f"concurrency {res.achieved_concurrency:,.1f}, "
                            f"errors {res.error_total}{extra}")
                    else:
                        log(f"    FAILED: {res.failure}\n    stderr: {res.stderr_tail.strip()[-800:]}")
    return results


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.duration < 1 or args.reps < 1:
        print("error: --duration and --reps must be at least 1", file=sys.stderr)
        return 2
    # Explicitly, because a shell starts background jobs with SIGINT ignored
    # and Python then leaves it ignored: Ctrl-C must always clean up.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _on_terminate)
    signal.signal(signal.SIGHUP, _on_terminate)

    netbench = None
    if not args.skip_netbench:
        nb = args.netbench.resolve()
        if not (nb.is_file() and os.access(nb, os.X_OK)):
            print(f"error: netbench binary not found at {nb}\n"
                  "       run `cargo build --release` first (or `make bench`, which builds it),\n"
                  "       pass --netbench PATH, or --skip-netbench to run wrk only",
                  file=sys.stderr)
            return 2
        netbench = str(nb)
    if shutil.which("taskset") is None:
        print("error: taskset not found (Debian package util-linux)", file=sys.stderr)
        return 2

    try:
        nginx_bin, wrk_bin = ensure_deps(args.no_install)
        # Each connection is one fd in the client; nginx sets its own via worker_rlimit_nofile.
        raise_nofile(max(args.levels) + 1024)
        env = environment(nginx_bin, wrk_bin)
        results = run_benchmark(args, nginx_bin, wrk_bin, netbench)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        log("interrupted")
        return 130

    rows = summarize(results)
    print(markdown_table(rows, env, args.reps))
    if args.json_out:
        payload = {"environment": env,
                   "settings": {"levels": args.levels, "duration_s": args.duration,
                                "reps": args.reps, "netbench": netbench,
                                "server_cpu": SERVER_CPU, "client_cpu": CLIENT_CPU},
                   "summary": rows,
                   "runs": [asdict(r) for r in results]}
        args.json_out.write_text(json.dumps(payload, indent=2) + "\n")
        log(f"raw numbers written to {args.json_out}")
    failed = [r for r in results if not r.ok]
    if failed:
        log(f"{len(failed)} run(s) produced no numbers: "
            + ", ".join(f"{r.tool}@{r.connections} rep {r.rep}" for r in failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
