//! The summary section: the run's table transposed (issue 29), a server per
//! row in the rank order of the first throughput row and a column per test
//! and connection count, so 25 servers fit a laptop's width; each cell its
//! median, tier, standing, spread, rank interval, p99 and marks; above
//! them the rows whose leaders are client-bound and the run's precision
//! (cells within ±5%, the A/A twins).

use std::fmt::Write as _;

use crate::flag::{measured_legend, warnings_legend};
use crate::format::{format_duration_ns, thousands};
use crate::html_parts::{esc, flags_html, flags_noted, swatch_html, swatch_of};
use crate::model::{Cell, Report};
use crate::palette::{model_color, model_meaning, model_name, Swatch};
use crate::ranking::Standing;
use crate::suite_table::{
    rank_text, spread_text, tier_mark, CELL_LEGEND, STANDING_LEGEND, TIER_LEGEND,
};

/// What a standing mark means, for its hover title.
const LEADER_TITLE: &str =
    "leads its row: ahead of every other server beyond noise (95% interval of the paired ratio)";
const TIED_TITLE: &str = "tied for the lead: cannot be told apart from the top at these rounds";
/// What a tier mark means, for its hover title.
const TIER_TITLE: &str = "tier of its row (T1 the fastest): a new tier starts where a server is \
    told apart from the one before it in the ranking";
fn cell_html(c: Option<&Cell>) -> String {
    let Some(c) = c else {
        return "<td class=\"none\">-</td>".to_string();
    };
    let at = format!(
        " data-test=\"{}\" data-connections=\"{}\" data-column=\"{}\"",
        esc(&c.test),
        c.connections,
        esc(&c.server)
    );
    let Some(rps) = c.stats.rps else {
        return format!(
            "<td class=\"failed\"{at} title=\"{}\">failed {}/{} {}</td>",
            esc(c.stats.failure.as_deref().unwrap_or("")),
            c.stats.failed,
            c.stats.repetitions,
            flags_html(&c.flags)
        );
    };
    let spread = match (spread_text(c.stats.relative_half_width), c.stats.relative) {
        (Some(text), Some(rel)) => {
            let (lo, hi) = rel.ci95.unwrap_or((rel.value, rel.value));
            let median =
                c.stats
                    .rps_median
                    .and_then(|m| m.ci95)
                    .map_or(String::new(), |(lo, hi)| {
                        format!(
                            "; median requests/s {} to {}",
                            thousands(lo.max(0.0).round() as u64),
                            thousands(hi.round() as u64)
                        )
                    });
            format!(
                "<span class=\"ci\" title=\"95% interval of its relative figure (requests/s over \
                 the row's geometric mean in the same round): {lo:.3} to {hi:.3} around {:.3}{median}\">{text}</span>",
                rel.value
            )
        }
        _ => String::new(),
    };
    let rank = rank_text(c.stats.rank).map_or(String::new(), |t| {
        format!(" <span class=\"rank\" title=\"95% rank interval in its row\">{t}</span>")
    });
    let p99 = c.stats.p99_ns.map_or(String::new(), |p| {
        format!("<span class=\"p99\">p99 {}</span>", format_duration_ns(p))
    });
    let (class, standing, mark) = match c.stats.standing {
        Standing::Leader => (
            " class=\"best leader\"",
            "leader",
            format!(
                "<abbr class=\"standing\" title=\"{}\">▲</abbr>",
                esc(LEADER_TITLE)
            ),
        ),
        Standing::Tied => (
            " class=\"tied\"",
            "tied",
            format!(
                "<abbr class=\"standing\" title=\"{}\">=</abbr>",
                esc(TIED_TITLE)
            ),
        ),
        Standing::Behind => ("", "behind", String::new()),
    };
    let noise = c.stats.noise.and_then(|n| n.describe());
    let tier = tier_mark(c.stats.tier).map_or(String::new(), |t| {
        format!(
            " <abbr class=\"tier\" data-tier=\"{t}\" title=\"{}\">{t}</abbr>",
            esc(TIER_TITLE)
        )
    });
    format!(
        "<td{class}{at} data-standing=\"{standing}\">{mark}<span class=\"num\">{}</span>{tier} {spread}{rank} {}<br>{p99}</td>",
        thousands(rps.median.round() as u64),
        flags_noted(&c.flags, noise.as_deref()),
    )
}

/// The most test columns one summary table takes: past it the table is cut
/// into several, the same servers in the same order in each, so a run of
/// many tests reads without scrolling sideways at 1280 px.
const SUMMARY_COLUMNS: usize = 5;

/// The summary section.
pub(crate) fn summary_html(b: &mut String, r: &Report, colors: &[Swatch]) {
    b.push_str("<section id=\"summary\"><h2>Summary</h2>");
    for note in r.rows.iter().filter_map(|row| row.client_bound_note()) {
        let _ = write!(b, "<p class=\"note client-bound\">{}</p>", esc(&note));
    }
    if let Some(line) = r.precision.line() {
        let _ = write!(
            b,
            "<p class=\"precision\" data-precision>{}.</p>",
            esc(&line)
        );
    }
    let columns: Vec<(&str, u32)> = r
        .tests
        .iter()
        .flat_map(|t| t.connections.iter().map(move |&c| (t.name.as_str(), c)))
        .collect();
    let order = crate::ranked_view::summary_order(r, colors);
    for part in columns.chunks(SUMMARY_COLUMNS) {
        summary_table(b, r, colors, &order, part);
    }
    let flags: Vec<&str> = r.cells.iter().map(|c| c.flags.as_str()).collect();
    let kinds = crate::flag::kind_legend(&flags).map_or(String::new(), |l| format!(" {l}"));
    let _ = write!(
        b,
        "<p class=\"legend\">A server per row, in the order of the first \
         column's ranking (its tiers, then its median); a column per test and connection count, \
         whose tiers and standings are its own. {} {} {} Only a leader is bold. {} \
         {}{}</p>",
        esc(CELL_LEGEND),
        esc(TIER_LEGEND),
        esc(STANDING_LEGEND),
        esc(&measured_legend()),
        esc(&warnings_legend()),
        esc(&kinds)
    );
    for note in &r.run.notes {
        let _ = write!(b, "<p class=\"legend\">{}</p>", esc(note));
    }
    b.push_str("</section>");
}

/// One summary table: a row per server (in `order`), a column per test and
/// connection count of `part`, a test's columns under one heading.
fn summary_table(
    b: &mut String,
    r: &Report,
    colors: &[Swatch],
    order: &[String],
    part: &[(&str, u32)],
) {
    b.push_str("<table class=\"grid summary\"><thead><tr><th rowspan=\"2\">server and model</th>");
    let mut n = 0;
    while n < part.len() {
        let name = part[n].0;
        let span = part[n..].iter().take_while(|(t, _)| *t == name).count();
        let _ = write!(b, "<th colspan=\"{span}\">{}</th>", esc(name));
        n += span;
    }
    b.push_str("</tr><tr>");
    for &(_, c) in part {
        let _ = write!(b, "<th>{} conn.</th>", thousands(u64::from(c)));
    }
    b.push_str("</tr></thead><tbody>");
    for server in order {
        let swatch = swatch_of(colors, server);
        let model = swatch.and_then(|s| s.model);
        let color = swatch.map_or(model_color(None), |s| s.color.clone());
        let _ = write!(
            b,
            "<tr data-row=\"{}\"><th>{}{}<br><span class=\"model\" title=\"{}\">{}</span></th>",
            esc(server),
            swatch_html(&color),
            esc(server),
            esc(model_meaning(model)),
            model_name(model)
        );
        for &(t, c) in part {
            b.push_str(&cell_html(r.cell(t, c, server)));
        }
        b.push_str("</tr>");
    }
    b.push_str("</tbody></table>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flag::Flag;

    fn cell(values: &[f64], standing: Standing) -> Cell {
        let stats = crate::suite_table::CellStats {
            rps: crate::stats::summarize(values),
            standing,
            rps_values: values.to_vec(),
            repetitions: values.len(),
            ..Default::default()
        };
        Cell {
            test: "blank".into(),
            connections: 8,
            server: "a".into(),
            flags: stats.flags(),
            stats,
            latency: None,
            server_cpu_cores: None,
            requests_per_cpu_s: None,
            peak_rss_bytes: None,
            rss_per_connection: None,
            peak_threads: None,
            bytes_per_answer: None,
        }
    }

    #[test]
    fn only_a_leader_is_bold_and_a_tie_is_marked() {
        let leader = cell_html(Some(&cell(&[999.0, 1001.0], Standing::Leader)));
        assert!(leader.starts_with("<td class=\"best leader\""), "{leader}");
        assert!(leader.contains("data-standing=\"leader\""), "{leader}");
        assert!(
            leader.contains(">▲</abbr><span class=\"num\">1,000</span>"),
            "{leader}"
        );

        let tied = cell_html(Some(&cell(&[999.0, 1001.0], Standing::Tied)));
        assert!(tied.starts_with("<td class=\"tied\""), "{tied}");
        assert!(!tied.contains("best"), "{tied}");
        assert!(
            tied.contains(&format!(
                "<abbr class=\"standing\" title=\"{TIED_TITLE}\">=</abbr><span class=\"num\">"
            )),
            "{tied}"
        );
        assert!(TIED_TITLE.contains("cannot be told apart from the top at these rounds"));

        let behind = cell_html(Some(&cell(&[500.0, 501.0], Standing::Behind)));
        assert!(behind.starts_with("<td data-test="), "{behind}");
        assert!(behind.contains("data-standing=\"behind\""), "{behind}");
        assert!(!behind.contains("abbr class=\"standing\""), "{behind}");
        assert!(!behind.contains("class=\"rank\""), "{behind}");
    }

    #[test]
    fn a_cell_shows_its_spread_rank_and_why_it_was_noisy() {
        let mut c = cell(&[500.0, 1500.0, 1000.0], Standing::Tied);
        c.stats.relative = Some(netbench_stats::Estimate {
            value: 1.2,
            n: 12,
            ci95: Some((1.17, 1.23)),
        });
        c.stats.relative_half_width = c.stats.relative.and_then(|e| e.half_width());
        c.stats.rank = Some(netbench_stats::RankInterval {
            rank: 2,
            ci95: Some((1, 3)),
        });
        c.stats.noise = Some(crate::suite_table::CellNoise {
            steal: 0.05,
            other_busy_cores: 0.4,
            ..Default::default()
        });
        assert!(c.flags.contains('~'), "{}", c.flags);
        let html = cell_html(Some(&c));
        assert!(html.contains(">±3%</span> <span class=\"rank\""), "{html}");
        assert!(html.contains(">#1–3</span>"), "{html}");
        assert!(html.contains("1.170 to 1.230 around 1.200"), "{html}");
        assert!(
            html.contains(&format!(
                "title=\"{}; host steal up to 5%, other processes kept 0.4 cores busy\">~</abbr>",
                esc(Flag::Noisy.title())
            )),
            "{html}"
        );
        // A cell that failed has no standing to show.
        let mut failed = cell(&[], Standing::Behind);
        failed.stats.failed = 2;
        failed.stats.repetitions = 2;
        assert!(cell_html(Some(&failed)).starts_with("<td class=\"failed\""));
    }

    #[test]
    fn a_run_of_many_tests_gets_several_tables_with_every_server_in_each() {
        use netbench_records::{fixtures, RunDetail};
        let names: Vec<String> = (0..SUMMARY_COLUMNS + 1).map(|i| format!("t{i}")).collect();
        let run = RunDetail {
            events: Vec::new(),
            scenarios: names
                .iter()
                .enumerate()
                .map(|(i, n)| fixtures::scenario(i as u32, n, &[100]))
                .collect(),
            servers: vec![fixtures::server("a", ""), fixtures::server("b", "")],
            measurements: names
                .iter()
                .flat_map(|n| ["a", "b"].map(|s| fixtures::ok(fixtures::key(s, n, 100, 1), 1000.0)))
                .collect(),
            ..fixtures::run(1, "many")
        };
        let report = crate::model::build_report(&run);
        let colors = crate::palette::swatches(&report);
        let mut html = String::new();
        summary_html(&mut html, &report, &colors);
        let tables: Vec<&str> = html
            .split("<table class=\"grid summary\">")
            .skip(1)
            .collect();
        assert_eq!(tables.len(), 2, "{html}");
        for t in &tables {
            assert_eq!(t.matches("<tr data-row=").count(), 2, "{t}");
        }
        // The first table takes SUMMARY_COLUMNS tests, the second the rest.
        assert_eq!(tables[0].matches(" conn.</th>").count(), SUMMARY_COLUMNS);
        assert!(
            tables[1].contains(&format!(">t{SUMMARY_COLUMNS}</th>")),
            "{}",
            tables[1]
        );
        assert_eq!(tables[1].matches(" conn.</th>").count(), 1);
    }
}
