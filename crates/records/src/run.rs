//! The plain data that goes in and out of the results store: a run, its
//! servers, scenarios and measurements.

#[cfg(feature = "sqlite")]
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, ValueRef};
#[cfg(feature = "sqlite")]
use rusqlite::ToSql;

pub use crate::adaptive::Adaptive;
pub use crate::noise::Noise;
pub use crate::sample::Sample;
use crate::scenario::ScenarioRecord;
use crate::server::ServerFacts;

/// Enumerations stored as their lowercase names, so the file reads well in
/// `sqlite3` and the schema's CHECKs can list them.
macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// The name stored in the database.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($text => Ok(Self::$variant),)+
                    other => Err(format!("{other:?} is not a {}", stringify!($name))),
                }
            }
        }

        #[cfg(feature = "sqlite")]
        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(self.as_str().into())
            }
        }

        #[cfg(feature = "sqlite")]
        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                match value.as_str()? {
                    $($text => Ok(Self::$variant),)+
                    other => Err(FromSqlError::Other(
                        format!("{other:?} is not a {}", stringify!($name)).into(),
                    )),
                }
            }
        }
    };
}

text_enum! {
    /// Where a run stands.
    RunStatus {
        /// Started and not finished; also what a crashed run looks like.
        Running = "running",
        /// Every cell of the matrix was attempted.
        Complete = "complete",
        /// Stopped by the user (Ctrl-C); can be resumed.
        Interrupted = "interrupted",
        /// Stopped by an error in netbench itself, not in a server.
        Failed = "failed",
    }
}

text_enum! {
    /// How a server's build went.
    BuildStatus {
        Ok = "ok",
        Failed = "failed",
        /// Not attempted, e.g. its toolchain is missing.
        Skipped = "skipped",
    }
}

text_enum! {
    /// Whether a measurement produced a result.
    MeasurementStatus {
        Ok = "ok",
        Failed = "failed",
    }
}

/// What is known about a run when it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRun {
    pub suite: String,
    /// The suite file's full text, so the run can be understood (and
    /// repeated) after the file has changed.
    pub suite_toml: String,
    /// The command line that started the run.
    pub command: String,
    /// CPU model, cores, memory, kernel, tool and compiler versions, project
    /// commit: whatever the caller gathered.
    pub environment: serde_json::Value,
    /// Which CPUs the server and the client were pinned to.
    pub placement: serde_json::Value,
    /// Repetitions given on the command line in place of the suite's.
    pub repetitions: Option<u32>,
    /// Seeds the run's generated work documents.
    pub work_seed: u64,
    /// Adaptive repetitions as the run uses them; None for a fixed count.
    pub adaptive: Option<Adaptive>,
    /// The suite's scenarios in its order, as the run uses them.
    pub scenarios: Vec<ScenarioRecord>,
}

/// One server variant in a run: how it was built and whether it took part.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerRecord {
    pub server: String,
    /// "" for the default variant.
    pub variant: String,
    pub manifest_toml: String,
    pub build_status: BuildStatus,
    /// How long the build of the artefact in use took: this run's build, or
    /// the earlier one reused while the sources were unchanged; 0 when the
    /// build was skipped.
    pub build_s: f64,
    pub artefact_bytes: Option<u64>,
    /// From start to the first good answer; None when it never got there.
    pub ready_s: Option<f64>,
    /// The contract verification's outcome, as JSON text.
    pub verify_json: Option<String>,
    /// Why the server was left out of the run (missing toolchain, build
    /// failure with its last output lines, verify failure); None when it took
    /// part.
    pub excluded_reason: Option<String>,
    /// The C-level allocator it ran with (`glibc`, `jemalloc`, `mimalloc`,
    /// `tcmalloc`), checked at start; None for a runtime's own allocator.
    pub allocator: Option<String>,
    /// What the server variant is (model, tier, language, framework),
    /// from its manifest when it was recorded.
    pub facts: ServerFacts,
}

/// One cell of the run matrix: what a measurement is of.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellKey {
    pub server: String,
    /// "" for the default variant.
    pub variant: String,
    pub scenario: String,
    pub connections: u32,
    /// 1-based.
    pub repetition: u32,
}

/// A cell of the matrix across its repetitions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellId {
    pub server: String,
    /// "" for the default variant.
    pub variant: String,
    pub scenario: String,
    pub connections: u32,
}

impl CellKey {
    /// The cell this measurement is a repetition of.
    pub fn cell(&self) -> CellId {
        CellId {
            server: self.server.clone(),
            variant: self.variant.clone(),
            scenario: self.scenario.clone(),
            connections: self.connections,
        }
    }
}

/// One measurement of a cell with its /proc samples: what the runner hands
/// the store, and what the store gives back.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The store's id for it; `None` until it is stored.
    pub id: Option<i64>,
    pub key: CellKey,
    pub status: MeasurementStatus,
    /// Required when the status is failed.
    pub failure: Option<String>,
    /// The engine's full result; required when the status is ok.
    pub result_json: Option<String>,
    /// The serialized latency HdrHistogram.
    pub histogram: Option<Vec<u8>>,
    /// The client, not the server, was the limit.
    pub client_bound: bool,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub duration_s: f64,
    /// Of the server's process tree, in the order they were taken; `t_s`
    /// counts from the start of the measured phase.
    pub samples: Vec<Sample>,
    /// The machine-speed control and the noise around the cell; None for
    /// a failed cell and for measurements made before they were kept.
    pub noise: Option<Noise>,
    /// What the scenario's kind measured beyond the engine result (None for
    /// throughput, and for measurements stored before kinds).
    pub facts: Option<crate::facts::Facts>,
    /// The server's process-tree CPU seconds over the measured window (None
    /// before schema 5, or when /proc could not be read).
    pub server_cpu_s: Option<f64>,
    /// Loopback or a namespace over a veth pair, with its addresses, MTU and
    /// bandwidth (None for a failed cell, and before schema 6, when every
    /// cell was on loopback).
    pub network: Option<crate::network::NetworkPath>,
    /// The warm phase before the measured window, when the suite warms
    /// until steady (None otherwise, and before schema 8).
    pub warmup: Option<WarmUp>,
    /// Bytes of the server's output its log dropped during this cell (the
    /// log keeps the first and last MiB of a server's output): None when
    /// nothing was cut, and before schema 12.
    pub server_output_cut: Option<u64>,
}

/// Whether a cell's server process was started for it or served earlier
/// cells of its round (a suite's `[warmup] process`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProcessUse {
    /// Started for this cell.
    Fresh,
    /// Warm from the earlier cells of its server's round.
    Reused,
}

/// What the warm phase before a cell saw (issue 28): the throughput of each
/// window since it began, when the online rule judged it steady, and the
/// class of the whole curve (`steady.rs`). Stored as JSON.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WarmUp {
    pub process: ProcessUse,
    /// For a fresh process: from its start to its first answer.
    pub ready_s: Option<f64>,
    /// From the server process's start to the first warm window's start
    /// (the x offset of the curve on a time-since-start axis).
    pub since_start_s: f64,
    pub window_s: f64,
    /// Requests/s of each window, in order.
    pub curve: Vec<f64>,
    /// When the online rule judged it steady, from the first window; None
    /// when it never did (the cell was measured at the cap: `capped`).
    pub settled_s: Option<f64>,
    pub capped: bool,
    /// flat, warmed, slowdown or no-steady-state (`SteadyClass::as_str`).
    pub class: String,
    /// Where the whole curve's last level began, by the classification.
    pub steady_from_s: Option<f64>,
}

/// A line of the list of runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub id: i64,
    pub suite: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: RunStatus,
    /// Measurements that succeeded.
    pub ok: u64,
    /// Measurements that failed.
    pub failed: u64,
}

/// Everything stored about a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunDetail {
    pub id: i64,
    pub suite: String,
    pub suite_toml: String,
    pub command: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: RunStatus,
    pub environment: serde_json::Value,
    pub placement: serde_json::Value,
    /// Repetitions given on the command line in place of the suite's; None
    /// when the suite's own (runs stored before schema 2 have the override
    /// written into `suite_toml`).
    pub repetitions: Option<u32>,
    /// Seeds the run's generated work documents; None for a run stored
    /// before the seed was kept.
    pub work_seed: Option<u64>,
    /// Adaptive repetitions as the run used them; None for a fixed count.
    pub adaptive: Option<Adaptive>,
    /// The suite's scenarios in its order (filled for runs stored before
    /// they were recorded from the suite file, when it still parses).
    pub scenarios: Vec<ScenarioRecord>,
    /// Ordered by server, then variant.
    pub servers: Vec<ServerRecord>,
    /// Ordered by cell key.
    pub measurements: Vec<Measurement>,
    /// What happened to its resident servers, in order (empty when its
    /// servers were not resident, and for runs stored before schema 12).
    pub events: Vec<crate::resident::ServerEvent>,
}
