//! Where a run's servers were on the network (crates/suite/src/netns.rs):
//! the notes that say it for each scenario, and the placement table, which
//! puts the same cells on loopback and over a veth pair (shaped or not) side
//! by side with the change against loopback. Computed from the stored paths
//! and the run's scenario records; model/sections/placements.rs makes it a
//! section, which every view writes.

use std::fmt::Write as _;

use netbench_records::network::MTU;
use netbench_records::RunDetail;
use netbench_records::{Bandwidth, NetPlacement, NetworkPath, ScenarioRecord};

use crate::format::{format_duration_ns, thousands};
use crate::suite_table::CellStats;

/// A placement in words, without addresses: what the notes group by.
fn describe(placement: NetPlacement, mtu: Option<u32>, bandwidth: Option<Bandwidth>) -> String {
    let mtu = mtu.map_or(String::new(), |m| format!(", MTU {m}"));
    match placement {
        NetPlacement::Loopback => format!("server on loopback{mtu}"),
        NetPlacement::Netns => {
            let tbf = bandwidth.map_or(String::new(), |b| format!(", tbf {b}"));
            format!("server in a network namespace over a veth pair{mtu}{tbf}")
        }
    }
}

/// The note for one scenario: its stored path, or what its suite says when
/// no cell of it stored one (every cell failed).
fn scenario_path(
    run: &RunDetail,
    scenario: &str,
    suite: Option<&ScenarioRecord>,
) -> Option<String> {
    let stored: Option<&NetworkPath> = run
        .measurements
        .iter()
        .filter(|m| m.key.scenario == scenario)
        .find_map(|m| m.network.as_ref());
    match (stored, suite) {
        (Some(p), _) => Some(describe(p.placement, Some(p.mtu), p.bandwidth)),
        (None, Some(s)) => Some(describe(
            s.placement,
            (s.placement == NetPlacement::Netns).then_some(MTU),
            s.bandwidth,
        )),
        (None, None) => None,
    }
}

/// One line per group of scenarios on the same path ("blank, work: server
/// on loopback, MTU 65536."), and how the namespaces were made; nothing for
/// a run whose servers were all on loopback, which is every run's default.
pub(crate) fn notes(run: &RunDetail) -> Vec<String> {
    let any_netns = run
        .measurements
        .iter()
        .filter_map(|m| m.network.as_ref())
        .map(|p| p.placement)
        .chain(run.scenarios.iter().map(|s| s.placement))
        .any(|p| p == NetPlacement::Netns);
    if !any_netns {
        return Vec::new();
    }
    // The suite's order, then any stored scenario it no longer names.
    let mut names: Vec<String> = run.scenarios.iter().map(|sc| sc.name.clone()).collect();
    for m in &run.measurements {
        if !names.contains(&m.key.scenario) {
            names.push(m.key.scenario.clone());
        }
    }
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for name in names {
        let of_suite = run.scenarios.iter().find(|sc| sc.name == name);
        let Some(path) = scenario_path(run, &name, of_suite) else {
            continue;
        };
        match groups.iter_mut().find(|(p, _)| *p == path) {
            Some((_, names)) => names.push(name),
            None => groups.push((path, vec![name])),
        }
    }
    let mut out: Vec<String> = groups
        .into_iter()
        .map(|(path, names)| format!("{}: {path}.", names.join(", ")))
        .collect();
    out.push(
        "Each namespace cell had a network namespace of its own, made for it and deleted after: \
         the client at 10.213.x.1, the server at 10.213.x.2 (a /30), MTU 1500 on both veth ends; \
         tbf, when shaped, on both ends' egress."
            .into(),
    );
    out
}

/// The placement table: per scenario group (the same scenario but for its
/// placement), connection count and server, one column per placement.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlacementTable {
    /// "loopback", "veth", "veth, tbf 1gbit": loopback first, then in the
    /// suite's order.
    pub columns: Vec<String>,
    pub rows: Vec<PlacementRow>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlacementRow {
    /// The group's first scenario in the suite (its loopback one, as a
    /// suite is usually written).
    pub test: String,
    pub connections: u32,
    pub server: String,
    /// Per column: "12,345 (−8% ▼) · 1.20ms", or "-" where not measured.
    pub values: Vec<String>,
}

/// A placement as a column head.
fn column(s: &ScenarioRecord) -> String {
    match (s.placement, s.bandwidth) {
        (NetPlacement::Loopback, _) => "loopback".into(),
        (NetPlacement::Netns, None) => "veth".into(),
        (NetPlacement::Netns, Some(b)) => format!("veth, tbf {b}"),
    }
}

/// The placement table of a run, None when no scenario of it was measured
/// in two places. `tests` are the throughput table's rows (test,
/// connections), `servers` its columns, `cell` its cells.
pub(crate) fn placement_table<'a>(
    scenarios: &[ScenarioRecord],
    tests: &[(String, u32)],
    servers: &[String],
    cell: impl Fn(&str, u32, &str) -> Option<&'a CellStats>,
) -> Option<PlacementTable> {
    // Scenarios that measure the same cells, in the suite's order.
    let mut groups: Vec<(&str, Vec<&ScenarioRecord>)> = Vec::new();
    for s in scenarios {
        match groups.iter_mut().find(|(k, _)| *k == s.same_cells_as) {
            Some((_, members)) => members.push(s),
            None => groups.push((&s.same_cells_as, vec![s])),
        }
    }
    groups.retain(|(_, members)| {
        let first = column(members[0]);
        members.iter().any(|m| column(m) != first)
    });
    if groups.is_empty() {
        return None;
    }
    let mut columns = vec!["loopback".to_string()];
    for (_, members) in &groups {
        for m in members {
            let c = column(m);
            if !columns.contains(&c) {
                columns.push(c);
            }
        }
    }
    let loopback_used = groups
        .iter()
        .any(|(_, ms)| ms.iter().any(|m| m.placement == NetPlacement::Loopback));
    if !loopback_used {
        columns.remove(0);
    }
    let mut rows = Vec::new();
    for (_, members) in &groups {
        let test = &members[0].name;
        let counts = tests.iter().filter(|(t, _)| t == test).map(|(_, c)| *c);
        for connections in counts {
            for server in servers {
                let stats: Vec<Option<&CellStats>> = columns
                    .iter()
                    .map(|c| {
                        let m = members.iter().find(|m| &column(m) == c)?;
                        cell(&m.name, connections, server)
                    })
                    .collect();
                if stats.iter().all(Option::is_none) {
                    continue;
                }
                let base = (columns[0] == "loopback").then_some(stats[0]).flatten();
                let values = stats
                    .iter()
                    .enumerate()
                    .map(|(i, s)| value(*s, (i > 0).then_some(base).flatten()))
                    .collect();
                rows.push(PlacementRow {
                    test: test.clone(),
                    connections,
                    server: server.clone(),
                    values,
                });
            }
        }
    }
    (!rows.is_empty()).then_some(PlacementTable { columns, rows })
}

/// "12,345 (−8% ▼) · 1.20ms": the median requests/s, its change against
/// `base` (loopback) and the median p99; the cell's flags after.
fn value(s: Option<&CellStats>, base: Option<&CellStats>) -> String {
    let Some(s) = s else {
        return "-".into();
    };
    let Some(rps) = s.rps else {
        return if s.failed > 0 { "F".into() } else { "-".into() };
    };
    let mut v = thousands(rps.median.round() as u64);
    if let Some(b) = base.and_then(|b| b.rps.map(|r| (b, r.median))) {
        let (b, median) = b;
        if median > 0.0 {
            let _ = write!(
                v,
                " ({:+.0}% {})",
                (rps.median / median - 1.0) * 100.0,
                crate::axes::change_mark(&b.rps_values, &s.rps_values)
            );
        }
    }
    if let Some(p99) = s.p99_ns {
        let _ = write!(v, " · {}", format_duration_ns(p99));
    }
    let flags = s.flags();
    if !flags.is_empty() {
        let _ = write!(v, " {flags}");
    }
    v
}

/// What the placement table shows.
pub(crate) const LEGEND: &str = "The same cells with the server on loopback and in a network \
    namespace over a veth pair (MTU 1500), unshaped and shaped by tbf: median requests/s, the \
    change against loopback (▲ or ▼ beyond noise, Welch's 95% interval of the change over the \
    repetitions; ≈ not told apart), median p99; the cells' flags after.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::scenarios_of;
    use crate::stats::summarize;

    const LAN: &str = r#"
        servers = ["*"]
        [[scenarios]]
        name = "blank"
        endpoint = "blank"
        connections = [1, 100]
        [[scenarios]]
        name = "blank-veth"
        endpoint = "blank"
        connections = [1, 100]
        placement = "netns"
        [[scenarios]]
        name = "blank-veth-1gbit"
        endpoint = "blank"
        connections = [1, 100]
        placement = "netns"
        bandwidth = "1gbit"
        [[scenarios]]
        name = "work"
        endpoint = "work"
        connections = [100]
    "#;

    fn stats(values: &[f64]) -> CellStats {
        CellStats {
            rps: summarize(values),
            rps_values: values.to_vec(),
            p99_ns: Some(1.2e6),
            repetitions: values.len(),
            ..CellStats::default()
        }
    }

    #[test]
    fn the_same_cells_in_each_place_side_by_side() {
        let tests: Vec<(String, u32)> = ["blank", "blank-veth", "blank-veth-1gbit"]
            .iter()
            .flat_map(|t| [(t.to_string(), 1), (t.to_string(), 100)])
            .chain([("work".to_string(), 100)])
            .collect();
        let servers = vec!["a".to_string(), "b".to_string()];
        let cells = [
            ("blank", 100, "a", stats(&[1000.0, 1010.0, 990.0])),
            ("blank-veth", 100, "a", stats(&[800.0, 805.0, 795.0])),
            (
                "blank-veth-1gbit",
                100,
                "a",
                stats(&[1001.0, 1009.0, 991.0]),
            ),
            ("blank", 1, "b", stats(&[50.0])),
            ("work", 100, "a", stats(&[70.0])),
        ];
        let t = placement_table(&scenarios_of(LAN), &tests, &servers, |test, c, s| {
            cells
                .iter()
                .find(|(t, cc, ss, _)| *t == test && *cc == c && *ss == s)
                .map(|(.., st)| st)
        })
        .unwrap();
        assert_eq!(t.columns, ["loopback", "veth", "veth, tbf 1gbit"]);
        // work was measured in one place only: it has no row.
        let rows: Vec<(&str, u32, &str)> = t
            .rows
            .iter()
            .map(|r| (r.test.as_str(), r.connections, r.server.as_str()))
            .collect();
        assert_eq!(rows, [("blank", 1, "b"), ("blank", 100, "a")]);
        assert_eq!(t.rows[0].values, ["50 · 1.20ms", "-", "-"]);
        assert_eq!(
            t.rows[1].values,
            [
                "1,000 · 1.20ms",
                "800 (-20% ▼) · 1.20ms",
                "1,001 (+0% ≈) · 1.20ms"
            ]
        );

        // A suite with every scenario in one place has no such table.
        let one = LAN
            .replace("placement = \"netns\"", "")
            .replace("bandwidth = \"1gbit\"", "");
        assert_eq!(
            placement_table(&scenarios_of(&one), &tests, &servers, |_, _, _| None),
            None
        );
    }

    #[test]
    fn notes_say_where_each_scenario_ran_only_when_a_namespace_was_used() {
        use crate::kinds::testing::{failed, measurement, run};
        let veth = NetworkPath {
            placement: NetPlacement::Netns,
            server_addr: "10.213.0.2".parse().unwrap(),
            client_addr: "10.213.0.1".parse().unwrap(),
            mtu: 1500,
            bandwidth: None,
            burst_bytes: None,
        };
        let at = |scenario: &str, path: Option<NetworkPath>| {
            let mut m = measurement("a", scenario, 100, 1, None, None);
            m.network = path;
            m
        };
        let lo = NetworkPath {
            placement: NetPlacement::Loopback,
            server_addr: "127.0.0.1".parse().unwrap(),
            client_addr: "127.0.0.1".parse().unwrap(),
            mtu: 65536,
            bandwidth: None,
            burst_bytes: None,
        };
        let measured = vec![
            at("blank", Some(lo.clone())),
            at("blank-veth", Some(veth.clone())),
            // Every cell failed: the suite says where it was to run.
            failed("a", "blank-veth-1gbit", 100, 1),
            at("work", Some(lo.clone())),
        ];
        // The helper writes the servers line itself.
        let notes = notes(&run(&LAN.replace("servers = [\"*\"]", ""), measured));
        assert_eq!(
            notes[..3],
            [
                "blank, work: server on loopback, MTU 65536.",
                "blank-veth: server in a network namespace over a veth pair, MTU 1500.",
                "blank-veth-1gbit: server in a network namespace over a veth pair, MTU 1500, \
                 tbf 1gbit."
            ]
        );
        assert!(notes[3].contains("10.213.x.2"), "{notes:?}");
        // All on loopback, as every run before placements: nothing to say.
        let plain = "[[scenarios]]\nname = \"blank\"\nendpoint = \"blank\"\nconnections = [1]\n";
        assert!(notes_of(plain, vec![at("blank", Some(lo)), at("blank", None)]).is_empty());
    }

    fn notes_of(suite: &str, m: Vec<netbench_records::Measurement>) -> Vec<String> {
        notes(&crate::kinds::testing::run(suite, m))
    }
}
