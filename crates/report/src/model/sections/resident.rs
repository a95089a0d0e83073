//! The Resident servers section (issue 43): what each server the run kept
//! up did while it waited its turn, and its crashes and restarts, from
//! `Report::resident` (resident.rs builds it once from the server events).

use crate::format::bytes as format_bytes;
use crate::model::section::{CsvMetric, Section, Table, Value};
use crate::model::Report;

const LEGEND: &str = "Every server was kept up for the run, started at its first visit. \
    While it waited for its turn (other servers' cells ran on the same CPUs), its cgroup's CPU \
    was read at each visit: idle CPU is the share of a core it used over waits of 2 s or more \
    (median and most), and a wait above 5% of a core is counted as spinning: it took CPU from \
    the servers measured meanwhile. Memory: its process tree's RSS when it started and at its \
    last turn. A server found exited at its turn was started again and its cells of that round \
    failed; after three restarts the run gave up on it (docs/method.md).";

fn share(v: Option<f64>) -> Value {
    v.map_or(Value::Missing, |c| {
        Value::Text(format!("{:.2}%", c * 100.0))
    })
}

fn bytes(v: Option<u64>) -> Value {
    v.map_or(Value::Missing, |b| Value::Text(format_bytes(b)))
}

pub(super) fn section(r: &Report) -> Option<Section> {
    if r.resident.is_empty() {
        return None;
    }
    let mut table = Table::new(
        "",
        &[
            "server",
            "waits",
            "idle CPU (median)",
            "idle CPU (most)",
            "spinning waits",
            "memory at start",
            "memory at last turn",
            "crashes",
            "restarts",
        ],
    );
    let mut csv = Vec::new();
    let mut notes = Vec::new();
    for row in &r.resident {
        table.rows.push(vec![
            Value::Server(row.server.clone()),
            Value::Text(row.waits.to_string()),
            share(row.idle_cores_median),
            share(row.idle_cores_max),
            Value::Text(row.spinning_waits.to_string()),
            bytes(row.rss_first_bytes),
            bytes(row.rss_last_bytes),
            Value::Text(row.crashes.to_string()),
            Value::Text(if row.gave_up {
                format!("{} (given up)", row.restarts)
            } else {
                row.restarts.to_string()
            }),
        ]);
        if row.spinning_waits > 0 {
            notes.push(format!(
                "{} spun while it waited its turn ({} waits above 5% of a core, at most {:.0}%): \
                 the cells measured meanwhile shared the server CPUs with it",
                row.server,
                row.spinning_waits,
                row.idle_cores_max.unwrap_or(0.0) * 100.0
            ));
        }
        if row.crashes > 0 {
            notes.push(format!(
                "{} crashed {} time(s) while resident{}",
                row.server,
                row.crashes,
                if row.gave_up {
                    "; the run gave up on it"
                } else {
                    ""
                }
            ));
        }
        let metrics = [
            ("resident_idle_cores_max", "cores", row.idle_cores_max),
            ("resident_idle_cores_median", "cores", row.idle_cores_median),
            (
                "resident_spinning_waits",
                "waits",
                Some(f64::from(row.spinning_waits)),
            ),
            (
                "resident_rss_first",
                "bytes",
                row.rss_first_bytes.map(|b| b as f64),
            ),
            (
                "resident_rss_last",
                "bytes",
                row.rss_last_bytes.map(|b| b as f64),
            ),
            ("resident_crashes", "crashes", Some(f64::from(row.crashes))),
        ];
        for (metric, unit, value) in metrics {
            if let Some(value) = value {
                csv.push(CsvMetric {
                    test: None,
                    connections: None,
                    server: Some(row.server.clone()),
                    metric: metric.into(),
                    unit,
                    value,
                });
            }
        }
    }
    Some(Section {
        id: "resident",
        title: "Resident servers".into(),
        legend: LEGEND.into(),
        hover: None,
        notes,
        tables: vec![table],
        csv,
        failures: Vec::new(),
    })
}
