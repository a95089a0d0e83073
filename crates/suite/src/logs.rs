//! Where server and build output goes: one folder per netbench process in the
//! temporary folder, readable by its owner only, each file created new, so
//! nobody else can read a server's output or plant a link it is written
//! through. A log no longer needed is removed with [`remove`], and the
//! folder with its last log; a log kept for the user (a failed build's) is
//! cut to its last [`KEPT_MAX`] bytes ([`keep`]).

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// The folder while it exists; None before the first log and after the
/// last one is removed.
static DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The most of a kept log left on disk: its end, where a build says what
/// went wrong. A chatty build once left 96 MB.
pub(crate) const KEPT_MAX: u64 = 1 << 20;

/// This process's private log folder, made when there is none.
fn dir(slot: &mut Option<PathBuf>) -> io::Result<PathBuf> {
    if let Some(d) = slot.as_ref().filter(|d| d.is_dir()) {
        return Ok(d.clone());
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
            Ok(()) => {
                *slot = Some(d.clone());
                return Ok(d);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free log folder name")))
}

/// A new log file named after `stem` in the private folder.
pub(crate) fn create(stem: &str) -> io::Result<(PathBuf, File)> {
    let mut slot = DIR.lock().unwrap_or_else(|e| e.into_inner());
    let dir = dir(&mut slot)?;
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

/// Removes a log, and the folder when it was the last one in it.
pub(crate) fn remove(log: &Path) {
    let mut slot = DIR.lock().unwrap_or_else(|e| e.into_inner());
    let _ = std::fs::remove_file(log);
    if let Some(d) = slot.as_ref() {
        // remove_dir fails on a folder that still holds a log: kept.
        if log.parent() == Some(d.as_path()) && std::fs::remove_dir(d).is_ok() {
            *slot = None;
        }
    }
}

/// Cuts a log kept for the user to its last [`KEPT_MAX`] bytes, with a
/// first line that says how much went.
pub(crate) fn keep(log: &Path) -> io::Result<()> {
    let len = std::fs::metadata(log)?.len();
    if len <= KEPT_MAX {
        return Ok(());
    }
    let mut tail = Vec::with_capacity(KEPT_MAX as usize);
    let mut f = File::open(log)?;
    f.seek(SeekFrom::Start(len - KEPT_MAX))?;
    f.read_to_end(&mut tail)?;
    let mut out = OpenOptions::new().write(true).truncate(true).open(log)?;
    writeln!(
        out,
        "[netbench: the first {} bytes of this log were dropped; the last {KEPT_MAX} follow]",
        len - KEPT_MAX
    )?;
    out.write_all(&tail)
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

    /// Issue 27: every run left an empty `netbench-PID-*` folder behind.
    #[test]
    fn the_folder_goes_with_its_last_log_and_comes_back_for_the_next() {
        let (a, _) = create("first").unwrap();
        let (b, _) = create("second").unwrap();
        let folder = a.parent().unwrap().to_path_buf();
        remove(&a);
        assert!(folder.is_dir(), "removed while a log was in it");
        // Other tests of this process may hold logs in it too: only once
        // every log is gone does it go.
        remove(&b);
        if std::fs::read_dir(&folder).map_or(true, |mut d| d.next().is_none()) {
            assert!(!folder.exists(), "the empty folder was left behind");
        }
        let (c, _) = create("third").unwrap();
        assert!(c.parent().unwrap().is_dir());
        remove(&c);
    }

    #[test]
    fn a_kept_log_is_cut_to_its_end() {
        let (log, mut f) = create("kept").unwrap();
        f.write_all(&vec![b'x'; KEPT_MAX as usize + 10]).unwrap();
        f.write_all(b"LAST").unwrap();
        drop(f);
        keep(&log).unwrap();
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.starts_with("[netbench: the first 14 bytes"),
            "{}",
            &text[..80]
        );
        assert!(text.ends_with("LAST"));
        assert!(text.len() as u64 <= KEPT_MAX + 100);
        remove(&log);
    }
}
