//! What version 1.2's checks compute over bodies: the SHA-256 an upload
//! answer must name, and the decoding of a compressed answer within a bound,
//! so a server's decompression bomb costs `verify` a bounded amount of
//! memory and time, never all of it.

use std::io::Read;

use sha2::{Digest, Sha256};

/// SHA-256 of `data` in lowercase hex, as an upload answer writes it.
pub fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The most a compressed answer may decode to before it is refused: a
/// `/work` answer is about 200 bytes, so anything near this is a bomb.
pub const MAX_DECODED: usize = 1 << 20;

/// A `Content-Encoding` that `verify` decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Gzip,
    Brotli,
}

impl Coding {
    /// The coding a `Content-Encoding` value names; `Ok(None)` for none
    /// (absent or `identity`).
    pub fn parse(value: Option<&str>) -> Result<Option<Coding>, DecodeError> {
        let Some(v) = value.map(str::trim) else {
            return Ok(None);
        };
        if v.is_empty() || v.eq_ignore_ascii_case("identity") {
            Ok(None)
        } else if v.eq_ignore_ascii_case("gzip") || v.eq_ignore_ascii_case("x-gzip") {
            Ok(Some(Coding::Gzip))
        } else if v.eq_ignore_ascii_case("br") {
            Ok(Some(Coding::Brotli))
        } else {
            Err(DecodeError::Unknown(v.to_string()))
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Brotli => "br",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("Content-Encoding `{0}` is none the contract allows: answer gzip, br or no encoding")]
    Unknown(String),
    #[error("the body is not valid {coding} data ({why}): compress the whole answer, or send it without Content-Encoding")]
    Corrupt { coding: &'static str, why: String },
    #[error("the {coding} body decodes past {} KiB, a decompression bomb: a /work answer is about 200 bytes", MAX_DECODED >> 10)]
    TooLarge { coding: &'static str },
}

/// Decodes `body` sent with `coding`, reading at most `limit` bytes of
/// output (one more is asked for, to tell "exactly the limit" from "more").
pub fn decode(coding: Coding, body: &[u8], limit: usize) -> Result<Vec<u8>, DecodeError> {
    let reader: Box<dyn Read + '_> = match coding {
        // Several gzip members in a row are one valid body (RFC 1952 §2.2).
        Coding::Gzip => Box::new(flate2::read::MultiGzDecoder::new(body)),
        Coding::Brotli => Box::new(brotli_decompressor::Decompressor::new(body, 4096)),
    };
    let mut out = Vec::new();
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| DecodeError::Corrupt {
            coding: coding.as_str(),
            why: e.to_string(),
        })?;
    if out.len() > limit {
        return Err(DecodeError::TooLarge {
            coding: coding.as_str(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn the_digest_of_a_known_text() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn gzip_decodes_whole_and_in_members() {
        assert_eq!(decode(Coding::Gzip, &gzip(b"{}"), 10).unwrap(), b"{}");
        let two = [gzip(b"ab"), gzip(b"cd")].concat();
        assert_eq!(decode(Coding::Gzip, &two, 10).unwrap(), b"abcd");
    }

    #[test]
    fn plain_text_under_a_gzip_label_is_corrupt() {
        let e = decode(Coding::Gzip, b"{\"a\":1}", 100).unwrap_err();
        assert!(matches!(e, DecodeError::Corrupt { .. }), "{e}");
    }

    #[test]
    fn a_bomb_stops_at_the_limit() {
        let bomb = gzip(&vec![0u8; 4 << 20]);
        assert!(bomb.len() < 10_000);
        let e = decode(Coding::Gzip, &bomb, MAX_DECODED).unwrap_err();
        assert!(e.to_string().contains("decompression bomb"), "{e}");
        // Exactly the limit is not over it.
        assert_eq!(
            decode(Coding::Gzip, &gzip(&[7; 100]), 100).unwrap().len(),
            100
        );
    }

    #[test]
    fn brotli_decodes_and_its_bomb_stops_too() {
        let br = |data: &[u8]| {
            let mut w = brotli::CompressorWriter::new(Vec::new(), 4096, 5, 22);
            w.write_all(data).unwrap();
            w.into_inner()
        };
        assert_eq!(
            decode(Coding::Brotli, &br(b"{\"a\":1}"), 100).unwrap(),
            b"{\"a\":1}"
        );
        let e = decode(Coding::Brotli, &br(&vec![0u8; 4 << 20]), MAX_DECODED).unwrap_err();
        assert!(matches!(e, DecodeError::TooLarge { .. }), "{e}");
        assert!(decode(Coding::Brotli, b"{\"a\":1}", 100).is_err());
    }

    #[test]
    fn codings_by_name() {
        assert_eq!(Coding::parse(None).unwrap(), None);
        assert_eq!(Coding::parse(Some("identity")).unwrap(), None);
        assert_eq!(Coding::parse(Some("GZIP")).unwrap(), Some(Coding::Gzip));
        assert_eq!(Coding::parse(Some("br")).unwrap(), Some(Coding::Brotli));
        assert!(Coding::parse(Some("deflate")).is_err());
    }
}
