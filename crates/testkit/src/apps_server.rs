//! The contract server's parts of version 1.2 (CONTRACT.md, "static",
//! "upload", "json-comp"), each right or broken by its `Flaw`, so the tests
//! prove that every check of `verify` catches the way it names.

use std::io::{self, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use netbench_contract::{format_http_date, sha256_hex, static_bytes, static_file, UPLOAD_LIMIT};
use sha2::{Digest, Sha256};

use crate::contract_server::{respond_with, Flaw};
use crate::{BodyLength, Request};

/// A file of `/static/`, made once per process as a server's build would
/// write it, with the validators a file server derives from it.
struct Served {
    bytes: Vec<u8>,
    etag: String,
    last_modified: String,
}

fn served(name: &str) -> Option<&'static Served> {
    static FILES: OnceLock<Vec<(&'static str, Served)>> = OnceLock::new();
    let files = FILES.get_or_init(|| {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        netbench_contract::STATIC_FILES
            .iter()
            .map(|f| {
                let bytes = static_bytes(f.size);
                let etag = format!("\"{}-{}\"", f.size, &sha256_hex(&bytes)[..16]);
                let served = Served {
                    bytes,
                    etag,
                    last_modified: format_http_date(now),
                };
                (f.name, served)
            })
            .collect()
    });
    static_file(name)?;
    files.iter().find(|(n, _)| *n == name).map(|(_, s)| s)
}

/// Whether an `If-None-Match` value names `etag` (weak comparison, as
/// RFC 9110 §13.1.2 asks of it, and `*`).
fn matches_etag(if_none_match: &str, etag: &str) -> bool {
    let bare = |t: &str| t.trim().trim_start_matches("W/").to_string();
    if_none_match
        .split(',')
        .any(|t| t.trim() == "*" || bare(t) == bare(etag))
}

/// `GET /static/<name>`.
pub(crate) fn static_answer(
    w: &mut TcpStream,
    flaw: Flaw,
    req: &Request,
    name: &str,
) -> io::Result<()> {
    let Some(file) = served(name) else {
        return respond_with(w, flaw, 404, "text/plain", &[], b"not found");
    };
    let validators = [
        ("ETag", file.etag.as_str()),
        ("Last-Modified", file.last_modified.as_str()),
    ];
    let asked_same = req
        .header("if-none-match")
        .is_some_and(|v| matches_etag(v, &file.etag));
    if asked_same && flaw != Flaw::StaticNo304 {
        return respond_with(w, flaw, 304, "", &validators, b"");
    }
    match flaw {
        Flaw::StaticTruncated => {
            let cut = &file.bytes[..file.bytes.len() - 1000];
            respond_with(w, flaw, 200, "application/octet-stream", &validators, cut)
        }
        Flaw::StaticWrongLength => {
            // Says 10 bytes fewer than it sends: the rest spoils the
            // connection's next answer.
            let head_len = file.bytes.len() - 10;
            respond_with(
                w,
                flaw,
                200,
                "application/octet-stream",
                &validators,
                &file.bytes[..head_len],
            )?;
            w.write_all(&file.bytes[head_len..])
        }
        _ => respond_with(
            w,
            flaw,
            200,
            "application/octet-stream",
            &validators,
            &file.bytes,
        ),
    }
}

/// Reads a Content-Length body of `n` bytes through the hasher, holding
/// none of it: so the no-limit flaw reads a 10 GB body without storing it.
fn hash_stream(r: &mut BufReader<TcpStream>, n: u64) -> io::Result<(u64, String)> {
    let mut hasher = Sha256::new();
    let mut left = n;
    let mut chunk = vec![0u8; 64 * 1024];
    while left > 0 {
        let want = chunk.len().min(left as usize);
        let got = r.read(&mut chunk[..want])?;
        if got == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        hasher.update(&chunk[..got]);
        left -= got as u64;
    }
    let hex = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok((n, hex))
}

/// Whether the connection may serve another request after this one.
pub(crate) enum Then {
    KeepOpen,
    Close,
}

fn upload_json(length: u64, sha256: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({ "length": length, "sha256": sha256 }))
        .expect("a Value always serializes")
}

/// `POST /upload`: the body's length and SHA-256, read as it comes.
pub(crate) fn upload(
    r: &mut BufReader<TcpStream>,
    w: &mut TcpStream,
    flaw: Flaw,
    req: &mut Request,
) -> io::Result<Then> {
    if let BodyLength::Known(n) = req.body_length {
        if n > UPLOAD_LIMIT && flaw != Flaw::UploadNoLimit {
            return refuse(w, flaw);
        }
        if flaw == Flaw::UploadEarly {
            // Answers from the head alone, then reads the body so the
            // connection stays in step.
            respond_with(
                w,
                flaw,
                200,
                "application/json",
                &[],
                &upload_json(n, &sha256_hex(b"")),
            )?;
            hash_stream(r, n)?;
            return Ok(Then::KeepOpen);
        }
        let (length, mut digest) = hash_stream(r, n)?;
        if flaw == Flaw::UploadWrongDigest {
            // One hex digit off: the digest of some other body.
            digest.replace_range(63.., if digest.ends_with('0') { "1" } else { "0" });
        }
        respond_with(
            w,
            flaw,
            200,
            "application/json",
            &[],
            &upload_json(length, &digest),
        )?;
        return Ok(Then::KeepOpen);
    }
    if crate::http1::read_body(r, req, flaw).is_err() {
        return refuse(w, flaw);
    }
    let digest = sha256_hex(&req.body);
    respond_with(
        w,
        flaw,
        200,
        "application/json",
        &[],
        &upload_json(req.body.len() as u64, &digest),
    )?;
    Ok(Then::KeepOpen)
}

/// 413, then the connection closed: shut down for writing first and read
/// what the client is still sending for a moment, so the close does not
/// reset the connection before the client read the 413.
fn refuse(w: &mut TcpStream, flaw: Flaw) -> io::Result<Then> {
    respond_with(
        w,
        flaw,
        413,
        "text/plain",
        &[("Connection", "close")],
        b"body too large",
    )?;
    w.shutdown(Shutdown::Write)?;
    w.set_read_timeout(Some(Duration::from_millis(500)))?;
    let mut sink = [0u8; 64 * 1024];
    let mut drained = 0;
    while drained < 4 << 20 {
        match w.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => drained += n,
        }
    }
    Ok(Then::Close)
}

/// The codings an `Accept-Encoding` value allows, by name (q=0 forbids).
pub(crate) fn allows(accept: &str, coding: &str) -> bool {
    accept.split(',').any(|item| {
        let mut parts = item.split(';').map(str::trim);
        let name = parts.next().unwrap_or("");
        let q_zero = parts.any(|p| {
            p.strip_prefix("q=")
                .is_some_and(|q| q.parse::<f64>().is_ok_and(|q| q == 0.0))
        });
        name.eq_ignore_ascii_case(coding) && !q_zero
    })
}

pub(crate) fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).expect("writing to memory");
    e.finish().expect("writing to memory")
}

fn brotli(data: &[u8]) -> Vec<u8> {
    let mut w = brotli::CompressorWriter::new(Vec::new(), 4096, 5, 22);
    w.write_all(data).expect("writing to memory");
    w.into_inner()
}

/// 16 MiB of zeros in about 16 KB of gzip, made once.
fn bomb() -> &'static [u8] {
    static BOMB: OnceLock<Vec<u8>> = OnceLock::new();
    BOMB.get_or_init(|| gzip(&vec![0u8; 16 << 20]))
}

/// A `/work` answer as `json-comp` asks: brotli or gzip when the request
/// allows it, plain otherwise, always with `Vary: Accept-Encoding`.
pub(crate) fn work_answer(
    w: &mut TcpStream,
    flaw: Flaw,
    req: &Request,
    status: u16,
    body: &[u8],
) -> io::Result<()> {
    let ct = if status == 200 {
        "application/json"
    } else {
        "text/plain"
    };
    let accept = req.header("accept-encoding");
    let coding = match accept {
        _ if status != 200 => None,
        // Compresses whenever the request names any coding, as a server
        // that only looks for the header's presence would.
        Some(_) if flaw == Flaw::GzipUnasked => Some("gzip"),
        Some(a) if allows(a, "br") => Some("br"),
        Some(a) if allows(a, "gzip") => Some("gzip"),
        _ => None,
    };
    let vary = ("Vary", "Accept-Encoding");
    match coding {
        None => respond_with(w, flaw, status, ct, &[vary], body),
        Some(name) => {
            let out = match (name, flaw) {
                (_, Flaw::GzipClaimPlain) => body.to_vec(),
                ("gzip", Flaw::GzipBomb) => bomb().to_vec(),
                ("gzip", _) => gzip(body),
                _ => brotli(body),
            };
            respond_with(
                w,
                flaw,
                status,
                ct,
                &[vary, ("Content-Encoding", name)],
                &out,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_encoding_lists() {
        assert!(allows("gzip", "gzip"));
        assert!(allows("deflate, GZIP;q=0.5", "gzip"));
        assert!(!allows("gzip;q=0", "gzip"));
        assert!(!allows("identity", "gzip"));
        assert!(!allows("br", "gzip"));
    }

    #[test]
    fn if_none_match_compares_weakly() {
        assert!(matches_etag("\"a\"", "\"a\""));
        assert!(matches_etag("W/\"a\"", "\"a\""));
        assert!(matches_etag("\"x\", \"a\"", "\"a\""));
        assert!(matches_etag("*", "\"a\""));
        assert!(!matches_etag("\"b\"", "\"a\""));
    }

    #[test]
    fn the_bomb_is_small_on_the_wire() {
        assert!(bomb().len() < 100_000, "{}", bomb().len());
    }
}
