//! A comparison of two runs as one self-contained HTML page: the change of
//! every cell with its interval and verdict, and the change chart.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::compare::{
    chance_note, not_compared, percent, Comparison, Metric, Verdict, TOO_FEW_NOTE,
};
use crate::environment::EnvDifference;
use crate::gate_judge::Gate;
use crate::gate_view::gate_html;
use crate::html_parts::{canvas, esc, flags_html, footer, page, script_json};

/// Writes a comparison of two runs.
pub fn write_compare_html(out: &mut impl Write, c: &Comparison) -> io::Result<()> {
    write_compare_html_gated(out, c, None)
}

/// Writes a comparison of two runs with the regression gate's decision
/// near the top, when given (`compare --fail-on`).
pub fn write_compare_html_gated(
    out: &mut impl Write,
    c: &Comparison,
    gate: Option<&Gate>,
) -> io::Result<()> {
    let title = format!("netbench · run {} → run {}", c.a.id, c.b.id);
    let mut b = String::new();
    let _ = write!(
        b,
        "<header><h1>{}</h1><p class=\"meta\">A: run {} ({}, {}) · B: run {} ({}, {})</p>\
         <p class=\"meta\">{}</p><p class=\"meta\">{}</p></header>",
        esc(&title),
        c.a.id,
        esc(&c.a.suite),
        esc(&c.a.started_at),
        c.b.id,
        esc(&c.b.suite),
        esc(&c.b.started_at),
        esc(c.method),
        esc(&crate::compare::normalisation_note(c))
    );
    if let Some(g) = gate {
        gate_html(&mut b, g);
    }
    if !c.environment_differences.is_empty() {
        b.push_str(
            "<section><h2>Not the same in both runs</h2><p class=\"legend\">A change \
             between machines, toolchains or commits is not a change in the servers alone.</p>\
             <table class=\"grid\"><thead><tr><th>what</th><th>A</th><th>B</th></tr></thead><tbody>",
        );
        for d in &c.environment_differences {
            let show = |v: &Option<String>| esc(EnvDifference::shown(v));
            let _ = write!(
                b,
                "<tr><th>{}</th><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td></tr>",
                esc(&d.key),
                show(&d.a),
                show(&d.b)
            );
        }
        b.push_str("</tbody></table></section>");
    }
    for metric in Metric::ALL {
        // A kind the runs do not have gets no section (and no empty chart).
        if !c.rows.iter().any(|r| r.metric == metric) {
            continue;
        }
        let key = metric.key();
        let _ = write!(b, "<section><h2>{}</h2>", esc(metric.title()));
        canvas(
            &mut b,
            "change",
            key,
            None,
            &format!(
                "change in {} from A to B, with its 95% interval",
                metric.title()
            ),
        );
        b.push_str(
            "<table class=\"grid\"><thead><tr><th>cell</th><th>A (median)</th><th>B (median)</th>\
             <th>change</th><th>95% interval</th><th>p</th><th>verdict</th></tr></thead><tbody>",
        );
        for r in c.rows.iter().filter(|r| r.metric == metric) {
            let show = |v: f64| metric.show(v);
            let class = match r.verdict {
                Verdict::Better => "good",
                Verdict::Worse => "bad",
                _ => "",
            };
            let _ = write!(
                b,
                "<tr><th>{} c={} {}</th><td>{} <small>n={}</small> {}</td><td>{} <small>n={}</small> {}</td>\
                 <td class=\"{class}\">{}</td><td>{}</td><td>{:.3}</td><td class=\"{class}\">{}</td></tr>",
                esc(&r.test),
                r.connections,
                esc(&r.server),
                show(r.a.median),
                r.a.n,
                flags_html(&r.a_flags),
                show(r.b.median),
                r.b.n,
                flags_html(&r.b_flags),
                percent(r.change),
                r.change_ci95
                    .map_or("-".into(), |(lo, hi)| format!("[{}, {}]", percent(lo), percent(hi))),
                r.p,
                match r.verdict {
                    Verdict::Better => "better",
                    Verdict::Worse => "worse",
                    Verdict::NoChange => "~ no significant change",
                    Verdict::TooFew => "? too few repetitions to tell",
                }
            );
        }
        b.push_str("</tbody></table></section>");
    }
    if let Some(note) = chance_note(c) {
        let _ = write!(b, "<p class=\"legend\">{}</p>", esc(&note));
    }
    if c.rows.iter().any(|r| r.verdict == Verdict::TooFew) {
        let _ = write!(b, "<p class=\"legend\">{}</p>", esc(TOO_FEW_NOTE));
    }
    let missing = not_compared(c);
    if !missing.is_empty() {
        b.push_str("<section><h2>Not compared</h2>");
        for (which, cells) in missing {
            let _ = write!(b, "<p>{}: {}</p>", esc(which), esc(&cells.join(", ")));
        }
        b.push_str("</section>");
    }
    footer(&mut b, &format!("run {} against run {}", c.b.id, c.a.id));
    page(out, &title, &b, &script_json(c))
}
