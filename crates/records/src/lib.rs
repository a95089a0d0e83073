//! The records a netbench run stores: the run, its servers and what they
//! are, its scenarios, and each measurement with its samples, noise, facts
//! and network path. Plain data shared by the suite, which writes them
//! (crates/suite/src/store.rs), and the reports, which read them: neither
//! parses the other's text back out of the store.

pub mod adaptive;
pub mod facts;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
pub mod hostile;
pub mod network;
pub mod noise;
pub mod resident;
pub mod run;
pub mod sample;
pub mod scenario;
pub mod server;

pub use adaptive::Adaptive;
pub use facts::Facts;
pub use network::{Bandwidth, NetPlacement, NetworkPath};
pub use noise::Noise;
pub use resident::{ServerEvent, ServerEventKind};
pub use run::{
    BuildStatus, CellId, CellKey, Measurement, MeasurementStatus, NewRun, ProcessUse, RunDetail,
    RunStatus, RunSummary, ServerRecord, WarmUp,
};
pub use sample::Sample;
pub use scenario::{Protocol, ScenarioRecord};
pub use server::{Model, Offer, ServerFacts, Tier};
