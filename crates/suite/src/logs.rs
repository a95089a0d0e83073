//! Where server and build output goes: one folder per netbench process in the
//! temporary folder, readable by its owner only, each file created new, so
//! nobody else can read a server's output or plant a link it is written
//! through.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

static DIR: OnceLock<PathBuf> = OnceLock::new();

/// This process's private log folder, made on first use.
fn dir() -> io::Result<&'static PathBuf> {
    if let Some(d) = DIR.get() {
        return Ok(d);
    }
    let base = std::env::temp_dir();
    let mut last = None;
    for attempt in 0..16u32 {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let d = base.join(format!(
            "netbench-{}-{nanos:08x}{attempt:x}",
            std::process::id()
        ));
        // mkdir never follows a link at its last component and fails on
        // anything already there: the folder is ours alone.
        match DirBuilder::new().mode(0o700).create(&d) {
            Ok(()) => return Ok(DIR.get_or_init(|| d)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free log folder name")))
}

/// A new log file named after `stem` in the private folder.
pub(crate) fn create(stem: &str) -> io::Result<(PathBuf, File)> {
    let dir = dir()?;
    let stem: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    for n in 0u32.. {
        let path = if n == 0 {
            dir.join(format!("{stem}.log"))
        } else {
            dir.join(format!("{stem}-{n}.log"))
        };
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("u32 names run out first")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn private_folder_and_new_files() {
        let (a, _) = create("srv/../x y").unwrap();
        let (b, _) = create("srv/../x y").unwrap();
        assert_ne!(a, b);
        assert_eq!(a.parent(), b.parent());
        assert!(a
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("srv_.._x_y"));
        let mode = std::fs::metadata(a.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        let mode = std::fs::metadata(&a).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
