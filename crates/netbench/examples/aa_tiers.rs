//! The A/A check of the table's tiers (issue 28) on stored runs: rows in
//! which every "server" is really the same one, tiered exactly as the table
//! tiers its rows (the same figures, normalised by the machine-speed
//! control when the row is, noisy cells left out). A correct method splits
//! at most about alpha (5%) of such rows.
//!
//! Two kinds of A/A row, from each cell with at least 4 good repetitions:
//! - within a run: its odd repetitions against its even ones (rounds are
//!   interleaved across servers, so they are two "servers" measured turn
//!   about, as the servers of one row are);
//! - across runs, for each pair of the runs given: the cell's repetitions in
//!   one run against those in the other (harder: the machine may move
//!   between runs, which the table never has to absorb).
//!
//! It also prints how many tiers each real row of each run got, so a method
//! that never splits anything is seen for what it is.
//!
//!     cargo run --release -p netbench --example aa_tiers -- STORE RUN [RUN...]
//!
//! `python3 bench/aa_check.py --tiers` runs the `aa` suite and this.

use std::collections::BTreeMap;
use std::path::Path;

use netbench_report::tiers::{aa_splits, tiers, TierConfig};
use netbench_report::{run_table, RunTable};
use netbench_suite::store::Store;

/// A cell's key in a run's table: scenario, connections, server label.
type Key = (String, u32, String);

/// The usable repetitions of each cell (requests/s).
fn usable(table: &RunTable) -> BTreeMap<Key, Vec<f64>> {
    table
        .cells
        .iter()
        .filter(|(_, c)| !c.noisy())
        .map(|(k, c)| (k.clone(), c.rps_values.clone()))
        .filter(|(_, v)| !v.is_empty())
        .collect()
}

fn name(k: &Key) -> String {
    format!("{} {}@{}", k.2, k.0, k.1)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: aa_tiers STORE RUN [RUN...]");
        std::process::exit(2);
    }
    let store = match Store::open_existing(Path::new(&args[0])) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("aa_tiers: {e}");
            std::process::exit(2);
        }
    };
    let mut runs: Vec<(i64, RunTable)> = Vec::new();
    for a in &args[1..] {
        let Ok(id) = a.parse::<i64>() else {
            eprintln!("aa_tiers: `{a}` is not a run id");
            std::process::exit(2);
        };
        match store.run(id) {
            Ok(r) => runs.push((id, run_table(&r))),
            Err(e) => {
                eprintln!("aa_tiers: run {id}: {e}");
                std::process::exit(2);
            }
        }
    }
    let cfg = TierConfig::default();
    let one = |row: Vec<Vec<f64>>| {
        tiers(
            &row.iter().map(|v| Some(v.as_slice())).collect::<Vec<_>>(),
            &cfg,
        )
        .count
    };

    println!("real rows (for scale: the method does split what differs)");
    for (id, table) in &runs {
        for (scenario, conns) in &table.rows {
            let row: Vec<Vec<f64>> = usable(table)
                .into_iter()
                .filter(|(k, _)| &k.0 == scenario && k.1 == *conns)
                .map(|(_, v)| v)
                .collect();
            println!(
                "  run {id} {scenario}@{conns}: {} servers in {} tiers",
                row.len(),
                one(row.clone())
            );
        }
    }

    println!("A/A within a run: odd repetitions against even ones");
    let mut within = Vec::new();
    for (id, table) in &runs {
        for (k, v) in usable(table) {
            if v.len() < 4 {
                continue;
            }
            let odd: Vec<f64> = v.iter().step_by(2).copied().collect();
            let even: Vec<f64> = v.iter().skip(1).step_by(2).copied().collect();
            let row = vec![odd, even];
            let n = one(row.clone());
            println!(
                "  run {id} {}: {}",
                name(&k),
                if n > 1 { "SPLIT" } else { "one tier" }
            );
            within.push(row);
        }
    }

    println!("A/A across runs: a cell's repetitions in one run against another's");
    let mut across = Vec::new();
    for (i, (ia, a)) in runs.iter().enumerate() {
        for (ib, b) in &runs[i + 1..] {
            let (ua, ub) = (usable(a), usable(b));
            for (k, va) in &ua {
                let Some(vb) = ub.get(k) else { continue };
                if va.len() < 2 || vb.len() < 2 {
                    continue;
                }
                let n = one(vec![va.clone(), vb.clone()]);
                println!(
                    "  runs {ia}/{ib} {}: {}",
                    name(k),
                    if n > 1 { "SPLIT" } else { "one tier" }
                );
                across.push(vec![va.clone(), vb.clone()]);
            }
        }
    }

    let w = aa_splits(&within, &cfg);
    let x = aa_splits(&across, &cfg);
    println!(
        "within runs: {} of {} A/A rows split ({:.0}%); across runs: {} of {} ({:.0}%); \
         the method's error rate: alpha {:.0}% per row, smallest gap {:.0}%",
        w.split,
        w.rows,
        100.0 * w.rate(),
        x.split,
        x.rows,
        100.0 * x.rate(),
        100.0 * cfg.alpha,
        100.0 * cfg.min_gap
    );
}
