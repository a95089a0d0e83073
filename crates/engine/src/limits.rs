//! The open-file limit: raised to the hard limit before a run, refused with a
//! way out when even that is too low.

use crate::error::EngineError;

/// Descriptors a run needs beyond one per connection: stdio, epoll and timer
/// descriptors per worker, and room for reconnects racing with closes.
const SPARE_FDS: u64 = 64;

/// The open-file limit after raising it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdLimit {
    pub soft: u64,
    pub hard: u64,
}

impl FdLimit {
    /// The most connections one process can hold under the hard limit.
    pub fn max_connections(&self) -> u64 {
        self.hard.saturating_sub(SPARE_FDS)
    }
}

/// Raises the soft open-file limit to the hard one and checks that it covers
/// `connections`. Fails with a message that says what to run when it does not.
pub fn raise_fd_limit(connections: usize) -> Result<FdLimit, EngineError> {
    let needed = connections as u64 + SPARE_FDS;
    let lim = raise_soft_fd_limit().map_err(EngineError::EventLoop)?;
    if lim.soft < needed {
        return Err(EngineError::TooFewFiles {
            connections,
            needed,
            hard: lim.hard,
        });
    }
    Ok(lim)
}

/// Raises the soft open-file limit to the hard one, as far as allowed, and
/// says what it is; checks nothing (a caller that cuts its connections to
/// the limit, as `attack` does, judges the room itself).
pub fn raise_soft_fd_limit() -> std::io::Result<FdLimit> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: `raised` is a valid rlimit; raising the soft limit up to the
        // hard one needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim = raised;
        }
    }
    Ok(FdLimit {
        soft: lim.rlim_cur,
        hard: lim.rlim_max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_runs_fit_and_huge_ones_are_refused() {
        let lim = raise_fd_limit(1).unwrap();
        assert_eq!(lim.soft, lim.hard);
        let err = raise_fd_limit(usize::MAX / 2).unwrap_err();
        assert!(err.to_string().contains("ulimit -Hn"));
    }
}
