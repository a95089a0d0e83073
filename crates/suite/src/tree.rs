//! Every process a server or a build step started, wherever it went: a
//! daemon that leaves the process group and the session (`setsid`, a double
//! fork) is still found and stopped. Each tree is marked by an environment
//! variable its processes inherit ([`TREE_VAR`]); netbench is a child
//! subreaper, so an orphan of a tree becomes netbench's child (and is
//! reaped here) rather than init's. A stop signals the group, every process
//! that carries the mark and every descendant of those, until none is left.
//! A process that both clears its environment and leaves its parent's tree
//! before the stop escapes a tree's stop; it is still this process's child
//! (adopted as subreaper), and [`stop_adopted`] stops it once this process
//! holds no child of its own.

use std::collections::{HashMap, HashSet};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

/// The environment variable that marks a tree's processes.
pub(crate) const TREE_VAR: &str = "NETBENCH_TREE";

/// How long [`Tree::kill_all`] keeps killing before it gives up on a
/// process that will not go (one stuck in the kernel).
const KILL_FOR: Duration = Duration::from_secs(5);

/// Makes this process a child subreaper, once: processes orphaned below it
/// are handed to it instead of to init, so they stay netbench's to stop and
/// to reap. Without the call (an old kernel) the mark still finds them.
pub(crate) fn become_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: prctl with an integer option and no pointers.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    });
}

/// One marked tree: its mark, and the process group its leader made.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    token: String,
    pgid: Option<i32>,
}

impl Tree {
    /// A new mark, unique on this machine (netbench's pid, a counter, the
    /// time).
    pub(crate) fn new() -> Tree {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        Tree {
            token: format!(
                "{}-{}-{nanos:x}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
            pgid: None,
        }
    }

    /// Marks `cmd` (and so everything it starts) as this tree's, and makes
    /// this process the subreaper its orphans go to.
    pub(crate) fn mark(&self, cmd: &mut Command) {
        become_subreaper();
        cmd.env(TREE_VAR, &self.token);
    }

    /// The mark's value, for the guard.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// Records the process group the tree's leader made (its pid).
    pub(crate) fn set_group(&mut self, pgid: u32) {
        self.pgid = Some(pgid as i32);
    }

    /// The live processes of the tree, leader included, each with its
    /// parent: the group's, those that carry the mark, and every descendant
    /// of either. Zombies are left out (they cannot be signalled); this
    /// process never is a member.
    pub(crate) fn members(&self) -> Vec<(i32, i32)> {
        let me = std::process::id() as i32;
        let needle = format!("{TREE_VAR}={}", self.token);
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        let mut parent: HashMap<i32, i32> = HashMap::new();
        let mut roots = Vec::new();
        for pid in crate::sampler::pids().into_iter().flatten() {
            let pid = pid as i32;
            let Some(stat) = read_stat(pid) else { continue };
            if stat.zombie || pid == me {
                continue;
            }
            children.entry(stat.ppid).or_default().push(pid);
            parent.insert(pid, stat.ppid);
            if Some(stat.pgrp) == self.pgid || has_var(pid, &needle) {
                roots.push(pid);
            }
        }
        let mut seen: HashSet<i32> = HashSet::new();
        while let Some(pid) = roots.pop() {
            if seen.insert(pid) {
                roots.extend(children.get(&pid).into_iter().flatten().copied());
            }
        }
        let mut found: Vec<(i32, i32)> = seen.into_iter().map(|p| (p, parent[&p])).collect();
        found.sort_unstable();
        found
    }

    /// Sends `signal` to the group and to every member; the members, each
    /// with its parent.
    pub(crate) fn signal(&self, signal: libc::c_int) -> Vec<(i32, i32)> {
        if let Some(pgid) = self.pgid {
            // SAFETY: signalling the group this tree's leader made; harmless
            // when it is empty.
            unsafe { libc::kill(-pgid, signal) };
        }
        let members = self.members();
        for &(pid, _) in &members {
            // SAFETY: a process of this tree, found a moment ago.
            unsafe { libc::kill(pid, signal) };
        }
        members
    }

    /// SIGKILL to the whole tree until nothing of it is left (or
    /// [`KILL_FOR`] has passed), reaping the orphans that came to this
    /// process as subreaper. `leader` is left to its `Child` to reap: it is
    /// the tree's only member netbench started itself, so any other member
    /// that comes to netbench is an adopted orphan with no handle.
    ///
    /// Every member seen is followed until it is gone, not only those that
    /// were netbench's children when seen: a daemon in a session of its own
    /// whose parent was still alive at the kill becomes netbench's child
    /// only once that parent has died, already a zombie, out of the group
    /// and no longer a member; followed by its pid and start time it is
    /// reaped (a `java` of a server build stayed a zombie for a whole run).
    pub(crate) fn kill_all(&self, leader: u32) {
        let until = Instant::now() + KILL_FOR;
        let mut seen: HashMap<i32, u64> = HashMap::new();
        loop {
            for (pid, _) in self.signal(libc::SIGKILL) {
                if pid == leader as i32 {
                    continue;
                }
                if let Some(st) = read_stat(pid) {
                    seen.insert(pid, st.start);
                }
            }
            // An orphan that died before the first pass was never a
            // member: the group still names it.
            self.reap_zombies(leader, &seen);
            // Done with a member once it is gone: reaped here, or by a
            // parent of its own.
            seen.retain(|&pid, &mut start| read_stat(pid).is_some_and(|st| st.start == start));
            if seen.is_empty() || Instant::now() > until {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Kills and reaps every live child of this process, and returns how many.
/// Call it only once this process holds no child it started itself (the
/// binary, after a run: every server, guard and database stopped and
/// waited for): then a child can only be an orphan adopted as subreaper,
/// one that left its tree's group and cleared the tree's mark (issue 42:
/// a double-forked, `setsid`, environment-cleared grandchild ignoring
/// SIGTERM outlived the run). Never in a process that runs other work
/// beside (a test binary's threads): their children would go too.
pub fn stop_adopted() -> usize {
    let me = std::process::id() as i32;
    let until = Instant::now() + KILL_FOR;
    let mut stopped = HashSet::new();
    loop {
        let mut left = 0;
        for pid in crate::sampler::pids().into_iter().flatten() {
            let pid = pid as i32;
            let Some(st) = read_stat(pid) else { continue };
            if st.ppid != me {
                continue;
            }
            if !st.zombie {
                // SAFETY: a child of this process, found a moment ago.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                stopped.insert(pid);
                left += 1;
            }
            reaped(pid);
        }
        if left == 0 || Instant::now() > until {
            return stopped.len();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The members of a tree seen alive, with their start times, so that those
/// that come to netbench as orphans are reaped as soon as they exit. Without
/// it such an orphan stays a zombie until the step ends, and a server's own
/// test that waits for its processes to be gone (`kill -0`, which a zombie
/// passes) fails: php-fpm's did, under `make test` (issue 26).
#[derive(Debug, Default)]
pub(crate) struct Adopted {
    seen: HashMap<i32, u64>,
}

impl Tree {
    /// Notes the tree's live members and reaps those of this process's
    /// children that have exited and belong to the tree, `leader` excepted
    /// (its `Child` reaps it): a zombie still in the tree's process group,
    /// or one whose pid and start time are those of a member seen alive.
    /// Never another zombie: a child of netbench that is not the tree's
    /// (a server, a guard) keeps its status for its own `Child`.
    ///
    /// The group matters for an orphan that lived less than a scan apart
    /// (php-fpm's supervisor in its test's short phases: never seen alive,
    /// it stayed a zombie until the step ended); the seen members for one
    /// that left the group (`setsid`), whose zombie keeps no mark.
    pub(crate) fn reap_exited(&self, leader: u32, adopted: &mut Adopted) {
        for (pid, _) in self.members() {
            if pid == leader as i32 {
                continue;
            }
            if let Some(st) = read_stat(pid) {
                adopted.seen.insert(pid, st.start);
            }
        }
        self.reap_zombies(leader, &adopted.seen);
        adopted
            .seen
            .retain(|&pid, &mut start| read_stat(pid).is_some_and(|st| st.start == start));
    }

    /// Reaps every exited child of this process that is the tree's: in its
    /// group, or in `seen` with the same start time.
    fn reap_zombies(&self, leader: u32, seen: &HashMap<i32, u64>) {
        let me = std::process::id() as i32;
        for pid in crate::sampler::pids().into_iter().flatten() {
            let pid = pid as i32;
            if pid == leader as i32 {
                continue;
            }
            let Some(st) = read_stat(pid) else { continue };
            let ours = Some(st.pgrp) == self.pgid || seen.get(&pid) == Some(&st.start);
            if st.zombie && st.ppid == me && ours {
                reaped(pid);
            }
        }
    }
}

/// Waits for `pid`, a child of this process, without blocking; true once
/// it is gone (reaped now, or not a child any more).
fn reaped(pid: i32) -> bool {
    let mut status = 0;
    // SAFETY: waitpid on one pid, WNOHANG, with a valid status pointer.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    r != 0
}

/// The fields of /proc/<pid>/stat a tree needs.
#[derive(Debug, PartialEq)]
struct Stat {
    ppid: i32,
    pgrp: i32,
    zombie: bool,
    /// Clock ticks after boot: with the pid, names one process for good.
    start: u64,
}

fn read_stat(pid: i32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Fields 3 to 6 of a stat line, counted after the last ')' of the name.
fn parse_stat(line: &str) -> Option<Stat> {
    let (_, rest) = line.rsplit_once(')')?;
    let mut f = rest.split_whitespace();
    let state = f.next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgrp = f.next()?.parse().ok()?;
    // Field 22 (starttime) is the 17th after pgrp (field 5).
    let start = f.nth(16)?.parse().ok()?;
    Some(Stat {
        zombie: state == "Z" || state == "X",
        ppid,
        pgrp,
        start,
    })
}

/// Whether `pid`'s environment holds the entry `needle` (`NAME=value`).
fn has_var(pid: i32, needle: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == needle.as_bytes()))
}

/// The guard's shell text that kills every process carrying the mark `$2`
/// (a few passes, since a dying parent's children may fork meanwhile). A
/// macro so that it can be `concat!`ed into the guard's script. GNU and
/// busybox grep both read NUL-separated entries with -z.
macro_rules! guard_kill_marked {
    () => {
        concat!(
            "if [ -n \"$2\" ]; then n=0; while [ $n -lt 20 ]; do ",
            "p=$(grep -lzxF \"NETBENCH_TREE=$2\" /proc/[0-9]*/environ 2>/dev/null); ",
            "[ -z \"$p\" ] && break; ",
            "for f in $p; do f=${f#/proc/}; kill -9 \"${f%/environ}\" 2>/dev/null; done; ",
            "n=$((n+1)); sleep 0.1; done; fi; "
        )
    };
}
pub(crate) use guard_kill_marked;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_a_name_with_parentheses() {
        let rest = "11 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 12345 0";
        let s = parse_stat(&format!("42 (a (b) c) Z 7 9 {rest}")).unwrap();
        assert!(s.zombie);
        assert_eq!((s.ppid, s.pgrp, s.start), (7, 9, 12345));
        let s = parse_stat(&format!("42 (sleep) S 1 42 {rest}")).unwrap();
        assert!(!s.zombie);
        assert_eq!(parse_stat("42 (sleep) S 1 42 42 0"), None);
    }

    #[test]
    fn each_tree_has_its_own_mark() {
        assert_ne!(Tree::new().token, Tree::new().token);
    }
}
