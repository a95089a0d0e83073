//! Turns finished results (load runs, verify checks, stored suite runs) into
//! something to read or share: terminal text, versioned JSON, and reports of
//! whole runs as HTML with charts, Markdown, CSV, and run-to-run comparisons.
//! Reporters take plain data and write to any `impl Write`; they never
//! measure.

mod axes;
mod compare;
mod compare_html;
mod compare_shift;
mod conformance;
mod csv;
mod environment;
mod flag;
mod format;
mod gate;
mod gate_judge;
mod gate_view;
mod hostile;
mod hostile_view;
mod html;
mod html_parts;
mod kind_html;
mod kind_idle;
mod kind_ranked;
mod kind_rate;
mod kind_short;
mod kind_storm;
mod kinds;
mod load_context;
mod load_json;
mod load_text;
mod markdown;
mod model;
mod network;
mod offers;
mod pair;
mod palette;
mod protocols;
mod protocols_view;
mod ranked_view;
pub mod ranking;
mod resident;
mod resources;
pub mod significance;
pub mod site;
mod spectrum;
mod startup;
mod startup_view;
pub mod stats;
mod suite_table;
mod summary_view;
mod terminal_view;
pub mod tiers;
mod vendor;
mod verify_text;
mod view;

pub use compare::{
    compare, compare_with, write_compare_text, CompareRow, Comparison, Metric, MetricShift, Verdict,
};
pub use compare_html::{write_compare_html, write_compare_html_gated};
pub use compare_shift::RunShift;
pub use conformance::{ConformanceRow, FailedCase};
pub use csv::write_csv;
pub use environment::EnvDifference;
pub use format::{
    bytes, first_line_safe, format_duration_ns, rest_lines_safe, terminal_safe, thousands,
    verdict_line,
};
pub use gate::{
    metric_name, valid_names, Direction, GateRule, GateRules, GateSyntaxError, METRIC_NAMES,
};
pub use gate_judge::{
    judge as judge_gate, judge_with as judge_gate_with, Breach, Gate, GateOptions, GateOutcome,
    NotJudged, NotJudgedReason, RowFloor, RowMoved,
};
pub use gate_view::{compare_json, gate_headline, write_gate_text};
pub use hostile::{conformance_of, AttackCell, HostileRow, HostileTable};
pub use html::write_html;
pub use kind_idle::{IdleLevelRow, IdleRow};
pub use kind_rate::{FixedRateRow, SweepRow, SweepStepRow};
pub use kind_short::{ShortColumn, ShortGroup, ShortRow};
pub use kind_storm::StormRow;
pub use kinds::KindSections;
pub use load_context::{LoadContext, WorkSource};
pub use load_json::{load_json, LOAD_SCHEMA_VERSION};
pub use load_text::write_load_text;
pub use markdown::write_markdown;
pub use model::{
    build_report, Cell, PairedRatio, Precision, Repetition, RepetitionFigures, Report, RowMethod,
    RowRanking, TwinVerdict, REPORT_FORMAT,
};
pub use pair::{
    compare_pair, judge_pair, pair_headline, pair_json, write_pair_gate, write_pair_text,
    PairBreach, PairComparison, PairError, PairGate, PairRow, PAIR_FORMAT,
};
pub use protocols::ProtocolRow;
pub use resources::ServerUse;
pub use spectrum::{Spectrum, SpectrumPoint};
pub use startup::{
    process_mode, start_up, ProcessMode, ServerStartUp, StartCurve, StartUp, UnsettledCell,
};
pub use suite_table::{run_table, CellStats, RunTable};
pub use terminal_view::write_run_table;
pub use verify_text::{conformance_json, verify_json, write_conformance_text, write_verify_text};
