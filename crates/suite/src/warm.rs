//! Warm-up before a measured window (issue 28): the suite's `[warmup]` table,
//! and the warm phase that loads a server in short windows until its
//! throughput has settled (the rule is `steady.rs`'s) or a cap is reached.
//! What the phase saw becomes the cell's [`WarmUp`] record: its curve, when
//! it settled, and the class of the curve.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netbench_engine::{LoadPlan, RunControl, Stop};
use serde::Deserialize;

use crate::steady::{classify, Decision, SteadyConfig, SteadyDetector};
use crate::store::{ProcessUse, WarmUp};

/// How a suite warms its servers before each measured window.
#[derive(Debug, Clone, PartialEq)]
pub struct Warm {
    /// Warm in windows until steady (None: only each scenario's fixed
    /// `warmup`, inside the measured run, as before issue 28).
    pub until_steady: Option<SteadyConfig>,
    /// The first cell of a fresh process warms at least this long, so that
    /// the start-up figures (throughput over the first 1 s and 10 s) have
    /// the curve they read.
    pub startup: Duration,
    /// One process per cell, or one per server and round.
    pub process: ProcessUse,
}

impl Default for Warm {
    fn default() -> Self {
        Warm {
            until_steady: None,
            startup: Duration::ZERO,
            process: ProcessUse::Fresh,
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
    startup: Option<String>,
    #[serde(default)]
    process: Option<String>,
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
        let until_steady = match self.until.as_deref() {
            None | Some("fixed") => {
                if window.is_some() || min.is_some() || cap.is_some() || span.is_some() {
                    return Err(
                        "[warmup] `window`, `min`, `span` and `cap` go with `until = \"steady\"`"
                            .into(),
                    );
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
            None | Some("cell") => ProcessUse::Fresh,
            Some("round") => ProcessUse::Reused,
            Some(other) => {
                return Err(format!(
                    "[warmup] `process = \"{other}\"`: use \"cell\" (a fresh server process for \
                     every cell) or \"round\" (one process serves a server's throughput cells of \
                     a round)"
                ))
            }
        };
        Ok(Warm {
            until_steady,
            startup: duration("startup", &self.startup)?.unwrap_or_default(),
            process,
        })
    }
}

/// Loads the server with `plan` (its stop and warm-up replaced) in windows
/// of `cfg.window` until the throughput settles or `cfg.cap` windows have
/// passed, and at least `at_least`. `cancel` ends it early (the run's
/// cancel or the cell's time limit). `fresh_ready` is the start-up time of
/// a fresh process (None for one that served cells before).
pub fn warm_until_steady(
    plan: &LoadPlan,
    cfg: &SteadyConfig,
    at_least: Duration,
    cancel: &Arc<AtomicBool>,
    fresh_ready: Option<Duration>,
    since_start: Duration,
) -> Result<WarmUp, String> {
    let mut plan = plan.clone();
    plan.warmup = Duration::ZERO;
    let longest = cfg.window.mul_f64(cfg.cap as f64).max(at_least) + cfg.window;
    plan.stop = Stop::After(longest);
    let control = RunControl::new(&plan);
    let stop_engine = Arc::clone(&control.cancel);
    let mut detector = SteadyDetector::new(*cfg);
    let mut settled_at: Option<usize> = None;
    let mut capped = false;
    let outcome = std::thread::scope(|scope| {
        let engine = scope.spawn(|| netbench_engine::run(&plan, &control));
        let started = loop {
            if let Some(s) = control.progress.started() {
                break Some(s);
            }
            if engine.is_finished() {
                break None;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        if let Some(started) = started {
            let mut last = 0u64;
            let mut k = 1u32;
            loop {
                let due = started + cfg.window * k;
                if !sleep_until(due, cancel, &engine) {
                    break;
                }
                let now = control.progress.snapshot().requests;
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
                let long_enough = cfg.window * k >= at_least;
                if (settled_at.is_some() || capped) && long_enough {
                    break;
                }
                k += 1;
            }
        }
        stop_engine.store(true, Ordering::Relaxed);
        engine.join()
    });
    let result = match outcome {
        Ok(r) => r.map_err(|e| format!("the warm-up load could not run: {e}"))?,
        Err(_) => return Err("the warm-up load panicked".into()),
    };
    if cancel.load(Ordering::Relaxed) {
        return Err("cancelled".into());
    }
    if result.requests == 0 {
        return Err(format!(
            "no answer while warming up ({} errors)",
            result.errors.total()
        ));
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
    Ok(WarmUp {
        process: if fresh_ready.is_some() {
            ProcessUse::Fresh
        } else {
            ProcessUse::Reused
        },
        ready_s: fresh_ready.map(|d| d.as_secs_f64()),
        since_start_s: since_start.as_secs_f64(),
        window_s: cfg.window.as_secs_f64(),
        settled_s: settled_at.map(|w| (cfg.window * w as u32).as_secs_f64()),
        capped: settled_at.is_none(),
        class: state.class.as_str().to_string(),
        steady_from_s: state
            .steady_from
            .map(|w| (cfg.window * w as u32).as_secs_f64()),
        curve,
    })
}

/// Sleeps until `t`; false when the run was cancelled or the engine ended
/// first.
fn sleep_until<T>(
    t: Instant,
    cancel: &AtomicBool,
    engine: &std::thread::ScopedJoinHandle<'_, T>,
) -> bool {
    loop {
        if cancel.load(Ordering::Relaxed) || engine.is_finished() {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(5)));
    }
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
        assert_eq!(w.process, ProcessUse::Reused);
    }

    #[test]
    fn bad_tables_say_what_to_write() {
        for (text, says) in [
            ("until = \"forever\"", "use \"steady\""),
            ("window = \"1s\"", "go with `until = \"steady\"`"),
            ("span = \"10s\"", "go with `until = \"steady\"`"),
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
