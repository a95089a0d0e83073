//! The TLS listener's configuration: rustls (through tokio-rustls) with its
//! default crypto provider, protocol versions and cipher suites, the
//! certificate the runner gives, and ALPN `h2` before `http/1.1`.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// The acceptor for the chain in the PEM file `TLS_CERT` and the key in
/// `TLS_KEY`.
pub fn acceptor_from_env() -> Result<TlsAcceptor, String> {
    let var = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("TLS_PORT needs {name}"))
    };
    acceptor_from_files(&var("TLS_CERT")?, &var("TLS_KEY")?)
}

/// The acceptor for the chain in the PEM file `cert` and the (PKCS#8) key in
/// the PEM file `key`.
pub fn acceptor_from_files(cert: &str, key: &str) -> Result<TlsAcceptor, String> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("TLS_CERT {cert}: {e}"))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("TLS_KEY {key}: {e}"))?;
    let mut config = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("TLS_CERT and TLS_KEY: {e}"))?;
    // rustls picks the first of these that the client offers: HTTP/2 when it can.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
