//! WebSocket (RFC 6455): the pure codec (`frame`, `handshake`, `sha1`), used
//! by the engine, `verify` and the test servers, and the engine's
//! per-connection state machine ([`WsConn`]), driven by the same worker loop
//! as HTTP.

mod conn;
pub mod frame;
pub mod handshake;
mod sha1;

use std::hash::{BuildHasher, Hasher};

pub(crate) use conn::WsConn;
pub use sha1::sha1;

/// The largest message the contract asks servers to echo (CONTRACT.md, `ws`),
/// and so the largest a plan may send.
pub const MAX_MESSAGE: usize = 64 * 1024;

/// The random numbers of one connection: keys, masks and payloads.
/// SplitMix64: fast enough to fill a 64 KiB payload per message. It is not a
/// cryptographic generator; RFC 6455 asks for unpredictable masks to protect
/// proxies from scripts in browsers, which a load generator is not.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(crate) fn fill_bytes(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for c in &mut chunks {
            c.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        let last = self.next_u64().to_le_bytes();
        rest.copy_from_slice(&last[..rest.len()]);
    }

    /// Random ASCII letters: a text message must be valid UTF-8.
    pub(crate) fn fill_letters(&mut self, buf: &mut [u8]) {
        const LETTERS: &[u8; 52] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        self.fill_bytes(buf);
        for b in buf.iter_mut() {
            *b = LETTERS[(usize::from(*b) * LETTERS.len()) >> 8];
        }
    }

    pub(crate) fn mask(&mut self) -> [u8; 4] {
        (self.next_u64() as u32).to_le_bytes()
    }

    pub(crate) fn bytes16(&mut self) -> [u8; 16] {
        let mut out = [0u8; 16];
        self.fill_bytes(&mut out);
        out
    }
}

/// A seed that differs between runs and threads, from the standard library's
/// per-process random hash keys and the clock.
pub(crate) fn fresh_seed() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    h.write_u64(now);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_are_letters_and_bytes_vary() {
        let mut rng = Rng::new(1);
        let mut text = vec![0u8; 1001];
        rng.fill_letters(&mut text);
        assert!(text.iter().all(u8::is_ascii_alphabetic));
        assert!(std::str::from_utf8(&text).is_ok());
        let mut a = vec![0u8; 13];
        let mut b = vec![0u8; 13];
        rng.fill_bytes(&mut a);
        rng.fill_bytes(&mut b);
        assert_ne!(a, b);
        assert_ne!(fresh_seed(), fresh_seed());
    }
}
