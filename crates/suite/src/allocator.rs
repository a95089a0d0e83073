//! The memory-allocator axis: which malloc a native server runs with, how
//! another one is put under it (LD_PRELOAD of Debian's library), and the check
//! that the one named is the one in use, so a result is never recorded under
//! an allocator that silently did not load.

use std::collections::BTreeSet;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// A C-level `malloc` implementation. A server whose manifest says
/// `allocator = "glibc"` allocates through the C library, so each of the
/// others can replace it by preloading; servers with their own allocator (Go,
/// the JVM, V8, CPython) say nothing and are recorded as using their runtime's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Allocator {
    /// The C library's own ptmalloc2.
    Glibc,
    Jemalloc,
    Mimalloc,
    Tcmalloc,
}

impl Allocator {
    pub const ALL: [Allocator; 4] = [
        Allocator::Glibc,
        Allocator::Jemalloc,
        Allocator::Mimalloc,
        Allocator::Tcmalloc,
    ];

    /// The ones that replace glibc's: each a generated variant of that name.
    pub const PRELOADED: [Allocator; 3] = [
        Allocator::Jemalloc,
        Allocator::Mimalloc,
        Allocator::Tcmalloc,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Allocator::Glibc => "glibc",
            Allocator::Jemalloc => "jemalloc",
            Allocator::Mimalloc => "mimalloc",
            Allocator::Tcmalloc => "tcmalloc",
        }
    }

    pub fn parse(name: &str) -> Option<Allocator> {
        Allocator::ALL.into_iter().find(|a| a.as_str() == name)
    }

    /// The shared library's file name as Debian installs it, and the package
    /// that has it; None for glibc, which is always there.
    pub fn library(self) -> Option<(&'static str, &'static str)> {
        match self {
            Allocator::Glibc => None,
            Allocator::Jemalloc => Some(("libjemalloc.so.2", "libjemalloc2")),
            Allocator::Mimalloc => Some(("libmimalloc.so.2", "libmimalloc2.0")),
            // The minimal build: tcmalloc's allocator without its heap profiler,
            // which is what a server would preload in production.
            Allocator::Tcmalloc => Some(("libtcmalloc_minimal.so.4", "libtcmalloc-minimal4")),
        }
    }

    /// The file-name stem that identifies the library in /proc/PID/maps,
    /// whatever its version suffix or directory.
    fn map_stem(self) -> Option<&'static str> {
        match self {
            Allocator::Glibc => None,
            Allocator::Jemalloc => Some("libjemalloc.so"),
            Allocator::Mimalloc => Some("libmimalloc.so"),
            Allocator::Tcmalloc => Some("libtcmalloc"),
        }
    }
}

impl fmt::Display for Allocator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the dynamic loader finds Debian's libraries on this machine.
const LIBRARY_DIRS: [&str; 4] = [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib",
    "/usr/local/lib",
];

/// The installed library to preload for `a`, or why there is none.
pub fn library_path(a: Allocator) -> Result<Option<PathBuf>, AllocatorError> {
    let Some((file, package)) = a.library() else {
        return Ok(None);
    };
    LIBRARY_DIRS
        .iter()
        .map(|d| Path::new(d).join(file))
        .find(|p| p.is_file())
        .map(Some)
        .ok_or(AllocatorError::NotInstalled {
            allocator: a,
            file,
            package,
        })
}

/// The replacement allocators a process has mapped, from its maps text.
pub fn allocators_in_maps(maps: &str) -> BTreeSet<Allocator> {
    let mut found = BTreeSet::new();
    for line in maps.lines() {
        // The path is the sixth field; anonymous mappings have none.
        let Some(path) = line.split_whitespace().nth(5) else {
            continue;
        };
        let file = path.rsplit('/').next().unwrap_or(path);
        for a in Allocator::PRELOADED {
            if a.map_stem().is_some_and(|stem| file.starts_with(stem)) {
                found.insert(a);
            }
        }
    }
    found
}

/// What one process of a server has mapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessAllocators {
    pub pid: u32,
    pub mapped: BTreeSet<Allocator>,
}

/// Whether every process of a server runs with `expected`: each maps that
/// allocator's library and no other replacement (for glibc: none at all).
/// Every process counts, since a wrapper script that exec's or forks the real
/// server may itself be the one that dropped LD_PRELOAD.
pub fn check(expected: Allocator, processes: &[ProcessAllocators]) -> Result<(), AllocatorError> {
    if processes.is_empty() {
        return Err(AllocatorError::NoProcess);
    }
    for p in processes {
        let wrong = |seen: String| AllocatorError::Mismatch {
            expected,
            pid: p.pid,
            seen,
        };
        let others: Vec<&str> = p
            .mapped
            .iter()
            .filter(|a| **a != expected)
            .map(|a| a.as_str())
            .collect();
        if !others.is_empty() {
            return Err(wrong(others.join(" and ")));
        }
        if expected != Allocator::Glibc && !p.mapped.contains(&expected) {
            return Err(wrong("glibc's own malloc (the preloaded library is not mapped: a static binary, or a launcher that clears LD_PRELOAD)".into()));
        }
    }
    Ok(())
}

/// Reads the maps of every process in group `pgid` (the server's group).
pub fn group_allocators(pgid: i32) -> io::Result<Vec<ProcessAllocators>> {
    let mut out = Vec::new();
    for pid in crate::sampler::pids()? {
        if crate::sampler::process_group(pid) != Some(pgid) {
            continue;
        }
        // A process that ended between the two reads is not counted.
        let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
            continue;
        };
        out.push(ProcessAllocators {
            pid,
            mapped: allocators_in_maps(&maps),
        });
    }
    out.sort_by_key(|p| p.pid);
    Ok(out)
}

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum AllocatorError {
    #[error("{allocator} is not installed: {file} was not found (apt-get install {package})")]
    NotInstalled {
        allocator: Allocator,
        file: &'static str,
        package: &'static str,
    },
    #[error("allocator check: expected {expected}, but process {pid} runs with {seen}; the result would be recorded under the wrong allocator, so the server is left out")]
    Mismatch {
        expected: Allocator,
        pid: u32,
        seen: String,
    },
    #[error("allocator check: no process of the server was found to check")]
    NoProcess,
    #[error("allocator check: cannot read /proc: {0}")]
    Unreadable(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55d0c0a00000-55d0c0a21000 r--p 00000000 fe:01 1234  /srv/bin/server
7f1c2a000000-7f1c2a021000 rw-p 00000000 00:00 0
7f1c2b200000-7f1c2b2a0000 r-xp 00002000 fe:01 777   /usr/lib/x86_64-linux-gnu/libjemalloc.so.2
7f1c2b400000-7f1c2b5c0000 r-xp 00026000 fe:01 778   /usr/lib/x86_64-linux-gnu/libc.so.6
7ffd7e5f0000-7ffd7e611000 rw-p 00000000 00:00 0     [stack]
";

    fn proc(pid: u32, mapped: &[Allocator]) -> ProcessAllocators {
        ProcessAllocators {
            pid,
            mapped: mapped.iter().copied().collect(),
        }
    }

    #[test]
    fn finds_the_preloaded_library_in_maps() {
        assert_eq!(
            allocators_in_maps(MAPS),
            BTreeSet::from([Allocator::Jemalloc])
        );
        let tc = "7f-8f r-xp 0 fe:01 9 /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4.5.9\n";
        assert_eq!(
            allocators_in_maps(tc),
            BTreeSet::from([Allocator::Tcmalloc])
        );
        let mi = "7f-8f r-xp 0 fe:01 9 /usr/lib/x86_64-linux-gnu/libmimalloc.so.2.0\n";
        assert_eq!(
            allocators_in_maps(mi),
            BTreeSet::from([Allocator::Mimalloc])
        );
        // A file whose name only contains the stem elsewhere is not it.
        let not = "7f-8f r-xp 0 fe:01 9 /opt/x/notlibjemalloc.so.2\n7f-8f r-xp 0 0:0 0 /tmp/libjemalloc.so.2.d/x\n";
        assert!(allocators_in_maps(not).is_empty());
    }

    #[test]
    fn check_accepts_only_the_named_allocator_in_every_process() {
        let je = Allocator::Jemalloc;
        assert_eq!(check(je, &[proc(1, &[je]), proc(2, &[je])]), Ok(()));
        assert_eq!(check(Allocator::Glibc, &[proc(1, &[])]), Ok(()));
        // The preload did not take in one process (a static binary, a launcher).
        assert!(matches!(
            check(je, &[proc(1, &[je]), proc(2, &[])]),
            Err(AllocatorError::Mismatch { pid: 2, .. })
        ));
        // The default must not have picked up a replacement from somewhere.
        assert!(matches!(
            check(Allocator::Glibc, &[proc(7, &[Allocator::Tcmalloc])]),
            Err(AllocatorError::Mismatch { pid: 7, .. })
        ));
        // Two replacements at once is neither.
        assert!(check(je, &[proc(1, &[je, Allocator::Mimalloc])]).is_err());
        assert_eq!(check(je, &[]), Err(AllocatorError::NoProcess));
    }

    #[test]
    fn names_round_trip() {
        for a in Allocator::ALL {
            assert_eq!(Allocator::parse(a.as_str()), Some(a));
        }
        assert_eq!(Allocator::parse("ptmalloc"), None);
    }
}
