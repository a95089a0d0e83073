//! Each attack against a real server on 127.0.0.1:0, checked from both ends:
//! what the attack counted, and (for the held kinds) what a recording server
//! saw. Durations are bounded (about a second each); nothing asserts speed.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use netbench_attack::{run, AttackKind, AttackPlan, AttackRequest, AttackSummary, EndlessHead};
use netbench_testkit::{refused_addr, serve_contract, Flaw};

/// What a recording server saw of its connections.
#[derive(Default)]
struct Seen {
    accepted: AtomicUsize,
    open: AtomicUsize,
    most_open: AtomicUsize,
    /// Reads that returned bytes, every connection.
    reads: AtomicUsize,
    /// The bytes of every connection, in order of accept.
    bytes: Mutex<Vec<Vec<u8>>>,
}

/// A server that reads and never answers; with `close_after`, it closes a
/// connection once it has that many bytes from it.
fn recording_server(close_after: Option<usize>) -> (String, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let seen = Arc::new(Seen::default());
    let s = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let s = Arc::clone(&s);
            let at = {
                let mut all = s.bytes.lock().unwrap();
                all.push(Vec::new());
                all.len() - 1
            };
            s.accepted.fetch_add(1, Ordering::SeqCst);
            let now = s.open.fetch_add(1, Ordering::SeqCst) + 1;
            s.most_open.fetch_max(now, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = stream.read(&mut buf) {
                    s.reads.fetch_add(1, Ordering::SeqCst);
                    let mut all = s.bytes.lock().unwrap();
                    all[at].extend_from_slice(&buf[..n]);
                    if close_after.is_some_and(|limit| all[at].len() >= limit) {
                        break;
                    }
                }
                s.open.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    (url, seen)
}

fn plan(kind: AttackKind, url: &str, connections: usize, ms: u64) -> AttackPlan {
    AttackRequest {
        kind,
        url: url.to_string(),
        connections,
        duration: Duration::from_millis(ms),
        interval: Some(Duration::from_millis(100)),
        path: None,
    }
    .plan()
    .unwrap()
}

fn attack(plan: &AttackPlan) -> AttackSummary {
    let stop = AtomicBool::new(false);
    let summary = run(plan, &stop).unwrap().summary;
    // Bounded by --for: a generous ceiling, not a speed claim.
    assert!(
        summary.seconds < plan.duration.as_secs_f64() + 5.0,
        "{summary}"
    );
    summary
}

/// Waits (up to 5 s) until `done` holds; false if it never did.
fn eventually(done: impl Fn() -> bool) -> bool {
    let give_up = Instant::now() + Duration::from_secs(5);
    while Instant::now() < give_up {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

fn ends_a_head(b: &[u8]) -> bool {
    b.windows(4).any(|w| w == b"\r\n\r\n") || b.windows(2).any(|w| w == b"\n\n")
}

#[test]
fn slowloris_holds_n_connections_and_never_finishes_a_request() {
    let (url, seen) = recording_server(None);
    let s = attack(&plan(AttackKind::Slowloris, &url, 6, 1200));
    assert_eq!(s.connections_opened, 6, "{s}");
    assert_eq!(s.closed_by_server, 0, "{s}");
    assert_eq!(s.requests_sent, 6, "{s}");
    assert_eq!(seen.accepted.load(Ordering::SeqCst), 6);
    assert_eq!(seen.most_open.load(Ordering::SeqCst), 6);
    let bytes = seen.bytes.lock().unwrap().clone();
    for b in &bytes {
        // A byte per 100 ms tick: several, never the end of the head.
        assert!(b.len() >= 3, "{:?}", String::from_utf8_lossy(b));
        // The start of the endless head, byte for byte.
        let host = url.trim_start_matches("http://").trim_end_matches('/');
        let endless = EndlessHead::new(host, "/");
        let expected: Vec<u8> = (0..b.len() as u64).map(|i| endless.byte(i)).collect();
        assert_eq!(b, &expected);
        assert!(b.starts_with(b"GET / HT"));
        assert!(!ends_a_head(b));
    }
    // The server saw every byte sent (its threads may still be reading).
    let total = || {
        let all = seen.bytes.lock().unwrap();
        all.iter().map(|b| b.len() as u64).sum::<u64>()
    };
    assert!(eventually(|| total() == s.bytes_sent), "{} != {s}", total());
    // Every connection was closed when the attack ended.
    assert!(eventually(|| seen.open.load(Ordering::SeqCst) == 0));
}

#[test]
fn slowloris_reopens_what_the_server_closes() {
    let (url, seen) = recording_server(Some(3));
    let s = attack(&plan(AttackKind::Slowloris, &url, 2, 1200));
    assert!(s.closed_by_server >= 2, "{s}");
    assert!(s.connections_opened >= 4, "{s}");
    assert!(eventually(
        || seen.accepted.load(Ordering::SeqCst) as u64 == s.connections_opened
    ));
}

#[test]
fn conn_flood_holds_idle_connections() {
    let (url, seen) = recording_server(None);
    let s = attack(&plan(AttackKind::ConnFlood, &url, 40, 800));
    assert_eq!(s.connections_opened, 40, "{s}");
    assert_eq!(s.bytes_sent, 0, "{s}");
    assert_eq!(seen.most_open.load(Ordering::SeqCst), 40);
    assert!(seen.bytes.lock().unwrap().iter().all(Vec::is_empty));
    assert!(eventually(|| seen.open.load(Ordering::SeqCst) == 0));
}

#[test]
fn malformed_requests_get_4xx_or_closes_from_the_contract_server() {
    let server = serve_contract(Flaw::None);
    let url = format!("http://{}/", server.addr);
    let s = attack(&plan(AttackKind::Malformed, &url, 3, 1000));
    assert!(s.requests_sent > 3, "{s}");
    assert!(s.answers.client_error > 0, "{s}");
    // The contract server serves no `/`: nothing malformed may succeed.
    assert_eq!(s.answers.ok, 0, "{s}");
    // Bad chunk sizes make it close: the connections were reopened.
    assert!(s.closed_by_server > 0, "{s}");
    assert!(s.connections_opened > 3, "{s}");
}

#[test]
fn oversized_requests_are_sent_whole_or_cut_off() {
    let server = serve_contract(Flaw::None);
    let url = format!("http://{}/", server.addr);
    let s = attack(&plan(AttackKind::Oversized, &url, 2, 1500));
    assert!(s.bytes_sent > 64 * 1024, "{s}");
    assert!(
        s.answers.client_error + s.answers.server_error + s.closed_by_server > 0,
        "{s}"
    );
    assert_eq!(s.answers.ok, 0, "{s}");
}

#[test]
fn tcp_frag_requests_are_reassembled_and_answered() {
    let server = serve_contract(Flaw::None);
    let url = format!("http://{}/", server.addr);
    let s = attack(&plan(AttackKind::TcpFrag, &url, 2, 1000));
    assert!(s.answers.ok > 0, "{s}");
    assert_eq!(
        s.answers.client_error + s.answers.server_error + s.answers.other,
        0,
        "{s}"
    );
    assert_eq!(s.errors.connect, 0, "{s}");
}

#[test]
fn tcp_frag_sends_one_whole_request_in_pieces() {
    // A byte per write, a millisecond apart: the server needs more than one
    // read for the request (all of it in one read would take the server
    // thread being descheduled for the whole ~80 ms), and gets it whole.
    let (url, seen) = recording_server(None);
    let s = attack(&plan(AttackKind::TcpFrag, &url, 1, 1000));
    assert_eq!(s.requests_sent, 1, "{s}");
    assert!(eventually(
        || seen.bytes.lock().unwrap()[0].ends_with(b"\r\n\r\n")
    ));
    let bytes = seen.bytes.lock().unwrap().clone();
    assert_eq!(bytes.len(), 1);
    assert!(bytes[0].starts_with(b"GET /blank HTTP/1.1\r\n"));
    assert!(bytes[0].ends_with(b"\r\n\r\n"));
    assert_eq!(s.bytes_sent, bytes[0].len() as u64);
    assert!(seen.reads.load(Ordering::SeqCst) >= 2);
}

#[test]
fn slow_read_asks_for_a_large_answer_and_reads_a_byte_a_tick() {
    let server = serve_contract(Flaw::None);
    let url = format!("http://{}/", server.addr);
    let s = attack(&plan(AttackKind::SlowRead, &url, 3, 1000));
    assert_eq!(s.connections_opened, 3, "{s}");
    assert_eq!(s.requests_sent, 3, "{s}");
    // At most a byte per connection per 100 ms tick (and the first at once)
    // of a 1 MiB answer: none is read whole.
    assert!(s.bytes_received >= 3, "{s}");
    assert!(s.bytes_received <= 3 * 12, "{s}");
    assert_eq!(s.answers.ok, 0, "{s}");
}

#[test]
fn an_absent_server_is_counted_as_connect_errors_until_the_end() {
    let url = format!("http://{}/", refused_addr());
    for kind in [AttackKind::Slowloris, AttackKind::Malformed] {
        let s = attack(&plan(kind, &url, 2, 500));
        assert_eq!(s.connections_opened, 0, "{s}");
        assert!(s.errors.connect > 0, "{s}");
    }
}

#[test]
fn the_stop_flag_ends_an_attack_early() {
    let (url, _seen) = recording_server(None);
    for kind in [AttackKind::Slowloris, AttackKind::Malformed] {
        let p = plan(kind, &url, 4, 60_000);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            flag.store(true, Ordering::SeqCst);
        });
        let s = run(&p, &stop).unwrap().summary;
        setter.join().unwrap();
        assert!(s.seconds < 30.0, "{s}");
        assert!(s.connections_opened >= 1, "{s}");
    }
}

#[test]
fn a_slowloris_connection_that_the_server_answers_counts_the_answer() {
    // A server that answers 408 to a head that is too slow, then closes.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                use std::io::Write;
                let mut b = [0u8; 2];
                let _ = stream.read(&mut b);
                let _ = stream.write_all(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                let _ = TcpStream::shutdown(&stream, std::net::Shutdown::Both);
            });
        }
    });
    let s = attack(&plan(AttackKind::Slowloris, &url, 1, 800));
    assert!(s.answers.client_error >= 1, "{s}");
    assert!(s.closed_by_server >= 1, "{s}");
}

#[test]
fn held_connections_keep_their_pace_while_other_connects_hang() {
    // A listener that never accepts, with the shortest accept queue: a few
    // connects complete into the queue, the kernel drops the rest's SYNs.
    // Connects are non-blocking, so the connected ones still get a byte per
    // tick while the others wait (a blocking connect stalled every one).
    use socket2::{Domain, Socket, Type};
    let listener = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    let addr: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    listener.bind(&addr.into()).unwrap();
    listener.listen(1).unwrap();
    let url = format!(
        "http://{}/",
        listener.local_addr().unwrap().as_socket().unwrap()
    );
    let s = attack(&plan(AttackKind::Slowloris, &url, 12, 1500));
    assert!(s.connections_opened >= 1, "{s}");
    assert!(s.connections_opened < 12, "the queue held them all: {s}");
    // The first byte at once, then one per 100 ms tick: at least 5 each.
    assert!(s.bytes_sent >= 5 * s.connections_opened, "{s}");
    drop(listener);
}

#[test]
fn slow_read_reads_on_after_the_server_closes() {
    // A server that answers at once and closes: its answer and FIN wait in
    // the reader's buffer, read a byte a tick; the connection is not
    // dropped and reopened at the FIN (which would make a flood of it).
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                use std::io::Write;
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut b).unwrap_or(0) == 1 {
                    head.push(b[0]);
                }
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
                );
            });
        }
    });
    let s = attack(&plan(AttackKind::SlowRead, &url, 2, 1000));
    assert_eq!(s.connections_opened, 2, "{s}");
    assert_eq!(s.closed_by_server, 0, "{s}");
    assert!(s.bytes_received >= 2 && s.bytes_received <= 2 * 12, "{s}");
}
