//! Sections as Markdown (and, through `terminal`, as what `netbench show`
//! prints): a heading, the legend, the notes, then each table with names
//! left-aligned and figures right-aligned.

use std::io::{self, Write};

use crate::format::cell;
use crate::model::section::Section;
use crate::model::Report;

/// Writes the section `id`, when the run has it.
pub(crate) fn section_by_id(out: &mut impl Write, r: &Report, id: &str) -> io::Result<()> {
    match r.sections.iter().find(|s| s.id == id) {
        Some(s) => section(out, s),
        None => Ok(()),
    }
}

/// Writes one section.
pub(crate) fn section(out: &mut impl Write, s: &Section) -> io::Result<()> {
    writeln!(out, "#### {}\n\n{}\n", cell(&s.title), cell(&s.legend))?;
    for note in &s.notes {
        writeln!(out, "- {}", cell(note))?;
    }
    if !s.notes.is_empty() {
        writeln!(out)?;
    }
    for t in &s.tables {
        if !t.caption.is_empty() {
            writeln!(out, "{}\n", cell(&t.caption))?;
        }
        let heads: Vec<String> = t.headers.iter().map(|h| cell(h)).collect();
        writeln!(out, "| {} |", heads.join(" | "))?;
        let figure = |i: usize| {
            t.rows
                .iter()
                .any(|r| r.get(i).is_some_and(|v| v.is_figure()))
        };
        let align: Vec<&str> = (0..t.headers.len())
            .map(|i| if figure(i) { "---:" } else { "---" })
            .collect();
        writeln!(out, "|{}|", align.join("|"))?;
        for row in &t.rows {
            let cells: Vec<String> = row.iter().map(|v| cell(&v.text())).collect();
            writeln!(out, "| {} |", cells.join(" | "))?;
        }
        writeln!(out)?;
    }
    for f in &s.failures {
        writeln!(out, "- {}", cell(f))?;
    }
    Ok(())
}
