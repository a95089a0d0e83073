//! Turns finished results into something to read or store: a human summary and
//! versioned JSON. Reporters take plain data and write to any `impl Write`;
//! they never measure.

mod format;
mod load_json;
mod load_text;

pub use format::{format_duration_ns, verdict_line};
pub use load_json::{load_json, LOAD_SCHEMA_VERSION};
pub use load_text::write_load_text;

/// What was run, as the user gave it, for the report's header.
#[derive(Debug, Clone)]
pub struct LoadContext<'a> {
    pub url: &'a str,
    pub method: &'a str,
    pub plan: &'a netbench_engine::LoadPlan,
}
