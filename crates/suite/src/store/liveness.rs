//! Which runs marked `running` still have a netbench measuring them. The
//! process that writes a run holds an flock on a file beside the store
//! (`db.sqlite.running-PID-N`, holding the run's id) for as long as it
//! measures; the kernel drops the lock when the process ends, however it
//! ends (SIGKILL included). A run marked running whose file is not locked,
//! or that has no file, is read as interrupted, so `--resume` finishes it.
//! Readers only open these files; the next writer removes stale ones, and
//! a process that ends without unwinding (a second Ctrl-C, an abort) can
//! remove its own first with [`remove_held_files`], from a signal handler.

use std::collections::HashSet;
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// The paths of the files this process holds, for [`remove_held_files`]:
/// C strings a signal handler may read without allocating or locking. A
/// path is leaked once its hold ends (a few bytes per run), so a handler
/// that read a pointer never reads freed memory.
const HOLD_SLOTS: usize = 8;
static HELD_PATHS: [AtomicPtr<libc::c_char>; HOLD_SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; HOLD_SLOTS];

/// Removes every file this process holds beside a store. Only unlink(2):
/// safe in a signal handler, where the process is about to end without
/// running destructors (the second Ctrl-C's exit, an abort). A run left
/// without its file reads as interrupted, as it should.
pub fn remove_held_files() {
    for slot in &HELD_PATHS {
        let path = slot.load(Ordering::Acquire);
        if !path.is_null() {
            // SAFETY: a NUL-terminated string leaked for the process's life.
            unsafe { libc::unlink(path) };
        }
    }
}

/// The start of the files' names beside `store`: `db.sqlite.running-`.
fn prefix(store: &Path) -> Option<String> {
    Some(format!("{}.running-", store.file_name()?.to_string_lossy()))
}

fn folder(store: &Path) -> &Path {
    store
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Tries an flock on `f` without waiting; true when it was taken.
fn try_lock(f: &File, how: libc::c_int) -> bool {
    // SAFETY: flock on a file descriptor this `File` owns.
    unsafe { libc::flock(f.as_raw_fd(), how | libc::LOCK_NB) == 0 }
}

/// The runs a live process holds, by the files beside `store`; `starting`
/// when a live holder has not written its run's id yet.
#[derive(Debug, Default)]
pub(super) struct Held {
    pub runs: HashSet<i64>,
    pub starting: bool,
}

/// Reads which runs are held, opening the files read-only (nothing is
/// created, removed or written).
pub(super) fn held(store: &Path) -> Held {
    let mut held = Held::default();
    let Some(prefix) = prefix(store) else {
        return held;
    };
    let Ok(entries) = std::fs::read_dir(folder(store)) else {
        return held;
    };
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().starts_with(&prefix) {
            continue;
        }
        let Ok(mut f) = File::open(e.path()) else {
            continue;
        };
        if try_lock(&f, libc::LOCK_SH) {
            // Nobody holds it: a stale file of a netbench that died.
            continue;
        }
        let mut text = String::new();
        let _ = f.read_to_string(&mut text);
        match text.trim().parse() {
            Ok(id) => {
                held.runs.insert(id);
            }
            Err(_) => held.starting = true,
        }
    }
    held
}

/// The file a writer holds while it measures a run.
#[derive(Debug)]
pub(super) struct RunHold {
    file: File,
    path: PathBuf,
    /// Its place in [`HELD_PATHS`], if one was free.
    slot: Option<usize>,
}

impl RunHold {
    /// Creates and locks a new file beside `store`, first removing stale
    /// ones; None for an in-memory store or a folder that cannot be
    /// written (then the run reads as running only while it is).
    pub(super) fn take(store: &Path) -> Option<RunHold> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let prefix = prefix(store)?;
        remove_stale(store, &prefix);
        let path = folder(store).join(format!(
            "{prefix}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o644)
            .open(&path)
            .ok()?;
        if !try_lock(&file, libc::LOCK_EX) {
            return None;
        }
        let slot = CString::new(path.as_os_str().as_bytes())
            .ok()
            .and_then(|c| {
                let raw = c.into_raw();
                let free = HELD_PATHS.iter().position(|s| {
                    s.compare_exchange(
                        std::ptr::null_mut(),
                        raw,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    )
                    .is_ok()
                });
                if free.is_none() {
                    // SAFETY: `raw` came from into_raw just above and was
                    // published nowhere.
                    drop(unsafe { CString::from_raw(raw) });
                }
                free
            });
        Some(RunHold { file, path, slot })
    }

    /// Writes the run's id into the file, for readers.
    pub(super) fn name(&mut self, run: i64) {
        let _ = self.file.set_len(0);
        let _ = self.file.seek(SeekFrom::Start(0));
        let _ = writeln!(self.file, "{run}");
        let _ = self.file.flush();
    }
}

impl Drop for RunHold {
    fn drop(&mut self) {
        // Out of the handler's reach first (its string leaked, see
        // HELD_PATHS), then removed while still locked, so no reader finds
        // it unlocked first.
        if let Some(i) = self.slot {
            HELD_PATHS[i].store(std::ptr::null_mut(), Ordering::Release);
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Removes the files beside the store that nobody holds.
fn remove_stale(store: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(folder(store)) else {
        return;
    };
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().starts_with(prefix) {
            continue;
        }
        if let Ok(f) = OpenOptions::new().read(true).open(e.path()) {
            if try_lock(&f, libc::LOCK_EX) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}
