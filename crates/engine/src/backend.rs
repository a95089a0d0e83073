//! The one interface the worker does its I/O through, whatever the kernel
//! interface: epoll readiness ([`crate::epoll::EpollIo`]) or io_uring
//! completions ([`crate::uring::UringIo`]). The worker keeps the run's logic
//! (phases, pacing, timeouts, reconnects); a backend owns the sockets, in
//! slots indexed like the worker's connections.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use crate::conn::AnswerSink;
use crate::error_kind::ErrorKind;
use crate::proto::{ConnPlan, Protocol};
use crate::transport::ReadOutcome;
use crate::wake::WakeBatch;

/// Something that happened to a slot (or the timer) while waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// The pacing timer fired.
    Timer,
    /// A connect under way made progress: ask [`Io::connect_outcome`].
    Connecting(usize),
    /// The socket may be written to (epoll) or a send finished (io_uring).
    Writable(usize),
    /// Bytes, the end of the stream or an error wait to be read; `closed`
    /// when the peer closed or the socket failed.
    Readable { slot: usize, closed: bool },
}

/// Where a connect stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Connect {
    Up,
    /// Not finished yet: wait for the next event.
    Pending,
    Failed,
}

pub(crate) trait Io: Sized {
    /// Starts connecting slot `slot` (which has no socket).
    fn connect(&mut self, slot: usize, addr: SocketAddr, source: Option<IpAddr>) -> io::Result<()>;

    /// After an [`Event::Connecting`]: whether the connect finished.
    fn connect_outcome(&mut self, slot: usize) -> Connect;

    /// Closes the slot's socket; what is under way on it is dropped.
    fn close(&mut self, slot: usize);

    /// Writes what `conn` has queued, as far as the socket takes it now.
    fn flush<P: Protocol>(&mut self, slot: usize, conn: &mut P) -> Result<u64, ErrorKind>;

    /// Hands what arrived for the slot to `conn` (see
    /// [`Protocol::on_readable`]).
    #[allow(clippy::too_many_arguments)]
    fn read<P: Protocol, S: AnswerSink>(
        &mut self,
        slot: usize,
        conn: &mut P,
        peer_closed: bool,
        scratch: &mut [u8],
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
        bytes_read: &mut u64,
    ) -> ReadOutcome;

    /// Wakes the loop at `at` (ns on the run's clock; `now` is the current
    /// reading), for open-loop pacing.
    fn arm_timer(&mut self, at: u64, now: u64);

    /// How many completions a wait may gather before it wakes (see
    /// [`crate::wake`]). Readiness (epoll) has no such count: it wakes for
    /// the first, and ignores this.
    fn set_wake_batch(&mut self, _batch: WakeBatch) {}

    /// Waits at most `timeout` for something to happen, and appends it to
    /// `events`.
    fn wait(&mut self, timeout: Duration, events: &mut Vec<Event>) -> io::Result<()>;
}
