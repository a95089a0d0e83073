//! Replays the warm-up curves a run stored through the steady-state rule
//! with other settings, to choose a suite's `[warmup]` without measuring
//! again: for each cell, when the rule would have settled with each `span`
//! (in windows), and the level there (median of the last 4 windows) as a
//! share of the level where the stored curve ends. A curve stops where the
//! run's own rule settled, so only spans that settle sooner can be judged.
//!
//!     cargo run --release -p netbench-suite --example steady_replay -- STORE RUN [SPAN...]

use std::path::Path;

use netbench_suite::steady::{Decision, SteadyConfig, SteadyDetector};
use netbench_suite::store::Store;

fn level(curve: &[f64]) -> f64 {
    let mut last: Vec<f64> = curve.iter().rev().take(4).copied().collect();
    last.sort_by(f64::total_cmp);
    last[last.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: steady_replay STORE RUN [SPAN_WINDOWS...]");
        std::process::exit(2);
    }
    let store = Store::open_existing(Path::new(&args[0])).expect("a netbench store");
    let run = store
        .run(args[1].parse().expect("a run id"))
        .expect("the run");
    let spans: Vec<usize> = args[2..]
        .iter()
        .map(|s| s.parse().expect("a span"))
        .collect();
    let mut saved = vec![0.0; spans.len()];
    for m in &run.measurements {
        let Some(w) = &m.warmup else { continue };
        let end = level(&w.curve);
        let mut line = format!(
            "{:22} {:5} r{} stored {:5.1} s",
            format!(
                "{}{}",
                m.key.server,
                if m.key.variant.is_empty() {
                    String::new()
                } else {
                    format!(":{}", m.key.variant)
                }
            ),
            m.key.scenario,
            m.key.repetition,
            w.curve.len() as f64 * w.window_s
        );
        for (i, &span) in spans.iter().enumerate() {
            let mut cfg = SteadyConfig {
                window: std::time::Duration::from_secs_f64(w.window_s),
                ..SteadyConfig::default()
            };
            cfg.min_windows = 4;
            cfg.trend_span = span.max(cfg.min_windows);
            let mut d = SteadyDetector::new(cfg);
            let mut at = w.curve.len();
            for (k, &rps) in w.curve.iter().enumerate() {
                if let Decision::Settled { .. } = d.push(rps) {
                    at = k + 1;
                    break;
                }
            }
            let share = level(&w.curve[..at]) / end;
            saved[i] += (w.curve.len() - at) as f64 * w.window_s;
            line += &format!(
                " | span {span}: {:5.1} s at {:4.2}",
                at as f64 * w.window_s,
                share
            );
        }
        println!("{line}");
    }
    for (span, s) in spans.iter().zip(&saved) {
        println!("span {span}: {s:.0} s of warm-up fewer over the run");
    }
}
