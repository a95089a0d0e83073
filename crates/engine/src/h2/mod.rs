//! HTTP/2 (RFC 9113) as a protocol on the shared transport: the pure frame
//! codec (`frame.rs`, fuzzed), the plan's requests in HTTP/2 form
//! (`request.rs`, HPACK by loona-hpack), and the connection state machine
//! the worker drives (`conn.rs`), over cleartext (h2c, prior knowledge) or
//! under `tls.rs` (h2, ALPN).

mod conn;
pub mod frame;
mod request;

#[doc(hidden)]
pub use conn::fuzz_feed;
pub(crate) use conn::H2Conn;
pub use request::H2RequestError;
pub(crate) use request::{h2_request, H2Request};
