//! The live progress line on stderr, shown only when stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use netbench_engine::Progress;

const EVERY: Duration = Duration::from_millis(500);

pub(crate) struct ProgressLine {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ProgressLine {
    /// Starts drawing, or does nothing when stderr is not a terminal.
    /// `rate_unit` names what is counted per second (`req/s`, `msg/s`).
    pub(crate) fn start(progress: Arc<Progress>, rate_unit: &'static str) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        let thread = std::io::stderr().is_terminal().then(|| {
            let done = Arc::clone(&done);
            std::thread::spawn(move || draw(&progress, &done, rate_unit))
        });
        ProgressLine { done, thread }
    }

    pub(crate) fn stop(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn draw(progress: &Progress, done: &AtomicBool, rate_unit: &str) {
    let mut last = progress.snapshot();
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(EVERY);
        let now = progress.snapshot();
        let dt = (now.elapsed - last.elapsed).as_secs_f64();
        let rate = if dt > 0.0 {
            now.requests.saturating_sub(last.requests) as f64 / dt
        } else {
            0.0
        };
        let phase = if now.measuring {
            "measuring"
        } else {
            "warming up"
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[K[{:6.1}s] {phase}: {} good, {} errors, {:.0} {rate_unit}",
            now.elapsed.as_secs_f64(),
            now.requests,
            now.errors,
            rate
        );
        let _ = err.flush();
        last = now;
    }
    let _ = write!(std::io::stderr(), "\r\x1b[K");
}
