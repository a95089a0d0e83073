//! HTTP/2 (RFC 9113) as a protocol on the shared transport: the pure frame
//! codec (`frame.rs`, fuzzed), the plan's requests in HTTP/2 form
//! (`request.rs`) and their header blocks against the server's dynamic
//! table (`encoder.rs`), answers' header blocks decoded (`hpack.rs`, by
//! hand: the hot path), and the connection state machine
//! the worker drives (`conn.rs`), over cleartext (h2c, prior knowledge) or
//! under `tls.rs` (h2, ALPN).

mod conn;
mod encoder;
mod fields;
pub mod frame;
mod fuzz;
mod hpack;
mod request;

pub(crate) use conn::H2Conn;
#[doc(hidden)]
pub use fuzz::fuzz_feed;
#[doc(hidden)]
pub use hpack::{fuzz_both as fuzz_hpack, HpackError};
pub use request::H2RequestError;
pub(crate) use request::{h2_requests, H2Request};
