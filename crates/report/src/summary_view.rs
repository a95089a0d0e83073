//! The summary section: the run's table transposed (issue 29), a server per
//! row in the rank order of the first throughput row and a column per test
//! and connection count, so 25 servers fit a laptop's width; each cell its
//! median, tier, standing, spread, p99 and marks; then the machine-speed
//! control's paragraph.

use std::fmt::Write as _;

use crate::flag::{measured_legend, warnings_legend};
use crate::format::{format_duration_ns, thousands};
use crate::html_parts::{esc, flags_html, flags_noted, swatch_html, swatch_of};
use crate::model::{Cell, Report};
use crate::palette::{model_color, model_meaning, model_name, Swatch};
use crate::ranking::Standing;
use crate::stats::relative_half_width;
use crate::suite_table::{settled_shares, tier_mark, CELL_LEGEND, STANDING_LEGEND, TIER_LEGEND};

/// What a standing mark means, for its hover title.
const LEADER_TITLE: &str =
    "leads its row: ahead of every other server beyond noise (Welch's 95% interval)";
const TIED_TITLE: &str =
    "tied for the lead: cannot be told apart from the top at these repetitions";
/// What a tier mark means, for its hover title.
const TIER_TITLE: &str = "tier of its row (T1 the fastest): servers in one tier are not told \
    apart at these repetitions (Scott–Knott on log requests/s)";
/// What "normalised" means, for the second line's hover title.
const NORMALISED_TITLE: &str = "requests/s normalised by the machine-speed control: each \
    repetition × its server-CPU probe ÷ the run's median probe";

/// "±2%": half the 95% interval of the mean, relative to the median.
fn spread_pct(s: &crate::stats::Summary) -> Option<String> {
    relative_half_width(s).map(|w| format!("±{:.0}%", w * 100.0))
}

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
    let spread = match rps.ci95 {
        Some((lo, hi)) if rps.median > 0.0 => format!(
            "<span class=\"ci\" title=\"95% CI of the mean: {} to {}\">±{:.0}%</span>",
            thousands(lo.max(0.0).round() as u64),
            thousands(hi.round() as u64),
            (hi - lo) / 2.0 / rps.median * 100.0
        ),
        _ => String::new(),
    };
    let p99 = c.stats.p99_ns.map_or(String::new(), |p| {
        format!("<span class=\"p99\">p99 {}</span>", format_duration_ns(p))
    });
    let normalised = c.stats.rps_normalised.map_or(String::new(), |n| {
        format!(
            "<br><span class=\"norm\" title=\"{}\">normalised {}{}</span>",
            esc(NORMALISED_TITLE),
            thousands(n.median.round() as u64),
            spread_pct(&n).map_or(String::new(), |p| format!(" {p}"))
        )
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
        "<td{class}{at} data-standing=\"{standing}\">{mark}<span class=\"num\">{}</span>{tier} {spread} {}<br>{p99}{normalised}</td>",
        thousands(rps.median.round() as u64),
        flags_noted(&c.flags, noise.as_deref()),
    )
}

/// The machine-speed control's paragraph, when the run has it: what the
/// normalised figures are, how many cells settle raw and normalised, and
/// what was going on around the noisy ones.
fn control_html(b: &mut String, r: &Report) {
    if !r.cells.iter().any(|c| c.stats.rps_normalised.is_some()) {
        return;
    }
    b.push_str(
        "<div class=\"control\" data-control><h3>Machine-speed control</h3><p>Before and after \
         each repetition netbench times a fixed piece of CPU work (the probe) on the server's \
         CPUs. A cell's normalised requests/s multiplies each repetition by its probe time and \
         divides by the run's median probe time: the figures a machine running at its typical \
         speed throughout would have given, so a slower or busier stretch of the run does not \
         pass for a slower server.",
    );
    if let Some(reference) = r.run.control_probe_ns {
        let _ = write!(
            b,
            " <span data-median-probe>The run's median probe took {:.0} µs.</span>",
            reference / 1e3
        );
    }
    if let Some((n, raw, norm)) = settled_shares(&r.table()) {
        let _ = write!(
            b,
            " <span data-settled=\"{n} {raw} {norm}\">{raw} of {n} cells within ±5% raw, \
             {norm} of {n} normalised</span> (half the 95% interval of the mean, relative to the \
             median).",
        );
    }
    b.push_str("</p>");
    let noisy: Vec<String> = r
        .cells
        .iter()
        .filter(|c| c.stats.noisy())
        .filter_map(|c| {
            let why = c.stats.noise?.describe()?;
            Some(format!(
                "<li>{} {} c={}: {}</li>",
                esc(&c.server),
                esc(&c.test),
                c.connections,
                esc(&why)
            ))
        })
        .collect();
    if !noisy.is_empty() {
        let _ = write!(
            b,
            "<p>Noisy cells and what was going on:</p><ul>{}</ul>",
            noisy.concat()
        );
    }
    b.push_str("</div>");
}

/// The most test columns one summary table takes: past it the table is cut
/// into several, the same servers in the same order in each, so a run of
/// many tests reads without scrolling sideways at 1280 px.
const SUMMARY_COLUMNS: usize = 5;

/// The summary section.
pub(crate) fn summary_html(b: &mut String, r: &Report, colors: &[Swatch]) {
    b.push_str("<section id=\"summary\"><h2>Summary</h2>");
    let columns: Vec<(&str, u32)> = r
        .tests
        .iter()
        .flat_map(|t| t.connections.iter().map(move |&c| (t.name.as_str(), c)))
        .collect();
    let order = crate::ranked_view::summary_order(r, colors);
    for part in columns.chunks(SUMMARY_COLUMNS) {
        summary_table(b, r, colors, &order, part);
    }
    let normalised = if r.cells.iter().any(|c| c.stats.rps_normalised.is_some()) {
        " The second line, normalised, is the same figure normalised by the machine-speed \
         control (below): each repetition × its server-CPU probe ÷ the run's median probe."
    } else {
        ""
    };
    let flags: Vec<&str> = r.cells.iter().map(|c| c.flags.as_str()).collect();
    let kinds = crate::flag::kind_legend(&flags).map_or(String::new(), |l| format!(" {l}"));
    let _ = write!(
        b,
        "<p class=\"legend\">A server per row, in the order of the first \
         column's ranking (its tiers, then its median); a column per test and connection count, \
         whose tiers and standings are its own. {} {} {} Only a leader is bold.{normalised} {} \
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
    control_html(b, r);
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
        assert!(TIED_TITLE.contains("cannot be told apart from the top at these repetitions"));

        let behind = cell_html(Some(&cell(&[500.0, 501.0], Standing::Behind)));
        assert!(behind.starts_with("<td data-test="), "{behind}");
        assert!(behind.contains("data-standing=\"behind\""), "{behind}");
        assert!(!behind.contains("abbr class=\"standing\""), "{behind}");
        assert!(!behind.contains("normalised"), "{behind}");
    }

    #[test]
    fn a_cell_shows_its_normalised_figure_and_why_it_was_noisy() {
        let mut c = cell(&[500.0, 1500.0, 1000.0], Standing::Tied);
        c.stats.rps_normalised = crate::stats::summarize(&[1000.0, 1010.0, 990.0]);
        c.stats.noise = Some(crate::suite_table::CellNoise {
            steal: 0.05,
            other_busy_cores: 0.4,
            ..Default::default()
        });
        assert!(c.flags.contains('~'), "{}", c.flags);
        let html = cell_html(Some(&c));
        assert!(html.contains(">normalised 1,000 ±2%</span></td>"), "{html}");
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
