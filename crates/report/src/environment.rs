//! A run's recorded environment as labelled rows: what the report lists, and
//! what `compare` checks for differences between two runs.

use serde::Serialize;

use crate::format::bytes;
use crate::model::RunInfo;

/// Keys that differ between runs by design, so a difference says nothing
/// (`work_seed` as older runs kept it, inside the environment).
const PER_RUN: &[&str] = &["work_seed", "work seed"];

/// One environment entry whose value is not the same in both runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvDifference {
    pub key: String,
    pub a: Option<String>,
    pub b: Option<String>,
}

impl EnvDifference {
    /// A side's value, or what to show where that run recorded none.
    pub fn shown(value: &Option<String>) -> &str {
        value.as_deref().unwrap_or("(not recorded)")
    }

    /// "cpu_model: AMD EPYC → Intel Xeon".
    pub fn describe(&self) -> String {
        let (a, b) = (Self::shown(&self.a), Self::shown(&self.b));
        format!("{}: {a} → {b}", self.key)
    }
}

/// `cpu_model`, `tools.go`, `placement.server`, ...: one nested level
/// flattened, values as plain text, sizes in binary units.
pub(crate) fn rows(run: &RunInfo) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    if let Some(env) = run.environment.as_object() {
        for (k, v) in env {
            match v.as_object() {
                Some(inner) => {
                    for (k2, v2) in inner {
                        rows.push((format!("{k}.{k2}"), plain(v2)));
                    }
                }
                None => match v.as_u64().filter(|_| k.ends_with("_bytes")) {
                    Some(n) => rows.push((k.clone(), format!("{} ({n})", bytes(n)))),
                    None => rows.push((k.clone(), plain(v))),
                },
            }
        }
    }
    if let Some(p) = run.placement.as_object() {
        for (k, v) in p {
            rows.push((format!("placement.{k}"), plain(v)));
        }
    }
    if let Some(n) = run.repetitions_override {
        rows.push((
            "repetitions".into(),
            format!("{n} (from the command line, in place of the suite file's)"),
        ));
    }
    if let Some(seed) = run.work_seed {
        rows.push(("work seed".into(), seed.to_string()));
    }
    if let Some(io) = &run.client_io {
        // In the differences too: a change of the client's backend changes
        // what a figure costs the client (issue 30).
        rows.push(("client I/O".into(), io.clone()));
    }
    rows
}

/// What differs between two runs' environments, in A's order and then B's
/// new keys: a comparison across machines, toolchains or commits is worth
/// knowing about before reading its verdicts.
pub(crate) fn differences(a: &RunInfo, b: &RunInfo) -> Vec<EnvDifference> {
    let (ra, rb) = (rows(a), rows(b));
    let find = |rows: &[(String, String)], key: &str| {
        rows.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    };
    let mut keys: Vec<&String> = ra.iter().map(|(k, _)| k).collect();
    for (k, _) in &rb {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out: Vec<EnvDifference> = Vec::new();
    // Cells of the same name measured under different suite files (other
    // durations, warm-ups, repetitions) are not quite the same measurement.
    if a.suite_toml != b.suite_toml {
        let same_name = a.suite == b.suite;
        out.push(EnvDifference {
            key: "suite file".into(),
            a: Some(a.suite.clone()),
            b: Some(if same_name {
                format!("{} (a different text)", b.suite)
            } else {
                b.suite.clone()
            }),
        });
    }
    out.extend(
        keys.into_iter()
            .filter(|k| !PER_RUN.contains(&k.as_str()))
            .filter_map(|k| {
                let (va, vb) = (find(&ra, k), find(&rb, k));
                (va != vb).then(|| EnvDifference {
                    key: k.clone(),
                    a: va,
                    b: vb,
                })
            }),
    );
    out
}

/// A JSON value as text, strings without quotes and terminal colour codes.
pub(crate) fn plain(v: &serde_json::Value) -> String {
    let s = match v.as_str() {
        Some(s) => s.to_string(),
        None => v.to_string(),
    };
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // ESC [ ... letter
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A run record with only its environment set, for tests.
    pub(crate) fn run(environment: serde_json::Value) -> RunInfo {
        RunInfo {
            id: 1,
            suite: "t".into(),
            status: "complete".into(),
            started_at: String::new(),
            finished_at: None,
            command: String::new(),
            environment,
            placement: json!({"server": [0], "client": [1]}),
            suite_toml: String::new(),
            repetitions_override: None,
            work_seed: None,
            notes: Vec::new(),
            measurements: 0,
            failed_measurements: 0,
            control_probe_ns: None,
            client_io: None,
        }
    }

    #[test]
    fn a_change_of_client_backend_is_a_difference() {
        let mut a = run(json!({}));
        let mut b = run(json!({}));
        a.client_io = Some("epoll".into());
        b.client_io = Some("io_uring".into());
        let d = differences(&a, &b);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].describe(), "client I/O: epoll → io_uring");
        b.client_io = Some("epoll".into());
        assert!(differences(&a, &b).is_empty());
    }

    #[test]
    fn strips_terminal_colours_from_tool_versions() {
        let v = json!("\u{1b}[1mApache Maven 3.8.7\u{1b}[m");
        assert_eq!(plain(&v), "Apache Maven 3.8.7");
    }

    #[test]
    fn differences_leave_out_the_per_run_seed_and_list_new_keys() {
        let a = run(json!({"cpu_model": "AMD EPYC", "memory_bytes": 1024,
                           "tools": {"go": "go1.26"}, "work_seed": 1}));
        let b = run(json!({"cpu_model": "Intel Xeon", "memory_bytes": 1024,
                           "tools": {"go": "go1.26", "gcc": "12.2.0"}, "work_seed": 2}));
        assert_eq!(
            differences(&a, &b),
            [
                EnvDifference {
                    key: "cpu_model".into(),
                    a: Some("AMD EPYC".into()),
                    b: Some("Intel Xeon".into()),
                },
                EnvDifference {
                    key: "tools.gcc".into(),
                    a: None,
                    b: Some("12.2.0".into()),
                },
            ]
        );
        assert!(differences(&a, &a).is_empty());
        // The typed seed differs by design too; a repetitions override is
        // a difference in what was measured.
        let (mut a2, mut b2) = (a.clone(), a.clone());
        a2.work_seed = Some(1);
        b2.work_seed = Some(2);
        assert!(differences(&a2, &b2).is_empty());
        b2.repetitions_override = Some(5);
        assert_eq!(
            differences(&a2, &b2)[0].describe(),
            "repetitions: (not recorded) → 5 (from the command line, in place of the suite file's)"
        );
        let mut longer = a.clone();
        longer.suite_toml = "repetitions = 5".into();
        assert_eq!(
            differences(&a, &longer)[0].describe(),
            "suite file: t → t (a different text)"
        );
        assert_eq!(
            rows(&a)[1],
            ("memory_bytes".into(), "1.00 KiB (1024)".into())
        );
    }
}
