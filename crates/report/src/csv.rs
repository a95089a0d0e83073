//! The report as CSV in long format: one row per repetition and metric,
//! ready for a spreadsheet's pivot table or a data frame, failed repetitions
//! included (as metric `failed`). The kinds add their facts as further
//! metrics (`idle_pss_per_connection`, `storm_all_done`, `sweep_knee`,
//! `fixed_server_cpu_per_request`, ...).
//!
//! Figures of a whole cell, a server or the run follow the repetitions, with
//! the fields they are not about left empty: a cell's `tier` (repetition
//! empty), a server's start-up (`startup_ready`, `startup_first_1s_requests_per_s`,
//! ..., with test, connections and repetition empty; the throughput figures'
//! cell is named by `startup_from_connections` and the test field), and the
//! run's process mode (`process_fixed`, `process_fresh` or `process_reused`,
//! every name field but the run's and suite's empty).
//!
//! The `protocol` column (after `test`) says what carried the test's
//! requests (h1, tls, h2, h2c, grpc), on every row with a test. The
//! protocols section's rows (issue 32) are the cell's metrics
//! `vs_h1_ratio` (its median requests/s over the same server's HTTP/1.1
//! cell's), `vs_h1_change_ci95_low` and `_high` (the interval of the
//! change) and `vs_h1_told_apart`, with `vs_h2c_` in place of `vs_h1_` for
//! gRPC against JSON over h2c.
//!
//! Each probed server's conformance (issue 33) is two rows with only the
//! server named: `conformance_passed` and `conformance_total` (cases).
//!
//! The figures over rounds (issue 43), repetition empty: each cell's
//! `rps_median`, `relative`, `rank`, `ratio_to_next` (and each with
//! `_ci95_low` and `_ci95_high`), `ratio_to_next_told_apart`, each A/A
//! twin's `twin_ratio` and `twin_tied` (named by the twin), and the fixed
//! rate's `fixed_cpu_per_request_median`, `fixed_p99_median` and
//! `fixed_rank` with their intervals.

use std::io::{self, Write};

use crate::kinds::facts_metrics;
use crate::model::{RepetitionFigures, Report};
use crate::protocols::ProtocolRow;
use crate::startup::ServerStartUp;

/// The metrics of a good repetition: name, unit, value.
fn metrics(f: &RepetitionFigures) -> Vec<(String, &'static str, f64)> {
    let mut m = vec![
        ("requests_per_s".to_string(), "1/s", f.rps),
        ("requests".into(), "count", f.requests as f64),
        (
            "errors".into(),
            "count",
            f.errors.values().sum::<u64>() as f64,
        ),
        ("latency_mean".into(), "ns", f.latency_mean_ns),
        ("latency_p50".into(), "ns", f.latency_p50_ns),
        ("latency_p90".into(), "ns", f.latency_p90_ns),
        ("latency_p99".into(), "ns", f.latency_p99_ns),
        ("latency_p99.9".into(), "ns", f.latency_p999_ns),
        ("latency_p99.99".into(), "ns", f.latency_p9999_ns),
        ("latency_max".into(), "ns", f.latency_max_ns),
        ("client_cpu".into(), "s", f.client_cpu_s),
        (
            "connections_in_flight".into(),
            "count",
            f.achieved_concurrency,
        ),
        (
            "client_bound".into(),
            "bool",
            if f.client_bound { 1.0 } else { 0.0 },
        ),
    ];
    for (kind, n) in &f.errors {
        m.push((format!("errors_{kind}"), "count", *n as f64));
    }
    if let Some(p) = f.probe_server_ns {
        m.push(("machine_probe_server".into(), "ns", p));
    }
    if let Some(p) = f.probe_loopback_ns {
        m.push(("machine_probe_loopback".into(), "ns", p));
    }
    if let Some(s) = &f.server {
        m.push(("server_cpu".into(), "s", s.cpu_s));
        m.push(("server_cpu_cores".into(), "cores", s.cpu_cores));
        if let Some(r) = s.requests_per_cpu_s {
            m.push(("requests_per_server_cpu_s".into(), "1/s", r));
        }
        m.push(("server_peak_rss".into(), "bytes", s.peak_rss_bytes as f64));
        m.push(("server_peak_pss".into(), "bytes", s.peak_pss_bytes as f64));
        m.push((
            "server_peak_threads".into(),
            "count",
            f64::from(s.peak_threads),
        ));
    }
    m
}

/// Writes the CSV (RFC 4180, header first).
pub fn write_csv(out: &mut impl Write, r: &Report) -> io::Result<()> {
    writeln!(
        out,
        "run,suite,test,protocol,connections,server,repetition,metric,unit,value"
    )?;
    let protocol = |test: &str| r.protocol_of(test).as_str();
    for rep in &r.repetitions {
        let prefix = [
            r.run.id.to_string(),
            field(&r.run.suite),
            field(&rep.test),
            protocol(&rep.test).to_string(),
            rep.connections.to_string(),
            field(&rep.server),
            rep.repetition.to_string(),
        ]
        .join(",");
        if !rep.ok {
            writeln!(out, "{prefix},failed,bool,1")?;
            continue;
        }
        // An idle repetition has no engine figures, only its facts.
        let engine = rep.result.as_ref().map(metrics).unwrap_or_default();
        let kind = rep.facts.as_ref().map(facts_metrics).unwrap_or_default();
        for (name, unit, value) in engine.into_iter().chain(kind) {
            writeln!(out, "{prefix},{},{unit},{value}", field(&name))?;
        }
    }
    let run = format!("{},{}", r.run.id, field(&r.run.suite));
    for c in &r.cells {
        if let Some(tier) = c.stats.tier {
            writeln!(
                out,
                "{run},{},{},{},{},,tier,rank,{tier}",
                field(&c.test),
                protocol(&c.test),
                c.connections,
                field(&c.server)
            )?;
        }
    }
    // The sections built as data (rankings over rounds, ...).
    crate::view::csv::section_by_id(out, r, "ranking", field, |t| protocol(t).to_string())?;
    // The fixed rate's figures over rounds.
    for f in &r.kinds.fixed_rate {
        let mut m: Vec<(String, &'static str, f64)> = Vec::new();
        let mut estimate = |name: &str, unit: &'static str, e: &netbench_stats::Estimate| {
            m.push((name.to_string(), unit, e.value));
            if let Some((lo, hi)) = e.ci95 {
                m.push((format!("{name}_ci95_low"), unit, lo));
                m.push((format!("{name}_ci95_high"), unit, hi));
            }
        };
        if let Some(e) = &f.cpu_per_request {
            estimate("fixed_cpu_per_request_median", "us", e);
        }
        if let Some(e) = &f.p99 {
            estimate("fixed_p99_median", "ns", e);
        }
        if let Some(rank) = f.rank {
            m.push(("fixed_rank".into(), "rank", rank.rank as f64));
            if let Some((lo, hi)) = rank.ci95 {
                m.push(("fixed_rank_ci95_low".into(), "rank", lo as f64));
                m.push(("fixed_rank_ci95_high".into(), "rank", hi as f64));
            }
        }
        for (name, unit, value) in m {
            writeln!(
                out,
                "{run},{},{},{},{},,{name},{unit},{value}",
                field(&f.test),
                protocol(&f.test),
                f.connections,
                field(&f.server)
            )?;
        }
    }
    for p in &r.protocols {
        for (name, unit, value) in protocol_metrics(p) {
            writeln!(
                out,
                "{run},{},{},{},{},,{name},{unit},{value}",
                field(&p.test),
                p.protocol.as_str(),
                p.connections,
                field(&p.server)
            )?;
        }
    }
    crate::view::csv::section_by_id(out, r, "resident", field, |t| protocol(t).to_string())?;
    crate::view::csv::section_by_id(out, r, "conformance", field, |t| protocol(t).to_string())?;
    for s in &r.startup.servers {
        let (test, proto) = match s.test.as_deref() {
            Some(t) => (field(t), protocol(t)),
            None => (String::new(), ""),
        };
        for (name, unit, value) in startup_metrics(s) {
            writeln!(
                out,
                "{run},{test},{proto},,{},,{},{unit},{value}",
                field(&s.server),
                field(&name)
            )?;
        }
    }
    let mode = serde_json::to_value(r.startup.process).unwrap_or_default();
    writeln!(
        out,
        "{run},,,,,,process_{},bool,1",
        mode.as_str().unwrap_or("unknown")
    )
}

/// A protocol row's figures, named by its baseline's protocol: the ratio
/// of the medians, the interval of the change (when there is one) and
/// whether it tells the two apart.
fn protocol_metrics(p: &ProtocolRow) -> Vec<(String, &'static str, f64)> {
    let vs = format!("vs_{}", p.baseline_protocol.as_str());
    let mut m = vec![(format!("{vs}_ratio"), "ratio", p.ratio)];
    if let Some((lo, hi)) = p.change_ci95 {
        m.push((format!("{vs}_change_ci95_low"), "fraction", lo));
        m.push((format!("{vs}_change_ci95_high"), "fraction", hi));
    }
    m.push((
        format!("{vs}_told_apart"),
        "bool",
        if p.told_apart { 1.0 } else { 0.0 },
    ));
    m
}

/// A server's start-up figures: name, unit, value (only those it has).
fn startup_metrics(s: &ServerStartUp) -> Vec<(String, &'static str, f64)> {
    let mut m = Vec::new();
    let mut push = |name: &str, unit, v: Option<f64>| {
        if let Some(v) = v {
            m.push((name.to_string(), unit, v));
        }
    };
    push("startup_ready", "s", s.ready_s);
    push(
        "startup_from_connections",
        "count",
        s.connections.map(f64::from),
    );
    push("startup_first_1s_requests_per_s", "1/s", s.first_1s_rps);
    push("startup_first_10s_requests_per_s", "1/s", s.first_10s_rps);
    push("startup_curve_covers", "s", s.curve_covers_s);
    push("startup_steady_after", "s", s.steady_after_s);
    let warmed = s.fresh_cells > 0 || !s.unsettled.is_empty();
    push(
        "startup_unsettled_cells",
        "count",
        warmed.then_some(s.unsettled.len() as f64),
    );
    if let Some(class) = &s.class {
        m.push((format!("startup_class_{class}"), "bool", 1.0));
    }
    m
}

/// A text field: neutralised against spreadsheet formulas, then quoted when
/// it holds a comma, quote or line break. Only names pass through here (a
/// suite, a test, a server, a metric); numbers are written as they are.
fn field(s: &str) -> String {
    let s = formula_safe(s);
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// A name that a spreadsheet would read as a formula (it starts with `=`,
/// `+`, `-`, `@`, a tab or a carriage return) gets a leading `'`, which
/// spreadsheets read as "text" (OWASP's advice on CSV injection).
fn formula_safe(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::{field, write_csv};
    use crate::kinds::testing::{load_result, measurement, run};
    use netbench_records::{ProcessUse, WarmUp};

    /// Issue 28: a cell's tier, a server's start-up and the run's process
    /// mode follow the repetitions, with the fields they are not about left
    /// empty.
    #[test]
    fn tiers_start_up_and_the_process_mode_have_rows_of_their_own() {
        let warm = WarmUp {
            process: ProcessUse::Fresh,
            ready_s: Some(0.5),
            since_start_s: 0.5,
            window_s: 0.5,
            curve: vec![100.0, 300.0, 200.0, 200.0, 200.0, 200.0],
            settled_s: Some(3.0),
            capped: false,
            class: "warmed".into(),
            steady_from_s: Some(0.5),
        };
        let mut a = measurement("a", "blank", 8, 1, None, Some(load_result(1000.0)));
        a.warmup = Some(warm);
        let b = measurement("b", "blank", 8, 1, None, Some(load_result(50.0)));
        let suite = "[[scenarios]]\nname = \"blank\"\nendpoint = \"blank\"\nconnections = [8]\n";
        let report = crate::model::build_report(&run(suite, vec![a, b]));
        let mut out = Vec::new();
        write_csv(&mut out, &report).unwrap();
        let csv = String::from_utf8(out).unwrap();
        // One repetition each: never told apart.
        assert!(csv.contains("\n1,t,blank,h1,8,a,,tier,rank,1\n"), "{csv}");
        assert!(csv.contains("\n1,t,blank,h1,8,b,,tier,rank,1\n"), "{csv}");
        for row in [
            "1,t,blank,h1,,a,,startup_ready,s,0.5",
            "1,t,blank,h1,,a,,startup_from_connections,count,8",
            "1,t,blank,h1,,a,,startup_first_1s_requests_per_s,1/s,200",
            "1,t,blank,h1,,a,,startup_curve_covers,s,3",
            "1,t,blank,h1,,a,,startup_steady_after,s,3.5",
            "1,t,blank,h1,,a,,startup_unsettled_cells,count,0",
            "1,t,blank,h1,,a,,startup_class_warmed,bool,1",
            "1,t,,,,,,process_fresh,bool,1",
        ] {
            assert!(csv.lines().any(|l| l == row), "{row}\n{csv}");
        }
        // b has no warm-up record and no ready time: no start-up rows.
        assert!(!csv.contains(",b,,startup_"), "{csv}");
        assert!(csv.lines().all(|l| l.split(',').count() == 10), "{csv}");
    }

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(field("go-nethttp"), "go-nethttp");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    /// Issue 27: a server or suite named like a formula ran in the
    /// spreadsheet that opened the CSV.
    #[test]
    fn issue27_names_that_read_as_formulas_are_text() {
        assert_eq!(field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(field("+1"), "'+1");
        assert_eq!(field("-cmd|' /C calc'!A0"), "'-cmd|' /C calc'!A0");
        assert_eq!(field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(field("\tx"), "'\tx");
        // Names as they usually are, unchanged.
        assert_eq!(field("go-nethttp"), "go-nethttp");
        assert_eq!(field("latency_p99.9"), "latency_p99.9");
    }
}
