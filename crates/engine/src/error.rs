//! The errors that stop a run before it starts or make it stop; the
//! per-request kinds are the leaf [`crate::error_kind`].

/// Why a run could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(
        "{needed} open files are needed for {connections} connections but the hard limit is \
         {hard}; raise it (as root: `ulimit -Hn {needed}`, or LimitNOFILE= for a service) \
         or use fewer connections"
    )]
    TooFewFiles {
        connections: usize,
        needed: u64,
        hard: u64,
    },
    #[error("could not set up the event loop: {0}; check the limits on epoll instances and file descriptors")]
    EventLoop(#[source] std::io::Error),
    #[error("the plan is not runnable: {0}")]
    Plan(#[from] crate::plan::PlanError),
    #[error("the idle plan is not runnable: {0}")]
    IdlePlan(crate::idle_plan::IdlePlanError),
    #[error("the RunControl was made for another plan (another worker count); make one with RunControl::new(&plan)")]
    ForeignControl,
    #[error("a worker thread panicked; this is a bug in netbench, please report it")]
    WorkerPanicked,
    #[error("a worker thread could not be started: {0}")]
    Spawn(#[source] std::io::Error),
}
