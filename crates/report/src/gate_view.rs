//! The regression gate's decision as text (after the comparison's tables,
//! or alone on stderr), as the `gate` object of the comparison's JSON, and
//! as a short section of its HTML page. Leaves: every figure is `Gate`'s.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::compare::{percent, Comparison};
use crate::gate_judge::{Gate, GateOutcome, NotJudged, NotJudgedReason};
use crate::html_parts::esc;

/// The one-line verdict: what an exit code means, in words.
pub fn gate_headline(g: &Gate) -> String {
    match g.outcome {
        GateOutcome::Passed => {
            let blind = g.blind();
            let worst = blind.iter().map(|f| f.floor.abs()).fold(0.0, f64::max);
            let caveat = if blind.is_empty() {
                String::new()
            } else {
                format!(
                    ", but it could not see a change smaller than its noise floor, up to {} \
                     ({} above their rule's threshold; --max-floor fails such a gate)",
                    percent_abs(worst),
                    rows_word(blind.len())
                )
            };
            format!(
                "gate passed: no row moved beyond {} and beyond noise ({}){caveat}",
                g.rules,
                judged(g.judged)
            )
        }
        GateOutcome::TooNoisy => {
            let noisy: Vec<f64> = g
                .not_judged
                .iter()
                .filter_map(|n| match n.reason {
                    NotJudgedReason::TooNoisy { floor, .. } => Some(floor.abs()),
                    _ => None,
                })
                .collect();
            format!(
                "gate FAILED: cannot judge a change of {} here: {} a noise floor above \
                 --max-floor (up to {}); no judged row moved beyond {} and beyond noise",
                g.options.max_floor.map_or("?".into(), percent_abs),
                match noisy.len() {
                    1 => "1 row has".to_string(),
                    n => format!("{n} rows have"),
                },
                percent_abs(noisy.iter().copied().fold(0.0, f64::max)),
                g.rules
            )
        }
        GateOutcome::Failed => {
            let mut why = Vec::new();
            if !g.breaches.is_empty() {
                why.push(format!(
                    "{} beyond {} and beyond noise",
                    rows(g.breaches.len()),
                    g.rules
                ));
            }
            if !g.lost.is_empty() {
                why.push(format!(
                    "{} measured in A without a good repetition in B",
                    cells(g.lost.len())
                ));
            }
            format!("gate FAILED: {}", why.join("; "))
        }
        GateOutcome::NothingJudged => format!(
            "gate FAILED: nothing could be judged by {} (a gate that judged nothing does not \
             pass)",
            g.rules
        ),
    }
}

/// `12.3%`, for a floor: a size, without a sign.
fn percent_abs(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// What the noise floors were, rule by rule: the smallest and the largest.
fn floor_line(g: &Gate) -> Option<String> {
    if g.floors.is_empty() {
        return None;
    }
    // Each rule's floors, the smallest and the largest in size.
    let mut by_rule: Vec<(&str, f64, f64)> = Vec::new();
    for f in &g.floors {
        match by_rule.iter_mut().find(|(r, _, _)| *r == f.rule) {
            Some((_, small, large)) => {
                if f.floor.abs() < small.abs() {
                    *small = f.floor;
                }
                if f.floor.abs() > large.abs() {
                    *large = f.floor;
                }
            }
            None => by_rule.push((&f.rule, f.floor, f.floor)),
        }
    }
    let ranges: Vec<String> = by_rule
        .iter()
        .map(|(r, small, large)| format!("{r} {} to {}", percent(*small), percent(*large)))
        .collect();
    let given = g.options.noise_floor.map_or(String::new(), |f| {
        format!(", and never below --noise-floor {}", percent_abs(f))
    });
    Some(format!(
        "noise floor (a change within it is not called beyond noise; from both runs' \
         repetitions and the shift's own spread, at 5% split over {} rows{given}): {}",
        g.family,
        ranges.join(", ")
    ))
}

fn rows_word(n: usize) -> String {
    if n == 1 {
        "1 row".into()
    } else {
        format!("{n} rows")
    }
}

fn rows(n: usize) -> String {
    if n == 1 {
        "1 row moved".into()
    } else {
        format!("{n} rows moved")
    }
}

fn cells(n: usize) -> String {
    if n == 1 {
        "1 cell".into()
    } else {
        format!("{n} cells")
    }
}

fn judged(n: usize) -> String {
    if n == 1 {
        "1 row judged".into()
    } else {
        format!("{n} rows judged")
    }
}

/// Each line of the gate's detail, without the headline.
fn detail_lines(g: &Gate) -> Vec<String> {
    let mut lines = Vec::new();
    for b in &g.breaches {
        let interval = b.change_ci95.map_or(String::new(), |(lo, hi)| {
            format!(", 95% interval [{}, {}]", percent(lo), percent(hi))
        });
        let shift = b.shift.map_or(String::new(), |s| {
            format!(", beyond the run-wide shift of {}", percent(s - 1.0))
        });
        lines.push(format!(
            "FAIL {}: {} {} (p = {:.3}{interval}{shift}, noise floor {})",
            b.cell,
            b.rule,
            percent(b.change),
            b.p,
            percent(b.floor)
        ));
    }
    if let Some(line) = floor_line(g) {
        lines.push(line);
    }
    for cell in &g.lost {
        lines.push(format!(
            "FAIL {cell}: good repetitions in A, none in B (every repetition failed, or B did \
             not run it)"
        ));
    }
    for m in &g.rows_moved {
        lines.push(format!(
            "note: every server of {} c={} moved {} together (the run-wide shift over {} \
             servers), beyond {}: taken as the machine's, not any one server's; \
             `--absolute` judges the figures as measured",
            m.test,
            m.connections,
            percent(m.change),
            m.servers,
            m.rule
        ));
    }
    for (reason, group) in not_judged_groups(&g.not_judged) {
        lines.push(format!("not judged, {reason}: {}", group.join(", ")));
    }
    for n in &g.notes {
        lines.push(format!("note: {n}"));
    }
    lines
}

/// The rows not judged, grouped by reason in the order first seen, each
/// as "rule cell".
fn not_judged_groups(all: &[NotJudged]) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for n in all {
        let reason = n.reason.describe();
        let item = format!("{} {}", n.rule, n.cell);
        match groups.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, items)) => items.push(item),
            None => groups.push((reason, vec![item])),
        }
    }
    groups
}

/// Writes the gate's section: a headline, then what it rests on.
pub fn write_gate_text(out: &mut impl Write, g: &Gate) -> io::Result<()> {
    writeln!(out, "Regression gate (--fail-on {}):", g.rules)?;
    for line in detail_lines(g) {
        writeln!(out, "  {line}")?;
    }
    writeln!(out, "{}", gate_headline(g))
}

/// The comparison's JSON, with the gate as its `gate` object when given.
pub fn compare_json(c: &Comparison, gate: Option<&Gate>) -> serde_json::Value {
    let mut v = serde_json::to_value(c).expect("a comparison serializes");
    if let (Some(g), Some(map)) = (gate, v.as_object_mut()) {
        map.insert(
            "gate".into(),
            serde_json::to_value(g).expect("a gate serializes"),
        );
    }
    v
}

/// The gate's section of the comparison page.
pub(crate) fn gate_html(b: &mut String, g: &Gate) {
    let class = if g.passed() { "good" } else { "bad" };
    let _ = write!(
        b,
        "<section id=\"gate\"><h2>Regression gate</h2><p class=\"legend\">--fail-on {}: a row \
         fails when its change is beyond a rule's threshold, compare calls it significant \
         (p &lt; 0.05){}, and it is beyond its noise floor.</p><p class=\"{class}\">{}</p>",
        esc(&g.rules),
        if g.beyond_shift {
            ", beyond the run-wide shift"
        } else {
            ""
        },
        esc(&gate_headline(g))
    );
    let lines = detail_lines(g);
    if !lines.is_empty() {
        b.push_str("<ul>");
        for line in lines {
            let _ = write!(b, "<li>{}</li>", esc(&line));
        }
        b.push_str("</ul>");
    }
    b.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{compare, compare_with};
    use crate::gate_judge::judge;

    fn text(g: &Gate) -> String {
        let mut out = Vec::new();
        write_gate_text(&mut out, g).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_failed_gate_names_the_cell_the_rule_and_the_change() {
        let (a, b) = crate::compare::tests::drifted(1.0, 0.8);
        let g = judge(&compare(&a, &b), &"rps<-5%,p99>+10%".parse().unwrap());
        let t = text(&g);
        assert!(
            t.starts_with("Regression gate (--fail-on rps<-5%,p99>+10%):\n"),
            "{t}"
        );
        assert!(
            t.contains("  FAIL blank c=100 s0: rps<-5% -20.0% (p = 0.008"),
            "{t}"
        );
        assert!(t.contains("beyond the run-wide shift of 0.0%"), "{t}");
        assert!(
            t.ends_with("gate FAILED: 1 row moved beyond rps<-5%,p99>+10% and beyond noise\n"),
            "{t}"
        );
        let json = compare_json(&compare(&a, &b), Some(&g));
        assert_eq!(json["gate"]["outcome"], "failed");
        assert_eq!(json["gate"]["breaches"][0]["cell"], "blank c=100 s0");
        assert_eq!(json["format"], "netbench-compare/1");
        assert!(compare_json(&compare(&a, &b), None).get("gate").is_none());
        let mut html = String::new();
        gate_html(&mut html, &g);
        assert!(html.contains("class=\"bad\">gate FAILED"), "{html}");
        assert!(html.contains("rps&lt;-5%"), "{html}");
    }

    #[test]
    fn a_passed_gate_says_how_much_it_judged_and_what_moved() {
        let (a, b) = crate::compare::tests::drifted(0.8, 1.0);
        let g = judge(&compare(&a, &b), &"rps<-5%".parse().unwrap());
        let t = text(&g);
        assert!(
            t.contains("note: every server of blank c=100 moved -20.0% together"),
            "{t}"
        );
        assert!(
            t.ends_with(
                "gate passed: no row moved beyond rps<-5% and beyond noise (6 rows judged)\n"
            ),
            "{t}"
        );
        let g = judge(&compare_with(&a, &b, false), &"rps<-5%".parse().unwrap());
        assert!(text(&g).ends_with("gate FAILED: 6 rows moved beyond rps<-5% and beyond noise\n"));
    }

    #[test]
    fn rows_not_judged_are_grouped_by_reason() {
        let (mut a, mut b) = crate::compare::tests::drifted(1.0, 1.0);
        for r in [&mut a, &mut b] {
            r.repetitions.retain(|x| x.repetition <= 3);
        }
        let g = judge(&compare(&a, &b), &"rps<-5%".parse().unwrap());
        let t = text(&g);
        assert!(
            t.contains(
                "  not judged, too few repetitions (3 in A, 3 in B; 4 or more a side are needed \
                 for the test to reach p < 0.05): rps<-5% blank c=100 s0, rps<-5% blank c=100 s1"
            ),
            "{t}"
        );
        assert!(t.ends_with("judged nothing does not pass)\n"), "{t}");
    }
}
