//! Orchestration of `netbench run`: suite files, server manifests, builds,
//! server lifecycle (own process group, readiness, certain stop), CPU
//! placement, network placement (loopback or a namespace), /proc sampling,
//! the matrix of cells and the SQLite results store. (Statistics over
//! repetitions belong to the reports.)

mod adaptive;
pub mod allocator;
mod cell;
pub mod cgroup;
pub mod environment;
pub mod kinds;
pub mod listen;
pub mod listeners;
mod logs;
pub mod loopback_probe;
mod manifest;
pub mod netns;
pub mod noise;
pub mod pki;
pub mod placement;
pub mod postgres;
pub mod records_of;
mod resident;
pub mod rounds;
mod runner;
pub mod sampler;
mod server;
pub mod steady;
pub mod store;
mod suite;
mod targets;
mod toml_error;
mod tree;
mod visits;
pub mod warm;

pub use adaptive::{Adaptive, SettleRule, Stopped};
pub use allocator::{Allocator, AllocatorError};
pub use cell::READY_WITHIN;
pub use manifest::{
    discover, load_manifest, parse_manifest, ManifestError, Model, Offer, ServerManifest, Tier,
    Variant,
};
pub use netns::{parse_bandwidth, Bandwidth, NetPlacement, NetnsError, NetworkPath};
pub use resident::MAX_RESTARTS;
pub use runner::{ask_for_offers, run_suite, Event, Observer, RunError, RunOutcome, RunRequest};
pub use server::{
    build, free_port, run_tests, start, BuildError, BuildReport, RunningServer, StartError,
    StartSpec,
};
pub use suite::{
    parse_cpu_list, parse_duration, selector_matches, Endpoint, Length, Placement, Repetitions,
    Scenario, Suite, SuiteError, MAX_REPETITIONS,
};
pub use targets::{select, Target};
pub use tree::stop_adopted;
