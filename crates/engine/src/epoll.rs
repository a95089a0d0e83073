//! The epoll backend: mio's readiness loop, one non-blocking socket per
//! slot, and a timerfd for open-loop pacing.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use mio::net::TcpStream;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use crate::backend::{Connect, Event, Io};
use crate::conn::AnswerSink;
use crate::error_kind::ErrorKind;
use crate::net::{self, Timer};
use crate::proto::{ConnPlan, Protocol};
use crate::transport::ReadOutcome;

const TIMER: Token = Token(usize::MAX);

pub(crate) struct EpollIo {
    poll: Poll,
    events: Events,
    socks: Vec<Option<TcpStream>>,
    /// Whether each slot's connect is still under way.
    connecting: Vec<bool>,
    timer: Option<Timer>,
}

impl EpollIo {
    /// `slots` sockets at most; a timer only for open loop.
    pub(crate) fn new(slots: usize, paced: bool) -> io::Result<Self> {
        let poll = Poll::new()?;
        let timer = if paced {
            let timer = Timer::new()?;
            poll.registry()
                .register(&mut SourceFd(&timer.raw_fd()), TIMER, Interest::READABLE)?;
            Some(timer)
        } else {
            None
        };
        Ok(EpollIo {
            poll,
            events: Events::with_capacity(1024),
            socks: (0..slots).map(|_| None).collect(),
            connecting: vec![false; slots],
            timer,
        })
    }
}

impl Io for EpollIo {
    fn connect(&mut self, slot: usize, addr: SocketAddr, source: Option<IpAddr>) -> io::Result<()> {
        let mut sock = net::connect(addr, source)?;
        self.poll.registry().register(
            &mut sock,
            Token(slot),
            Interest::READABLE | Interest::WRITABLE,
        )?;
        self.socks[slot] = Some(sock);
        self.connecting[slot] = true;
        Ok(())
    }

    fn connect_outcome(&mut self, slot: usize) -> Connect {
        let Some(sock) = self.socks[slot].as_ref() else {
            return Connect::Failed;
        };
        let outcome = net::connect_outcome(sock);
        if outcome != Connect::Pending {
            self.connecting[slot] = false;
        }
        outcome
    }

    fn close(&mut self, slot: usize) {
        // Dropping the socket closes it, which also removes it from epoll.
        self.socks[slot] = None;
        self.connecting[slot] = false;
    }

    fn flush<P: Protocol>(&mut self, slot: usize, conn: &mut P) -> Result<u64, ErrorKind> {
        match self.socks[slot].as_mut() {
            Some(sock) => conn.flush(sock),
            None => Ok(0),
        }
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
        match self.socks[slot].as_mut() {
            Some(sock) => conn.on_readable(sock, peer_closed, scratch, plan, now, sink, bytes_read),
            None => ReadOutcome::Open,
        }
    }

    fn arm_timer(&mut self, at: u64, now: u64) {
        if let Some(t) = self.timer.as_mut() {
            t.arm(at, now);
        }
    }

    fn wait(&mut self, timeout: Duration, events: &mut Vec<Event>) -> io::Result<()> {
        self.poll.poll(&mut self.events, Some(timeout))?;
        for event in self.events.iter() {
            if event.token() == TIMER {
                if let Some(t) = self.timer.as_mut() {
                    t.fired();
                }
                events.push(Event::Timer);
                continue;
            }
            let slot = event.token().0;
            if self.connecting[slot] {
                if event.is_writable()
                    || event.is_error()
                    || event.is_read_closed()
                    || event.is_write_closed()
                {
                    events.push(Event::Connecting(slot));
                }
                continue;
            }
            if event.is_writable() {
                events.push(Event::Writable(slot));
            }
            if event.is_readable() || event.is_read_closed() || event.is_error() {
                events.push(Event::Readable {
                    slot,
                    closed: event.is_read_closed() || event.is_error(),
                });
            }
        }
        Ok(())
    }
}
