//! The netbench load engine: turns a resolved [`LoadPlan`] into a [`LoadResult`].
//!
//! One event loop per worker thread, connections split across workers, nothing
//! shared on the hot path. The engine never prints and never touches files; the
//! caller formats the result and may watch [`Progress`] or cancel through
//! [`RunControl`].

mod answer;
mod app_page;
mod backend;
mod check;
mod clock;
mod conn;
mod control;
mod cpu;
mod epoll;
mod error;
mod error_kind;
pub mod h2;
mod histogram;
mod html;
mod idle;
mod idle_plan;
mod limits;
mod merge;
mod net;
mod pacing;
mod parse;
mod part;
mod plan;
mod proto;
mod request;
mod result;
mod run;
mod session;
mod stats;
mod target;
mod tls;
mod tls_config;
mod transport;
mod uring;
mod uring_buf;
mod verdict;
mod wake;
mod window;
mod worker;
pub mod ws;

pub use app_page::{read_app_page, AppPage, PageMismatch, PageSession};
pub use check::{
    content_type_matches, grpc_message, world_rows_problem, BodyExpect, Coding, Expect,
    StatusExpect, WorldValue,
};
pub use control::{Progress, ProgressSnapshot, RunControl};
pub use error::EngineError;
pub use error_kind::{ErrorCounts, ErrorKind};
pub use html::{table_problem, table_rows, TableMismatch};
pub use idle::{run_idle, IdleLevel, IdleResult};
pub use idle_plan::{IdlePlan, IdlePlanError};
pub use limits::{raise_fd_limit, raise_soft_fd_limit, FdLimit};
pub use merge::{merge_parts, parts_apart, union_len_ns, MergeError, Merger, Part};
pub use parse::{parse_head, ChunkError, ChunkedDecoder, Framing, HeadError, ResponseHead};
pub use part::{read_part, write_part, PartError, PartFile, PlanSummary, PART_FORMAT};
pub use plan::{
    IoBackend, LoadPlan, Pacing, PlanError, RequestTemplate, SessionPlan, Stop, WsPlan,
};
pub use request::{build_request, RequestParts};
pub use result::{
    ClientMemory, LatencySummary, LoadResult, PartReport, RateSummary, Unfinished, Verdict,
    WorkerReport,
};
pub use run::run;
pub use session::cookie_pair as session_cookie;
pub use target::{parse_url, Host, TargetError, Url};
pub use tls::fuzz_feed as fuzz_tls_feed;
pub use tls_config::{TlsConfigError, TlsOptions, TlsPlan, TlsVersion};
pub use uring::uring_refusal;

/// Worker threads to use when the caller does not say: the CPUs this process
/// may run on (its affinity mask and cgroup quota), at least one.
pub fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
