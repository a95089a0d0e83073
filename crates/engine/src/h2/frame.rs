//! HTTP/2 frames (RFC 9113 §4 and §6) as pure functions: a frame read from
//! the start of a byte slice, its payload borrowed, and the few frames a
//! client writes. Written by hand, not taken from a crate: no maintained
//! crate offers HTTP/2 framing apart from a whole client (h2's codec is
//! private), and this is the engine's hot path, parsed in place without a
//! copy. No I/O, so it is tested and fuzzed alone
//! (`fuzz/fuzz_targets/h2_frame.rs`).

/// The frame header's length (§4.1).
pub const HEADER_LEN: usize = 9;

/// The largest payload a peer may send before SETTINGS_MAX_FRAME_SIZE says
/// more (§4.2), and the largest any frame may have.
pub const DEFAULT_MAX_FRAME: u32 = 16_384;
pub const MAX_FRAME_LIMIT: u32 = (1 << 24) - 1;

/// The largest flow-control window (§6.9.1).
pub const MAX_WINDOW: u32 = (1 << 31) - 1;

/// What every client connection opens with (§3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

pub mod kind {
    pub const DATA: u8 = 0x0;
    pub const HEADERS: u8 = 0x1;
    pub const PRIORITY: u8 = 0x2;
    pub const RST_STREAM: u8 = 0x3;
    pub const SETTINGS: u8 = 0x4;
    pub const PUSH_PROMISE: u8 = 0x5;
    pub const PING: u8 = 0x6;
    pub const GOAWAY: u8 = 0x7;
    pub const WINDOW_UPDATE: u8 = 0x8;
    pub const CONTINUATION: u8 = 0x9;
}

pub mod flag {
    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;
    pub const PADDED: u8 = 0x8;
    pub const PRIORITY: u8 = 0x20;
}

/// SETTINGS parameters (§6.5.2).
pub mod setting {
    pub const HEADER_TABLE_SIZE: u16 = 0x1;
    pub const ENABLE_PUSH: u16 = 0x2;
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    pub const MAX_FRAME_SIZE: u16 = 0x5;
    pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;
}

/// Error codes of RST_STREAM and GOAWAY (§7).
pub mod code {
    pub const NO_ERROR: u32 = 0x0;
    pub const PROTOCOL_ERROR: u32 = 0x1;
    pub const FLOW_CONTROL_ERROR: u32 = 0x3;
    pub const FRAME_SIZE_ERROR: u32 = 0x6;
    pub const CANCEL: u32 = 0x8;
    pub const COMPRESSION_ERROR: u32 = 0x9;
    /// The peer behaves in a way that might be generating excessive load
    /// (§7): here, control frames faster than it reads their answers.
    pub const ENHANCE_YOUR_CALM: u32 = 0xb;
}

/// One frame, its payload borrowed from the bytes it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// `flow` is the whole payload's length, padding included: what it
    /// takes from the flow-control windows (§6.9.1).
    Data {
        stream: u32,
        end_stream: bool,
        data: &'a [u8],
        flow: u32,
    },
    /// A header block fragment, padding and priority taken off.
    Headers {
        stream: u32,
        end_stream: bool,
        end_headers: bool,
        block: &'a [u8],
    },
    Priority {
        stream: u32,
    },
    RstStream {
        stream: u32,
        code: u32,
    },
    /// `params` holds whole 6-byte parameters ([`settings`] reads them).
    Settings {
        ack: bool,
        params: &'a [u8],
    },
    PushPromise {
        stream: u32,
    },
    Ping {
        ack: bool,
        data: [u8; 8],
    },
    GoAway {
        last_stream: u32,
        code: u32,
    },
    WindowUpdate {
        stream: u32,
        increment: u32,
    },
    Continuation {
        stream: u32,
        end_headers: bool,
        block: &'a [u8],
    },
    /// A type this client does not know: ignored, as §4.1 asks.
    Unknown {
        kind: u8,
    },
}

/// Why bytes are not a frame this connection may receive: each a
/// connection error of its own code (§5.4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("a frame longer than the largest this client allows")]
    Size,
    #[error("a frame whose fixed-size payload has another length")]
    FixedSize,
    #[error("padding longer than the frame")]
    Padding,
    #[error("a frame on a stream it may not be on (stream 0 or not 0)")]
    Stream,
    #[error("a WINDOW_UPDATE of 0")]
    ZeroIncrement,
}

impl FrameError {
    /// The code a GOAWAY for it carries.
    pub fn code(self) -> u32 {
        match self {
            FrameError::Size | FrameError::FixedSize => code::FRAME_SIZE_ERROR,
            _ => code::PROTOCOL_ERROR,
        }
    }
}

/// The frame at the start of `buf` and the bytes it took, `Ok(None)` when
/// `buf` holds less than a whole frame. A payload over `max` (the
/// SETTINGS_MAX_FRAME_SIZE this client sent) is an error before it is
/// waited for, so a peer cannot make the client buffer without bound.
pub fn parse_frame(buf: &[u8], max: u32) -> Result<Option<(Frame<'_>, usize)>, FrameError> {
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let len = u32::from_be_bytes([0, buf[0], buf[1], buf[2]]);
    if len > max {
        return Err(FrameError::Size);
    }
    let total = HEADER_LEN + len as usize;
    if buf.len() < total {
        return Ok(None);
    }
    let (kind, flags) = (buf[3], buf[4]);
    let stream = u32::from_be_bytes([buf[5], buf[6], buf[7], buf[8]]) & MAX_WINDOW;
    let payload = &buf[HEADER_LEN..total];
    let has = |f: u8| flags & f != 0;
    let on_stream = |ok: bool| if ok { Ok(()) } else { Err(FrameError::Stream) };
    let frame = match kind {
        kind::DATA => {
            on_stream(stream != 0)?;
            Frame::Data {
                stream,
                end_stream: has(flag::END_STREAM),
                data: unpad(payload, has(flag::PADDED))?,
                flow: len,
            }
        }
        kind::HEADERS => {
            on_stream(stream != 0)?;
            let mut block = unpad(payload, has(flag::PADDED))?;
            if has(flag::PRIORITY) {
                block = block.get(5..).ok_or(FrameError::Padding)?;
            }
            Frame::Headers {
                stream,
                end_stream: has(flag::END_STREAM),
                end_headers: has(flag::END_HEADERS),
                block,
            }
        }
        kind::PRIORITY => {
            on_stream(stream != 0)?;
            fixed(payload, 5)?;
            Frame::Priority { stream }
        }
        kind::RST_STREAM => {
            on_stream(stream != 0)?;
            fixed(payload, 4)?;
            Frame::RstStream {
                stream,
                code: be32(payload),
            }
        }
        kind::SETTINGS => {
            on_stream(stream == 0)?;
            let ack = has(flag::ACK);
            if (ack && len != 0) || !len.is_multiple_of(6) {
                return Err(FrameError::FixedSize);
            }
            Frame::Settings {
                ack,
                params: payload,
            }
        }
        kind::PUSH_PROMISE => Frame::PushPromise { stream },
        kind::PING => {
            on_stream(stream == 0)?;
            fixed(payload, 8)?;
            let mut data = [0u8; 8];
            data.copy_from_slice(payload);
            Frame::Ping {
                ack: has(flag::ACK),
                data,
            }
        }
        kind::GOAWAY => {
            on_stream(stream == 0)?;
            if payload.len() < 8 {
                return Err(FrameError::FixedSize);
            }
            Frame::GoAway {
                last_stream: be32(payload) & MAX_WINDOW,
                code: be32(&payload[4..]),
            }
        }
        kind::WINDOW_UPDATE => {
            fixed(payload, 4)?;
            let increment = be32(payload) & MAX_WINDOW;
            if increment == 0 {
                return Err(FrameError::ZeroIncrement);
            }
            Frame::WindowUpdate { stream, increment }
        }
        kind::CONTINUATION => {
            on_stream(stream != 0)?;
            Frame::Continuation {
                stream,
                end_headers: has(flag::END_HEADERS),
                block: payload,
            }
        }
        kind => Frame::Unknown { kind },
    };
    Ok(Some((frame, total)))
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn fixed(payload: &[u8], len: usize) -> Result<(), FrameError> {
    if payload.len() == len {
        Ok(())
    } else {
        Err(FrameError::FixedSize)
    }
}

/// The payload without its padding (§6.1): a length byte first, that many
/// bytes of padding last.
fn unpad(payload: &[u8], padded: bool) -> Result<&[u8], FrameError> {
    if !padded {
        return Ok(payload);
    }
    let (&pad, rest) = payload.split_first().ok_or(FrameError::Padding)?;
    rest.len()
        .checked_sub(pad as usize)
        .map(|end| &rest[..end])
        .ok_or(FrameError::Padding)
}

/// A SETTINGS payload's parameters, `(id, value)` in order.
pub fn settings(params: &[u8]) -> impl Iterator<Item = (u16, u32)> + '_ {
    params
        .chunks_exact(6)
        .map(|p| (u16::from_be_bytes([p[0], p[1]]), be32(&p[2..])))
}

/// Appends a frame header.
pub fn write_header(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    debug_assert!(len <= MAX_FRAME_LIMIT as usize);
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags]);
    out.extend_from_slice(&(stream & MAX_WINDOW).to_be_bytes());
}

/// Appends a SETTINGS frame of `params` (empty with `ack`).
pub fn write_settings(out: &mut Vec<u8>, params: &[(u16, u32)], ack: bool) {
    write_header(
        out,
        params.len() * 6,
        kind::SETTINGS,
        if ack { flag::ACK } else { 0 },
        0,
    );
    for (id, value) in params {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

pub fn write_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    write_header(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&(increment & MAX_WINDOW).to_be_bytes());
}

pub fn write_ping_ack(out: &mut Vec<u8>, data: [u8; 8]) {
    write_header(out, 8, kind::PING, flag::ACK, 0);
    out.extend_from_slice(&data);
}

pub fn write_rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    write_header(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

pub fn write_goaway(out: &mut Vec<u8>, last_stream: u32, code: u32) {
    write_header(out, 8, kind::GOAWAY, 0, 0);
    out.extend_from_slice(&(last_stream & MAX_WINDOW).to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
}

/// Appends a header block as one HEADERS frame, and CONTINUATION frames
/// for what does not fit `max` (the peer's SETTINGS_MAX_FRAME_SIZE).
pub fn write_headers(out: &mut Vec<u8>, stream: u32, block: &[u8], end_stream: bool, max: u32) {
    let max = max.max(DEFAULT_MAX_FRAME) as usize;
    let mut pieces = block.chunks(max).peekable();
    let first = pieces.next().unwrap_or(&[]);
    let mut flags = if end_stream { flag::END_STREAM } else { 0 };
    if pieces.peek().is_none() {
        flags |= flag::END_HEADERS;
    }
    write_header(out, first.len(), kind::HEADERS, flags, stream);
    out.extend_from_slice(first);
    while let Some(piece) = pieces.next() {
        let end = if pieces.peek().is_none() {
            flag::END_HEADERS
        } else {
            0
        };
        write_header(out, piece.len(), kind::CONTINUATION, end, stream);
        out.extend_from_slice(piece);
    }
}

/// Appends `data` as one DATA frame (its length at most the peer's
/// SETTINGS_MAX_FRAME_SIZE: the caller cuts it).
pub fn write_data(out: &mut Vec<u8>, stream: u32, data: &[u8], end_stream: bool) {
    let flags = if end_stream { flag::END_STREAM } else { 0 };
    write_header(out, data.len(), kind::DATA, flags, stream);
    out.extend_from_slice(data);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        write_header(&mut out, payload.len(), kind, flags, stream);
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn frames_read_back_as_written_and_partial_ones_wait() {
        let mut out = Vec::new();
        write_settings(
            &mut out,
            &[(setting::INITIAL_WINDOW_SIZE, MAX_WINDOW)],
            false,
        );
        write_window_update(&mut out, 0, 1000);
        write_headers(&mut out, 1, b"\x82\x84", true, DEFAULT_MAX_FRAME);
        write_data(&mut out, 3, b"hello", false);
        write_ping_ack(&mut out, *b"12345678");
        write_rst_stream(&mut out, 5, code::CANCEL);
        write_goaway(&mut out, 7, code::NO_ERROR);
        let mut at = 0;
        let mut frames = Vec::new();
        while let Some((f, n)) = parse_frame(&out[at..], DEFAULT_MAX_FRAME).unwrap() {
            frames.push(f);
            at += n;
        }
        assert_eq!(at, out.len());
        let Frame::Settings { ack: false, params } = frames[0] else {
            panic!("{:?}", frames[0])
        };
        assert_eq!(
            settings(params).collect::<Vec<_>>(),
            [(setting::INITIAL_WINDOW_SIZE, MAX_WINDOW)]
        );
        assert_eq!(
            frames[1],
            Frame::WindowUpdate {
                stream: 0,
                increment: 1000
            }
        );
        assert_eq!(
            frames[2],
            Frame::Headers {
                stream: 1,
                end_stream: true,
                end_headers: true,
                block: b"\x82\x84"
            }
        );
        assert_eq!(
            frames[3],
            Frame::Data {
                stream: 3,
                end_stream: false,
                data: b"hello",
                flow: 5
            }
        );
        assert_eq!(
            frames[4],
            Frame::Ping {
                ack: true,
                data: *b"12345678"
            }
        );
        assert_eq!(
            frames[5],
            Frame::RstStream {
                stream: 5,
                code: code::CANCEL
            }
        );
        assert_eq!(
            frames[6],
            Frame::GoAway {
                last_stream: 7,
                code: code::NO_ERROR
            }
        );
        // Any cut short of a whole frame waits for more.
        let first = HEADER_LEN + 6;
        for cut in 0..first {
            assert_eq!(
                parse_frame(&out[..cut], DEFAULT_MAX_FRAME),
                Ok(None),
                "{cut}"
            );
        }
    }

    #[test]
    fn padding_and_priority_come_off_and_count_against_flow_control() {
        let padded = frame(
            kind::DATA,
            flag::PADDED | flag::END_STREAM,
            1,
            b"\x03abcXYZ",
        );
        assert_eq!(
            parse_frame(&padded, DEFAULT_MAX_FRAME).unwrap().unwrap().0,
            Frame::Data {
                stream: 1,
                end_stream: true,
                data: b"abc",
                flow: 7
            }
        );
        let with_priority = frame(
            kind::HEADERS,
            flag::PRIORITY | flag::PADDED,
            1,
            b"\x01\0\0\0\x03\x10\x82P",
        );
        assert_eq!(
            parse_frame(&with_priority, DEFAULT_MAX_FRAME)
                .unwrap()
                .unwrap()
                .0,
            Frame::Headers {
                stream: 1,
                end_stream: false,
                end_headers: false,
                block: b"\x82"
            }
        );
    }

    #[test]
    fn a_long_header_block_goes_on_in_continuation_frames() {
        let block = vec![0x82u8; 40_000];
        let mut out = Vec::new();
        write_headers(&mut out, 9, &block, false, DEFAULT_MAX_FRAME);
        let mut at = 0;
        let mut got = Vec::new();
        let mut kinds = Vec::new();
        while let Some((f, n)) = parse_frame(&out[at..], DEFAULT_MAX_FRAME).unwrap() {
            match f {
                Frame::Headers {
                    block, end_headers, ..
                } => {
                    kinds.push(("headers", end_headers));
                    got.extend_from_slice(block)
                }
                Frame::Continuation {
                    block, end_headers, ..
                } => {
                    kinds.push(("continuation", end_headers));
                    got.extend_from_slice(block)
                }
                f => panic!("{f:?}"),
            }
            at += n;
        }
        assert_eq!(got, block);
        assert_eq!(
            kinds,
            [
                ("headers", false),
                ("continuation", false),
                ("continuation", true)
            ]
        );
    }

    #[test]
    fn each_broken_frame_is_its_own_error() {
        let cases: [(Vec<u8>, FrameError); 9] = [
            (frame(kind::DATA, 0, 0, b"x"), FrameError::Stream),
            (frame(kind::SETTINGS, 0, 1, b""), FrameError::Stream),
            (frame(kind::SETTINGS, 0, 0, b"12345"), FrameError::FixedSize),
            (
                frame(kind::SETTINGS, flag::ACK, 0, b"123456"),
                FrameError::FixedSize,
            ),
            (frame(kind::PING, 0, 0, b"1234567"), FrameError::FixedSize),
            (frame(kind::RST_STREAM, 0, 1, b"12"), FrameError::FixedSize),
            (
                frame(kind::WINDOW_UPDATE, 0, 0, &[0, 0, 0, 0]),
                FrameError::ZeroIncrement,
            ),
            (
                frame(kind::DATA, flag::PADDED, 1, b"\x05ab"),
                FrameError::Padding,
            ),
            (
                frame(kind::HEADERS, flag::PRIORITY, 1, b"\0\0"),
                FrameError::Padding,
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(
                parse_frame(&bytes, DEFAULT_MAX_FRAME),
                Err(want),
                "{bytes:?}"
            );
        }
        // Too long is refused from the header alone, before the payload.
        let mut big = Vec::new();
        write_header(&mut big, DEFAULT_MAX_FRAME as usize + 1, kind::DATA, 0, 1);
        assert_eq!(parse_frame(&big, DEFAULT_MAX_FRAME), Err(FrameError::Size));
        // An unknown type is read and left alone.
        let unknown = frame(0xfa, 0xff, 3, b"whatever");
        assert_eq!(
            parse_frame(&unknown, DEFAULT_MAX_FRAME).unwrap().unwrap(),
            (Frame::Unknown { kind: 0xfa }, unknown.len())
        );
    }
}
