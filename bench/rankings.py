#!/usr/bin/env python3
"""Issue 43's targets, from stored runs: do a run's rankings hold?

For one run (`--db FILE --run N`, the latest by default) it prints, per row
(a test at a connection count), each server's relative figure (its value
over the row's geometric mean in the same round; for a fixed-rate row the
server's CPU per request, where lower is better) with a bootstrap 95%
interval over rounds, its rank interval (ranks over resampled rounds), the
A/A twins' paired ratio, and how many cells reached +-5%. With a second run
(`--against FILE [--against-run M]`; the same store by default) it also
prints the targets that compare two runs: whether the second run's relative
figure falls inside the first run's interval, Kendall's tau of each row's
order, and whether any server's rank interval in one run excludes its rank
in the other.

    python3 bench/rankings.py --db results/netbench.sqlite
    python3 bench/rankings.py --db a.sqlite --against b.sqlite
    python3 bench/rankings.py --check     # self-test on synthetic rounds

Rounds pair: a server's figure in a round is taken against the geometric
mean of the row's servers in that same round, so a slow episode of the host
that hits a whole round cancels; a cell without a good value in a round (a
failure, or a fixed rate it did not hold that round) is left out of that
round alone. The statistics here are written out in Python on purpose,
apart from the report's own (crates/stats), as a second computation to
check the first against. Exit status 0; 2 when a run has no rows.
"""

import argparse
import json
import math
import random
import sqlite3
import statistics
import sys

RESAMPLES = 2000
LEVEL = 0.95
TARGET = 0.05


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", default="results/netbench.sqlite")
    p.add_argument("--run", type=int)
    p.add_argument("--against")
    p.add_argument("--against-run", type=int)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")
    p.add_argument("--check", action="store_true", help="self-test on synthetic data")
    return p.parse_args(argv)


def label(server, variant):
    return f"{server}:{variant}" if variant else server


def load_rows(db, run):
    """{(scenario, connections): {"lower": bool, "cells": {label: {round: value}}}}."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    if run is None:
        run = conn.execute("SELECT max(id) FROM runs").fetchone()[0]
    rows = {}
    for server, variant, scenario, conns, rep, result, facts in conn.execute(
        "SELECT server, variant, scenario, connections, repetition, result, facts "
        "FROM measurements WHERE run_id = ? AND status = 'ok'", (run,)):
        f = json.loads(facts) if facts else None
        if f and f.get("kind") == "fixed-rate":
            if f["offered_per_s"] < f["rate_per_s"] or f.get("server_cpu_us_per_request") is None:
                continue  # did not hold the row's rate: shown, not ranked
            value, lower = f["server_cpu_us_per_request"], True
        elif f is None or f.get("kind") in ("short-lived", "pipelined"):
            value, lower = json.loads(result)["rps"], False
        else:
            continue
        row = rows.setdefault((scenario, conns), {"lower": lower, "cells": {}})
        row["cells"].setdefault(label(server, variant), {})[rep] = value
    return run, rows


def all_rounds(cells):
    return sorted({r for by_round in cells.values() for r in by_round})


def relative(cells, rounds):
    """Each cell's value over the geometric mean of the row's cells present
    in the same round (None where the cell has no value that round)."""
    out = {s: [] for s in cells}
    for r in rounds:
        present = [s for s in cells if r in cells[s]]
        gm = math.exp(statistics.fmean(math.log(cells[s][r]) for s in present)) if len(present) >= 2 else None
        for s in cells:
            out[s].append(cells[s][r] / gm if gm and r in cells[s] else None)
    return out


def percentile(sorted_xs, q):
    i = min(len(sorted_xs) - 1, max(0, int(round(q * (len(sorted_xs) - 1)))))
    return sorted_xs[i]


def bootstrap_rounds(n, rng):
    return [[rng.randrange(n) for _ in range(n)] for _ in range(RESAMPLES)]


def med(values, picks=None):
    xs = [values[i] for i in (picks if picks is not None else range(len(values)))]
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def interval(values, draws):
    meds = sorted(m for m in (med(values, d) for d in draws) if m is not None)
    return percentile(meds, (1 - LEVEL) / 2), percentile(meds, 1 - (1 - LEVEL) / 2)


def ranks_of(medians, lower):
    order = sorted((s for s in medians if medians[s] is not None), key=lambda s: medians[s],
                   reverse=not lower)
    return {s: i + 1 for i, s in enumerate(order)}


def analyse_row(row, rng):
    """A round in which a cell has no good value (failed, or a fixed rate it
    did not hold that round) leaves that cell out of that round only."""
    cells, lower = row["cells"], row["lower"]
    rounds = all_rounds(cells)
    if len(rounds) < 2 or len(cells) < 2:
        return None
    rel = relative(cells, rounds)
    raw = {s: [cells[s].get(r) for r in rounds] for s in cells}
    draws = bootstrap_rounds(len(rounds), rng)
    out = {"rounds": len(rounds), "lower_is_better": lower, "servers": {}}
    meds = {s: med(v) for s, v in rel.items()}
    rank = ranks_of(meds, lower)
    rank_draws = {s: [] for s in cells}
    for d in draws:
        for s, k in ranks_of({s: med(rel[s], d) for s in cells}, lower).items():
            rank_draws[s].append(k)
    for s in cells:
        if meds[s] is None or sum(v is not None for v in rel[s]) < 2:
            continue
        lo, hi = interval(rel[s], draws)
        rk = sorted(rank_draws[s])
        out["servers"][s] = {
            "median": med(raw[s]),
            "relative": meds[s],
            "relative_low": lo,
            "relative_high": hi,
            "half_width": (hi - lo) / 2 / meds[s],
            "rank": rank[s],
            "rank_low": percentile(rk, 0.025),
            "rank_high": percentile(rk, 0.975),
        }
    for t in [s for s in cells if s.endswith(":twin")]:
        base = t[: -len(":twin")]
        if base in cells:
            ratios = [cells[t][r] / cells[base][r] if r in cells[t] and r in cells[base] else None
                      for r in rounds]
            if sum(x is not None for x in ratios) >= 2:
                lo, hi = interval(ratios, draws)
                out["twins"] = {"a": base, "b": t, "ratio": med(ratios),
                                "low": lo, "high": hi, "tied": lo <= 1.0 <= hi}
    return out


def analyse(db, run, seed):
    run, rows = load_rows(db, run)
    rng = random.Random(seed)
    out = {}
    for key in sorted(rows):
        a = analyse_row(rows[key], rng)
        if a:
            out[f"{key[0]} c={key[1]}"] = a
    return run, out


def kendall_tau(a, b):
    keys = sorted(set(a) & set(b))
    conc = disc = 0
    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            x = (a[keys[i]] - a[keys[j]]) * (b[keys[i]] - b[keys[j]])
            conc += x > 0
            disc += x < 0
    pairs = conc + disc
    return (conc - disc) / pairs if pairs else 1.0


def report(name, run, rows):
    lines = [f"{name}, run {run}"]
    cells = within = 0
    for row, a in rows.items():
        lines.append(f"  {row} ({a['rounds']} rounds{', lower is better' if a['lower_is_better'] else ''})")
        by_rank = sorted(a["servers"].items(), key=lambda kv: kv[1]["rank"])
        for s, f in by_rank:
            cells += 1
            within += f["half_width"] <= TARGET
            lines.append(
                f"    {f['rank']:>2} ({f['rank_low']}-{f['rank_high']:<2}) {s:<22} {f['median']:>12,.1f}"
                f"  rel {f['relative']:.3f} [{f['relative_low']:.3f}, {f['relative_high']:.3f}]"
                f" +-{f['half_width'] * 100:.1f}%")
        t = a.get("twins")
        if t:
            lines.append(f"    twins {t['b']} / {t['a']}: {t['ratio']:.3f} [{t['low']:.3f}, "
                         f"{t['high']:.3f}] {'tied' if t['tied'] else 'NOT tied'}")
    lines.append(f"  cells within +-5% (relative, bootstrap 95% of the median): {within} of {cells}")
    return "\n".join(lines)


def compare(first, second):
    lines = ["second run against the first"]
    inside = total = 0
    taus, excluded = [], []
    for row, a in first.items():
        b = second.get(row)
        if not b:
            continue
        for s, f in a["servers"].items():
            g = b["servers"].get(s)
            if not g:
                continue
            total += 1
            inside += f["relative_low"] <= g["relative"] <= f["relative_high"]
            for x, y, which in ((f, g, "first"), (g, f, "second")):
                if not x["rank_low"] <= y["rank"] <= x["rank_high"]:
                    excluded.append(f"{row} {s}: rank {y['rank']} outside the {which} run's "
                                    f"{x['rank_low']}-{x['rank_high']}")
        ra = {s: f["relative"] for s, f in a["servers"].items()}
        rb = {s: f["relative"] for s, f in b["servers"].items()}
        tau = kendall_tau(ra, rb)
        taus.append(tau)
        lines.append(f"  {row}: Kendall tau {tau:.3f}")
    lines.append(f"  second run's relative figure inside the first run's interval: {inside} of {total}")
    lines.append(f"  rank intervals excluding the other run's rank: {len(excluded)}")
    lines.extend("    " + e for e in excluded)
    return "\n".join(lines)


def check():
    """Synthetic rounds with known answers: equal servers tie, a 5% gap
    splits, and a whole slow round cancels."""
    rng = random.Random(7)
    cells = {"a": {}, "a:twin": {}, "b": {}}
    for r in range(1, 21):
        host = 0.5 if r == 3 else 1.0  # one round at half speed, for all
        cells["a"][r] = 100 * host * rng.gauss(1, 0.02)
        cells["a:twin"][r] = 100 * host * rng.gauss(1, 0.02)
        cells["b"][r] = 105 * host * rng.gauss(1, 0.02)
    a = analyse_row({"lower": False, "cells": cells}, random.Random(1))
    assert a["twins"]["tied"], a["twins"]
    assert a["servers"]["b"]["rank"] == 1 and a["servers"]["b"]["rank_high"] == 1, a
    assert a["servers"]["b"]["half_width"] < 0.02, a["servers"]["b"]
    assert kendall_tau({"x": 1, "y": 2, "z": 3}, {"x": 1, "y": 2, "z": 3}) == 1.0
    assert kendall_tau({"x": 1, "y": 2}, {"x": 2, "y": 1}) == -1.0
    print("rankings: self-test passed")
    return 0


def main(argv):
    args = parse_args(argv)
    if args.check:
        return check()
    run, first = analyse(args.db, args.run, args.seed)
    if not first:
        print(f"run {run} of {args.db} has no row with two rounds and two servers", file=sys.stderr)
        return 2
    out = {"first": {"db": args.db, "run": run, "rows": first}}
    text = [report(args.db, run, first)]
    if args.against or args.against_run:
        db = args.against or args.db
        run2, second = analyse(db, args.against_run, args.seed)
        out["second"] = {"db": db, "run": run2, "rows": second}
        text += [report(db, run2, second), compare(first, second)]
    print(json.dumps(out, indent=1) if args.json else "\n\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
