//! How `load` and `run` hear that they should stop: the first Ctrl-C,
//! SIGTERM or SIGHUP (the terminal closed) sets the cancel flag, so the
//! result so far is kept; a second Ctrl-C exits at once (every server's guard
//! still stops its server).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{Context, Result};

use crate::exit;

pub(crate) fn stop_on_signals(cancel: &Arc<AtomicBool>) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::flag;
    flag::register_conditional_shutdown(SIGINT, i32::from(exit::INTERRUPTED), Arc::clone(cancel))
        .context("installing the Ctrl-C handler")?;
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        flag::register(signal, Arc::clone(cancel))
            .with_context(|| format!("installing the handler of signal {signal}"))?;
    }
    Ok(())
}
