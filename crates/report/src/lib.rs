//! Turns finished results (load runs, verify checks) into something to read or
//! store: a human summary and versioned JSON. Reporters take plain data and write to any `impl Write`;
//! they never measure.

mod format;
mod load_json;
mod load_text;
mod suite_table;
mod verify_text;

pub use format::{format_duration_ns, thousands, verdict_line};
pub use load_json::{load_json, LOAD_SCHEMA_VERSION};
pub use load_text::write_load_text;
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
