//! Progress of `netbench run` on stderr: what is built, verified and left
//! out, then one line per measurement with the matrix's ETA.

use std::io::Write;
use std::time::Instant;

use netbench_records::{ServerEvent, ServerEventKind};
use netbench_suite::{Event, Observer, Stopped};

use netbench_report::{first_line_safe, rest_lines_safe, terminal_safe, thousands};

pub(crate) struct ConsoleProgress {
    /// When the first measurement started: builds and verification before
    /// it would skew the time per measurement.
    started: Option<Instant>,
    /// Cells run in this process, for the ETA.
    cells_run: usize,
    /// What happened to resident servers during a cell, printed after its
    /// line.
    notes: Vec<String>,
}

impl ConsoleProgress {
    pub(crate) fn new() -> Self {
        ConsoleProgress {
            started: None,
            cells_run: 0,
            notes: Vec::new(),
        }
    }

    fn eta(&self, index: usize, total: usize) -> String {
        let Some(started) = self.started.filter(|_| self.cells_run > 0) else {
            return String::new();
        };
        let per_cell = started.elapsed().as_secs_f64() / self.cells_run as f64;
        let left = (total.saturating_sub(index)) as f64 * per_cell;
        format!(
            "  ETA {}m{:02}s",
            (left / 60.0) as u64,
            (left % 60.0) as u64
        )
    }
}

/// `█████░░░░░░░░░░░░░░░`: the share of the matrix done.
fn bar(done: usize, total: usize) -> String {
    const WIDTH: usize = 20;
    let filled = (done * WIDTH).checked_div(total).unwrap_or(0).min(WIDTH);
    format!("{}{}", "█".repeat(filled), "░".repeat(WIDTH - filled))
}

impl Observer for ConsoleProgress {
    fn event(&mut self, e: Event<'_>) {
        let mut err = std::io::stderr().lock();
        // Notes wait for the end of the cell's line.
        let e_is_cell_start = matches!(e, Event::CellStarted { .. } | Event::Server(_));
        let _ = match e {
            Event::Started {
                run,
                servers,
                cells,
                done_before,
                estimate,
            } => {
                let resumed = if done_before > 0 {
                    format!(", {done_before} already done")
                } else {
                    String::new()
                };
                let estimate = match estimate {
                    Some(d) => format!(
                        "; about {} of measuring, plus builds (the first ones may take \
                         minutes) and verification",
                        minutes(d)
                    ),
                    None => String::new(),
                };
                writeln!(
                    err,
                    "netbench run {run}: {servers} server variants, {cells} measurements{resumed}{estimate}"
                )
            }
            Event::Building { server } => write!(err, "build  {} ... ", terminal_safe(server)),
            Event::Built {
                seconds, cached, ..
            } => {
                if cached {
                    writeln!(err, "unchanged, skipped")
                } else {
                    writeln!(err, "{seconds:.1}s")
                }
            }
            Event::Excluded { server, reason } => writeln!(
                err,
                "LEFT OUT {}: {}",
                terminal_safe(server),
                first_line_safe(reason)
            )
            // A failed build's last output, which the first line announces.
            .and_then(|()| write!(err, "{}", rest_lines_safe(reason, "    | "))),
            Event::Verified {
                server,
                passed,
                warned,
                ready_s,
            } => {
                writeln!(err, "verify {}: {passed} checks passed, {warned} warned; ready in {ready_s:.2}s", terminal_safe(server))
            }
            Event::CellStarted { index, total, key } => {
                self.started.get_or_insert_with(Instant::now);
                write!(
                    err,
                    "[{}] {index:>3}/{total} {}{} {} c={} rep {} ... ",
                    bar(index - 1, total),
                    terminal_safe(&key.server),
                    if key.variant.is_empty() {
                        String::new()
                    } else {
                        format!(":{}", terminal_safe(&key.variant))
                    },
                    terminal_safe(&key.scenario),
                    key.connections,
                    key.repetition
                )
            }
            Event::CellFinished {
                index,
                total,
                result,
                facts,
                failure,
                ..
            } => {
                self.cells_run += 1;
                let eta = self.eta(index, total);
                let kind_line = facts.and_then(kind_summary);
                match (result, failure) {
                    (_, Some(f)) => {
                        writeln!(err, "FAILED: {}{eta}", first_line_safe(f))
                    }
                    _ if kind_line.is_some() => {
                        writeln!(err, "{}{eta}", kind_line.unwrap_or_default())
                    }
                    (Some(r), None) => writeln!(
                        err,
                        "{} req/s, p99 {:.2}ms{}{}{eta}",
                        thousands(r.rps.round() as u64),
                        r.latency.p99_ns / 1e6,
                        if r.errors.total() > 0 {
                            format!(", {} errors", r.errors.total())
                        } else {
                            String::new()
                        },
                        if r.verdict.client_bound {
                            ", client-bound"
                        } else {
                            ""
                        },
                    ),
                    (None, None) => writeln!(err, "done{eta}"),
                }
            }
            Event::Server(ev) => match server_note(ev) {
                Some(line) if ev.kind == ServerEventKind::Started => writeln!(err, "{line}"),
                Some(line) => {
                    self.notes.push(line);
                    Ok(())
                }
                None => Ok(()),
            },
            Event::AdaptiveRound { round, cells } => writeln!(
                err,
                "round {round}: {cells} measurements still too noisy to rank (95% interval wider than the target)"
            ),
            Event::AdaptiveStopped { stopped, unsettled } => {
                let why = match stopped {
                    Stopped::Settled => "every cell settled".to_string(),
                    Stopped::Budget => format!("time budget reached, {unsettled} cells unsettled"),
                    Stopped::Max => format!("most rounds reached, {unsettled} cells unsettled"),
                };
                writeln!(err, "adaptive repetitions: {why}")
            }
            Event::Finished { run, status } => writeln!(err, "run {run} {}", status.as_str()),
        };
        if !self.notes.is_empty() && !e_is_cell_start {
            for n in self.notes.drain(..) {
                let _ = writeln!(err, "{n}");
            }
        }
        let _ = err.flush();
    }
}

/// A line on a resident server's event worth a reader's notice: its start,
/// a crash and restart, and a wait in which it spun; None for a quiet wait.
fn server_note(ev: &ServerEvent) -> Option<String> {
    let who = if ev.variant.is_empty() {
        terminal_safe(&ev.server)
    } else {
        format!(
            "{}:{}",
            terminal_safe(&ev.server),
            terminal_safe(&ev.variant)
        )
    };
    let detail = ev
        .detail
        .as_deref()
        .map(first_line_safe)
        .unwrap_or_default();
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    Some(match ev.kind {
        ServerEventKind::Started => format!(
            "resident {who}: {detail}{}",
            ev.rss_bytes
                .map(|b| format!(", {:.1} MiB", mib(b)))
                .unwrap_or_default()
        ),
        ServerEventKind::Idle if ev.spinning() => format!(
            "    {who} used {:.0}% of a core while it waited {:.0} s for its turn (spinning: it \
             takes CPU from the servers measured meanwhile)",
            ev.idle_cores().unwrap_or(0.0) * 100.0,
            ev.waited_s.unwrap_or(0.0)
        ),
        ServerEventKind::Idle => return None,
        ServerEventKind::Crashed => format!("    {who} had exited: {detail}"),
        ServerEventKind::Restarted => format!("    {who} started again: {detail}"),
        ServerEventKind::GaveUp => format!("    {who}: no more restarts ({detail})"),
    })
}

/// `45 s`, `12 min`, `1 h 05 min`.
fn minutes(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=89 => format!("{s} s"),
        90..=3599 => format!("{} min", (s + 30) / 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600 + 30) / 60),
    }
}

/// One line on what a kind beyond throughput measured, for the progress
/// display; None for the kinds whose requests/s line says it.
fn kind_summary(facts: &netbench_suite::kinds::Facts) -> Option<String> {
    use netbench_suite::kinds::Facts;
    let ms = |ns: f64| ns / 1e6;
    Some(match facts {
        Facts::Idle(f) => {
            let levels: Vec<String> = f
                .levels
                .iter()
                .map(|l| {
                    let lost = if l.failed + l.closed_by_server > 0 {
                        format!(" ({} lost)", l.failed + l.closed_by_server)
                    } else {
                        String::new()
                    };
                    format!(
                        "{} held{lost}: {}, {} threads, {:.2} cores",
                        thousands(u64::from(l.open)),
                        netbench_report::bytes(l.pss_bytes),
                        l.threads,
                        l.cpu_cores_mean
                    )
                })
                .collect();
            let slope = f.pss_fit.map_or("no fit".to_string(), |fit| {
                format!("{:.1} KiB per idle connection", fit.slope / 1024.0)
            });
            format!("{slope}; {}", levels.join("; "))
        }
        Facts::Storm(s) => format!(
            "{} of {} answered in {:.2}s, {} connects/s, connect p99 {:.2}ms, {} refused, {} connect timeouts{}",
            thousands(s.answered),
            thousands(u64::from(s.clients)),
            s.all_done_s,
            thousands(s.connects_per_s.round() as u64),
            ms(s.connect.p99_ns),
            s.refused,
            s.connect_timeouts,
            if s.client_bound { ", client-bound" } else { "" }
        ),
        Facts::RateSweep(w) => format!(
            "peak {} req/s, knee {} (p99 under {:.0}ms)",
            thousands(w.peak_rps.round() as u64),
            w.knee_per_s
                .map_or("none".to_string(), |k| format!("{} req/s", thousands(k.round() as u64))),
            ms(w.slo_p99_ns)
        ),
        Facts::FixedRate(x) => format!(
            "{} of {} req/s offered, p99 {:.2}ms, server {}",
            thousands(x.achieved_per_s.round() as u64),
            thousands(x.offered_per_s.round() as u64),
            ms(x.p99_ns),
            x.server_cpu_us_per_request
                .map_or("CPU unknown".to_string(), |c| format!("{c:.1} µs CPU per request"))
        ),
        Facts::Hostile(h) => {
            let worst = h
                .attacks
                .iter()
                .map(|a| a.during.success_rate())
                .fold(h.baseline.success_rate(), f64::min);
            let crashes = h.attacks.iter().filter(|a| a.crashed.is_some()).count();
            format!(
                "{} attacks, worst success {:.1}%, {crashes} crash(es)",
                h.attacks.len(),
                worst * 100.0
            )
        }
        Facts::ShortLived(_) | Facts::Pipelined(_) => return None,
    })
}
