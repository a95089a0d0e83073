//! `ChunkedDecoder` fed a body in one piece and split at points the fuzzer
//! chooses. Input: byte 0 says how many cuts (0 to 7), the next that many
//! bytes are the lengths of the pieces before the last, the rest is the body.
//! Whatever the split, the decoder must hand out the same data, consume the
//! same bytes and end the same way (done, not done, or the same error); it
//! never consumes more than it was given, stops early only when the body is
//! complete, and hands out no more data than it consumed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netbench_engine::{ChunkError, ChunkedDecoder};

fuzz_target!(|input: &[u8]| {
    let Some((&n, rest)) = input.split_first() else {
        return;
    };
    let cuts = usize::from(n % 8).min(rest.len());
    let (lengths, body) = rest.split_at(cuts);
    let mut pieces = Vec::with_capacity(cuts + 1);
    let mut at = 0;
    for &len in lengths {
        let end = (at + usize::from(len)).min(body.len());
        pieces.push(&body[at..end]);
        at = end;
    }
    pieces.push(&body[at..]);

    let whole = decode(&[body]);
    let split = decode(&pieces);
    assert_eq!(whole, split, "one piece and {} pieces differ", pieces.len());
    let bytes = byte_by_byte(body);
    assert_eq!(whole, bytes, "one piece and byte by byte differ");
});

#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// Bytes consumed in all, or the error.
    result: Result<usize, ChunkError>,
    data: Vec<u8>,
    done: bool,
}

fn decode(pieces: &[&[u8]]) -> Outcome {
    let mut dec = ChunkedDecoder::default();
    let mut data = Vec::new();
    let mut consumed = 0;
    for piece in pieces {
        let before = data.len();
        let used = match dec.decode(piece, |d| data.extend_from_slice(d)) {
            Ok(used) => used,
            Err(e) => {
                return Outcome {
                    result: Err(e),
                    data,
                    done: dec.is_done(),
                }
            }
        };
        assert!(used <= piece.len(), "used {used} of {} bytes", piece.len());
        assert!(
            data.len() - before <= used,
            "{} bytes of data from {used} bytes consumed",
            data.len() - before
        );
        consumed += used;
        if used < piece.len() {
            assert!(
                dec.is_done(),
                "stopped at {used} of {} bytes, not done",
                piece.len()
            );
        }
        if dec.is_done() {
            // Done is final: the next answer's bytes are left alone.
            let after = dec.decode(b"2\r\nOK\r\n0\r\n\r\n", |_| panic!("data after the end"));
            assert_eq!(after, Ok(0), "a finished decoder consumed more");
            break;
        }
    }
    Outcome {
        result: Ok(consumed),
        data,
        done: dec.is_done(),
    }
}

fn byte_by_byte(body: &[u8]) -> Outcome {
    let pieces: Vec<&[u8]> = body.chunks(1).collect();
    decode(&pieces)
}
