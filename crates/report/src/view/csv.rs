//! Sections' figures as rows of the CSV's long format, after the
//! repetitions: the cell's fields that apply, the rest empty.

use std::io::{self, Write};

use crate::model::Report;

/// Writes the metrics of section `id`, when the run has it; `field` quotes
/// a name as the CSV does, `protocol` names a test's protocol.
pub(crate) fn section_by_id(
    out: &mut impl Write,
    r: &Report,
    id: &str,
    field: impl Fn(&str) -> String,
    protocol: impl Fn(&str) -> String,
) -> io::Result<()> {
    let run = format!("{},{}", r.run.id, field(&r.run.suite));
    for s in r.sections.iter().filter(|s| s.id == id) {
        for m in &s.csv {
            writeln!(
                out,
                "{run},{},{},{},{},,{},{},{}",
                m.test.as_deref().map_or(String::new(), &field),
                m.test.as_deref().map_or(String::new(), &protocol),
                m.connections.map_or(String::new(), |c| c.to_string()),
                m.server.as_deref().map_or(String::new(), &field),
                field(&m.metric),
                m.unit,
                m.value
            )?;
        }
    }
    Ok(())
}
