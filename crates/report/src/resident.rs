//! Resident servers' figures (issue 43): for each server a run kept up,
//! what it did while it waited its turn (its CPU as a share of a core over
//! the waits long enough to judge, its memory at its first and last turn)
//! and whether it crashed, was started again or given up on, from the
//! run's stored server events. Built once into `Report::resident`; the
//! section `model/sections/resident.rs` lays it out.

use netbench_records::resident::JUDGED_WAIT_S;
use netbench_records::{RunDetail, ServerEvent, ServerEventKind};
use serde::Serialize;

/// One resident server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResidentRow {
    pub server: String,
    /// Its turns after the first: waits recorded.
    pub waits: u32,
    /// The median share of a core it used over its waits of
    /// [`JUDGED_WAIT_S`] or more; None without such a wait.
    pub idle_cores_median: Option<f64>,
    /// The largest such share.
    pub idle_cores_max: Option<f64>,
    /// Waits in which it spun (more than 5% of a core).
    pub spinning_waits: u32,
    /// Its process tree's memory when it started and at its last turn.
    pub rss_first_bytes: Option<u64>,
    pub rss_last_bytes: Option<u64>,
    pub crashes: u32,
    pub restarts: u32,
    /// The run stopped restarting it.
    pub gave_up: bool,
}

fn label(e: &ServerEvent) -> String {
    if e.variant.is_empty() {
        e.server.clone()
    } else {
        format!("{}:{}", e.server, e.variant)
    }
}

/// A row per server with events, in `columns` order (servers not in it
/// last, by name).
pub fn resident_rows(run: &RunDetail, columns: &[String]) -> Vec<ResidentRow> {
    let mut names: Vec<String> = Vec::new();
    for e in &run.events {
        let l = label(e);
        if !names.contains(&l) {
            names.push(l);
        }
    }
    names.sort_by_key(|n| {
        (
            columns.iter().position(|c| c == n).unwrap_or(usize::MAX),
            n.clone(),
        )
    });
    names
        .into_iter()
        .map(|name| {
            let mine: Vec<&ServerEvent> = run.events.iter().filter(|e| label(e) == name).collect();
            let of = |k: ServerEventKind| mine.iter().filter(|e| e.kind == k).count() as u32;
            let mut shares: Vec<f64> = mine
                .iter()
                .filter(|e| e.kind == ServerEventKind::Idle)
                .filter(|e| e.waited_s.is_some_and(|w| w >= JUDGED_WAIT_S))
                .filter_map(|e| e.idle_cores())
                .collect();
            shares.sort_by(f64::total_cmp);
            let rss = |e: &&ServerEvent| e.rss_bytes;
            ResidentRow {
                server: name,
                waits: of(ServerEventKind::Idle),
                idle_cores_median: netbench_stats::median(&shares),
                idle_cores_max: shares.last().copied(),
                spinning_waits: mine.iter().filter(|e| e.spinning()).count() as u32,
                rss_first_bytes: mine.iter().find_map(rss),
                rss_last_bytes: mine.iter().rev().find_map(rss),
                crashes: of(ServerEventKind::Crashed),
                restarts: of(ServerEventKind::Restarted),
                gave_up: of(ServerEventKind::GaveUp) > 0,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(server: &str, kind: ServerEventKind, waited: f64, cpu: f64, rss: u64) -> ServerEvent {
        ServerEvent {
            server: server.into(),
            variant: String::new(),
            round: 2,
            at: String::new(),
            kind,
            waited_s: Some(waited),
            cpu_s: Some(cpu),
            rss_bytes: Some(rss),
            detail: None,
        }
    }

    #[test]
    fn each_server_s_waits_crashes_and_memory_are_summed_up() {
        use ServerEventKind::*;
        let mut run = netbench_records::fixtures::run(1, "standard");
        run.events = vec![
            event("b", Started, 0.0, 0.0, 10),
            event("a", Started, 0.0, 0.0, 100),
            event("a", Idle, 100.0, 0.1, 110),
            event("a", Idle, 100.0, 30.0, 120),
            // Too short to judge: a JIT finishing after its cell.
            event("a", Idle, 0.1, 0.1, 130),
            event("b", Crashed, 0.0, 0.0, 0),
            event("b", Restarted, 0.0, 0.0, 20),
        ];
        let rows = resident_rows(&run, &["a".to_string()]);
        assert_eq!(rows.len(), 2);
        let a = &rows[0];
        assert_eq!(a.server, "a", "columns order first");
        assert_eq!(a.waits, 3);
        assert_eq!(a.idle_cores_max, Some(0.3));
        assert_eq!(a.spinning_waits, 1);
        assert_eq!(
            (a.rss_first_bytes, a.rss_last_bytes),
            (Some(100), Some(130))
        );
        let b = &rows[1];
        assert_eq!((b.crashes, b.restarts, b.gave_up), (1, 1, false));
        assert_eq!(b.idle_cores_median, None);
        assert!(resident_rows(&netbench_records::fixtures::run(2, "t"), &[]).is_empty());
    }
}
