//! Warm-up before a measured window (issue 28): the suite's `[warmup]` table,
//! and the warm phase that follows a run's warm-up in short windows until
//! its throughput has settled (the rule is `steady.rs`'s) or a cap is
//! reached, then starts the measured window on the same connections. What
//! the phase saw becomes the cell's [`WarmUp`] record: its curve, when it
//! settled, and the class of the curve.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use netbench_engine::RunControl;

use crate::kinds::sleep_until;
use serde::Deserialize;

use crate::steady::{classify, Decision, SteadyConfig, SteadyDetector};
use crate::store::{ProcessUse, WarmUp};

/// How a suite warms its servers before each measured window.
#[derive(Debug, Clone, PartialEq)]
pub struct Warm {
    /// Warm in windows until steady (None: only each scenario's fixed
    /// `warmup`, inside the measured run, as before issue 28).
    pub until_steady: Option<SteadyConfig>,
    /// The rule for a fresh process of a runtime that compiles while it
    /// runs (a manifest's `jit`): the whole trend look-back before it may
    /// settle, with the suite's `jit_span` and `jit_cap` (see
    /// [`jit_rule`]). None when not warming until steady.
    pub jit_fresh: Option<SteadyConfig>,
    /// The first cell of a fresh process warms at least this long, so that
    /// the start-up figures (throughput over the first 1 s and 10 s) have
    /// the curve they read.
    pub startup: Duration,
    /// One process per cell, one per server and round, or one per server
    /// for the whole run.
    pub process: ProcessScope,
    /// With resident servers: after its first visit, a JIT runtime's cell
    /// is re-warmed at least this long before its window (the scenario's
    /// `warmup` when longer). A JVM that waited a minute for its turn runs
    /// at 0.6 to 0.8 of its level for about a second
    /// (bench/resident_rewarm.py; docs/method.md).
    pub jit_rewarm: Duration,
}

/// How long a server process serves (a suite's `[warmup] process`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessScope {
    /// A fresh process for every cell (`"cell"`): start-up studies.
    Cell,
    /// One process serves a server's warming cells of a round (`"round"`).
    Round,
    /// Resident (`"run"`): every server and variant is started once, warmed
    /// once, and kept up while every round visits its cells in a fresh
    /// random order (`resident.rs`, `rounds.rs`).
    Run,
}

impl Default for Warm {
    fn default() -> Self {
        Warm {
            until_steady: None,
            jit_fresh: None,
            startup: Duration::ZERO,
            process: ProcessScope::Cell,
            jit_rewarm: Duration::ZERO,
        }
    }
}

/// The suite file's `[warmup]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWarm {
    #[serde(default)]
    until: Option<String>,
    #[serde(default)]
    window: Option<String>,
    #[serde(default)]
    min: Option<String>,
    #[serde(default)]
    cap: Option<String>,
    #[serde(default)]
    span: Option<String>,
    #[serde(default)]
    jit_span: Option<String>,
    #[serde(default)]
    jit_cap: Option<String>,
    #[serde(default)]
    startup: Option<String>,
    #[serde(default)]
    process: Option<String>,
    #[serde(default)]
    jit_rewarm: Option<String>,
}

impl RawWarm {
    /// Checks the table; `Err` says what is wrong and how to write it.
    pub(crate) fn resolve(self) -> Result<Warm, String> {
        let duration = |field: &str, v: &Option<String>| -> Result<Option<Duration>, String> {
            v.as_deref()
                .map(|s| {
                    crate::suite::parse_duration(s)
                        .map_err(|e| format!("[warmup] `{field} = \"{s}\"`: {e}"))
                })
                .transpose()
        };
        let window = duration("window", &self.window)?;
        let min = duration("min", &self.min)?;
        let cap = duration("cap", &self.cap)?;
        let span = duration("span", &self.span)?;
        let jit_span = duration("jit_span", &self.jit_span)?;
        let jit_cap = duration("jit_cap", &self.jit_cap)?;
        let mut jit_fresh = None;
        let until_steady = match self.until.as_deref() {
            None | Some("fixed") => {
                let steady_only = [window, min, cap, span, jit_span, jit_cap];
                if steady_only.iter().any(Option::is_some) {
                    return Err("[warmup] `window`, `min`, `span`, `cap`, `jit_span` and \
                                `jit_cap` go with `until = \"steady\"`"
                        .into());
                }
                None
            }
            Some("steady") => {
                let mut cfg = SteadyConfig::default();
                if let Some(w) = window {
                    if w < Duration::from_millis(100) {
                        return Err("[warmup] `window` must be at least 100ms: shorter windows \
                                    hold too few answers to judge"
                            .into());
                    }
                    cfg.window = w;
                }
                let windows = |d: Duration| (d.as_secs_f64() / cfg.window.as_secs_f64()).ceil();
                if let Some(m) = min {
                    cfg.min_windows = (windows(m) as usize).max(3);
                }
                if let Some(c) = cap {
                    cfg.cap = windows(c) as usize;
                }
                // The stretch the trend test looks back over (steady.rs,
                // rule 2): longer keeps a slow JIT tail warming, shorter
                // settles an early plateau sooner.
                if let Some(sp) = span {
                    cfg.trend_span = windows(sp) as usize;
                }
                cfg.check().map_err(|e| format!("[warmup]: {e}"))?;
                let rule = jit_rule(
                    &cfg,
                    jit_span.map(|d| windows(d) as usize),
                    jit_cap.map(|d| windows(d) as usize),
                );
                if rule.cap < cfg.cap {
                    return Err("[warmup] `jit_cap` must be at least `cap`: it only ever \
                                adds warm-up"
                        .into());
                }
                rule.check()
                    .map_err(|e| format!("[warmup] jit_span/jit_cap: {e}"))?;
                jit_fresh = Some(rule);
                Some(cfg)
            }
            Some(other) => {
                return Err(format!(
                    "[warmup] `until = \"{other}\"`: use \"steady\" (warm in windows until the \
                     throughput settles) or \"fixed\" (each scenario's `warmup` only)"
                ))
            }
        };
        let process = match self.process.as_deref() {
            None | Some("cell") => ProcessScope::Cell,
            Some("round") => ProcessScope::Round,
            Some("run") => ProcessScope::Run,
            Some(other) => {
                return Err(format!(
                    "[warmup] `process = \"{other}\"`: use \"cell\" (a fresh server process for \
                     every cell), \"round\" (one process serves a server's throughput cells of \
                     a round) or \"run\" (every server resident for the whole run)"
                ))
            }
        };
        let jit_rewarm = duration("jit_rewarm", &self.jit_rewarm)?;
        if jit_rewarm.is_some() && process != ProcessScope::Run {
            return Err(
                "[warmup] `jit_rewarm` goes with `process = \"run\"` (resident servers)".into(),
            );
        }
        Ok(Warm {
            until_steady,
            jit_fresh,
            startup: duration("startup", &self.startup)?.unwrap_or_default(),
            process,
            jit_rewarm: jit_rewarm.unwrap_or_default(),
        })
    }
}

/// How one cell warms on its measured run's own connections.
#[derive(Debug, Clone, Copy)]
pub struct WarmIn<'a> {
    /// The suite's settings: window, cap, and the classification.
    pub cfg: &'a SteadyConfig,
    /// What settles this cell: the suite's rule, or [`Warm::jit_fresh`].
    pub rule: SteadyConfig,
    /// Warm at least this long even once settled: the suite's `startup`
    /// (the start-up figures), or the manifest's `warm_min`.
    pub at_least: Duration,
    /// The start-up time of a fresh process (None for one that served cells
    /// before).
    pub fresh_ready: Option<Duration>,
    /// From the process's start to the cell's.
    pub since_start: Duration,
}

impl WarmIn<'_> {
    /// The longest the engine's warm-up may last: the rule's cap (or
    /// `at_least`) and a window to spare; [`follow`] ends it sooner.
    pub fn longest(&self) -> Duration {
        self.cfg
            .window
            .mul_f64(self.rule.cap as f64)
            .max(self.at_least)
            + self.cfg.window
    }
}

/// Follows a running engine's warm-up (a plan whose warm-up is
/// [`WarmIn::longest`]) in windows of `cfg.window` until the throughput
/// settles by the rule or the cap is reached, and at least `at_least`; then
/// ends the warm-up, so that the run measures at once on the connections it
/// warmed (a new set of connections cost the Netty-based servers 15 to 20%
/// of their warm level, bench/jvm_warm.py, 2026-11-26). Returns when the
/// measured window begins (None when the engine ended first) and what the
/// warm-up saw. `done` is set when the engine has ended; `cancel` when the
/// run is cancelled or the cell's time is up.
pub fn follow(
    control: &RunControl,
    warm: &WarmIn<'_>,
    cancel: &AtomicBool,
    done: &AtomicBool,
) -> (Option<Instant>, Result<WarmUp, String>) {
    let cfg = warm.cfg;
    let mut detector = SteadyDetector::new(warm.rule);
    let mut settled_at: Option<usize> = None;
    let mut capped = false;
    let started = loop {
        if let Some(s) = control.progress.started() {
            break Some(s);
        }
        if done.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let Some(started) = started else {
        return (None, Err("the load ended before it started".into()));
    };
    let mut last = 0u64;
    let mut k = 1u32;
    loop {
        let stop = || cancel.load(Ordering::Relaxed) || done.load(Ordering::Relaxed);
        if !sleep_until(started + cfg.window * k, stop) {
            break;
        }
        let now = control.progress.snapshot().answered;
        let rps = (now - last) as f64 / cfg.window.as_secs_f64();
        last = now;
        let decision = detector.push(rps);
        if settled_at.is_none() {
            match decision {
                Decision::Settled { windows } => settled_at = Some(windows),
                Decision::CapReached => capped = true,
                Decision::KeepWarming => {}
            }
        }
        if (settled_at.is_some() || capped) && cfg.window * k >= warm.at_least {
            break;
        }
        k += 1;
    }
    // A moment ahead, so that every worker switches at the same instant.
    let at = Instant::now() + Duration::from_millis(30);
    let begin = control.end_warmup_at(at).then_some(at);
    if cancel.load(Ordering::Relaxed) {
        return (begin, Err("cancelled".into()));
    }
    if last == 0 {
        return (begin, Err("no answer while warming up".into()));
    }
    let curve = detector.curve().to_vec();
    let mut state = classify(&curve, cfg);
    // A curve the online rule settled within twice its minimum is too short
    // for the classifier's segments (it needs `min_windows` in the last
    // one, outliers dropped) and would read as no steady state; the rule
    // itself found no trend and a bounded spread over all of it, which is
    // what flat means.
    if settled_at.is_some() && curve.len() < 2 * cfg.min_windows {
        state.class = crate::steady::SteadyClass::Flat;
    }
    let warmup = WarmUp {
        process: if warm.fresh_ready.is_some() {
            ProcessUse::Fresh
        } else {
            ProcessUse::Reused
        },
        ready_s: warm.fresh_ready.map(|d| d.as_secs_f64()),
        since_start_s: warm.since_start.as_secs_f64(),
        window_s: cfg.window.as_secs_f64(),
        settled_s: settled_at.map(|w| (cfg.window * w as u32).as_secs_f64()),
        capped: settled_at.is_none(),
        class: state.class.as_str().to_string(),
        steady_from_s: state
            .steady_from
            .map(|w| (cfg.window * w as u32).as_secs_f64()),
        curve,
    };
    (begin, Ok(warmup))
}

/// The rule a fresh process of a runtime that compiles while it runs (a
/// manifest's `jit`) settles by: not on less than the trend test's whole
/// look-back (`span`, or the suite's `jit_span`), within `cap` (or
/// `jit_cap`). Such a process can sit on a flat start-up plateau for
/// seconds before its compiled code takes over, and a trend test over 4 s
/// of that plateau sees no trend: java-spring settled at 4 s at 2,000
/// requests/s that way, a fifth of its level 20 s later (bench/jvm_warm.py,
/// 2026-11-26). Not every fresh process: a native server's flat curve is
/// flat, and the look-back for each of them would cost `make run` about 4.5
/// minutes. A process that served a cell before has had its look-back.
fn jit_rule(cfg: &SteadyConfig, span: Option<usize>, cap: Option<usize>) -> SteadyConfig {
    let mut rule = *cfg;
    rule.trend_span = span.unwrap_or(cfg.trend_span).max(cfg.min_windows);
    rule.cap = cap.unwrap_or(cfg.cap);
    rule.min_windows = cfg.min_windows.max(rule.trend_span.min(rule.cap));
    rule
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Warm, String> {
        let raw: RawWarm = toml::from_str(text).map_err(|e| e.to_string())?;
        raw.resolve()
    }

    #[test]
    fn an_absent_table_keeps_the_fixed_warm_up_and_fresh_processes() {
        assert_eq!(parse("").unwrap(), Warm::default());
        assert_eq!(parse("until = \"fixed\"").unwrap(), Warm::default());
    }

    #[test]
    fn steady_takes_its_window_minimum_and_cap_in_windows() {
        let w = parse(
            "until = \"steady\"\nwindow = \"500ms\"\nmin = \"2s\"\ncap = \"30s\"\nspan = \"10s\"\nstartup = \"10s\"\nprocess = \"round\"",
        )
        .unwrap();
        let cfg = w.until_steady.unwrap();
        assert_eq!(cfg.window, Duration::from_millis(500));
        assert_eq!(cfg.min_windows, 4);
        assert_eq!(cfg.cap, 60);
        assert_eq!(cfg.trend_span, 20);
        assert_eq!(w.startup, Duration::from_secs(10));
        assert_eq!(w.process, ProcessScope::Round);
    }

    #[test]
    fn a_fresh_jit_process_settles_on_no_less_than_the_whole_look_back() {
        let w = parse(
            "until = \"steady\"\nwindow = \"500ms\"\nmin = \"2s\"\ncap = \"35s\"\nspan = \"10s\"",
        )
        .unwrap();
        let (cfg, jit) = (w.until_steady.unwrap(), w.jit_fresh.unwrap());
        assert_eq!((cfg.min_windows, jit.min_windows), (4, 20));
        assert_eq!((jit.trend_span, jit.cap), (20, 70));
        // Its own look-back and cap.
        let w = parse("until = \"steady\"\nwindow = \"500ms\"\ncap = \"35s\"\nspan = \"10s\"\njit_span = \"20s\"\njit_cap = \"60s\"").unwrap();
        let jit = w.jit_fresh.unwrap();
        assert_eq!((jit.min_windows, jit.trend_span, jit.cap), (40, 40, 120));
        // Never past the cap.
        let short = parse("until = \"steady\"\nwindow = \"500ms\"\ncap = \"3s\"").unwrap();
        assert_eq!(short.jit_fresh.unwrap().min_windows, 6);
        // A flat start-up plateau of 4 s settles the suite's rule, not a
        // fresh jit process's.
        let plateau = [
            2000.0, 2100.0, 1950.0, 2050.0, 2000.0, 2080.0, 1990.0, 2020.0,
        ];
        let w = parse(
            "until = \"steady\"\nwindow = \"500ms\"\nmin = \"2s\"\ncap = \"35s\"\nspan = \"10s\"",
        )
        .unwrap();
        for (rule, settles) in [
            (w.until_steady.unwrap(), true),
            (w.jit_fresh.unwrap(), false),
        ] {
            let mut d = SteadyDetector::new(rule);
            let last = plateau.iter().map(|&r| d.push(r)).last().unwrap();
            assert_eq!(
                matches!(last, Decision::Settled { .. }),
                settles,
                "{rule:?}"
            );
        }
    }

    #[test]
    fn bad_tables_say_what_to_write() {
        for (text, says) in [
            ("until = \"forever\"", "use \"steady\""),
            ("window = \"1s\"", "go with `until = \"steady\"`"),
            ("span = \"10s\"", "go with `until = \"steady\"`"),
            ("jit_cap = \"60s\"", "go with `until = \"steady\"`"),
            (
                "until = \"steady\"\ncap = \"30s\"\njit_cap = \"20s\"",
                "at least `cap`",
            ),
            ("until = \"steady\"\nwindow = \"10ms\"", "at least 100ms"),
            ("until = \"steady\"\ncap = \"soon\"", "not a duration"),
            ("process = \"server\"", "use \"cell\""),
            ("colour = \"red\"", "unknown field"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
