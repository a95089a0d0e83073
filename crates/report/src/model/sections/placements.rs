//! The network placement section: the same cells with the server on
//! loopback and in a network namespace over a veth pair, shaped or not,
//! side by side (network.rs computes the table from the stored paths).

use crate::model::section::{Section, Table, Value};
use crate::model::Report;
use crate::network::LEGEND;

pub(super) fn section(r: &Report) -> Option<Section> {
    let t = r.placements()?;
    let mut headers = vec!["test", "connections", "server"];
    headers.extend(t.columns.iter().map(String::as_str));
    let mut table = Table::new("", &headers);
    for row in &t.rows {
        let mut cells = vec![
            Value::Name(row.test.clone()),
            Value::Count(u64::from(row.connections)),
            Value::RowHead(row.server.clone()),
        ];
        cells.extend(row.values.iter().map(|v| Value::Figure(v.clone())));
        table.rows.push(cells);
    }
    Some(Section {
        id: "placements",
        title: "Network placement".into(),
        legend: LEGEND.into(),
        hover: None,
        notes: Vec::new(),
        tables: vec![table],
        csv: Vec::new(),
        failures: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use netbench_records::{fixtures, NetPlacement, RunDetail, ScenarioRecord};

    #[test]
    fn the_same_cells_in_each_place_are_a_section_of_every_view() {
        let scenario = |pos: u32, name: &str, placement: NetPlacement| ScenarioRecord {
            placement,
            same_cells_as: "blank".into(),
            ..fixtures::scenario(pos, name, &[100])
        };
        let run = RunDetail {
            scenarios: vec![
                scenario(0, "blank", NetPlacement::Loopback),
                scenario(1, "blank-veth", NetPlacement::Netns),
            ],
            servers: vec![fixtures::server("a", "")],
            measurements: vec![
                fixtures::ok(fixtures::key("a", "blank", 100, 1), 1000.0),
                fixtures::ok(fixtures::key("a", "blank-veth", 100, 1), 800.0),
            ],
            ..fixtures::run(1, "lan")
        };
        let r = crate::build_report(&run);
        let mut md = Vec::new();
        crate::view::markdown::section_by_id(&mut md, &r, "placements").unwrap();
        let md = String::from_utf8(md).unwrap();
        assert!(md.starts_with("#### Network placement\n\n"), "{md}");
        assert!(
            md.contains(
                "| test | connections | server | loopback | veth |\n|---|---:|---|---:|---:|\n"
            ),
            "{md}"
        );
        assert!(
            md.contains("| blank | 100 | a | 1,000 · 1.00ms | 800 (-20% "),
            "{md}"
        );
        let mut html = String::new();
        crate::view::html::section_by_id(&mut html, &r, &[], "placements");
        assert!(
            html.contains("<tr><td>blank</td><td>100</td><th>a</th><td>1,000 · 1.00ms</td>"),
            "{html}"
        );
    }
}
