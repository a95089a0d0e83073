#!/usr/bin/env python3
"""Does the machine-speed control reduce the spread? Reads one stored run of
netbench (the SQLite store) and prints, for every cell with two or more good
repetitions that carry the control, the spread of requests/s across
repetitions raw and normalised by the fixed CPU probe, plus the noise recorded
around the cells (host steal, CPU busy outside netbench and the server).

Normalised requests/s = raw × probe_ns / the run's median probe_ns: a cell
measured while the probe ran slower than usual is scaled up by as much, so
figures stay in requests/s "at the run's typical machine speed". The controls
tried: the CPU probe on the server's CPUs, on the client's, their geometric
mean, the loopback exchange between them (runs since it was recorded), and
the other design the issue names, a reference cell per round: every cell of
round r scaled by the median of the reference cell's repetitions over its
repetition r (--reference test:connections:server; that cell itself is left
out of the counts, since it would settle by construction).

    python3 bench/noise_control.py                  # the latest run in results/netbench.sqlite
    python3 bench/noise_control.py 3 --db other.sqlite --reference blank:100:rust-hyper
"""

import argparse
import math
import sqlite3
import statistics
import sys

# Student's t, 0.975 quantile, for 1..30 degrees of freedom (as the reports use).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def half_width(values):
    """Half-width of the 95% interval of the mean, relative to the mean."""
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2 or mean == 0:
        return math.inf
    t = T975[n - 2] if n - 1 <= len(T975) else 1.96
    return t * statistics.stdev(values) / math.sqrt(n) / abs(mean)


def cv(values):
    mean = statistics.fmean(values)
    return statistics.stdev(values) / abs(mean) if len(values) > 1 and mean else math.inf


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", nargs="?", type=int, help="run id (default: the latest)")
    ap.add_argument("--db", default="results/netbench.sqlite")
    ap.add_argument("--target", type=float, default=0.05, help="the interval half-width that counts as settled (0.05)")
    ap.add_argument("--reference", metavar="TEST:CONNECTIONS:SERVER",
                    help="a cell measured every round, to try as a per-round control")
    a = ap.parse_args()
    try:
        db = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
        run = a.run or db.execute("SELECT max(id) FROM runs").fetchone()[0]
        columns = {r[1] for r in db.execute("PRAGMA table_info(measurements)")}
        loopback = "probe_loopback_ns" if "probe_loopback_ns" in columns else "NULL"
        rows = db.execute(
            f"""SELECT server, variant, scenario, connections, repetition,
                      json_extract(result, '$.rps'), probe_server_ns, probe_client_ns,
                      steal, other_busy_cores, quiet_wait_s, {loopback}
               FROM measurements
               WHERE run_id = ? AND status = 'ok' AND probe_server_ns IS NOT NULL""",
            (run,),
        ).fetchall()
    except sqlite3.Error as e:
        sys.exit(f"noise_control: cannot read {a.db}: {e}; run a suite first (make run)")
    if not rows:
        sys.exit(f"noise_control: run {run} in {a.db} has no measurements with the control "
                 "(runs made before it was recorded have none)")
    ref_s = statistics.median(r[6] for r in rows)
    ref_c = statistics.median(r[7] for r in rows)
    with_loopback = all(r[11] is not None for r in rows)
    ref_l = statistics.median(r[11] for r in rows) if with_loopback else None
    cells = {}
    for (server, variant, scenario, conns, rep, rps, ps, pc, steal, busy, wait, pl) in rows:
        label = server + (f":{variant}" if variant else "")
        cells.setdefault((scenario, conns, label), []).append((rps, ps, pc, steal, busy, wait, pl, rep))

    probes = {
        "server CPU": lambda r: r[0] * r[1] / ref_s,
        "client CPU": lambda r: r[0] * r[2] / ref_c,
        "geomean CPU": lambda r: r[0] * math.sqrt(r[1] / ref_s * r[2] / ref_c),
    }
    if with_loopback:
        probes["loopback"] = lambda r: r[0] * r[6] / ref_l
    reference_key = None
    if a.reference:
        try:
            test, conns, server = a.reference.split(":", 2)
            reference_key = (test, int(conns), server)
        except ValueError:
            sys.exit(f"noise_control: --reference {a.reference!r}: want TEST:CONNECTIONS:SERVER, e.g. blank:100:rust-hyper")
        if reference_key not in cells:
            sys.exit(f"noise_control: run {run} has no cell {a.reference} with the control")
        by_round = {r[7]: r[0] for r in cells[reference_key]}
        mid = statistics.median(by_round.values())
        # A cell's repetition without its round's reference cannot be scaled.
        probes["round reference"] = lambda r: r[0] * mid / by_round[r[7]] if r[7] in by_round else math.nan
    loop_text = f", {ref_l / 1e3:.1f} µs (loopback)" if with_loopback else ", no loopback probe"
    print(f"run {run} of {a.db}: {len(rows)} good measurements with the control; "
          f"median probe {ref_s / 1e3:.0f} µs (server CPUs), {ref_c / 1e3:.0f} µs (client CPUs){loop_text}\n")
    shown = "loopback" if with_loopback else "server CPU"
    print(f"| test | c | server | reps | CV raw | CV norm ({shown}) | ±95% raw | ±95% norm | probe range | steal | other busy |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    judged = []
    for key, reps in sorted(cells.items()):
        (scenario, conns, label) = key
        if len(reps) < 2 or key == reference_key:
            continue
        raw = [r[0] for r in reps]
        norm = {k: [f(r) for r in reps] for k, f in probes.items()}
        norm = {k: [x for x in v if not math.isnan(x)] for k, v in norm.items()}
        judged.append((raw, norm))
        pr = [r[6] / ref_l if with_loopback else r[1] / ref_s for r in reps]
        print(f"| {scenario} | {conns} | {label} | {len(reps)} | {cv(raw):.1%} | {cv(norm[shown]):.1%} | "
              f"{half_width(raw):.1%} | {half_width(norm[shown]):.1%} | "
              f"{min(pr):.2f}–{max(pr):.2f} | {max(r[3] for r in reps):.1%} | "
              f"{max(r[4] for r in reps):.2f} |")
    if not judged:
        sys.exit("noise_control: no cell has two good repetitions")
    n = len(judged)
    print(f"\n{n} cells with 2 or more repetitions; within ±{a.target:.0%} (95% interval of the mean):")
    within = lambda vs: sum(half_width(v) <= a.target for v in vs)
    print(f"- raw: {within([r for r, _ in judged])} of {n}; median CV {statistics.median(cv(r) for r, _ in judged):.1%}")
    for k in probes:
        vs = [nm[k] for _, nm in judged]
        print(f"- normalised by the {k} control: {within(vs)} of {n}; median CV {statistics.median(cv(v) for v in vs):.1%}")
    for k in probes:
        better = sum(cv(nm[k]) < cv(r) for r, nm in judged)
        print(f"- the {k} control narrowed the spread of {better} of {n} cells")


if __name__ == "__main__":
    main()
