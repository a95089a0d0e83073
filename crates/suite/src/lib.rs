//! Orchestration of the servers under test: reading their manifests,
//! building them, and running each in its own process group on a free port
//! until it is ready, then stopping it for sure.

mod manifest;
mod server;

pub use manifest::{discover, load_manifest, ManifestError, ServerManifest, Variant};
pub use server::{
    build, free_port, run_tests, start, BuildError, BuildReport, RunningServer, StartError,
};
