//! `parse_head` on arbitrary bytes, as the engine calls it on whatever a
//! server sent so far. Besides not panicking it must be consistent:
//! - the HEAD flag changes the framing only (to no body), never the outcome;
//! - a complete head says where it ends, inside the buffer, and the head
//!   alone parses the same as the head followed by anything;
//! - every shorter prefix of a complete head is "need more bytes", never an
//!   error: an answer split across reads must not be taken for a bad one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netbench_engine::{parse_head, Framing, ResponseHead};

fuzz_target!(|buf: &[u8]| {
    let get = parse_head(buf, false);
    let head = parse_head(buf, true);
    match (&get, &head) {
        (Ok(None), Ok(None)) => {}
        (Err(a), Err(b)) => assert_eq!(a, b, "the HEAD flag changed the error"),
        (Ok(Some(g)), Ok(Some(h))) => {
            check_complete(buf, g);
            assert_eq!(
                (g.status, g.close, g.content_type, g.len),
                (h.status, h.close, h.content_type, h.len),
                "the HEAD flag changed more than the framing"
            );
            assert_eq!(h.framing, Framing::Empty, "an answer to HEAD has a body");
        }
        _ => panic!("the HEAD flag changed the outcome: {get:?} vs {head:?}"),
    }
});

fn check_complete(buf: &[u8], g: &ResponseHead<'_>) {
    assert!(
        g.len > 0 && g.len <= buf.len(),
        "head length {} of {}",
        g.len,
        buf.len()
    );
    assert!(g.status <= 999, "status {}", g.status);
    if let Some(ct) = g.content_type {
        let (start, end) = (buf.as_ptr() as usize, buf.as_ptr() as usize + g.len);
        let at = ct.as_ptr() as usize;
        assert!(
            at >= start && at + ct.len() <= end,
            "Content-Type outside the head"
        );
    }
    match g.framing {
        Framing::ContentLength(n) => assert!(n > 0, "Content-Length: 0 is no body"),
        Framing::Empty | Framing::Chunked | Framing::UntilClose => {}
    }
    if matches!(g.status, 100..=199 | 204 | 304) {
        assert_eq!(g.framing, Framing::Empty, "status {} has no body", g.status);
    }
    assert_eq!(
        parse_head(&buf[..g.len], false),
        Ok(Some(*g)),
        "the head alone parses differently"
    );
    // Shorter prefixes: the last few bytes, the middle, and a few in between.
    let mut cuts: Vec<usize> = (1..=4).filter_map(|k| g.len.checked_sub(k)).collect();
    cuts.extend((0..8).map(|k| g.len * k / 8));
    for cut in cuts {
        assert_eq!(
            parse_head(&buf[..cut], false),
            Ok(None),
            "a {cut}-byte prefix of a complete {}-byte head is not incomplete",
            g.len
        );
    }
}
