//! CPU placement: which CPUs the server and the client may use, decided once
//! per run and applied with sched_setaffinity.

use serde::Serialize;

use crate::suite::Placement;

/// The CPUs the calling thread may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set; the size passed is
    // the size of the set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

pub(crate) fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: as above; CPU_SET only writes inside the set for indexes below
    // CPU_SETSIZE, which the filter guarantees.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(c, &mut set);
        }
        set
    }
}

/// Pins the calling thread (and the threads it starts later) to `cpus`.
pub fn pin_current_thread(cpus: &[usize]) -> std::io::Result<()> {
    let set = cpu_set(cpus);
    // SAFETY: a valid set of the size given, for the calling thread (0).
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Pins the calling thread to `cpus` until the guard is dropped, then gives
/// it back the CPUs it had: a second run in the same process must see the
/// machine's CPUs, not the first run's client half.
pub fn pin_current_thread_scoped(cpus: &[usize]) -> std::io::Result<PinGuard> {
    let before = allowed_cpus();
    pin_current_thread(cpus)?;
    Ok(PinGuard { before })
}

/// Restores the calling thread's CPUs on drop (see
/// [`pin_current_thread_scoped`]); it must be dropped on the same thread.
pub struct PinGuard {
    before: Vec<usize>,
}

impl Drop for PinGuard {
    fn drop(&mut self) {
        if !self.before.is_empty() {
            let _ = pin_current_thread(&self.before);
        }
    }
}

/// Where the server and the client run; `None` means unpinned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cpus {
    pub server: Option<Vec<usize>>,
    pub client: Option<Vec<usize>>,
    /// Why, in words, for the record.
    pub note: String,
}

/// Resolves a suite's placement against the CPUs this process may use.
pub fn resolve(placement: &Placement, allowed: &[usize]) -> Result<Cpus, String> {
    match placement {
        Placement::None => Ok(Cpus {
            server: None,
            client: None,
            note: "not pinned (the suite asked)".into(),
        }),
        Placement::Auto if allowed.len() < 2 => Ok(Cpus {
            server: None,
            client: None,
            note: format!(
                "not pinned: only {} CPU available, server and client share it",
                allowed.len()
            ),
        }),
        Placement::Auto => {
            let half = allowed.len() / 2;
            Ok(Cpus {
                server: Some(allowed[..half].to_vec()),
                client: Some(allowed[half..].to_vec()),
                note: "disjoint halves of the allowed CPUs".into(),
            })
        }
        Placement::Pinned { server, client } => {
            if let Some(c) = server.iter().chain(client).find(|c| !allowed.contains(c)) {
                return Err(format!(
                    "CPU {c} of the suite's placement is not available here (allowed: {allowed:?})"
                ));
            }
            Ok(Cpus {
                server: Some(server.clone()),
                client: Some(client.clone()),
                note: "as the suite says".into(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_splits_in_disjoint_halves() {
        let c = resolve(&Placement::Auto, &[0, 1]).unwrap();
        assert_eq!(c.server, Some(vec![0]));
        assert_eq!(c.client, Some(vec![1]));
        let c = resolve(&Placement::Auto, &[0, 1, 2, 3, 4]).unwrap();
        assert_eq!(c.server, Some(vec![0, 1]));
        assert_eq!(c.client, Some(vec![2, 3, 4]));
        let c = resolve(&Placement::Auto, &[3]).unwrap();
        assert_eq!(c.server, None);
        assert!(c.note.contains("share"));
    }

    #[test]
    fn a_scoped_pin_gives_the_cpus_back() {
        let all = allowed_cpus();
        // On one CPU a pin and no pin look the same: the test could not fail.
        assert!(
            all.len() >= 2,
            "this test needs two CPUs to tell a pin from none; it has {all:?}"
        );
        {
            let _pin = pin_current_thread_scoped(&all[..1]).unwrap();
            assert_eq!(allowed_cpus(), all[..1]);
        }
        assert_eq!(allowed_cpus(), all);
    }

    #[test]
    fn pinned_must_be_available() {
        let p = Placement::Pinned {
            server: vec![0],
            client: vec![7],
        };
        assert!(resolve(&p, &[0, 1]).unwrap_err().contains("CPU 7"));
        assert!(!allowed_cpus().is_empty());
    }
}
