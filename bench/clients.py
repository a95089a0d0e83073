#!/usr/bin/env python3
"""The client-cost table: CPU per request of netbench beside wrk, ab, h2load,
oha and two floor clients, all measured the same external way.

This file owns that comparison (issue 18). Every client drives the same
private nginx (`return 200 "OK"`, one worker pinned to CPU 0, from
bench/load_vs_wrk.py) over keep-alive connections with one request in flight
each, pinned to CPU 1 with one thread where the client has the option. Its
CPU is user+sys of the waited-for child (getrusage), divided by the requests
it completed, so no client's own accounting is trusted. The floor clients
(bench/floor/) are the least C that can run the same loop, one on epoll and
one on io_uring: the ratio to the floor is what a client costs beyond the
kernel's work. Within each repetition at a connection count every client runs
once, the order rotated between repetitions; the table shows medians.
With --sizes, the same again per answer size: nginx serves a file of N bytes
at /bytes/N (2 bytes is `/`, the "OK" above), one table per size.

Standard library only (Python 3.11). Linux only (taskset, /proc).
Run `python3 bench/clients.py --help` for the options.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load_vs_wrk as lw  # noqa: E402

REPO_ROOT = lw.REPO_ROOT
FLOOR_SRC = lw.BENCH_DIR / "floor"
FLOOR_BIN = REPO_ROOT / "target" / "bench-floor"
TOOLS_ROOT = REPO_ROOT / "target" / "bench-tools"
OHA_VERSION = "1.16.0"
# ab.c's MAX_CONCURRENCY: ab refuses -c above it.
AB_MAX_CONCURRENCY = 20000

# The clients in table order: key (for --clients), label (for the table).
CLIENTS = [
    ("wrk", "wrk"),
    ("ab", "ab"),
    ("h2load", "h2load"),
    ("oha", "oha"),
    ("netbench-epoll", "netbench epoll"),
    ("netbench-uring", "netbench io_uring"),
    ("floor-epoll", "floor epoll"),
    ("floor-uring", "floor io_uring"),
]
LABEL = dict(CLIENTS)
# The floor client's exit status for "this kernel or library lacks it" (floor.h).
FLOOR_UNSUPPORTED = 3


def log(msg: str) -> None:
    print(f"[clients] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Tools: found, installed or built once; a client that cannot be had is
# "n/a" with the reason, and the others still run.
# --------------------------------------------------------------------------

@dataclass
class Toolbox:
    nginx: str
    paths: dict[str, str] = field(default_factory=dict)        # client key -> binary
    unavailable: dict[str, str] = field(default_factory=dict)  # client key -> why not
    netbench_has_io: bool = True


def _debian_needs(keys: list[str]) -> dict[str, str]:
    """What is missing for these clients (and nginx): thing -> Debian package."""
    need = {}
    if not lw.find_tool("nginx"):
        need["nginx"] = "nginx-light"
    for key, tool, pkg in (("wrk", "wrk", "wrk"), ("ab", "ab", "apache2-utils"),
                           ("h2load", "h2load", "nghttp2-client")):
        if key in keys and not lw.find_tool(tool):
            need[tool] = pkg
    if any(k.startswith("floor-") for k in keys) and not shutil.which("cc"):
        need["cc"] = "build-essential"
    if "floor-uring" in keys and not Path("/usr/include/liburing.h").exists():
        need["liburing.h"] = "liburing-dev"
    return need


def ensure_oha(no_install: bool) -> tuple[str | None, str]:
    """oha OHA_VERSION from crates.io, built once into target/bench-tools."""
    oha = TOOLS_ROOT / "bin" / "oha"
    if oha.is_file() and OHA_VERSION in lw._cmd_output([str(oha), "--version"]):
        return str(oha), ""
    if no_install:
        return None, f"oha {OHA_VERSION} not built (--no-install)"
    if not shutil.which("cargo"):
        return None, "oha needs cargo to be built"
    build = TOOLS_ROOT / "build"
    cmd = ["cargo", "install", "oha", "--version", OHA_VERSION, "--locked",
           "--root", str(TOOLS_ROOT), "--target-dir", str(build)]
    log(f"building oha {OHA_VERSION} once (about 5 minutes on 2 cores): {shlex.join(cmd)}")
    ok = subprocess.run(cmd, stdout=sys.stderr, stderr=sys.stderr).returncode == 0
    shutil.rmtree(build, ignore_errors=True)  # 600 MB of objects, never needed again
    if not ok or not oha.is_file():
        return None, "cargo install oha failed (its output is above)"
    return str(oha), ""


def build_floor(no_liburing: bool) -> dict[str, str]:
    """Compile the floor clients into target/bench-floor when a source is newer.

    Returns client key -> why it could not be built (empty when both were).
    """
    FLOOR_BIN.mkdir(parents=True, exist_ok=True)
    header = FLOOR_SRC / "floor.h"
    failures = {}
    for key, name, libs in (("floor-epoll", "floor_epoll", []), ("floor-uring", "floor_uring", ["-luring"])):
        src, out = FLOOR_SRC / f"{name}.c", FLOOR_BIN / name
        if key == "floor-uring" and no_liburing:
            failures[key] = "liburing-dev not installed"
            continue
        if out.exists() and out.stat().st_mtime >= max(src.stat().st_mtime, header.stat().st_mtime):
            continue
        cmd = ["cc", "-O2", "-Wall", "-o", str(out), str(src), *libs]
        log(f"building {name}: {shlex.join(cmd)}")
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            failures[key] = f"cc failed: {(p.stderr.strip().splitlines() or ['?'])[-1][:200]}"
    return failures


def ensure_tools(keys: list[str], netbench: Path, no_install: bool) -> Toolbox:
    need = _debian_needs(keys)
    if need and not no_install:
        try:
            lw.apt_install(sorted(set(need.values())))
        except lw.BenchError as e:
            log(f"warning: {e}; the clients that need these will show n/a")
    nginx = lw.find_tool("nginx")
    if not nginx:
        raise lw.BenchError("nginx not found (Debian package nginx-light)")
    box = Toolbox(nginx=nginx)
    for key, tool, pkg in (("wrk", "wrk", "wrk"), ("ab", "ab", "apache2-utils"),
                           ("h2load", "h2load", "nghttp2-client")):
        if key in keys:
            found = lw.find_tool(tool)
            if found:
                box.paths[key] = found
            else:
                box.unavailable[key] = f"{tool} not installed (Debian {pkg})"
    if "oha" in keys:
        path, why = ensure_oha(no_install)
        if path:
            box.paths["oha"] = path
        else:
            box.unavailable["oha"] = why
    floors = [k for k in keys if k.startswith("floor-")]
    if floors:
        if not shutil.which("cc"):
            failures = {k: "no C compiler (Debian build-essential)" for k in floors}
        else:
            failures = build_floor(not Path("/usr/include/liburing.h").exists())
        for key in floors:
            if key in failures:
                box.unavailable[key] = failures[key]
            else:
                box.paths[key] = str(FLOOR_BIN / key.replace("-", "_"))
    nb_keys = [k for k in keys if k.startswith("netbench-")]
    if nb_keys:
        if not (netbench.is_file() and os.access(netbench, os.X_OK)):
            raise lw.BenchError(f"netbench binary not found at {netbench}: run "
                                "`cargo build --release -p netbench` (or `make bench`), "
                                "pass --netbench PATH, or leave netbench out with --clients")
        box.netbench_has_io = "--io" in lw._cmd_output([str(netbench), "load", "--help"])
        for key in nb_keys:
            box.paths[key] = str(netbench)
        if "netbench-uring" in keys:
            if not box.netbench_has_io:
                box.unavailable["netbench-uring"] = "this netbench has no --io flag"
            else:
                # Port 1 refuses at once; what matters is whether io_uring was refused first.
                out = lw._cmd_output([str(netbench), "load", "--io", "uring", "-n", "1",
                                      "http://127.0.0.1:1/"])
                m = re.search(r"io_uring not used: (.*)", out)
                if m:
                    box.unavailable["netbench-uring"] = f"io_uring refused: {m.group(1).strip()}"
    return box


# --------------------------------------------------------------------------
# One run of one client
# --------------------------------------------------------------------------

@dataclass
class ClientRun:
    client: str
    connections: int
    rep: int
    command: list[str]
    # Bytes of the answer's body (2: nginx's "OK").
    size: int = 2
    ok: bool = False
    failure: str = ""
    returncode: int | None = None
    wall_s: float = 0.0
    requests: int = 0
    rps: float = 0.0
    errors: dict = field(default_factory=dict)
    # In flight when the client's clock ran out and cut off rather than
    # counted (oha on HTTP/1); not errors.
    cut_at_end: int = 0
    # How the client ran where it could not run as asked (a floor_uring
    # without SINGLE_ISSUER and DEFER_TASKRUN); shown beside its name.
    note: str = ""
    cpu_user_s: float = 0.0
    cpu_sys_s: float = 0.0
    cpu_us_per_request: float = 0.0
    # CPU seconds over wall seconds of the whole process: near 1 means the
    # client's core was the limit.
    core_busy: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""


def command(key: str, box: Toolbox, n: int, seconds: int, host: str, port: int,
            path: str = "/") -> list[str]:
    url = f"http://{host}:{port}{path}"
    pin = ["taskset", "-c", lw.CLIENT_CPU]
    exe = box.paths[key]
    if key == "wrk":
        return lw.wrk_cmd(exe, n, seconds, url)
    if key == "ab":
        # -n after -t: ab's -t alone caps the requests at 50,000. ab
        # allocates its per-request records up front, so not much more than
        # the fastest client could do in the time.
        return [*pin, exe, "-q", "-k", "-c", str(n), "-t", str(seconds),
                "-n", str(max(n, 400_000 * seconds)), url]
    if key == "h2load":
        return [*pin, exe, "--h1", "-c", str(n), "-t", "1", "-D", str(seconds), url]
    if key == "oha":
        return [*pin, exe, "--no-tui", "--output-format", "json", "--worker-threads", "1",
                "-c", str(n), "-z", f"{seconds}s", url]
    if key.startswith("netbench-"):
        io = ["--io", key.removeprefix("netbench-")] if box.netbench_has_io else []
        return [*pin, exe, "load", *io, "-t", "1", "-c", str(n), "-d", f"{seconds}s", "--json", url]
    if key.startswith("floor-"):
        return [*pin, exe, host, str(port), str(n), str(seconds)]
    raise ValueError(key)


def _first(pattern: str, text: str, what: str) -> re.Match:
    m = re.search(pattern, text, re.M)
    if not m:
        raise ValueError(f"no {what} in the output")
    return m


def parse_ab(text: str, run: ClientRun) -> None:
    run.requests = int(_first(r"^Complete requests:\s+(\d+)", text, "'Complete requests'").group(1))
    run.rps = float(_first(r"^Requests per second:\s+([\d.]+)", text, "'Requests per second'").group(1))
    for label, kind in (("Failed requests", "failed"), ("Write errors", "write"),
                        ("Non-2xx responses", "non-2xx")):
        m = re.search(rf"^{label}:\s+(\d+)", text, re.M)
        if m and int(m.group(1)):
            run.errors[kind] = int(m.group(1))


def parse_h2load(text: str, run: ClientRun) -> None:
    run.rps = float(_first(r"^finished in [\d.]+\w*, ([\d.]+) req/s", text, "'finished in'").group(1))
    m = _first(r"^requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, "
               r"(\d+) errored, (\d+) timeout", text, "'requests:' line")
    run.requests = int(m.group(1))
    for kind, v in zip(("failed", "errored", "timeout"), m.groups()[1:]):
        if int(v):
            run.errors[kind] = int(v)


def _json_object(text: str) -> dict:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("stdout has no JSON object")
    return json.loads(text[start:end + 1])


def parse_oha(text: str, run: ClientRun) -> None:
    data = _json_object(text)
    try:
        codes = {str(k): int(v) for k, v in data["statusCodeDistribution"].items()}
        total_s = float(data["summary"]["total"])
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"missing or bad key in oha's JSON: {e}") from None
    run.requests = codes.get("200", 0)
    run.rps = run.requests / total_s if total_s > 0 else 0.0
    if sum(codes.values()) > run.requests:
        run.errors["non-200"] = sum(codes.values()) - run.requests
    for kind, v in (data.get("errorDistribution") or {}).items():
        if "deadline" in kind:
            run.cut_at_end += int(v)
        elif int(v):
            run.errors[kind] = int(v)


def parse_ghz(text: str, run: ClientRun) -> None:
    data = _json_object(text)
    try:
        codes = {str(k): int(v) for k, v in (data.get("statusCodeDistribution") or {}).items()}
        run.rps = float(data["rps"])
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"missing or bad key in ghz's JSON: {e}") from None
    run.requests = codes.get("OK", 0)
    for code, v in codes.items():
        if code != "OK" and v:
            # ghz counts calls cut off by its own deadline as Unavailable or
            # Canceled at the end: reported, not judged.
            run.errors[code] = v


def parse_netbench(text: str, run: ClientRun, want_io: str | None) -> None:
    res = lw.RunResult(tool="netbench", connections=run.connections, rep=run.rep, command=[])
    lw.parse_netbench(text, res)
    client = (res.self_report or {}).get("client") or {}
    if want_io and client.get("io") != want_io:
        why = client.get("io_fallback") or f"it ran {client.get('io')}"
        raise ValueError(f"asked for {want_io}, not used: {why}")
    run.requests, run.rps, run.errors = res.requests, res.rps, res.errors


def parse_floor(text: str, run: ClientRun) -> None:
    data = _json_object(text)
    try:
        run.requests, run.rps = int(data["answers"]), float(data["rps"])
        if data.get("io") not in ("epoll", "io_uring"):
            run.note = str(data.get("io"))
        if int(data["errors"]):
            run.errors["closed or failed"] = int(data["errors"])
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"missing or bad key in the floor client's JSON: {e}") from None


def parse_output(key: str, text: str, run: ClientRun) -> None:
    if key == "wrk":
        res = lw.RunResult(tool="wrk", connections=run.connections, rep=run.rep, command=[])
        lw.parse_wrk(text, res)
        run.requests, run.rps, run.errors = res.requests, res.rps, res.errors
    elif key == "ab":
        parse_ab(text, run)
    elif key == "h2load":
        parse_h2load(text, run)
    elif key == "oha":
        parse_oha(text, run)
    elif key == "ghz":
        parse_ghz(text, run)
    elif key.startswith("netbench-"):
        want = {"netbench-epoll": "epoll", "netbench-uring": "io_uring"}[key]
        parse_netbench(text, run, want if "--io" in run.command else None)
    else:
        parse_floor(text, run)


def run_client(key: str, cmd: list[str], n: int, rep: int, seconds: int,
               size: int = 2) -> ClientRun:
    run = ClientRun(client=key, connections=n, rep=rep, command=cmd, size=size)
    rc, out, err, wall, utime, stime = lw.run_measured(cmd, timeout=seconds * 2 + 60)
    run.returncode, run.wall_s, run.cpu_user_s, run.cpu_sys_s = rc, wall, utime, stime
    run.stdout_tail, run.stderr_tail = out[-4000:], err[-4000:]
    try:
        parse_output(key, out, run)
        if run.requests <= 0:
            raise ValueError("zero requests completed")
    except ValueError as e:
        run.failure = f"{e} (exit status {rc})"
        return run
    if rc != 0:
        log(f"warning: {key} exited with status {rc}: {err.strip()[-300:]}")
    run.ok = True
    run.cpu_us_per_request = (utime + stime) * 1e6 / run.requests
    run.core_busy = (utime + stime) / wall if wall > 0 else 0.0
    return run


def not_applicable(key: str, n: int, box: Toolbox, size: int = 2) -> str:
    """Why this client cannot run at n connections and this answer size, or ''."""
    if key in box.unavailable:
        return box.unavailable[key]
    if key.startswith("floor-") and size != 2:
        return "the floor clients only ask for `/`"
    if key == "ab" and n > AB_MAX_CONCURRENCY:
        return f"ab: concurrency above {AB_MAX_CONCURRENCY:,}"
    return ""


# --------------------------------------------------------------------------
# The runs
# --------------------------------------------------------------------------

def settle(port: int, next_connections: int, pause: float) -> None:
    """Pause between runs; wait for TIME_WAIT only where the kernel cannot reuse it.

    Every client closes first, so each leaves its connections in TIME_WAIT on
    the client side. With net.ipv4.tcp_tw_reuse 1, or 2 (Linux's default:
    loopback only), a connect reuses those ports, so there is nothing to
    wait for; otherwise load_vs_wrk's wait applies.
    """
    try:
        reuse = int(Path("/proc/sys/net/ipv4/tcp_tw_reuse").read_text())
    except (OSError, ValueError):
        reuse = 0
    if reuse in (1, 2):
        time.sleep(pause)
    else:
        lw.settle(port, next_connections, pause)


def rotated(keys: list[str], rep: int, reps: int) -> list[str]:
    """The order of one repetition: rotated so no client always goes first."""
    step = max(1, len(keys) // reps)
    k = ((rep - 1) * step) % len(keys)
    return keys[k:] + keys[:k]


def size_path(size: int) -> str:
    return "/" if size == 2 else f"/bytes/{size}"


def run_one(key: str, box: Toolbox, server: lw.Nginx, n: int, rep: int, seconds: int,
            progress: str, size: int = 2) -> ClientRun:
    cmd = command(key, box, n, seconds, "127.0.0.1", server.port, size_path(size))
    log(f"{progress} {LABEL[key]}, {n:,} connections, {size:,} B, rep {rep}: {shlex.join(cmd)}")
    run = run_client(key, cmd, n, rep, seconds, size)
    server.check_alive()
    if run.ok:
        log(f"    {run.rps:,.0f} req/s, {run.cpu_us_per_request:.2f} µs CPU/req, "
            f"core busy {run.core_busy:.0%}, errors {sum(run.errors.values())}")
    elif key.startswith("floor-") and run.returncode == FLOOR_UNSUPPORTED:
        box.unavailable[key] = run.stderr_tail.strip().splitlines()[-1][:200]
        log(f"    n/a: {box.unavailable[key]}")
    else:
        log(f"    FAILED: {run.failure}\n    stderr: {run.stderr_tail.strip()[-800:]}")
    return run


def run_table(args, box: Toolbox, server: lw.Nginx, keys: list[str]) -> list[ClientRun]:
    runs: list[ClientRun] = []
    total = sum(1 for size in args.sizes for n in args.levels for k in keys
                if not not_applicable(k, n, box, size)) * args.reps
    done = 0
    for size in args.sizes:
        for n in args.levels:
            for rep in range(1, args.reps + 1):
                for key in rotated(keys, rep, args.reps):
                    if not_applicable(key, n, box, size):
                        continue
                    if done:
                        settle(server.port, n, args.pause)
                    done += 1
                    runs.append(run_one(key, box, server, n, rep, args.duration,
                                        f"[{done}/{total}]", size))
    return runs


def server_requests(port: int) -> int | None:
    """nginx's count of requests so far (stub_status), this one included."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /nginx-status HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            reply = b""
            while chunk := s.recv(4096):
                reply += chunk
    except OSError:
        return None
    m = re.search(rb"\n\s*\d+\s+\d+\s+(\d+)\s*\n", reply)
    return int(m.group(1)) if m else None


def floor_sanity(box: Toolbox, server: lw.Nginx, keys: list[str], seconds: int = 2,
                 n: int = 10) -> list[str]:
    """Do the floor clients count right? Returns the warnings.

    Two checks at 10 connections for a few seconds. Exact: nginx's own
    request count over the run must be the floor's answers plus its 2 probe
    requests plus at most one unanswered request per connection. Rough: its
    requests/s within 30% of wrk's (the server is about the limit there; a
    wrk whose core is saturated can be the slower one without a miscount).
    """
    floors = [k for k in keys if k.startswith("floor-") and k not in box.unavailable]
    if not floors:
        return []
    wrk = box.paths.get("wrk") or lw.find_tool("wrk")
    sane = Toolbox(nginx=box.nginx, paths={**box.paths, "wrk": wrk or ""})
    warnings, runs = [], {}
    for i, key in enumerate(([] if not wrk else ["wrk"]) + floors):
        if i:
            settle(server.port, n, 1.0)
        before = server_requests(server.port)
        run = run_one(key, sane, server, n, 0, seconds, "[sanity]")
        after = server_requests(server.port)
        runs[key] = run
        if key == "wrk" or not run.ok:
            if not run.ok:
                warnings.append(f"{LABEL[key]} produced no numbers at {n} connections")
            continue
        if before is None or after is None:
            warnings.append("nginx's request count (stub_status) could not be read: "
                            f"{LABEL[key]}'s count not checked against it")
            continue
        served = after - before - 1 - 2  # less the second status request and the probe
        msg = (f"{LABEL[key]} counted {run.requests:,} answers; nginx served {served:,} "
               f"requests to it besides the probe")
        if run.requests <= served <= run.requests + n:
            log(f"sanity: {msg}: right (at most one unanswered per connection at the end)")
        else:
            warnings.append(f"{msg}: it does not count right")
            log(f"sanity: WARNING: {warnings[-1]}")
    if not wrk:
        warnings.append("floor requests/s not compared with wrk's: wrk not installed")
        return warnings
    base = runs["wrk"]
    for key in floors:
        r = runs[key]
        if not (r.ok and base.ok):
            continue
        ratio = r.rps / base.rps
        msg = (f"{LABEL[key]} {r.rps:,.0f} req/s against wrk's {base.rps:,.0f} "
               f"at {n} connections ({ratio:.2f}x)")
        if 0.7 <= ratio <= 1.3:
            log(f"sanity: {msg}: within 30%")
        else:
            busy = (f" (wrk's core was {base.core_busy:.0%} busy: it may be the slower one)"
                    if base.core_busy >= 0.9 and ratio > 1 else "")
            warnings.append(f"{msg}: more than 30% apart{busy}")
            log(f"sanity: WARNING: {warnings[-1]}")
    return warnings


# --------------------------------------------------------------------------
# Summary and table
# --------------------------------------------------------------------------

def summarize(runs: list[ClientRun], keys: list[str], levels: list[int], box: Toolbox,
              size: int = 2) -> list[dict]:
    """One row per (connections, client) at one answer size: medians over good
    reps, errors summed."""
    rows = []
    for n in levels:
        level = []
        for key in keys:
            row = {"connections": n, "client": key, "label": LABEL[key], "size": size}
            mine = [r for r in runs if r.client == key and r.connections == n and r.size == size]
            good = [r for r in mine if r.ok]
            why = not_applicable(key, n, box, size)
            if why and not good:
                row["na"] = why
            elif not good:
                row["failed"] = f"{len(mine)} of {len(mine)} runs failed: {mine[-1].failure if mine else '?'}"
            else:
                errors: dict[str, int] = {}
                for r in good:
                    for k, v in r.errors.items():
                        errors[k] = errors.get(k, 0) + v
                notes = sorted({r.note for r in good if r.note})
                if notes:
                    row["label"] += f" ({'; '.join(notes)})"
                row.update(runs=len(mine), ok_runs=len(good), errors=errors,
                           rps=statistics.median(r.rps for r in good),
                           cpu_us_per_request=statistics.median(r.cpu_us_per_request for r in good),
                           core_busy=statistics.median(r.core_busy for r in good),
                           cut_at_end=sum(r.cut_at_end for r in good))
            level.append(row)
        base = {k: next((r.get("cpu_us_per_request") for r in level if r["client"] == k), None)
                for k in ("floor-epoll", "wrk")}
        for row in level:
            cpu = row.get("cpu_us_per_request")
            row["x_floor_epoll"] = cpu / base["floor-epoll"] if cpu and base["floor-epoll"] else None
            row["x_wrk"] = cpu / base["wrk"] if cpu and base["wrk"] else None
        rows.extend(level)
    return rows


def _ratio(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _errors(row: dict) -> str:
    total = sum(row["errors"].values())
    text = "0" if not total else f"{total:,} (" + ", ".join(
        f"{k} {v:,}" for k, v in sorted(row["errors"].items())) + ")"
    if row.get("cut_at_end"):
        text += f"; {row['cut_at_end']:,} cut at the end ‡"
    return text


def markdown_table(rows: list[dict], env: dict, reps: int, wall_s: float) -> str:
    sizes = sorted({r["size"] for r in rows})
    if sizes != [2]:
        tables = []
        for size in sizes:
            heading = (f"Answer body: {size:,} bytes (`GET {size_path(size)}`)")
            table = _table_rows([r for r in rows if r["size"] == size])
            tables.append(heading + "\n\n" + "\n".join(table))
        return "\n\n".join(tables) + "\n\n" + _footer(env, reps, wall_s)
    return "\n".join(_table_rows(rows)) + "\n\n" + _footer(env, reps, wall_s)


def _table_rows(rows: list[dict]) -> list[str]:
    header = ["connections", "client", "requests/s", "client CPU µs/request",
              "× floor epoll", "× wrk", "client core busy", "errors"]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(["---:", ":---", "---:", "---:", "---:", "---:", "---:", "---:"]) + "|"]
    cut = False
    for r in rows:
        cells = [f"{r['connections']:,}", r["label"]]
        if "na" in r:
            cells += [f"n/a ({r['na']})", "—", "—", "—", "—", "—"]
        elif "failed" in r:
            cells += ["FAILED", "—", "—", "—", "—", r["failed"]]
        else:
            cut = cut or bool(r.get("cut_at_end"))
            if r["ok_runs"] < r["runs"]:
                cells[1] += f" ({r['runs'] - r['ok_runs']} of {r['runs']} runs failed)"
            cells += [f"{r['rps']:,.0f}", f"{r['cpu_us_per_request']:.2f}",
                      _ratio(r["x_floor_epoll"]), _ratio(r["x_wrk"]),
                      f"{r['core_busy']:.0%}", _errors(r)]
        lines.append("| " + " | ".join(cells) + " |")
    if cut:
        lines.append("")
        lines.append("‡ requests in flight when oha's clock ran out: oha aborts them "
                     "(\"aborted due to deadline\"); not counted as requests nor as errors.")
    return lines


def _footer(env: dict, reps: int, wall_s: float) -> str:
    med = f"medians over {reps} alternating reps (order rotated), errors summed; " if reps > 1 else ""
    v = env["versions"]
    return (
        f"{med}{env['date']}; {env['cpu_model']}, nproc {env['nproc']}, kernel {env['kernel']}; "
        + "; ".join(f"{k} {v[k]}" for k in v)
        + f"; nginx on CPU {lw.SERVER_CPU}, clients on CPU {lw.CLIENT_CPU}; "
        f"total wall time {wall_s / 60:.1f} min; command: `{env['command_line']}`")


def environment(box: Toolbox, netbench: Path) -> dict:
    def first_match(pattern: str, cmd: list[str]) -> str:
        m = re.search(pattern, lw._cmd_output(cmd))
        return m.group(1) if m else "unknown"

    model = first_match(r"(?im)^model name:\s*(.+)$", ["lscpu"]).strip()
    versions = {"nginx": first_match(r"nginx version:\s*nginx/(\S+)", [box.nginx, "-v"])}
    p = box.paths
    if "wrk" in p:
        versions["wrk"] = first_match(r"wrk\s+(\S+)", [p["wrk"], "-v"])
    if "ab" in p:
        versions["ab"] = first_match(r"Version\s+(\S+)", [p["ab"], "-V"]) + " (apache2-utils " + \
            first_match(r"(\S+)", ["dpkg-query", "-W", "-f", "${Version}", "apache2-utils"]) + ")"
    if "h2load" in p:
        versions["h2load"] = first_match(r"nghttp2/(\S+)", [p["h2load"], "--version"])
    if "oha" in p:
        versions["oha"] = first_match(r"oha\s+(\S+)", [p["oha"], "--version"])
    if any(k.startswith("netbench-") for k in p):
        head = lw._cmd_output(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"]).strip()
        dirty = lw._cmd_output(["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--",
                                "crates", "Cargo.toml", "Cargo.lock"]).strip()
        # The binary may be older than the tree: say when it was built, and
        # what the tree was at the time of the run.
        built = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(netbench.stat().st_mtime))
        versions["netbench"] = (first_match(r"(\d+\.\d+\.\d+\S*)", [str(netbench), "--version"])
                                + f" (binary built {built}; tree at {head}"
                                + f"{' with uncommitted changes' if dirty else ''})")
    if any(k.startswith("floor-") for k in p):
        versions["cc"] = first_match(r"([^\n]+)", ["cc", "--version"])
        if "floor-uring" in p:
            versions["liburing"] = first_match(r"(\S+)", ["dpkg-query", "-W", "-f", "${Version}",
                                                          "liburing-dev"])
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu_model": model, "nproc": os.cpu_count(), "kernel": os.uname().release,
        "versions": versions, "command_line": shlex.join(sys.orig_argv),
    }


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def parse_clients(text: str) -> list[str]:
    keys = [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in keys if k not in LABEL]
    if bad or not keys:
        raise argparse.ArgumentTypeError(
            f"unknown client(s) {', '.join(bad) or '(none)'}; choose from {', '.join(LABEL)}")
    return [k for k in LABEL if k in keys]  # table order


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of byte counts: {text!r}") from None
    if not sizes or any(s < 1 for s in sizes):
        raise argparse.ArgumentTypeError("sizes are positive byte counts")
    return list(dict.fromkeys(sizes))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clients.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\n\n")[0] + """

Setup (automatic, loopback only): installs from Debian what is missing
(nginx-light, wrk, apache2-utils for ab, nghttp2-client for h2load,
build-essential, liburing-dev), builds oha """ + OHA_VERSION + """ from crates.io once into
target/bench-tools (about 5 minutes), compiles bench/floor/ into
target/bench-floor with cc -O2, and starts the private nginx of
bench/load_vs_wrk.py (1 worker, CPU 0). A client that cannot be had shows
n/a with the reason; the others still run.

Per connection count and repetition every client runs once, pinned to CPU 1:
  wrk -t1 -c N -d Ds --latency URL
  ab -q -k -c N -t D -n LIMIT URL                 (HTTP/1.0 keep-alive; -c at most 20,000)
  h2load --h1 -c N -t 1 -D D URL
  oha --no-tui --output-format json --worker-threads 1 -c N -z Ds URL
  netbench load --io epoll|uring -t 1 -c N -d Ds --json URL
  floor_epoll|floor_uring 127.0.0.1 PORT N D

Figures: requests/s as each client reports it; client CPU µs/request =
user+sys CPU of the client process (getrusage of the waited-for child) x 1e6
/ requests it completed; × floor epoll and × wrk = that figure over theirs
at the same count; client core busy = CPU seconds / wall seconds of the
process. Before the table each floor client runs 2 s at 10 connections and
is checked twice: its count of answers against nginx's own request count
(stub_status; exact up to one unanswered request per connection), and its
requests/s against wrk's (within 30%); a warning follows the table if not.

The Markdown table goes to stdout, progress to stderr. Exit status: 0 every
run produced numbers, 1 some did not (or --check found a client with none),
2 setup error, 130 interrupted.""")
    p.add_argument("--levels", type=lw.parse_levels, default=[1, 100, 1000, 10000],
                   help="comma-separated connection counts (default: 1,100,1000,10000)")
    p.add_argument("--sizes", type=parse_sizes, default=[2], metavar="BYTES",
                   help="comma-separated answer body sizes, one table each; 2 is nginx's "
                        "`return 200 \"OK\"` at /, any other N a static file at /bytes/N; "
                        "the floor clients only run at 2 (default: 2)")
    p.add_argument("--duration", type=int, default=10, metavar="SECONDS",
                   help="length of each run (default: 10)")
    p.add_argument("--reps", type=int, default=3,
                   help="repetitions; the table shows medians (default: 3)")
    p.add_argument("--clients", type=parse_clients, default=list(LABEL), metavar="LIST",
                   help="comma-separated subset of: " + ", ".join(LABEL) + " (default: all)")
    p.add_argument("--check", action="store_true",
                   help="self-test: every client for 1 s at 10 connections; exit 1 if any "
                        "completes no request (n/a clients are listed, not failed)")
    p.add_argument("--netbench", type=Path, default=lw.DEFAULT_NETBENCH, metavar="PATH",
                   help="netbench binary (default: target/release/netbench)")
    p.add_argument("--pause", type=float, default=2.0, metavar="SECONDS",
                   help="sleep between runs (default: 2)")
    p.add_argument("--json-out", type=Path, metavar="FILE",
                   help="also write every run's raw numbers and the environment to FILE")
    p.add_argument("--no-install", action="store_true",
                   help="install and build nothing; missing clients show n/a")
    p.add_argument("--keep-tmp", action="store_true",
                   help="keep nginx's temp dir (config, error.log) for inspection")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.duration < 1 or args.reps < 1:
        print("error: --duration and --reps must be at least 1", file=sys.stderr)
        return 2
    if args.check:
        args.levels, args.reps, args.duration = [10], 1, 1
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lw._on_terminate)
    signal.signal(signal.SIGHUP, lw._on_terminate)
    if shutil.which("taskset") is None:
        print("error: taskset not found (Debian package util-linux)", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    keys = args.clients
    try:
        box = ensure_tools(keys, args.netbench.resolve(), args.no_install)
        for key, why in box.unavailable.items():
            log(f"{LABEL[key]}: n/a ({why})")
        lw.raise_nofile(max(args.levels) + 1024)
        env = environment(box, args.netbench.resolve())
        with lw.Nginx(box.nginx, keep_tmp=args.keep_tmp,
                      sizes=tuple(s for s in args.sizes if s != 2)) as server:
            warnings = floor_sanity(box, server, keys)
            runs = run_table(args, box, server, keys)
    except lw.BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    wall = time.monotonic() - t0

    rows = [row for size in args.sizes for row in summarize(runs, keys, args.levels, box, size)]
    print(markdown_table(rows, env, args.reps, wall))
    for w in warnings:
        print(f"\nwarning: {w}")
    log(f"total wall time {wall / 60:.1f} min")
    if args.json_out:
        payload = {"environment": env,
                   "settings": {"levels": args.levels, "sizes": args.sizes,
                                "duration_s": args.duration,
                                "reps": args.reps, "clients": keys,
                                "server_cpu": lw.SERVER_CPU, "client_cpu": lw.CLIENT_CPU},
                   "unavailable": box.unavailable, "sanity_warnings": warnings,
                   "wall_s": wall, "summary": rows, "runs": [asdict(r) for r in runs]}
        args.json_out.write_text(json.dumps(payload, indent=2) + "\n")
        log(f"raw numbers written to {args.json_out}")
    failed = [r for r in runs if not r.ok and r.client not in box.unavailable]
    if failed:
        log(f"{len(failed)} run(s) produced no numbers: "
            + ", ".join(f"{r.client}@{r.connections} rep {r.rep}" for r in failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
