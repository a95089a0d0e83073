//! The HTTP/2 connection fed scripted server bytes (through the fuzz
//! target's driver, which never flushes: a peer that does not read).

use super::MAX_OWED_ACKS;
use crate::error_kind::ErrorKind;
use crate::h2::frame::{self, code, kind};
use crate::h2::fuzz_feed;

/// `:status 200`, `content-type: text/plain` (HPACK static entries 8 and
/// 31, the value a literal).
fn ok_head() -> Vec<u8> {
    let mut block = vec![0x88, 0x5f, 10];
    block.extend_from_slice(b"text/plain");
    block
}

fn pings(n: u32) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        frame::write_header(&mut out, 8, kind::PING, 0, 0);
        out.extend_from_slice(&u64::from(i).to_be_bytes());
    }
    out
}

#[test]
fn a_peer_that_does_not_read_is_owed_a_bounded_number_of_answers() {
    // Issue 42: every PING's ACK was queued. As many as the bound pass...
    let (answers, end) = fuzz_feed(&pings(MAX_OWED_ACKS), 1 << 16, 1);
    assert_eq!((answers.len(), end), (0, None));
    // ...one more is a flood: the connection ends, its stream counted so.
    let (answers, end) = fuzz_feed(&pings(MAX_OWED_ACKS + 1), 1 << 16, 1);
    assert_eq!(end, Some(ErrorKind::H2Flood));
    assert_eq!(answers, vec![]);
    // SETTINGS are owed an acknowledgement each, counted with the PINGs.
    let mut flood = pings(MAX_OWED_ACKS / 2);
    for _ in 0..=MAX_OWED_ACKS / 2 {
        frame::write_settings(&mut flood, &[], false);
    }
    let (_, end) = fuzz_feed(&flood, 1 << 16, 1);
    assert_eq!(end, Some(ErrorKind::H2Flood));
    // Acknowledgements of this client's own frames are owed nothing.
    let mut acks = Vec::new();
    for _ in 0..MAX_OWED_ACKS * 2 {
        frame::write_settings(&mut acks, &[], true);
    }
    assert_eq!(fuzz_feed(&acks, 1 << 16, 1).1, None);
}

#[test]
fn data_on_a_stream_never_opened_is_a_connection_error() {
    // Stream 1 is open; 3 and 2 never were (RFC 9113 §5.1).
    for stream in [3, 2] {
        let mut server = Vec::new();
        frame::write_data(&mut server, stream, b"OK", true);
        let (answers, end) = fuzz_feed(&server, 1 << 16, 1);
        assert_eq!(end, Some(ErrorKind::H2Protocol), "stream {stream}");
        assert!(answers.is_empty());
    }
    // Nor HEADERS, RST_STREAM or WINDOW_UPDATE on one.
    let mut headers = Vec::new();
    frame::write_headers(&mut headers, 5, &ok_head(), true, frame::DEFAULT_MAX_FRAME);
    let mut reset = Vec::new();
    frame::write_rst_stream(&mut reset, 5, code::CANCEL);
    let mut window = Vec::new();
    frame::write_window_update(&mut window, 5, 10);
    for server in [headers, reset, window] {
        assert_eq!(
            fuzz_feed(&server, 1 << 16, 1).1,
            Some(ErrorKind::H2Protocol)
        );
    }
    // A stream that ended is not idle: what still comes on it is ignored.
    let mut server = Vec::new();
    frame::write_rst_stream(&mut server, 1, code::CANCEL);
    frame::write_data(&mut server, 1, b"late", true);
    frame::write_rst_stream(&mut server, 1, code::CANCEL);
    let (answers, end) = fuzz_feed(&server, 1 << 16, 1);
    assert_eq!((answers, end), (vec![Err(ErrorKind::H2Reset)], None));
}

#[test]
fn a_second_status_is_a_malformed_answer_not_a_status_error() {
    // `:status 200` then `:status 404` in one head (RFC 9113 §8.3.2).
    let mut block = ok_head();
    block.push(0x8d);
    let mut server = Vec::new();
    frame::write_headers(&mut server, 1, &block, false, frame::DEFAULT_MAX_FRAME);
    frame::write_data(&mut server, 1, b"OK", true);
    let (answers, end) = fuzz_feed(&server, 1 << 16, 1);
    assert_eq!((answers, end), (vec![Err(ErrorKind::Malformed)], None));
    // A `:status` in the trailers too (§8.1).
    let mut server = Vec::new();
    frame::write_headers(&mut server, 1, &ok_head(), false, frame::DEFAULT_MAX_FRAME);
    frame::write_data(&mut server, 1, b"OK", false);
    frame::write_headers(&mut server, 1, &[0x88], true, frame::DEFAULT_MAX_FRAME);
    let (answers, _) = fuzz_feed(&server, 1 << 16, 1);
    assert_eq!(answers, vec![Err(ErrorKind::Malformed)]);
    // The same answer without the second one passes.
    let mut server = Vec::new();
    frame::write_headers(&mut server, 1, &ok_head(), false, frame::DEFAULT_MAX_FRAME);
    frame::write_data(&mut server, 1, b"OK", true);
    assert_eq!(fuzz_feed(&server, 1 << 16, 1).0, vec![Ok(())]);
}
