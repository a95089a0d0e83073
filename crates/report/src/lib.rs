//! Turns finished results (load runs, verify checks, stored suite runs) into
//! something to read or share: terminal text, versioned JSON, and reports of
//! whole runs as HTML with charts, Markdown, CSV, and run-to-run comparisons.
//! Reporters take plain data and write to any `impl Write`; they never
//! measure.

mod compare;
mod csv;
mod environment;
mod format;
mod html;
mod load_json;
mod load_text;
mod markdown;
mod model;
mod resources;
pub mod significance;
mod spectrum;
mod suite_table;
mod verify_text;

pub use compare::{compare, write_compare_text, CompareRow, Comparison, Metric, Verdict};
pub use csv::write_csv;
pub use environment::EnvDifference;
pub use format::{
    bytes, first_line_safe, format_duration_ns, terminal_safe, thousands, verdict_line,
};
pub use html::{write_compare_html, write_html};
pub use load_json::{load_json, LOAD_SCHEMA_VERSION};
pub use load_text::write_load_text;
pub use markdown::write_markdown;
pub use model::{build_report, Cell, Repetition, RepetitionFigures, Report, REPORT_FORMAT};
pub use resources::ServerUse;
pub use spectrum::{Spectrum, SpectrumPoint};
pub use suite_table::{run_table, write_run_table, CellStats, RunTable};
pub use verify_text::{verify_json, write_verify_text};

/// What was run, as the user gave it, for the report's header.
#[derive(Debug, Clone)]
pub struct LoadContext<'a> {
    pub url: &'a str,
    pub method: &'a str,
    pub plan: &'a netbench_engine::LoadPlan,
    /// Set when the requests are the contract's generated work documents.
    pub work: Option<WorkSource>,
}

/// Where generated work documents came from, so a run can be reproduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkSource {
    pub documents: usize,
    pub dates: usize,
    pub seed: u64,
}
