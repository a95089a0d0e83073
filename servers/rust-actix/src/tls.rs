//! The TLS listener's configuration: rustls with its default crypto
//! provider, protocol versions and cipher suites, and the certificate the
//! runner gives. actix-web adds the ALPN protocols (`h2`, `http/1.1`) itself.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;

/// The configuration for the chain in the PEM file `TLS_CERT` and the key in
/// `TLS_KEY`.
pub fn config_from_env() -> Result<ServerConfig, String> {
    let var = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("TLS_PORT needs {name}"))
    };
    config_from_files(&var("TLS_CERT")?, &var("TLS_KEY")?)
}

/// The configuration for the chain in the PEM file `cert` and the (PKCS#8)
/// key in the PEM file `key`.
pub fn config_from_files(cert: &str, key: &str) -> Result<ServerConfig, String> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("TLS_CERT {cert}: {e}"))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("TLS_KEY {key}: {e}"))?;
    ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("TLS_CERT and TLS_KEY: {e}"))
}
