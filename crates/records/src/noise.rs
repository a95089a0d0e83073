//! How fast and how quiet the machine was around one cell (the runner's
//! machine-speed control, crates/suite/src/noise.rs), as stored.

use serde::{Deserialize, Serialize};

/// Busy cores outside netbench and the server above which a machine is not
/// quiet enough to start a cell.
pub const QUIET_THRESHOLD_CORES: f64 = 0.25;

/// The noise facts of one cell, stored with its measurement.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Noise {
    /// Nanoseconds one probe trial took on the server's CPUs: the mean of
    /// the probes before and after the cell. Larger means a slower machine.
    pub probe_server_ns: f64,
    /// The same on the client's CPUs.
    pub probe_client_ns: f64,
    /// Nanoseconds of one fixed exchange over loopback between the server's
    /// CPUs and the client's (`loopback_probe`), the mean of before and
    /// after the cell. None for measurements made before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_loopback_ns: Option<f64>,
    /// How much the server-CPU probe moved from before to after the cell
    /// (after ÷ before − 1): the machine changed speed during the cell.
    pub probe_drift: f64,
    /// Share of the machine's CPU time the host took (steal) while the
    /// cell ran.
    pub steal: f64,
    /// Cores kept busy by anything but netbench and the server while the
    /// cell ran.
    pub other_busy_cores: f64,
    /// The same, in the last look before the cell started.
    pub other_busy_before_cores: f64,
    /// How long the runner waited for quiet before the cell.
    pub quiet_wait_s: f64,
}
