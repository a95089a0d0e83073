//! The io_uring backend: one ring per worker thread (SINGLE_ISSUER and
//! DEFER_TASKRUN where the kernel has them), sockets as registered files
//! indexed by slot, multishot receives into a ring of provided buffers,
//! connects and sends submitted in one batch per loop turn together with the
//! wait. The connection state machines see the same `Read` and `Write` as on
//! epoll: received bytes wait in their provided buffers until the worker
//! reads them, and a write is taken whole and sent by the ring.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::os::fd::RawFd;

use std::time::{Duration, Instant};

use io_uring::types::{Fixed, SubmitArgs, Timespec};
use io_uring::{cqueue, opcode, squeue, IoUring};

use crate::backend::{Connect, Event, Io};
use crate::conn::AnswerSink;
use crate::error_kind::ErrorKind;
use crate::net::sockaddr;
use crate::proto::{ConnPlan, Protocol};
use crate::transport::ReadOutcome;
use crate::uring_buf::{
    kernel_release, BufRing, BUF_GROUP, INC_BUF_SIZE, INC_BYTES_PER_SLOT, INC_MAX_BUFS,
    INC_MIN_BYTES, INC_START_MAX_BYTES, IOU_PBUF_RING_INC, SMALL_BUF_SIZE, SMALL_MAX_BUFS,
};
use crate::wake::WakeBatch;

const OP_CONNECT: u64 = 0;
const OP_RECV: u64 = 1;
const OP_SEND: u64 = 2;
const OP_CANCEL: u64 = 3;

fn user_data(op: u64, gen: u32, slot: usize) -> u64 {
    (op << 62) | ((u64::from(gen) & 0x3fff_ffff) << 32) | slot as u64
}

fn decode(ud: u64) -> (u64, u32, usize) {
    (
        ud >> 62,
        ((ud >> 32) & 0x3fff_ffff) as u32,
        (ud & 0xffff_ffff) as usize,
    )
}

/// Why this process cannot use the io_uring backend here, or None when it
/// can: the ring, registered files and a provided-buffer ring are set up
/// once to find out, and multishot receives need Linux 6.0.
pub fn uring_refusal() -> Option<String> {
    match kernel_release() {
        Some(v) if v >= (6, 0) => {}
        Some((a, b)) => {
            return Some(format!(
                "Linux {a}.{b} has no multishot receive (6.0 or later needed)"
            ))
        }
        None => return Some("the kernel release could not be read".into()),
    }
    match UringIo::new(1) {
        Ok(io) if !io.ring.params().is_feature_ext_arg() => {
            Some("this kernel's io_uring has no timed wait (EXT_ARG)".into())
        }
        Ok(_) => None,
        // EPERM from a seccomp filter or io_uring_disabled, ENOSYS without
        // the syscall, EINVAL for a feature the kernel lacks.
        Err(e) => Some(format!("io_uring was refused: {e}")),
    }
}

/// Received bytes of a slot: `len` bytes from `start` in buffer `bid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Piece {
    bid: u16,
    start: u32,
    len: u32,
}

#[derive(Default)]
struct Slot {
    gen: u32,
    open: bool,
    connect: Option<i32>,
    recv_armed: bool,
    /// Received and not yet read, in order; the capacity stays with the
    /// slot, so a request allocates nothing.
    pieces: VecDeque<Piece>,
    eof: bool,
    /// A failed receive (negative errno), or a failed send.
    recv_error: Option<i32>,
    send_failed: bool,
    /// The bytes the ring is sending (stable until the send completes), and
    /// what was written meanwhile.
    sending: Vec<u8>,
    sent: usize,
    send_inflight: bool,
    queued: Vec<u8>,
}

pub(crate) struct UringIo {
    // Dropped first: the kernel stops using the buffers and files before
    // they go.
    ring: IoUring,
    bufs: BufRing,
    slots: Vec<Slot>,
    target: Option<(libc::sockaddr_storage, libc::socklen_t)>,
    wake_at: Option<Instant>,
    reaped: Vec<(u64, i32, u32)>,
    /// A receive of this turn found no buffer.
    starved: bool,
    /// Completions a wait gathers before it wakes, set by the worker.
    batch: WakeBatch,
    /// Buffers of sends still in flight on closed slots, freed at their
    /// completion.
    retired: Vec<(u64, Vec<u8>)>,
}

impl UringIo {
    pub(crate) fn new(slots: usize) -> io::Result<Self> {
        let entries = (slots + 64).next_power_of_two().clamp(64, 4096) as u32;
        let cq = (2 * slots + 256).next_power_of_two().clamp(256, 65536) as u32;
        let mut builder = IoUring::builder();
        builder
            .setup_cqsize(cq)
            .setup_single_issuer()
            .setup_defer_taskrun();
        let ring = match builder.build(entries) {
            Ok(r) => r,
            // Kernels before 6.1: without deferred task work.
            Err(_) => IoUring::builder().setup_cqsize(cq).build(entries)?,
        };
        ring.submitter().register_files_sparse(slots as u32)?;
        let bufs = match Self::register_bufs(&ring, slots, true) {
            Ok(b) => b,
            // Before Linux 6.12: no incremental buffers.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                Self::register_bufs(&ring, slots, false)?
            }
            Err(e) => return Err(e),
        };
        Ok(UringIo {
            ring,
            bufs,
            starved: false,
            batch: WakeBatch::EACH,
            slots: (0..slots).map(|_| Slot::default()).collect(),
            target: None,
            wake_at: None,
            reaped: Vec::with_capacity(1024),
            retired: Vec::new(),
        })
    }

    fn register_bufs(ring: &IoUring, slots: usize, incremental: bool) -> io::Result<BufRing> {
        let bufs = if incremental {
            let bytes = (INC_BYTES_PER_SLOT * slots).clamp(INC_MIN_BYTES, INC_START_MAX_BYTES);
            BufRing::new(
                INC_MAX_BUFS,
                (bytes / INC_BUF_SIZE) as u16,
                INC_BUF_SIZE,
                true,
            )?
        } else {
            let n = (2 * slots).next_power_of_two().clamp(64, SMALL_MAX_BUFS) as u16;
            BufRing::new(n, n, SMALL_BUF_SIZE, false)?
        };
        let flags = if incremental { IOU_PBUF_RING_INC } else { 0 };
        // SAFETY: the ring memory is page-aligned, holds `entries` entries
        // and lives in `bufs`, which outlives the registration (dropped
        // after the IoUring).
        unsafe {
            ring.submitter().register_buf_ring_with_flags(
                bufs.ring as u64,
                bufs.entries,
                BUF_GROUP,
                flags,
            )?;
        }
        Ok(bufs)
    }

    /// Submits what is queued and waits for `want` completions or `timeout`,
    /// whichever comes first; with DEFER_TASKRUN the kernel wakes the task
    /// only when `want` are queued.
    fn enter(&mut self, want: u32, timeout: Duration) -> io::Result<()> {
        let ts = Timespec::new()
            .sec(timeout.as_secs())
            .nsec(timeout.subsec_nanos());
        let args = SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(want as usize, &args) {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn push(&mut self, e: squeue::Entry) {
        loop {
            // SAFETY: every buffer and address an entry points to lives in
            // `self` (slot buffers, the target address, the buffer ring) and
            // stays put until its completion: the slots never move and a
            // slot's `sending` is not touched while a send is in flight.
            if unsafe { self.ring.submission().push(&e) }.is_ok() {
                return;
            }
            // Full: hand the batch to the kernel and go on.
            let _ = self.ring.submit();
        }
    }

    fn arm_recv(&mut self, slot: usize) {
        let gen = self.slots[slot].gen;
        let e = opcode::RecvMulti::new(Fixed(slot as u32), BUF_GROUP)
            .build()
            .user_data(user_data(OP_RECV, gen, slot));
        self.push(e);
        self.slots[slot].recv_armed = true;
    }

    fn send_queued(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        if s.send_inflight || s.queued.is_empty() {
            return;
        }
        std::mem::swap(&mut s.sending, &mut s.queued);
        s.queued.clear();
        s.sent = 0;
        self.send_rest(slot);
    }

    fn send_rest(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        s.send_inflight = true;
        let rest = &s.sending[s.sent..];
        let e = opcode::Send::new(Fixed(slot as u32), rest.as_ptr(), rest.len() as u32)
            .build()
            .user_data(user_data(OP_SEND, s.gen, slot));
        self.push(e);
    }

    fn complete(&mut self, ud: u64, res: i32, flags: u32, events: &mut Vec<Event>) {
        let (op, gen, slot) = decode(ud);
        let current =
            slot < self.slots.len() && self.slots[slot].open && self.slots[slot].gen == gen;
        // Whether the slot already had bytes waiting, and so a Readable
        // event: the worker reads a slot until it is empty (or keeps it in
        // its list of unread slots), so one event per turn is enough, and a
        // large answer in several completions costs one read, not several.
        let mut told = false;
        if op == OP_RECV {
            if let Some(bid) = cqueue::buffer_select(flags) {
                if res > 0 {
                    let len = res as u32;
                    let start = self.bufs.received(bid, len, cqueue::buffer_more(flags));
                    if current {
                        let pieces = &mut self.slots[slot].pieces;
                        told = !pieces.is_empty();
                        pieces.push_back(Piece { bid, start, len });
                    } else {
                        self.bufs.release(bid);
                    }
                } else {
                    self.bufs.received_nothing(bid);
                }
            }
        }
        if !current {
            if op == OP_SEND {
                self.retired.retain(|(r, _)| *r != ud);
            }
            return;
        }
        match op {
            OP_CONNECT => {
                self.slots[slot].connect = Some(res);
                if res == 0 {
                    self.arm_recv(slot);
                }
                events.push(Event::Connecting(slot));
            }
            OP_RECV => {
                let more = cqueue::more(flags);
                if !more {
                    self.slots[slot].recv_armed = false;
                }
                match res {
                    n if n > 0 => {
                        if !more {
                            self.arm_recv(slot);
                        }
                        if !told {
                            events.push(Event::Readable {
                                slot,
                                closed: false,
                            });
                        }
                    }
                    0 => {
                        self.slots[slot].eof = true;
                        events.push(Event::Readable { slot, closed: true });
                    }
                    // Out of buffers for a moment: receive again, and give
                    // the kernel more buffers at the end of the turn.
                    e if e == -libc::ENOBUFS => {
                        self.starved = true;
                        self.arm_recv(slot);
                    }
                    e => {
                        self.slots[slot].recv_error = Some(e);
                        events.push(Event::Readable { slot, closed: true });
                    }
                }
            }
            OP_SEND => {
                let s = &mut self.slots[slot];
                if res < 0 {
                    s.send_inflight = false;
                    s.send_failed = true;
                    events.push(Event::Readable { slot, closed: true });
                    return;
                }
                s.sent += res as usize;
                if s.sent < s.sending.len() {
                    self.send_rest(slot);
                } else {
                    s.send_inflight = false;
                    s.sending.clear();
                    self.send_queued(slot);
                    // Room again for what the state machine holds back.
                    events.push(Event::Writable(slot));
                }
            }
            _ => {}
        }
    }
}

/// A slot's received bytes as the state machine reads them.
struct Received<'a> {
    slot: &'a mut Slot,
    bufs: &'a mut BufRing,
}

impl Read for Received<'_> {
    /// Fills `buf` as far as the bytes received go, so a short read means
    /// the slot is empty, as from a socket.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let s = &mut *self.slot;
        let mut n = 0;
        while n < buf.len() {
            let Some(p) = s.pieces.front_mut() else { break };
            let data = self.bufs.bytes(p.bid, p.start, p.len);
            let k = data.len().min(buf.len() - n);
            buf[n..n + k].copy_from_slice(&data[..k]);
            n += k;
            if k == data.len() {
                let bid = p.bid;
                s.pieces.pop_front();
                self.bufs.release(bid);
            } else {
                p.start += k as u32;
                p.len -= k as u32;
            }
        }
        if n > 0 {
            return Ok(n);
        }
        if let Some(e) = s.recv_error {
            return Err(io::Error::from_raw_os_error(-e));
        }
        if s.eof {
            return Ok(0);
        }
        Err(io::ErrorKind::WouldBlock.into())
    }
}

/// The most a slot queues behind the send under way; a pipeline batch of
/// requests or the largest WebSocket message fits whole.
const MAX_QUEUED: usize = 256 * 1024;

/// A slot's outgoing bytes: taken up to [`MAX_QUEUED`], sent by the ring.
struct Outgoing<'a> {
    slot: &'a mut Slot,
}

impl Write for Outgoing<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Bounded like a socket's send buffer: past it the state machine
        // keeps its bytes until the send under way completes (issue 27).
        let room = MAX_QUEUED.saturating_sub(self.slot.queued.len());
        if room == 0 && !buf.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(room);
        self.slot.queued.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn socket_for(addr: SocketAddr, source: Option<IpAddr>) -> io::Result<RawFd> {
    let family = match addr {
        SocketAddr::V4(_) => libc::AF_INET,
        SocketAddr::V6(_) => libc::AF_INET6,
    };
    // SAFETY: plain syscall; the result is checked. Blocking mode: the ring
    // waits for readiness itself (FAST_POLL) instead of failing with EAGAIN.
    let fd = unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let set = |level, name| {
        let one: libc::c_int = 1;
        // SAFETY: a valid descriptor and a c_int option of the size given.
        unsafe {
            libc::setsockopt(
                fd,
                level,
                name,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        }
    };
    set(libc::IPPROTO_TCP, libc::TCP_NODELAY);
    if let Some(ip) = source {
        set(libc::IPPROTO_IP, libc::IP_BIND_ADDRESS_NO_PORT);
        let (from, len) = sockaddr(SocketAddr::new(ip, 0));
        // SAFETY: a sockaddr_storage holding an address of `len` bytes.
        if unsafe { libc::bind(fd, (&from as *const libc::sockaddr_storage).cast(), len) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(fd) };
            return Err(e);
        }
    }
    Ok(fd)
}

impl Io for UringIo {
    fn connect(&mut self, slot: usize, addr: SocketAddr, source: Option<IpAddr>) -> io::Result<()> {
        if self.target.is_none() {
            self.target = Some(sockaddr(addr));
        }
        let fd = socket_for(addr, source)?;
        let registered = self
            .ring
            .submitter()
            .register_files_update(slot as u32, &[fd]);
        // SAFETY: our own descriptor; the registered table holds its own
        // reference to the socket.
        unsafe { libc::close(fd) };
        registered?;
        let s = &mut self.slots[slot];
        s.open = true;
        s.connect = None;
        let gen = s.gen;
        let (to, len) = self.target.as_ref().expect("set above");
        let e = opcode::Connect::new(
            Fixed(slot as u32),
            (to as *const libc::sockaddr_storage).cast(),
            *len,
        )
        .build()
        .user_data(user_data(OP_CONNECT, gen, slot));
        self.push(e);
        Ok(())
    }

    fn connect_outcome(&mut self, slot: usize) -> Connect {
        match self.slots[slot].connect {
            None => Connect::Pending,
            Some(0) => Connect::Up,
            Some(_) => Connect::Failed,
        }
    }

    fn close(&mut self, slot: usize) {
        if !self.slots[slot].open {
            return;
        }
        if self.slots[slot].recv_armed {
            let ud = user_data(OP_RECV, self.slots[slot].gen, slot);
            self.push(
                opcode::AsyncCancel::new(ud)
                    .build()
                    .user_data(user_data(OP_CANCEL, 0, slot)),
            );
        }
        // Entries already queued for this slot must reach the kernel while
        // the registered file is still the old socket.
        let _ = self.ring.submit();
        let _ = self
            .ring
            .submitter()
            .register_files_update(slot as u32, &[-1]);
        let s = &mut self.slots[slot];
        if s.send_inflight {
            // The kernel may still read these bytes: kept until the send's
            // completion, which is then ignored.
            let ud = user_data(OP_SEND, s.gen, slot);
            self.retired.push((ud, std::mem::take(&mut s.sending)));
        }
        let gen = s.gen.wrapping_add(1) & 0x3fff_ffff;
        for p in s.pieces.drain(..) {
            self.bufs.release(p.bid);
        }
        let pieces = std::mem::take(&mut s.pieces);
        let mut queued = std::mem::take(&mut s.queued);
        let mut sending = std::mem::take(&mut s.sending);
        queued.clear();
        sending.clear();
        *s = Slot {
            gen,
            pieces,
            queued,
            sending,
            ..Slot::default()
        };
    }

    fn flush<P: Protocol>(&mut self, slot: usize, conn: &mut P) -> Result<u64, ErrorKind> {
        if self.slots[slot].send_failed {
            return Err(ErrorKind::Write);
        }
        let n = conn.flush(&mut Outgoing {
            slot: &mut self.slots[slot],
        })?;
        self.send_queued(slot);
        Ok(n)
    }

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
    ) -> ReadOutcome {
        let s = &mut self.slots[slot];
        // A reset that arrives while the request is still going out fails
        // the write, as it does on epoll, whichever completion came first.
        if s.send_failed || (s.recv_error.is_some() && s.send_inflight) {
            return ReadOutcome::Failed(ErrorKind::Write);
        }
        let closed = peer_closed || s.eof || s.recv_error.is_some();
        conn.on_readable(
            &mut Received {
                slot: s,
                bufs: &mut self.bufs,
            },
            closed,
            scratch,
            plan,
            now,
            sink,
            bytes_read,
        )
    }

    fn arm_timer(&mut self, at: u64, now: u64) {
        self.wake_at = Some(Instant::now() + Duration::from_nanos(at.saturating_sub(now)));
    }

    fn set_wake_batch(&mut self, batch: WakeBatch) {
        self.batch = batch;
    }

    fn wait(&mut self, timeout: Duration, events: &mut Vec<Event>) -> io::Result<()> {
        let mut timeout = timeout;
        if let Some(at) = self.wake_at {
            let left = at.saturating_duration_since(Instant::now());
            if left <= timeout {
                timeout = left;
                self.wake_at = None;
            }
        }
        if self.batch.batches() && timeout > self.batch.cap {
            // Wake when the batch is queued, or at the cap if anything is;
            // with nothing by then, wake for the first as usual.
            self.enter(self.batch.count, self.batch.cap)?;
            if self.ring.completion().is_empty() {
                self.enter(1, timeout - self.batch.cap)?;
            }
        } else {
            self.enter(1, timeout)?;
        }
        self.reaped.clear();
        for cqe in self.ring.completion() {
            self.reaped
                .push((cqe.user_data(), cqe.result(), cqe.flags()));
        }
        let reaped = std::mem::take(&mut self.reaped);
        for &(ud, res, flags) in &reaped {
            self.complete(ud, res, flags, events);
        }
        self.reaped = reaped;
        if std::mem::take(&mut self.starved) {
            self.bufs.grow();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch of 8 with one completion to give: the wait ends at the cap,
    /// not at its timeout, and hands the completion up.
    #[test]
    fn a_batched_wait_wakes_for_fewer_completions_than_its_batch() {
        use std::io::Write as _;
        if let Some(why) = uring_refusal() {
            panic!("io_uring is refused here, so the batched wait cannot be tested: {why}");
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut io = UringIo::new(1).unwrap();
        io.connect(0, listener.local_addr().unwrap(), None).unwrap();
        // The connect goes to the kernel with the first wait; the listener's
        // backlog completes it before the accept.
        let mut events = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        while io.connect_outcome(0) == Connect::Pending && Instant::now() < deadline {
            io.wait(Duration::from_millis(100), &mut events).unwrap();
        }
        assert_eq!(io.connect_outcome(0), Connect::Up);
        let (mut peer, _) = listener.accept().unwrap();
        io.set_wake_batch(WakeBatch {
            count: 8,
            cap: Duration::from_micros(50),
        });
        peer.write_all(b"x").unwrap();
        let start = Instant::now();
        let readable = |events: &Vec<Event>| {
            events
                .iter()
                .any(|e| matches!(e, Event::Readable { slot: 0, .. }))
        };
        events.clear();
        while !readable(&events) && start.elapsed() < Duration::from_secs(30) {
            io.wait(Duration::from_secs(10), &mut events).unwrap();
        }
        assert!(readable(&events), "the byte never came up");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "one completion waited {:?} for a batch it could not fill",
            start.elapsed()
        );
    }

    /// What the kernel does for a receive: writes `bytes` where the buffer
    /// at the ring's head is filled up to, and completes with `more` when the
    /// buffer keeps room for the next receive.
    fn kernel_receives(bufs: &mut BufRing, slot: &mut Slot, bid: u16, bytes: &[u8], more: bool) {
        let at = bid as usize * bufs.size + bufs.filled[bid as usize] as usize;
        // SAFETY: inside the mapping, as the kernel would write.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), bufs.data.add(at), bytes.len()) };
        let len = bytes.len() as u32;
        let start = bufs.received(bid, len, more);
        slot.pieces.push_back(Piece { bid, start, len });
    }

    #[test]
    fn user_data_keeps_op_generation_and_slot_apart() {
        for (op, gen, slot) in [
            (OP_CONNECT, 0, 0),
            (OP_RECV, 0x3fff_ffff, 99_999),
            (OP_SEND, 7, 1),
        ] {
            assert_eq!(decode(user_data(op, gen, slot)), (op, gen, slot));
        }
        // Generations wrap inside their 30 bits without touching the op.
        assert_eq!(
            decode(user_data(OP_CANCEL, 0x4000_0001, 5)),
            (OP_CANCEL, 1, 5)
        );
    }

    #[test]
    fn received_bytes_read_out_in_order_across_buffers_then_end_or_wait() {
        let mut bufs = BufRing::new(4, 4, 8, true).unwrap();
        let mut slot = Slot::default();
        kernel_receives(&mut bufs, &mut slot, 0, b"hello", true);
        kernel_receives(&mut bufs, &mut slot, 0, b" wo", false);
        kernel_receives(&mut bufs, &mut slot, 1, b"rld", true);
        let mut r = Received {
            slot: &mut slot,
            bufs: &mut bufs,
        };
        let mut buf = [0u8; 4];
        assert_eq!(r.read(&mut buf).unwrap(), 4);
        assert_eq!(&buf, b"hell");
        let mut rest = [0u8; 16];
        assert_eq!(
            r.read(&mut rest).unwrap(),
            7,
            "a read takes every piece there is"
        );
        assert_eq!(&rest[..7], b"o world");
        assert_eq!(
            r.read(&mut rest).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        slot.eof = true;
        let mut r = Received {
            slot: &mut slot,
            bufs: &mut bufs,
        };
        assert_eq!(r.read(&mut rest).unwrap(), 0);
        slot.recv_error = Some(-libc::ECONNRESET);
        let e = Received {
            slot: &mut slot,
            bufs: &mut bufs,
        }
        .read(&mut rest)
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionReset);
    }

    #[test]
    fn an_incremental_buffer_goes_back_once_the_kernel_and_every_reader_are_done() {
        let mut bufs = BufRing::new(4, 2, 8, true).unwrap();
        let given = bufs.tail;
        let (mut a, mut b) = (Slot::default(), Slot::default());
        kernel_receives(&mut bufs, &mut a, 0, b"aaa", true);
        kernel_receives(&mut bufs, &mut b, 0, b"bbbbb", false);
        let mut out = [0u8; 8];
        let read = |slot: &mut Slot, bufs: &mut BufRing, out: &mut [u8]| {
            Received { slot, bufs }.read(out).unwrap()
        };
        assert_eq!(read(&mut b, &mut bufs, &mut out), 5);
        assert_eq!(
            &out[..5],
            b"bbbbb",
            "the second piece starts where the first ended"
        );
        assert_eq!(bufs.tail, given, "still holds a's bytes");
        assert_eq!(read(&mut a, &mut bufs, &mut out), 3);
        assert_eq!(&out[..3], b"aaa");
        assert_eq!(bufs.tail, given + 1, "given back once both were read");
        assert_eq!(bufs.filled[0], 0, "and filled again from its start");

        // Read out while the kernel still fills it: not given back yet.
        kernel_receives(&mut bufs, &mut a, 1, b"xy", true);
        assert_eq!(read(&mut a, &mut bufs, &mut out), 2);
        assert_eq!(bufs.tail, given + 1);
        kernel_receives(&mut bufs, &mut a, 1, b"z", true);
        bufs.received_nothing(1);
        assert_eq!(
            bufs.tail,
            given + 1,
            "an incremental buffer stays with the kernel"
        );
        kernel_receives(&mut bufs, &mut a, 1, b"12345", false);
        assert_eq!(read(&mut a, &mut bufs, &mut out), 6);
        assert_eq!(&out[..6], b"z12345");
        assert_eq!(bufs.tail, given + 2);
    }

    #[test]
    fn a_ring_that_ran_out_doubles_up_to_its_size() {
        let mut bufs = BufRing::new(8, 2, 8, true).unwrap();
        let given = bufs.tail;
        bufs.grow();
        assert_eq!((bufs.active, bufs.tail), (4, given + 2));
        bufs.grow();
        bufs.grow();
        assert_eq!(
            (bufs.active, bufs.tail),
            (8, given + 6),
            "no more than the ring holds"
        );
    }

    #[test]
    fn a_whole_buffer_goes_back_after_its_one_receive() {
        let mut bufs = BufRing::new(4, 4, 8, false).unwrap();
        let given = bufs.tail;
        let mut a = Slot::default();
        // `more` means nothing for whole buffers: each receive spends one.
        kernel_receives(&mut bufs, &mut a, 2, b"abc", true);
        bufs.received_nothing(3);
        assert_eq!(bufs.tail, given + 1, "an empty receive spent buffer 3");
        let mut out = [0u8; 8];
        assert_eq!(
            Received {
                slot: &mut a,
                bufs: &mut bufs
            }
            .read(&mut out)
            .unwrap(),
            3
        );
        assert_eq!(bufs.tail, given + 2);
    }
}
