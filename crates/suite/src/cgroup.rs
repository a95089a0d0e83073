//! A server's CPU time, exactly: each server process tree runs in a cgroup
//! (v2) of its own, whose `cpu.stat` counts every thread and child it ever
//! had in microseconds. /proc's per-process times tick at 10 ms and lose the
//! threads that ended, which at a fixed low rate (a few percent of a core
//! over a one-second window) is most of the figure.
//!
//! No controller is enabled: `cpu.stat`'s usage is kept by the cgroup core
//! for every cgroup, so the group changes nothing of how the server runs.
//! Where no cgroup2 file system can be written (not root, no cgroup2), the
//! caller falls back to /proc's ticks and says so.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// One server's cgroup, removed (once empty) when dropped.
#[derive(Debug)]
pub struct CpuGroup {
    dir: PathBuf,
    /// `cgroup.procs` as a C string, made before a fork: writing "0" to it
    /// between fork and exec moves the child in, so the server's every
    /// thread and child starts inside.
    procs: CString,
}

/// Where the cgroup2 file system is mounted: the first `cgroup2` line of
/// `/proc/self/mountinfo` (`/sys/fs/cgroup` on a pure v2 system,
/// `/sys/fs/cgroup/unified` on a hybrid one).
fn cgroup2_root(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let fs = after.split_whitespace().next()?;
        (fs == "cgroup2").then(|| before.split_whitespace().nth(4).map(PathBuf::from))?
    })
}

/// `usage_usec` of a `cpu.stat` text, in seconds.
pub(crate) fn usage_s(cpu_stat: &str) -> Option<f64> {
    cpu_stat.lines().find_map(|l| {
        let v = l.strip_prefix("usage_usec ")?;
        v.trim().parse::<u64>().ok().map(|us| us as f64 / 1e6)
    })
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl CpuGroup {
    /// A new, empty group named after `name` and this process, or None when
    /// this machine gives none (the reason is not an error: the caller
    /// falls back).
    pub fn create(name: &str) -> Option<CpuGroup> {
        let root = cgroup2_root(&std::fs::read_to_string("/proc/self/mountinfo").ok()?)?;
        remove_stale(&root);
        let safe: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .take(40)
            .collect();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = root.join(format!("netbench-{}-{n}-{safe}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let procs = CString::new(
            dir.join("cgroup.procs")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .ok()?;
        let group = CpuGroup { dir, procs };
        // A group whose usage cannot be read is no use.
        group.cpu_s()?;
        Some(group)
    }

    /// CPU seconds of everything that ran in the group so far.
    pub fn cpu_s(&self) -> Option<f64> {
        usage_s(&std::fs::read_to_string(self.dir.join("cpu.stat")).ok()?)
    }

    /// What a child needs to enter the group between fork and exec.
    pub fn entry(&self) -> Entry {
        Entry(self.procs.clone())
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }
}

/// A group's `cgroup.procs`, owned, for a `pre_exec` closure.
#[derive(Debug, Clone)]
pub struct Entry(CString);

impl Entry {
    /// Moves the calling process into the group. Only async-signal-safe
    /// calls: meant for between fork and exec. Errors are ignored (the
    /// group then counts nothing and the caller's figures fall back).
    ///
    /// # Safety
    /// Call only in a `pre_exec` closure or another context where `open`,
    /// `write` and `close` on a prepared path are allowed.
    pub unsafe fn enter(&self) {
        let fd = libc::open(self.0.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd >= 0 {
            libc::write(fd, b"0\n".as_ptr().cast(), 2);
            libc::close(fd);
        }
    }
}

impl Drop for CpuGroup {
    fn drop(&mut self) {
        // The tree is stopped before its group goes; a process that is
        // still being reaped keeps it for a moment.
        for _ in 0..20 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Removes the empty groups of netbench processes that are gone (a run
/// killed with SIGKILL leaves its groups; the kernel refuses to remove one
/// that still holds a process, so a live tree's group stays).
fn remove_stale(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("netbench-")) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_cgroup2_mount_on_hybrid_and_pure_systems() {
        let hybrid = "30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n\
                      41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n\
                      42 31 0:39 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n";
        assert_eq!(
            cgroup2_root(hybrid),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        let pure = "35 24 0:30 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw\n";
        assert_eq!(cgroup2_root(pure), Some(PathBuf::from("/sys/fs/cgroup")));
        assert_eq!(cgroup2_root("22 1 0:5 / /proc rw - proc proc rw\n"), None);
    }

    #[test]
    fn reads_usage_in_microseconds() {
        assert_eq!(
            usage_s("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n"),
            Some(1.5)
        );
        assert_eq!(usage_s("user_usec 5\n"), None);
    }

    /// A child moved in between fork and exec is counted with its CPU, to
    /// the microsecond; a machine without a writable cgroup2 skips.
    #[test]
    fn counts_a_child_that_entered_between_fork_and_exec() {
        use std::os::unix::process::CommandExt;
        let Some(group) = CpuGroup::create("test") else {
            eprintln!("no writable cgroup2 here: skipped");
            return;
        };
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"]);
        let entry = group.entry();
        // SAFETY: enter only opens, writes and closes.
        unsafe {
            cmd.pre_exec(move || {
                entry.enter();
                Ok(())
            });
        }
        assert!(cmd.status().unwrap().success());
        let used = group.cpu_s().unwrap();
        assert!(used > 0.0, "the loop's CPU was not counted: {used}");
        let dir = group.path().to_path_buf();
        drop(group);
        assert!(!dir.exists(), "an empty group is removed when dropped");
    }
}
