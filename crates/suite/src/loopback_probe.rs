//! The loopback control: a fixed exchange over a TCP connection on
//! 127.0.0.1 between a thread on the server's CPUs and the calling thread
//! (on the client's), timed before and after every cell. The CPU probe in
//! `noise` sees a core's speed; this one also sees what a network server
//! pays for and a CPU-bound loop does not (system calls, the loopback TCP
//! path, waking a thread on another CPU), which is where a shared VM was
//! seen to slow down while the CPU probe held still.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crate::placement::pin_current_thread;

/// Bytes each way per exchange: about a small HTTP request and its answer
/// without the parsing, so the figure is the path and not the work.
const MESSAGE: usize = 64;
/// Exchanges per trial: a few milliseconds on this kind of machine.
const EXCHANGES: u32 = 200;
/// Trials per probe; the median is kept, so one preempted trial does not
/// move it.
const TRIALS: usize = 7;
/// No probe waits longer than this for a byte: a probe that cannot finish
/// gives no figure rather than holding up the run.
const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// The median nanoseconds of one exchange (64 bytes there, 64 back) over
/// loopback, the answering thread pinned to `server_cpus` when given and
/// the asking one where the caller runs. Larger means a slower machine.
/// None when a socket, the pin or an exchange fails.
pub fn probe(server_cpus: Option<&[usize]>) -> Option<f64> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).ok()?;
    let addr = listener.local_addr().ok()?;
    std::thread::scope(|s| {
        let answerer = s.spawn(move || -> Option<()> {
            if let Some(cpus) = server_cpus {
                pin_current_thread(cpus).ok()?;
            }
            let (mut conn, _) = listener.accept().ok()?;
            setup(&conn)?;
            let mut buf = [0u8; MESSAGE];
            // Echo until the asking side closes (read_exact then fails).
            while conn.read_exact(&mut buf).is_ok() {
                conn.write_all(&buf).ok()?;
            }
            Some(())
        });
        let timed = ask(addr);
        // The asking side's connection is closed by now (dropped in ask),
        // or never made: unblock an accept that is still waiting.
        if timed.is_none() {
            let _ = TcpStream::connect_timeout(&addr, IO_TIMEOUT);
        }
        let answered = answerer.join().ok().flatten();
        answered.and(timed)
    })
}

/// The asking side: connects, runs the trials, returns the median
/// nanoseconds per exchange.
fn ask(addr: std::net::SocketAddr) -> Option<f64> {
    let mut conn = TcpStream::connect_timeout(&addr, IO_TIMEOUT).ok()?;
    setup(&conn)?;
    let out = [0x5au8; MESSAGE];
    let mut back = [0u8; MESSAGE];
    let mut trials = Vec::with_capacity(TRIALS);
    for _ in 0..TRIALS {
        let started = Instant::now();
        for _ in 0..EXCHANGES {
            conn.write_all(&out).ok()?;
            conn.read_exact(&mut back).ok()?;
        }
        trials.push(started.elapsed().as_nanos() as f64 / f64::from(EXCHANGES));
    }
    if back != out {
        return None;
    }
    Some(median(&mut trials))
}

fn setup(conn: &TcpStream) -> Option<()> {
    conn.set_nodelay(true).ok()?;
    conn.set_read_timeout(Some(IO_TIMEOUT)).ok()?;
    conn.set_write_timeout(Some(IO_TIMEOUT)).ok()
}

/// netbench-stats' median of the trials (never empty).
fn median(v: &mut [f64]) -> f64 {
    netbench_stats::median_in_place(v).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exchange_is_timed_where_the_answerer_is_pinned_or_not_at_all() {
        let cpu = crate::placement::allowed_cpus()[0];
        let t = probe(Some(&[cpu])).expect("loopback works here");
        // A loopback round trip takes microseconds, never nothing and never
        // a whole second on a machine that can run this test.
        assert!(t > 100.0 && t < 1e9, "{t}");
        assert!(probe(None).is_some());
        // A CPU this machine does not have: the answerer cannot pin, the
        // asker's exchange fails, and the probe says so instead of hanging.
        let started = Instant::now();
        assert_eq!(probe(Some(&[crate::suite::MAX_CPUS - 1])), None);
        assert!(started.elapsed() < IO_TIMEOUT * 3);
    }

    #[test]
    fn the_median_ignores_one_slow_trial() {
        assert_eq!(median(&mut [5.0, 1.0, 900.0, 2.0, 3.0]), 3.0);
    }
}
