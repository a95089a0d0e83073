//! The engine's TLS layer (crates/engine/src/tls.rs) on whatever a server
//! might send after the ClientHello, cut into reads of any size: records are
//! rustls's to parse, but the layer's own loop (feeding rustls from the
//! socket's bytes, handing plaintext on, the end of the stream mid-handshake)
//! must end every time as a counted kind, never a panic or a loop.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netbench_engine::{fuzz_tls_feed, ErrorKind};

fuzz_target!(|input: &[u8]| {
    let Some((&piece, server)) = input.split_first() else {
        return;
    };
    if let Err(kind) = fuzz_tls_feed(server, usize::from(piece) * 37 + 1) {
        // Bytes that are not a server's handshake fail as TLS, never as
        // an HTTP answer: nothing is handed to HTTP before the handshake.
        assert!(
            matches!(
                kind,
                ErrorKind::TlsProtocol
                    | ErrorKind::TlsAlert
                    | ErrorKind::TlsUntrusted
                    | ErrorKind::TlsName
                    | ErrorKind::TlsExpired
            ),
            "{kind:?}"
        );
    }
});
