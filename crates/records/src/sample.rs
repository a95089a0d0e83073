//! One look at a server's process tree in /proc: CPU time, memory, threads
//! and context switches, as the sampler takes it and the store keeps it.

use serde::{Deserialize, Serialize};

/// The resource use of one process group at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since sampling started (0 from [`sample_group`] alone).
    pub t_s: f64,
    /// User CPU seconds, cumulative, summed over the group.
    pub cpu_user_s: f64,
    /// System CPU seconds, cumulative, summed over the group.
    pub cpu_sys_s: f64,
    pub rss_bytes: u64,
    /// Proportional set size: shared pages divided among their sharers, so
    /// forked workers sharing their parent's memory are not counted twice.
    pub pss_bytes: u64,
    pub threads: u32,
    /// Context switches, cumulative, summed over the group.
    pub voluntary_ctxt: u64,
    pub involuntary_ctxt: u64,
    /// Processes found in the group; 0 when the group is gone.
    pub processes: u32,
}
