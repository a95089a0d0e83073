#!/usr/bin/env python3
"""Does a server's cgroup CPU time (what `netbench run` reads since issue
43) agree with the sum of its threads' own run time? The ground truth here is
/proc/PID/task/TID/schedstat's first field (nanoseconds on a CPU, per
thread), read by hand before and after a window; the figure under test is
cgroup2's cpu.stat usage_usec of a cgroup holding only the server.

For each server given, it makes a cgroup, starts the server in it pinned to
CPU 0, warms it (`netbench load -c 100 -d 5s`), then offers it a fixed rate
from CPU 1 (`netbench load -c 100 -R RATE -d 5s`) and prints both CPU times
over that window, their ratio, and the CPU per request by each. A thread
that ended during the window would be missing from the schedstat sum, so
servers whose threads live for the run (most) are the fair test.

    python3 bench/cpu_ground_truth.py                       # rust-hyper, go-nethttp, c-h2o
    python3 bench/cpu_ground_truth.py node-http --rate 20000

Needs root (cgroup2), target/release/netbench and the servers built. About
15 s per server. Exit status 0, or 2 when no writable cgroup2 is mounted or
a server could not start.
"""

import argparse
import glob
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jvm_warm import (  # noqa: E402
    NETBENCH, READY_TIMEOUT_S, SERVERS_DIR, ensure_built, free_port, load_manifest, run_line,
    stop, wait_ready,
)


def cgroup2_root():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            before, _, after = line.partition(" - ")
            if after.split()[0] == "cgroup2":
                return before.split()[4]
    return None


def usage_s(group):
    with open(os.path.join(group, "cpu.stat")) as f:
        for line in f:
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
    raise RuntimeError("no usage_usec in cpu.stat")


def schedstat_s(group):
    total = 0
    with open(os.path.join(group, "cgroup.procs")) as f:
        pids = [p.strip() for p in f if p.strip()]
    for pid in pids:
        for stat in glob.glob(f"/proc/{pid}/task/*/schedstat"):
            try:
                with open(stat) as s:
                    total += int(s.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass  # a thread that ended between the listing and the read
    return total / 1e9


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("servers", nargs="*", default=["rust-hyper", "go-nethttp", "c-h2o"])
    p.add_argument("--rate", type=int, default=40000)
    args = p.parse_args(argv)
    root = cgroup2_root()
    if not root or not os.access(root, os.W_OK):
        print("cpu_ground_truth: no writable cgroup2 here (run as root)", file=sys.stderr)
        return 2
    log = open(os.devnull, "w")
    print(f"{'server':<14} {'cgroup s':>9} {'schedstat s':>11} {'ratio':>7} {'µs/req cgroup':>14} {'µs/req sched':>13}")
    for name in args.servers:
        group = os.path.join(root, f"netbench-truth-{os.getpid()}-{name}")
        os.mkdir(group)
        manifest = load_manifest(name)
        ensure_built(name, manifest, log)
        port = free_port()
        env = dict(os.environ, HOST="127.0.0.1", PORT=str(port))
        enter = f"echo 0 > {group}/cgroup.procs && exec taskset -c 0 sh -c '{run_line(manifest)}'"
        proc = subprocess.Popen(["sh", "-c", enter], cwd=os.path.join(SERVERS_DIR, name), env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        url = f"http://127.0.0.1:{port}/blank"
        try:
            wait_ready(url, proc, READY_TIMEOUT_S)
            subprocess.run(["taskset", "-c", "1", NETBENCH, "load", "-c", "100", "-d", "5s", url],
                           check=True, stdout=subprocess.DEVNULL)
            time.sleep(0.5)
            c0, s0 = usage_s(group), schedstat_s(group)
            out = subprocess.run(["taskset", "-c", "1", NETBENCH, "load", "-c", "100", "-R", str(args.rate),
                                  "-d", "5s", "--json", url], check=True, capture_output=True, text=True).stdout
            c1, s1 = usage_s(group), schedstat_s(group)
            import json
            n = json.loads(out)["requests"]
            # The load's connect and its end lie inside the reads: both
            # figures cover the same span, which is what is compared.
            dc, ds = c1 - c0, s1 - s0
            print(f"{name:<14} {dc:9.4f} {ds:11.4f} {dc / ds:7.4f} {dc / n * 1e6:14.2f} {ds / n * 1e6:13.2f}")
        except (RuntimeError, subprocess.CalledProcessError) as e:
            print(f"cpu_ground_truth: {name}: {e}", file=sys.stderr)
            return 2
        finally:
            stop(proc)
            for _ in range(50):
                try:
                    os.rmdir(group)
                    break
                except OSError:
                    time.sleep(0.1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
