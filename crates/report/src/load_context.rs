//! What a `netbench load` run was asked to do, as the user gave it: the
//! header of its text and JSON reports, and what it takes to reproduce it.

/// What was run, as the user gave it, for the report's header.
#[derive(Debug, Clone)]
pub struct LoadContext<'a> {
    pub url: &'a str,
    pub method: &'a str,
    pub plan: &'a netbench_engine::LoadPlan,
    /// Distinct requests sent round-robin (a merged result's plan has no
    /// request bytes, only their count).
    pub distinct_requests: usize,
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
