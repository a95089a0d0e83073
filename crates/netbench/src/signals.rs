//! How `load` and `run` hear that they should stop: the first Ctrl-C,
//! SIGTERM or SIGHUP (the terminal closed) sets the cancel flag, so the
//! result so far is kept; a second Ctrl-C exits at once (every server's guard
//! still stops its server). Neither that exit nor an abort runs destructors,
//! so both first remove the file a run holds beside its store (issue 42: an
//! abort left it behind).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};

use crate::exit;

pub(crate) fn stop_on_signals(cancel: &Arc<AtomicBool>) -> Result<()> {
    use signal_hook::consts::{SIGABRT, SIGHUP, SIGINT, SIGTERM};
    use signal_hook::{flag, low_level};
    // Registered before the flag below, so it sees the flag as the earlier
    // Ctrl-C left it.
    let seen = Arc::clone(cancel);
    // SAFETY: the action only loads an atomic, unlinks files by paths
    // prepared beforehand and calls _exit: all async-signal-safe.
    unsafe {
        low_level::register(SIGINT, move || {
            if seen.load(Ordering::SeqCst) {
                netbench_suite::store::remove_held_files();
                low_level::exit(i32::from(exit::INTERRUPTED));
            }
        })
    }
    .context("installing the Ctrl-C handler")?;
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        flag::register(signal, Arc::clone(cancel))
            .with_context(|| format!("installing the handler of signal {signal}"))?;
    }
    // An abort (a failed allocation, a panic while panicking) ends the
    // process once this returns, by the default action.
    // SAFETY: unlink only, as above.
    unsafe { low_level::register(SIGABRT, netbench_suite::store::remove_held_files) }
        .context("installing the handler of SIGABRT")?;
    Ok(())
}
