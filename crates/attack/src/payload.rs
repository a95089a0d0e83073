//! The bytes each attack sends, as pure functions: the slowloris head that
//! never ends, the rotating set of malformed requests, the oversized ones,
//! and the good request the slow reader and the fragmenter send.

/// A complete keep-alive GET.
pub fn good_request(host: &str, path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: netbench-attack\r\n\r\n")
        .into_bytes()
}

/// A request head that never ends: a request line, a Host header, then
/// `X-a: b` headers without end, so the blank line that would finish the
/// head never comes (a server that limits the head's size closes the
/// connection after many hours of it).
#[derive(Debug, Clone)]
pub struct EndlessHead {
    start: Vec<u8>,
}

impl EndlessHead {
    pub fn new(host: &str, path: &str) -> EndlessHead {
        EndlessHead {
            start: format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n").into_bytes(),
        }
    }

    /// The head's byte number `i`.
    pub fn byte(&self, i: u64) -> u8 {
        const FILLER: &[u8] = b"X-a: b\r\n";
        match usize::try_from(i) {
            Ok(i) if i < self.start.len() => self.start[i],
            _ => FILLER[((i - self.start.len() as u64) % FILLER.len() as u64) as usize],
        }
    }
}

/// How many malformed requests [`malformed`] rotates through.
pub const MALFORMED_CASES: usize = 14;

/// The `n`-th malformed request (modulo [`MALFORMED_CASES`]): each one ends
/// as a head does, so a server has all it needs to refuse it at once.
pub fn malformed(n: usize, host: &str) -> Vec<u8> {
    let text = match n % MALFORMED_CASES {
        // Request lines: too many parts, no version, a bad version, a bad
        // method token, control bytes in the target.
        0 => format!("GET / HTTP/1.1 extra\r\nHost: {host}\r\n\r\n"),
        1 => format!("GET\r\nHost: {host}\r\n\r\n"),
        2 => format!("GET / HTTP/9.Z\r\nHost: {host}\r\n\r\n"),
        3 => format!("G(E)T / HTTP/1.1\r\nHost: {host}\r\n\r\n"),
        4 => format!("GET /\x01\x7f HTTP/1.1\r\nHost: {host}\r\n\r\n"),
        // Header syntax: no colon, a space before the colon (RFC 9112 §5.1),
        // obs-fold (§5.2), a bare LF, no Host in HTTP/1.1 (RFC 9112 §3.2).
        5 => format!("GET / HTTP/1.1\r\nHost: {host}\r\nNo colon here\r\n\r\n"),
        6 => format!("GET / HTTP/1.1\r\nHost : {host}\r\n\r\n"),
        7 => format!("GET / HTTP/1.1\r\nHost: {host}\r\nX-a: b\r\n folded\r\n\r\n"),
        8 => format!("GET / HTTP/1.1\nHost: {host}\n\n"),
        9 => "GET / HTTP/1.1\r\n\r\n".to_string(),
        // Bodies: a chunk size that is not hex, one that overflows, a
        // Content-Length that is not a number, two that differ.
        10 => format!(
            "POST /work HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n\
             zz\r\nhello\r\n0\r\n\r\n"
        ),
        11 => format!(
            "POST /work HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n\
             fffffffffffffffffffffff\r\n"
        ),
        12 => format!(
            "POST /work HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\n\
             Content-Length: 6\r\n\r\nhello!"
        ),
        _ => return garbage(n),
    };
    text.into_bytes()
}

/// 256 bytes of binary garbage (a fixed pseudo-random sequence per `n`),
/// then the end of a head.
fn garbage(n: usize) -> Vec<u8> {
    let mut s = n as u32 | 1;
    let mut out: Vec<u8> = (0..256)
        .map(|_| {
            // xorshift32: any bytes will do, the same ones every run.
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s as u8
        })
        .collect();
    out.extend_from_slice(b"\r\n\r\n");
    out
}

/// How many oversized requests [`oversized`] rotates through.
pub const OVERSIZED_CASES: usize = 4;

/// The `n`-th oversized request (modulo [`OVERSIZED_CASES`]): a 64 KiB
/// request line, a 256 KiB header, 1 MiB of 1 KiB headers, a 1 MiB request
/// line. Each is a well-formed head, only too large.
pub fn oversized(n: usize, host: &str) -> Vec<u8> {
    const KIB: usize = 1024;
    let long_path = |len: usize| format!("/{}", "a".repeat(len));
    let text = match n % OVERSIZED_CASES {
        0 => format!(
            "GET {} HTTP/1.1\r\nHost: {host}\r\n\r\n",
            long_path(64 * KIB)
        ),
        1 => format!(
            "GET / HTTP/1.1\r\nHost: {host}\r\nX-Big: {}\r\n\r\n",
            "b".repeat(256 * KIB)
        ),
        2 => {
            let line = format!("X-Pad: {}\r\n", "c".repeat(KIB - 9));
            format!("GET / HTTP/1.1\r\nHost: {host}\r\n{}\r\n", line.repeat(KIB))
        }
        _ => format!(
            "GET {} HTTP/1.1\r\nHost: {host}\r\n\r\n",
            long_path(KIB * KIB)
        ),
    };
    text.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has_blank_line(b: &[u8]) -> bool {
        b.windows(4).any(|w| w == b"\r\n\r\n") || b.windows(2).any(|w| w == b"\n\n")
    }

    #[test]
    fn the_slowloris_head_never_ends() {
        let endless = EndlessHead::new("127.0.0.1:80", "/");
        let head: Vec<u8> = (0..10_000).map(|i| endless.byte(i)).collect();
        assert!(head.starts_with(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\nX-a: b\r\n"));
        assert!(!has_blank_line(&head));
        // Far along too.
        let far: Vec<u8> = (u64::MAX - 100..u64::MAX)
            .map(|i| endless.byte(i))
            .collect();
        assert!(!has_blank_line(&far));
    }

    #[test]
    fn every_malformed_case_differs_and_ends_like_a_head() {
        let cases: Vec<Vec<u8>> = (0..MALFORMED_CASES).map(|n| malformed(n, "h")).collect();
        for (i, c) in cases.iter().enumerate() {
            assert!(has_blank_line(c) || i == 11, "case {i} never ends its head");
            for d in &cases[i + 1..] {
                assert_ne!(c, d);
            }
        }
        assert_eq!(malformed(MALFORMED_CASES, "h"), cases[0]);
        // The garbage is binary and not a request.
        assert!(cases[13].iter().any(|&b| b >= 0x80));
    }

    #[test]
    fn oversized_requests_are_64k_to_1m() {
        for n in 0..OVERSIZED_CASES {
            let r = oversized(n, "h");
            assert!(r.len() > 64 * 1024, "case {n}: {}", r.len());
            assert!(r.len() < 1024 * 1024 + 1024, "case {n}: {}", r.len());
            assert!(r.ends_with(b"\r\n\r\n"));
            assert_eq!(
                r.windows(4).filter(|w| w == b"\r\n\r\n").count(),
                1,
                "case {n} is one head"
            );
        }
        let padded = oversized(2, "h");
        assert_eq!(padded.windows(7).filter(|w| w == b"X-Pad: ").count(), 1024);
    }

    #[test]
    fn the_good_request_is_complete() {
        let r = good_request("127.0.0.1:8080", "/blank");
        assert_eq!(
            r,
            b"GET /blank HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: netbench-attack\r\n\r\n"
        );
    }
}
