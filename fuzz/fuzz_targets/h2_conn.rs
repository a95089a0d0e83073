//! The engine's HTTP/2 client (crates/engine/src/h2/) on whatever a server
//! might send, cut into reads of any size: frames (`frame.rs`, by hand),
//! header blocks through loona-hpack and the fields the checks read, flow
//! control, GOAWAY and resets. It must end every time, as answers judged or
//! a counted kind, never a panic or a loop, and never answer more requests
//! than it sent; a frame written by the codec reads back as itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netbench_engine::h2::{frame, fuzz_feed};

fuzz_target!(|input: &[u8]| {
    let Some((&knobs, server)) = input.split_first() else {
        return;
    };
    let streams = usize::from(knobs % 8) + 1;
    let piece = usize::from(knobs / 8) * 13 + 1;
    let (answers, _ended) = fuzz_feed(server, piece, streams);
    assert!(answers.len() <= streams, "{} answers to {streams}", answers.len());
    // The pure decoder alone, and the encoders it must agree with.
    if let Ok(Some((frame::Frame::Data { stream, end_stream, data, .. }, _))) =
        frame::parse_frame(server, frame::MAX_FRAME_LIMIT)
    {
        let mut out = Vec::new();
        frame::write_data(&mut out, stream, data, end_stream);
        let (again, used) = frame::parse_frame(&out, frame::MAX_FRAME_LIMIT).unwrap().unwrap();
        assert_eq!(used, out.len());
        assert!(matches!(again, frame::Frame::Data { data: d, .. } if d == data));
    }
});
