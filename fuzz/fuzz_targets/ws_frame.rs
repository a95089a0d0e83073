//! The WebSocket codec's parsers on arbitrary bytes, as the engine calls
//! them on whatever a server sent so far: `frame::parse_head` from either
//! side, and `handshake::check_answer`. Besides not panicking they must be
//! consistent:
//! - a complete frame head ends inside the buffer, within 14 bytes, and the
//!   head alone parses the same; every shorter prefix is "need more bytes"
//!   (a frame split across reads is never taken for a bad one);
//! - a head written back by `write_head` parses to the same head;
//! - a complete `101` head ends inside the buffer and parses the same alone.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netbench_engine::ws::frame::{parse_head, write_head, Sender, MAX_HEAD};
use netbench_engine::ws::handshake::{accept_for, check_answer};

fuzz_target!(|buf: &[u8]| {
    for from in [Sender::Server, Sender::Client] {
        let Ok(Some(h)) = parse_head(buf, from) else {
            continue;
        };
        assert!(h.head_len >= 2 && h.head_len <= MAX_HEAD.min(buf.len()));
        assert_eq!(parse_head(&buf[..h.head_len], from), Ok(Some(h)));
        for cut in 0..h.head_len {
            assert_eq!(parse_head(&buf[..cut], from), Ok(None), "cut {cut}");
        }
        let mut again = Vec::new();
        write_head(&mut again, h.fin, h.opcode, h.len as usize, h.mask);
        // The same head, in the shortest length form (a peer may have used
        // a longer one than needed).
        let back = parse_head(&again, from).unwrap().unwrap();
        assert_eq!(
            (back.fin, back.opcode, back.mask, back.len),
            (h.fin, h.opcode, h.mask, h.len)
        );
    }
    let accept = accept_for(b"dGhlIHNhbXBsZSBub25jZQ==");
    if let Ok(Some(n)) = check_answer(buf, &accept) {
        assert!(n > 0 && n <= buf.len());
        assert_eq!(check_answer(&buf[..n], &accept), Ok(Some(n)));
    }
});
