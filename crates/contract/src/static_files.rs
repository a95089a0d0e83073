//! The `static` part's two files (CONTRACT.md, "static") as a formula, so
//! `verify` checks every byte without a copy on disk and a server's build
//! writes them (`write_static_files`, or contract/static/make.py).

use std::io;
use std::path::Path;

/// One file of the `static` part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticFile {
    /// Its name under `/static/` and on disk.
    pub name: &'static str,
    /// Its length in bytes.
    pub size: usize,
    /// SHA-256 of its bytes, lowercase hex, as CONTRACT.md prints it.
    pub sha256: &'static str,
}

/// The files, as CONTRACT.md lists them.
pub const STATIC_FILES: [StaticFile; 2] = [
    StaticFile {
        name: "14k",
        size: 14 * 1024,
        sha256: "57a8ca1d858dbeaeac461a9c9cf2bb09a737493e9846b161c4ad840e42d613be",
    },
    StaticFile {
        name: "1m",
        size: 1024 * 1024,
        sha256: "3f055e97e631e61d7f5b9e428abbbcfb07255bc181245e235f5fa8d676d99f3c",
    },
];

/// The 64 characters of base64: text that any tool shows, and that
/// compresses about as much as a real text asset, not to nothing.
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Byte `i` of every file is `\n` when `i mod 64 = 63` (lines of 63
/// characters), else a letter of the alphabet drawn by the C standard's
/// example LCG seeded with the file's size; the state moves on every byte.
pub fn static_bytes(size: usize) -> Vec<u8> {
    // The state stays below 2^31, so every language's 64-bit integers (and
    // JavaScript's doubles, with BigInt or a split multiply) compute it.
    let mut s = (size as u64) % (1 << 31);
    (0..size)
        .map(|i| {
            s = (s * 1_103_515_245 + 12_345) % (1 << 31);
            if i % 64 == 63 {
                b'\n'
            } else {
                ALPHABET[((s >> 16) % 64) as usize]
            }
        })
        .collect()
}

/// The file of that name under `/static/`, if the contract has one.
pub fn static_file(name: &str) -> Option<StaticFile> {
    STATIC_FILES.into_iter().find(|f| f.name == name)
}

/// Writes every file into `dir` (made if missing), for a server's build.
pub fn write_static_files(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for f in STATIC_FILES {
        std::fs::write(dir.join(f.name), static_bytes(f.size))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::sha256_hex;

    #[test]
    fn the_files_are_the_ones_the_contract_prints() {
        for f in STATIC_FILES {
            let bytes = static_bytes(f.size);
            assert_eq!(bytes.len(), f.size);
            assert_eq!(sha256_hex(&bytes), f.sha256, "{}", f.name);
        }
    }

    #[test]
    fn lines_of_63_letters_and_a_newline() {
        let bytes = static_bytes(14 * 1024);
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            assert_eq!(line.len(), 64);
            assert!(line[..63].iter().all(|b| ALPHABET.contains(b)));
        }
        // The formula by hand for the first byte: s = 14336 * 1103515245
        // + 12345 mod 2^31, its bits 16 and up mod 64.
        let s = (14_336u64 * 1_103_515_245 + 12_345) % (1 << 31);
        assert_eq!(bytes[0], ALPHABET[((s >> 16) % 64) as usize]);
    }

    #[test]
    fn the_python_script_writes_the_same_bytes() {
        let dir = std::env::temp_dir().join(format!("netbench-static-{}", std::process::id()));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contract/static/make.py");
        let status = std::process::Command::new("python3")
            .arg(&script)
            .arg(&dir)
            .status()
            .expect("python3 runs contract/static/make.py");
        assert!(status.success());
        for f in STATIC_FILES {
            let written = std::fs::read(dir.join(f.name)).expect("make.py wrote the file");
            assert!(written == static_bytes(f.size), "{} differs", f.name);
        }
        std::fs::remove_dir_all(&dir).expect("remove the test's folder");
    }
}
