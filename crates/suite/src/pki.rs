//! A run's private certificate authority and its server certificate
//! (CONTRACT.md, version 1.5): made with rcgen when the run starts, for
//! `localhost`, `127.0.0.1` and `::1`, written to a folder of the run's that
//! only its user can read and removed with it; servers get the certificate
//! and key as `TLS_CERT` and `TLS_KEY`, the client and `verify` trust the
//! authority alone. Nothing of it is committed or kept past the run.

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};

/// The names the server certificate is for.
const SERVER_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Why the run's certificates could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    #[error("could not make the run's certificates: {0}")]
    Make(#[from] rcgen::Error),
    #[error("could not write the run's certificates to {path}: {source}; check that the temporary folder is writable")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The run's authority and server certificate, as files.
#[derive(Debug)]
pub struct RunPki {
    dir: PathBuf,
    /// The authority's certificate (PEM): what clients trust.
    pub ca: PathBuf,
    /// The server's certificate chain (PEM) and its PKCS#8 key (PEM).
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl RunPki {
    /// Makes an authority and a server certificate signed by it in a new
    /// folder under `parent`.
    pub fn make(parent: &Path) -> Result<RunPki, PkiError> {
        let ca_key = KeyPair::generate()?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "netbench run CA");
        let ca = ca_params.self_signed(&ca_key)?;
        let key = KeyPair::generate()?;
        let names: Vec<String> = SERVER_NAMES.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names)?;
        params
            .distinguished_name
            .push(DnType::CommonName, "localhost");
        let cert = params.signed_by(&key, &ca, &ca_key)?;

        let dir = parent.join(format!("netbench-pki-{}", std::process::id()));
        let write = |path: &Path, text: &str| -> Result<(), PkiError> {
            std::fs::write(path, text).map_err(|source| PkiError::Write {
                path: path.to_path_buf(),
                source,
            })
        };
        std::fs::create_dir_all(&dir).map_err(|source| PkiError::Write {
            path: dir.clone(),
            source,
        })?;
        restrict(&dir).map_err(|source| PkiError::Write {
            path: dir.clone(),
            source,
        })?;
        let pki = RunPki {
            ca: dir.join("ca.pem"),
            cert: dir.join("server.pem"),
            key: dir.join("server.key"),
            dir,
        };
        write(&pki.ca, &ca.pem())?;
        // The chain a server sends: its certificate, then the authority's.
        write(&pki.cert, &format!("{}{}", cert.pem(), ca.pem()))?;
        write(&pki.key, &key.serialize_pem())?;
        Ok(pki)
    }

    /// The server's environment for its TLS listener.
    pub fn server_env(&self) -> Vec<(String, String)> {
        vec![
            ("TLS_CERT".to_string(), self.cert.display().to_string()),
            ("TLS_KEY".to_string(), self.key.display().to_string()),
        ]
    }
}

impl Drop for RunPki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Only the run's user may enter the folder that holds the key.
fn restrict(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_certificate_is_trusted_through_the_run_authority_alone() {
        let parent = std::env::temp_dir().join(format!("netbench-pki-test-{}", std::process::id()));
        std::fs::create_dir_all(&parent).unwrap();
        let pki = RunPki::make(&parent).unwrap();
        let ca = std::fs::read_to_string(&pki.ca).unwrap();
        let chain = std::fs::read_to_string(&pki.cert).unwrap();
        let key = std::fs::read_to_string(&pki.key).unwrap();
        assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"));
        assert_eq!(chain.matches("BEGIN CERTIFICATE").count(), 2);
        assert!(key.starts_with("-----BEGIN PRIVATE KEY-----"), "PKCS#8");
        let mode = std::fs::metadata(pki.ca.parent().unwrap())
            .unwrap()
            .permissions();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(mode.mode() & 0o777, 0o700);
        // A second run's authority is another.
        let other = RunPki::make(&parent.join("b")).unwrap();
        assert_ne!(std::fs::read_to_string(&other.ca).unwrap(), ca);
        let dir = pki.ca.parent().unwrap().to_path_buf();
        drop(pki);
        assert!(!dir.exists(), "the folder goes with the run");
        let _ = std::fs::remove_dir_all(&parent);
    }
}
