//! Sections as `netbench show` prints them under the run's table: a blank
//! line, then the section as Markdown, as every section there reads.

use std::io::{self, Write};

use crate::model::Report;

/// Writes the section `id`, when the run has it, after a blank line.
pub(crate) fn section_by_id(out: &mut impl Write, r: &Report, id: &str) -> io::Result<()> {
    match r.sections.iter().find(|s| s.id == id) {
        Some(s) => {
            writeln!(out)?;
            super::markdown::section(out, s)
        }
        None => Ok(()),
    }
}
