//! WebSocket frames (RFC 6455 section 5): writing a frame head, masking a
//! payload, and parsing a frame head from the front of a byte buffer. Pure
//! functions over byte slices, no I/O, shared by the engine, `verify` and the
//! test servers.

/// The largest payload of a control frame (section 5.5).
pub const MAX_CONTROL_PAYLOAD: usize = 125;
/// The longest frame head: 2 bytes, an 8-byte length and a 4-byte mask.
pub const MAX_HEAD: usize = 14;

/// A frame's opcode (section 5.2); the reserved ones are refused when parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opcode {
    Continuation,
    Text,
    Binary,
    Close,
    Ping,
    Pong,
}

impl Opcode {
    fn from_bits(b: u8) -> Option<Opcode> {
        Some(match b {
            0x0 => Opcode::Continuation,
            0x1 => Opcode::Text,
            0x2 => Opcode::Binary,
            0x8 => Opcode::Close,
            0x9 => Opcode::Ping,
            0xA => Opcode::Pong,
            _ => return None,
        })
    }

    pub fn bits(self) -> u8 {
        match self {
            Opcode::Continuation => 0x0,
            Opcode::Text => 0x1,
            Opcode::Binary => 0x2,
            Opcode::Close => 0x8,
            Opcode::Ping => 0x9,
            Opcode::Pong => 0xA,
        }
    }

    /// Close, ping and pong: short, never fragmented, allowed between the
    /// fragments of a message (section 5.5).
    pub fn is_control(self) -> bool {
        matches!(self, Opcode::Close | Opcode::Ping | Opcode::Pong)
    }
}

/// Who sent the frame being parsed: clients mask every frame, servers none
/// (section 5.1), and a frame that breaks this is a protocol error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sender {
    Client,
    Server,
}

/// A parsed frame head; the payload follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHead {
    /// The last frame of its message.
    pub fin: bool,
    pub opcode: Opcode,
    /// The masking key, present on (and only on) a client's frames.
    pub mask: Option<[u8; 4]>,
    /// Payload bytes after the head.
    pub len: u64,
    /// Bytes of the head itself.
    pub head_len: usize,
}

/// Why bytes are not a frame head a peer may send. Small and Copy: the
/// engine counts these, `verify` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("a server frame is masked (RFC 6455 section 5.1: servers never mask)")]
    MaskedByServer,
    #[error("a client frame is not masked (RFC 6455 section 5.1: clients always mask)")]
    UnmaskedByClient,
    #[error("a reserved bit (RSV1-3) is set, but no extension was negotiated")]
    Reserved,
    #[error("the reserved opcode {0:#x}")]
    Opcode(u8),
    #[error("a control frame with more than 125 bytes of payload")]
    ControlTooLong,
    #[error("a fragmented control frame (FIN not set)")]
    ControlFragmented,
    #[error("a 64-bit payload length with its most significant bit set")]
    Length,
}

/// Parses the frame head at the front of `buf`: `Ok(None)` while `buf` holds
/// only part of it (at most [`MAX_HEAD`] bytes are ever needed). Checks what
/// the head alone shows: masking by `from`, reserved bits and opcodes, the
/// limits on control frames.
pub fn parse_head(buf: &[u8], from: Sender) -> Result<Option<FrameHead>, FrameError> {
    let [b0, b1, ..] = *buf else {
        return Ok(None);
    };
    if b0 & 0x70 != 0 {
        return Err(FrameError::Reserved);
    }
    let opcode = Opcode::from_bits(b0 & 0x0F).ok_or(FrameError::Opcode(b0 & 0x0F))?;
    let fin = b0 & 0x80 != 0;
    let masked = b1 & 0x80 != 0;
    match (from, masked) {
        (Sender::Server, true) => return Err(FrameError::MaskedByServer),
        (Sender::Client, false) => return Err(FrameError::UnmaskedByClient),
        _ => {}
    }
    let (len, mut at) = match b1 & 0x7F {
        126 => match buf.get(2..4) {
            Some(b) => (u64::from(u16::from_be_bytes([b[0], b[1]])), 4),
            None => return Ok(None),
        },
        127 => match buf.get(2..10) {
            Some(b) => {
                let n = u64::from_be_bytes(b.try_into().expect("8 bytes"));
                if n >> 63 != 0 {
                    return Err(FrameError::Length);
                }
                (n, 10)
            }
            None => return Ok(None),
        },
        n => (u64::from(n), 2),
    };
    if opcode.is_control() {
        if len > MAX_CONTROL_PAYLOAD as u64 {
            return Err(FrameError::ControlTooLong);
        }
        if !fin {
            return Err(FrameError::ControlFragmented);
        }
    }
    let mask = if masked {
        let Some(m) = buf.get(at..at + 4) else {
            return Ok(None);
        };
        at += 4;
        Some([m[0], m[1], m[2], m[3]])
    } else {
        None
    };
    Ok(Some(FrameHead {
        fin,
        opcode,
        mask,
        len,
        head_len: at,
    }))
}

/// Appends a frame head: FIN, opcode, the payload length in its shortest
/// form (7, 16 or 64 bits) and the mask, if any.
pub fn write_head(out: &mut Vec<u8>, fin: bool, opcode: Opcode, len: usize, mask: Option<[u8; 4]>) {
    out.push(if fin { 0x80 } else { 0 } | opcode.bits());
    let m = if mask.is_some() { 0x80 } else { 0 };
    match len {
        0..=125 => out.push(m | len as u8),
        126..=0xFFFF => {
            out.push(m | 126);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        }
        _ => {
            out.push(m | 127);
            out.extend_from_slice(&(len as u64).to_be_bytes());
        }
    }
    if let Some(key) = mask {
        out.extend_from_slice(&key);
    }
}

/// Appends a whole frame, its payload masked with `mask` when given.
pub fn write_frame(
    out: &mut Vec<u8>,
    fin: bool,
    opcode: Opcode,
    payload: &[u8],
    mask: Option<[u8; 4]>,
) {
    write_head(out, fin, opcode, payload.len(), mask);
    let start = out.len();
    out.extend_from_slice(payload);
    if let Some(key) = mask {
        apply_mask(&mut out[start..], key, 0);
    }
}

/// XORs `data` with the masking key (section 5.3), `offset` being where
/// `data` starts in the frame's payload, so a payload can be unmasked piece
/// by piece as it arrives. Masking twice restores the data.
pub fn apply_mask(data: &mut [u8], key: [u8; 4], offset: usize) {
    // Eight bytes at a time: a message of 64 KiB is masked for every send.
    let mut k = [0u8; 8];
    for (i, b) in k.iter_mut().enumerate() {
        *b = key[(offset + i) % 4];
    }
    let wide = u64::from_ne_bytes(k);
    let mut chunks = data.chunks_exact_mut(8);
    for c in &mut chunks {
        let v = u64::from_ne_bytes((&*c).try_into().expect("8 bytes")) ^ wide;
        c.copy_from_slice(&v.to_ne_bytes());
    }
    for (b, m) in chunks.into_remainder().iter_mut().zip(k) {
        *b ^= m;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELLO_MASK: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

    /// RFC 6455 section 5.7's examples.
    #[test]
    fn the_rfc_examples() {
        let mut out = Vec::new();
        write_frame(&mut out, true, Opcode::Text, b"Hello", None);
        assert_eq!(out, [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]);

        out.clear();
        write_frame(&mut out, true, Opcode::Text, b"Hello", Some(HELLO_MASK));
        let masked = [
            0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
        ];
        assert_eq!(out, masked);
        let head = parse_head(&masked, Sender::Client).unwrap().unwrap();
        assert_eq!(
            head,
            FrameHead {
                fin: true,
                opcode: Opcode::Text,
                mask: Some(HELLO_MASK),
                len: 5,
                head_len: 6
            }
        );
        let mut payload = masked[6..].to_vec();
        apply_mask(&mut payload, HELLO_MASK, 0);
        assert_eq!(payload, b"Hello");

        // A fragmented unmasked text message: "Hel", then "lo".
        let first = [0x01, 0x03, 0x48, 0x65, 0x6c];
        let last = [0x80, 0x02, 0x6c, 0x6f];
        let h = parse_head(&first, Sender::Server).unwrap().unwrap();
        assert!(!h.fin && h.opcode == Opcode::Text && h.len == 3);
        let h = parse_head(&last, Sender::Server).unwrap().unwrap();
        assert!(h.fin && h.opcode == Opcode::Continuation && h.len == 2);

        // Unmasked ping with "Hello", and 256 and 65,536 bytes of binary.
        let h = parse_head(&[0x89, 0x05], Sender::Server).unwrap().unwrap();
        assert_eq!((h.opcode, h.len), (Opcode::Ping, 5));
        out.clear();
        write_head(&mut out, true, Opcode::Binary, 256, None);
        assert_eq!(out, [0x82, 0x7E, 0x01, 0x00]);
        out.clear();
        write_head(&mut out, true, Opcode::Binary, 65536, None);
        assert_eq!(out, [0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00]);
    }

    #[test]
    fn every_length_form_round_trips_and_is_partial_until_whole() {
        for len in [0usize, 1, 125, 126, 127, 65535, 65536, 1 << 20] {
            for mask in [None, Some([1, 2, 3, 4])] {
                let mut out = Vec::new();
                write_head(&mut out, len % 2 == 0, Opcode::Binary, len, mask);
                let from = if mask.is_some() {
                    Sender::Client
                } else {
                    Sender::Server
                };
                for cut in 0..out.len() {
                    assert_eq!(parse_head(&out[..cut], from), Ok(None), "{len} cut {cut}");
                }
                out.extend_from_slice(b"payload");
                let h = parse_head(&out, from).unwrap().unwrap();
                assert_eq!(h.len, len as u64);
                assert_eq!(h.mask, mask);
                assert_eq!(h.fin, len % 2 == 0);
                assert_eq!(h.head_len, out.len() - 7);
                assert!(h.head_len <= MAX_HEAD);
            }
        }
    }

    #[test]
    fn bad_heads_are_refused() {
        let cases: [(&[u8], Sender, FrameError); 7] = [
            (
                &[0x81, 0x85, 1, 2, 3, 4],
                Sender::Server,
                FrameError::MaskedByServer,
            ),
            (&[0x81, 0x05], Sender::Client, FrameError::UnmaskedByClient),
            (&[0xC1, 0x05], Sender::Server, FrameError::Reserved),
            (&[0x83, 0x05], Sender::Server, FrameError::Opcode(3)),
            (
                &[0x89, 0x7E, 0x00, 0x7E],
                Sender::Server,
                FrameError::ControlTooLong,
            ),
            (&[0x09, 0x00], Sender::Server, FrameError::ControlFragmented),
            (
                &[0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0],
                Sender::Server,
                FrameError::Length,
            ),
        ];
        for (bytes, from, err) in cases {
            assert_eq!(parse_head(bytes, from), Err(err), "{bytes:02x?}");
        }
    }

    #[test]
    fn masking_in_pieces_matches_masking_whole() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        let key = [0xde, 0xad, 0xbe, 0xef];
        let mut whole = data.clone();
        apply_mask(&mut whole, key, 0);
        let mut pieces = data.clone();
        let mut at = 0;
        for len in [1usize, 3, 8, 13, 64, 911] {
            apply_mask(&mut pieces[at..at + len], key, at);
            at += len;
        }
        assert_eq!(whole, pieces);
        for (i, (m, d)) in whole.iter().zip(&data).enumerate() {
            assert_eq!(*m, d ^ key[i % 4]);
        }
        apply_mask(&mut whole, key, 0);
        assert_eq!(whole, data);
    }
}
