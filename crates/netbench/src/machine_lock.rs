//! One `netbench run` measures on a machine at a time: two at once would
//! share the CPUs and skew each other's numbers without a trace. A run
//! holds an flock on one file for the machine ([`MachineLock::path`]:
//! `$NETBENCH_LOCK` when set, else `/run/lock/netbench.lock` when
//! `/run/lock` can be written, else `netbench.lock` in the temporary
//! folder), with its pid, and its run and store once known, written in it
//! for whoever waits. The kernel drops the lock when the process ends,
//! however it ends.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Who holds the lock, as its file says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holder {
    pub pid: Option<u32>,
    pub run: Option<i64>,
    pub store: Option<String>,
}

impl Holder {
    fn parse(text: &str) -> Holder {
        let mut h = Holder::default();
        for line in text.lines() {
            match line.split_once('=') {
                Some(("pid", v)) => h.pid = v.trim().parse().ok(),
                Some(("run", v)) => h.run = v.trim().parse().ok(),
                Some(("store", v)) => h.store = Some(v.to_string()),
                _ => {}
            }
        }
        h
    }
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pid {
            Some(pid) => write!(f, "netbench pid {pid}")?,
            None => write!(f, "a netbench")?,
        }
        if let Some(run) = self.run {
            write!(f, ", run {run}")?;
        }
        if let Some(store) = &self.store {
            // The file is writable by every user: never print it raw.
            write!(f, " in {}", store.escape_debug())?;
        }
        Ok(())
    }
}

/// The held lock; dropping it lets the next run measure.
#[derive(Debug)]
pub struct MachineLock {
    file: File,
    pid: u32,
}

impl MachineLock {
    /// The machine's lock file (see the module's doc).
    pub fn path() -> PathBuf {
        if let Some(p) = std::env::var_os("NETBENCH_LOCK").filter(|p| !p.is_empty()) {
            return PathBuf::from(p);
        }
        let run_lock = Path::new("/run/lock");
        if run_lock.is_dir() && writable(run_lock) {
            run_lock.join("netbench.lock")
        } else {
            std::env::temp_dir().join("netbench.lock")
        }
    }

    /// Takes the lock at `path` if nobody holds it; else says who does.
    pub fn try_take(path: &Path) -> io::Result<Result<MachineLock, Holder>> {
        let file = open(path)?;
        // SAFETY: flock on a descriptor this `File` owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(err);
            }
            let mut text = String::new();
            let _ = (&file).read_to_string(&mut text);
            return Ok(Err(Holder::parse(&text)));
        }
        let mut lock = MachineLock {
            file,
            pid: std::process::id(),
        };
        lock.write(None, None);
        Ok(Ok(lock))
    }

    /// Adds the run and its store to what waiting runs are told.
    pub fn note(&mut self, run: i64, store: &Path) {
        let store = std::fs::canonicalize(store).unwrap_or_else(|_| store.to_path_buf());
        self.write(Some(run), Some(&store));
    }

    fn write(&mut self, run: Option<i64>, store: Option<&Path>) {
        let mut text = format!("pid={}\n", self.pid);
        if let Some(run) = run {
            text.push_str(&format!("run={run}\n"));
        }
        if let Some(store) = store {
            text.push_str(&format!("store={}\n", store.display()));
        }
        // Best effort: a file another user made may not be writable; the
        // lock holds all the same.
        let _ = self.file.set_len(0);
        let _ = self.file.seek(SeekFrom::Start(0));
        let _ = self.file.write_all(text.as_bytes());
    }
}

impl Drop for MachineLock {
    fn drop(&mut self) {
        // Emptied before the lock goes, so a stale pid is never read.
        let _ = self.file.set_len(0);
    }
}

/// Opens (making it, writable by every user, who all share it) the lock
/// file: read-write when it can, else read-only, which flock accepts too.
fn open(path: &Path) -> io::Result<File> {
    match OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o666)
        .open(path)
    {
        Ok(f) => {
            // The umask took write from the others; give it back, so any
            // user's run can say who it is. Fails harmlessly on a file
            // someone else made.
            let _ = f.set_permissions(std::fs::Permissions::from_mode(0o666));
            Ok(f)
        }
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => File::open(path),
        Err(e) => Err(e),
    }
}

fn writable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path; access only reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_is_told_who_holds_it() {
        let path = std::env::temp_dir().join(format!("netbench-ml-{}.lock", std::process::id()));
        let mut first = MachineLock::try_take(&path).unwrap().unwrap();
        first.note(7, Path::new("/x/db\u{1b}.sqlite"));
        let holder = MachineLock::try_take(&path).unwrap().unwrap_err();
        assert_eq!(holder.pid, Some(std::process::id()));
        assert_eq!(holder.run, Some(7));
        let said = holder.to_string();
        assert!(said.contains("run 7") && !said.contains('\u{1b}'), "{said}");
        drop(first);
        let again = MachineLock::try_take(&path).unwrap();
        assert!(again.is_ok(), "the lock was not released");
        drop(again);
        let _ = std::fs::remove_file(&path);
    }
}
