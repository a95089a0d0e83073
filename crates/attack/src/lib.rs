//! Hostile HTTP/1.1 clients (issue 33): slowloris, slow reads, malformed and
//! oversized floods, connection floods and tiny TCP segments, each bounded in
//! connections and time and aimed only at loopback addresses.
//!
//! Why two shapes of loop. The held kinds (slowloris, slow-read, conn-flood)
//! keep many connections that each do almost nothing: one thread holds them
//! all, non-blocking, and sleeps in poll(2) between ticks, so ten thousand
//! slowloris connections cost the machine a wake-up per tick, not ten
//! thousand threads. The flood kinds (malformed, oversized, tcp-frag) keep
//! every connection busy with a request and its answer: plain blocking
//! std::net threads, one per connection (at most
//! [`MAX_FLOOD_CONNECTIONS`]), are the simplest correct shape, and a flood's
//! CPU is its point. Every blocking call of a flood gives up after
//! [`net::SLICE`] (0.1 s) to look at the deadline and the stop flag; the held
//! loop's poll wakes at its deadline, at once on a signal, and within half a
//! second of a stop flag set by another thread.
//!
//! Safety of the tool itself: the only address a socket connects to is a
//! [`LoopbackTarget`], which refuses anything but 127.0.0.0/8 and ::1.

mod flood;
mod hold;
mod net;
mod payload;
mod plan;
mod tally;

use std::sync::atomic::AtomicBool;
use std::time::Instant;

pub use payload::{
    good_request, malformed, oversized, EndlessHead, MALFORMED_CASES, OVERSIZED_CASES,
};
pub use plan::{
    is_loopback, AttackKind, AttackPlan, AttackRequest, LoopbackTarget, PlanError,
    DEFAULT_INTERVAL, MAX_DURATION, MAX_FLOOD_CONNECTIONS, MAX_HELD_CONNECTIONS,
};
pub use tally::{Answers, AttackSummary, Errors};

use tally::Tally;

/// Descriptors kept free beside the attack's connections (stdio, and
/// reconnects racing with closes), as the load engine keeps.
const SPARE_FDS: u64 = 64;

#[derive(Debug, thiserror::Error)]
pub enum AttackError {
    /// The open-file limit could not be read.
    #[error("cannot read the open-file limit: {0}; check `ulimit -n`")]
    FdLimit(#[source] std::io::Error),
    /// Not even one connection fits under the open-file limit.
    #[error(
        "the open-file limit ({soft}) leaves no room for a connection beside the {SPARE_FDS} \
         descriptors kept free; raise it to more than {SPARE_FDS} with `ulimit -n` (and the \
         hard limit with `ulimit -Hn` as root)"
    )]
    NoDescriptors { soft: u64 },
    /// A flood thread could not be started.
    #[error("cannot start a connection thread: {0}; lower --connections")]
    Thread(std::io::Error),
}

/// The outcome of [`run`]: the summary, and the connections the plan was cut
/// to by the open-file limit (when it was).
#[derive(Debug, Clone)]
pub struct AttackOutcome {
    pub summary: AttackSummary,
    /// `Some(n)`: the plan asked for more connections than the open-file
    /// limit allows, and `n` were used.
    pub capped_to: Option<usize>,
}

/// Runs the attack until `plan.duration` has passed or `stop` is set, then
/// closes every connection and returns what was counted.
pub fn run(plan: &AttackPlan, stop: &AtomicBool) -> Result<AttackOutcome, AttackError> {
    let started = Instant::now();
    // The soft limit raised to the hard one, as the load engine does; the
    // connections are cut to what it allows rather than failing mid-way.
    // Only raised here: the room is judged below, in connections, since a
    // check for "0 connections" said "64 open files are needed for 0
    // connections" (issue 42).
    let limit = netbench_engine::raise_soft_fd_limit().map_err(AttackError::FdLimit)?;
    let room = limit.soft.saturating_sub(SPARE_FDS) as usize;
    if room == 0 {
        return Err(AttackError::NoDescriptors { soft: limit.soft });
    }
    let mut plan = plan.clone();
    let capped_to = (plan.connections > room).then_some(room);
    plan.connections = plan.connections.min(room);

    let end = net::End {
        deadline: started + plan.duration,
        stop,
    };
    let tally = Tally::default();
    if plan.kind.is_held() {
        hold::run(&plan, &end, &tally);
    } else {
        std::thread::scope(|scope| -> Result<(), AttackError> {
            for index in 0..plan.connections {
                let (plan, end, tally) = (&plan, &end, &tally);
                std::thread::Builder::new()
                    .name(format!("attack-{index}"))
                    // The threads hold a request and a 16 KiB read chunk.
                    .stack_size(256 * 1024)
                    .spawn_scoped(scope, move || {
                        flood::run_connection(plan, index, end, tally)
                    })
                    .map_err(AttackError::Thread)?;
            }
            Ok(())
        })?;
    }
    Ok(AttackOutcome {
        summary: tally.summary(plan.kind, plan.connections, started.elapsed().as_secs_f64()),
        capped_to,
    })
}
