//! Small formatting helpers shared by the text reporters.

use std::io::{self, Write};

use netbench_engine::Verdict;

/// The first line of text a server wrote (an exit reason, a build's last
/// output, a verify reason), safe for a terminal: control characters such as
/// ESC become visible escapes (`\u{1b}`) instead of moving the cursor or
/// recolouring the screen.
pub fn first_line_safe(text: &str) -> String {
    terminal_safe(text.lines().next().unwrap_or(""))
}

/// The lines after the first, each after `indent` and safe for a terminal,
/// each ending in a newline; empty for one line. What a reason holds below
/// its first line is the output it quotes (a failed build's last lines,
/// announced by "the last of it:").
pub fn rest_lines_safe(text: &str, indent: &str) -> String {
    let mut out = String::new();
    for line in text.lines().skip(1) {
        out.push_str(indent);
        out.push_str(&terminal_safe(line));
        out.push('\n');
    }
    out
}

/// `text` with every control character but tab written as an escape.
pub fn terminal_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\t' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A latency in the unit that keeps three significant digits readable:
/// `850ns`, `45.3µs`, `12.1ms`, `1.52s`.
pub fn format_duration_ns(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0}ns")
    } else if ns < 1_000_000.0 {
        format!("{:.1}µs", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.2}s", ns / 1e9)
    }
}

/// `client-bound: no (client CPU 41% of 1 core, 99% of connections in flight)`
pub fn verdict_line(v: &Verdict) -> String {
    format!(
        "client-bound: {} ({})",
        match (v.judged, v.client_bound) {
            (false, _) => "not judged",
            (true, true) => "YES",
            (true, false) => "no",
        },
        v.reasons.join(", ")
    )
}

/// A size in binary units with three significant digits: `5.46 KiB`,
/// `8.52 MiB`, `1.02 GiB`.
pub fn bytes(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < units.len() {
        v /= 1024.0;
        unit += 1;
    }
    match unit {
        0 => format!("{n} B"),
        _ if v >= 100.0 => format!("{v:.0} {}", units[unit]),
        _ if v >= 10.0 => format!("{v:.1} {}", units[unit]),
        _ => format!("{v:.2} {}", units[unit]),
    }
}

/// Writes `lines` (the first is the header) as columns padded to their
/// widest cell, two spaces apart: a column is left-aligned when `left(i)`
/// says so, right-aligned otherwise. `rule` draws dashes under the header.
pub(crate) fn write_columns(
    out: &mut impl Write,
    lines: &[Vec<String>],
    left: impl Fn(usize) -> bool,
    rule: bool,
) -> io::Result<()> {
    let Some(first) = lines.first() else {
        return Ok(());
    };
    let widths: Vec<usize> = (0..first.len())
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (n, line) in lines.iter().enumerate() {
        let cells: Vec<String> = line
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let pad = " ".repeat(widths[i] - c.chars().count());
                if left(i) {
                    format!("{c}{pad}")
                } else {
                    format!("{pad}{c}")
                }
            })
            .collect();
        writeln!(out, "{}", cells.join("  ").trim_end())?;
        if rule && n == 0 {
            let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            writeln!(out, "{}", dashes.join("  "))?;
        }
    }
    Ok(())
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A table cell's text, inert in Markdown and in the HTML it is rendered
/// to: `|` would end the cell, a newline the row, `<` and `&` start markup.
pub(crate) fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in terminal_safe(text).chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '&' => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn server_text_is_made_safe_for_a_terminal() {
        assert_eq!(
            terminal_safe("a\tb\u{1b}[2J\u{9b}c\u{7f}"),
            "a\tb\\u{1b}[2J\\u{9b}c\\u{7f}"
        );
        assert_eq!(first_line_safe("exit 1\r\nmore"), "exit 1");
        assert_eq!(first_line_safe("bell\u{7}"), "bell\\u{7}");
    }

    use super::*;

    #[test]
    fn sizes_in_binary_units() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(5590), "5.46 KiB");
        assert_eq!(bytes(8_935_865), "8.52 MiB");
        assert_eq!(bytes(200 * 1024 * 1024), "200 MiB");
    }

    #[test]
    fn durations_pick_a_unit() {
        assert_eq!(format_duration_ns(850.0), "850ns");
        assert_eq!(format_duration_ns(45_300.0), "45.3µs");
        assert_eq!(format_duration_ns(12_100_000.0), "12.10ms");
        assert_eq!(format_duration_ns(1_520_000_000.0), "1.52s");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn verdict_lines() {
        let v = Verdict {
            client_bound: false,
            judged: true,
            reasons: vec![
                "client CPU 41% of 1 core".into(),
                "99% of connections in flight".into(),
            ],
            busiest_cpu: 0.41,
            busiest_loop: 0.5,
            in_flight: Some(0.99),
        };
        assert_eq!(
            verdict_line(&v),
            "client-bound: no (client CPU 41% of 1 core, 99% of connections in flight)"
        );
    }
}
