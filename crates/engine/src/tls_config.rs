//! What a TLS run connects with, built once before the run: the rustls client
//! configuration (whom to trust, which versions, ALPN, resumption) and the
//! name the certificate must carry. Workers share it; nothing here runs per
//! request.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use serde::{Deserialize, Serialize};

/// Which TLS versions a run offers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TlsVersion {
    /// TLS 1.3 and 1.2; the server chooses (1.3 when it can).
    #[default]
    Any,
    /// TLS 1.2 only.
    V12,
    /// TLS 1.3 only.
    V13,
}

impl TlsVersion {
    pub fn name(self) -> &'static str {
        match self {
            TlsVersion::Any => "1.2 or 1.3",
            TlsVersion::V12 => "1.2",
            TlsVersion::V13 => "1.3",
        }
    }
}

/// How a run's TLS is set up, as the user gave it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// A PEM file of the authorities to trust instead of the system's.
    pub cacert: Option<PathBuf>,
    /// Accept any certificate (signatures are still checked): for servers
    /// whose certificate nobody signed.
    pub insecure: bool,
    /// Resume sessions on new connections (tickets or session IDs); off,
    /// every connection makes a full handshake.
    pub resume: bool,
    pub version: TlsVersion,
    /// ALPN protocols offered, most preferred first; empty offers none.
    pub alpn: Vec<Vec<u8>>,
    /// The name sent in SNI and checked against the certificate; the URL's
    /// host when `None`.
    pub server_name: Option<String>,
}

/// The TLS half of a [`LoadPlan`](crate::LoadPlan): ready to open
/// connections with.
#[derive(Debug, Clone)]
pub struct TlsPlan {
    pub(crate) config: Arc<ClientConfig>,
    pub(crate) server_name: ServerName<'static>,
    pub resume: bool,
    pub insecure: bool,
    pub version: TlsVersion,
}

/// Why a TLS set-up cannot be made; each says what to change.
#[derive(Debug, thiserror::Error)]
pub enum TlsConfigError {
    #[error("could not read --cacert {path}: {source}; give the PEM file of the authority that signed the server's certificate")]
    CaFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("--cacert {0} holds no certificate (no `-----BEGIN CERTIFICATE-----` block); give the PEM file of the authority that signed the server's certificate")]
    CaEmpty(PathBuf),
    #[error("--cacert {path}: a certificate in it was refused ({reason}); check that the file is a CA certificate in PEM")]
    CaBad { path: PathBuf, reason: String },
    #[error("`{0}` is not a name a TLS certificate can carry; give a DNS name or an IP address")]
    ServerName(String),
    #[error("the system's trusted authorities could not be read ({0}); install the ca-certificates package, or give --cacert FILE (or --insecure)")]
    NoRoots(String),
    #[error("TLS could not be set up: {0}")]
    Rustls(#[from] rustls::Error),
}

impl TlsPlan {
    /// The plan for connecting to `host` (the URL's host: a name or an IP
    /// address) with `options`.
    pub fn new(options: &TlsOptions, host: &str) -> Result<TlsPlan, TlsConfigError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let versions: &[&'static rustls::SupportedProtocolVersion] = match options.version {
            TlsVersion::Any => rustls::ALL_VERSIONS,
            TlsVersion::V12 => &[&rustls::version::TLS12],
            TlsVersion::V13 => &[&rustls::version::TLS13],
        };
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(versions)?;
        let mut config = if options.insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(
                    provider.signature_verification_algorithms,
                )))
                .with_no_client_auth()
        } else {
            builder
                .with_root_certificates(roots(options)?)
                .with_no_client_auth()
        };
        config.alpn_protocols = options.alpn.clone();
        config.resumption = if options.resume {
            Resumption::default()
        } else {
            Resumption::disabled()
        };
        let name = options.server_name.as_deref().unwrap_or(host);
        // A bracketed IPv6 host reads as the address inside.
        let bare = name.trim_start_matches('[').trim_end_matches(']');
        let server_name = ServerName::try_from(bare.to_string())
            .map_err(|_| TlsConfigError::ServerName(name.to_string()))?;
        Ok(TlsPlan {
            config: Arc::new(config),
            server_name,
            resume: options.resume,
            insecure: options.insecure,
            version: options.version,
        })
    }

    /// A new client connection's TLS state.
    pub(crate) fn connect(
        &self,
    ) -> Result<rustls::client::UnbufferedClientConnection, rustls::Error> {
        rustls::client::UnbufferedClientConnection::new(
            self.config.clone(),
            self.server_name.clone(),
        )
    }
}

/// The authorities to trust: `--cacert`'s alone when given, else the
/// system's store.
fn roots(options: &TlsOptions) -> Result<RootCertStore, TlsConfigError> {
    let mut store = RootCertStore::empty();
    match &options.cacert {
        Some(path) => {
            let pem = std::fs::read(path).map_err(|source| TlsConfigError::CaFile {
                path: path.clone(),
                source,
            })?;
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
                .collect::<Result<_, _>>()
                .map_err(|e| TlsConfigError::CaBad {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
            if certs.is_empty() {
                return Err(TlsConfigError::CaEmpty(path.clone()));
            }
            for cert in certs {
                store.add(cert).map_err(|e| TlsConfigError::CaBad {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = found
                    .errors
                    .first()
                    .map_or_else(|| "it holds no certificate".to_string(), |e| e.to_string());
                return Err(TlsConfigError::NoRoots(why));
            }
        }
    }
    Ok(store)
}

/// `--insecure`: any chain and any name pass, but the handshake's signatures
/// are still verified, so the cost measured is a real handshake's.
#[derive(Debug)]
struct AnyCertificate(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, text: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("netbench-tlscfg-{}-{name}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn a_missing_or_empty_cacert_says_what_to_give() {
        let missing = TlsOptions {
            cacert: Some(PathBuf::from("/nonexistent/ca.pem")),
            ..TlsOptions::default()
        };
        let e = TlsPlan::new(&missing, "localhost").unwrap_err().to_string();
        assert!(
            e.contains("could not read --cacert /nonexistent/ca.pem"),
            "{e}"
        );
        let empty = temp("empty.pem", "not a certificate\n");
        let e = TlsPlan::new(
            &TlsOptions {
                cacert: Some(empty.clone()),
                ..TlsOptions::default()
            },
            "localhost",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("holds no certificate"), "{e}");
        let bad = temp(
            "bad.pem",
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        );
        let e = TlsPlan::new(
            &TlsOptions {
                cacert: Some(bad.clone()),
                ..TlsOptions::default()
            },
            "localhost",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("was refused"), "{e}");
        let _ = std::fs::remove_file(empty);
        let _ = std::fs::remove_file(bad);
    }

    #[test]
    fn names_and_addresses_both_make_a_server_name() {
        let insecure = TlsOptions {
            insecure: true,
            ..TlsOptions::default()
        };
        for host in ["localhost", "127.0.0.1", "[::1]", "example.com"] {
            TlsPlan::new(&insecure, host).unwrap_or_else(|e| panic!("{host}: {e}"));
        }
        let e = TlsPlan::new(&insecure, "bad name!")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a name"), "{e}");
    }

    #[test]
    fn resumption_and_versions_follow_the_options() {
        let plan = TlsPlan::new(
            &TlsOptions {
                insecure: true,
                resume: true,
                version: TlsVersion::V13,
                alpn: vec![b"http/1.1".to_vec()],
                ..TlsOptions::default()
            },
            "localhost",
        )
        .unwrap();
        assert!(plan.resume);
        assert_eq!(plan.config.alpn_protocols, vec![b"http/1.1".to_vec()]);
        assert!(plan.connect().is_ok());
    }
}
