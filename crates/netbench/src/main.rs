//! The netbench command: parses arguments, hands a validated plan to the
//! library crates, maps the outcome to an exit code. Nothing else.

mod attack;
mod cli;
mod durations;
mod fanout;
mod help;
mod launch;
mod load;
mod machine_lock;
mod merge;
mod output;
mod pool;
mod progress;
mod report;
mod run;
mod run_progress;
mod seed;
mod signals;
mod site;
mod slo;
mod sources;
mod start_at;
mod verify;

use std::process::ExitCode;

use clap::Parser;

/// Exit codes, documented in `--help` and docs/guide/load.md.
pub(crate) mod exit {
    /// The run completed within the allowed error rate.
    pub const OK: u8 = 0;
    /// The run completed but its error rate was above --max-error-rate.
    pub const TOO_MANY_ERRORS: u8 = 1;
    /// `load`: a measured latency percentile was above its --slo-*; the
    /// same code as too many errors, so a script tests one thing: "the
    /// load missed what it was asked to meet".
    pub const SLO_MISSED: u8 = 1;
    /// `load`: nothing was answered while measuring, nor failed (every
    /// request was still in flight at the end): the same code, since a
    /// server that answers nothing missed everything it was asked to meet.
    pub const NOTHING_ANSWERED: u8 = 1;
    /// `compare --fail-on`: a row moved beyond a rule and beyond noise, a
    /// cell was lost in B, or nothing could be judged.
    pub const REGRESSION: u8 = 1;
    /// `attack`: not one connection could be opened in the whole attack.
    pub const NOTHING_REACHED: u8 = 1;
    /// Bad usage, or a failure that stopped the run (no result); `attack`:
    /// also a target that is not a loopback address.
    pub const FAILURE: u8 = 2;
    /// Interrupted by Ctrl-C, SIGTERM or SIGHUP; the partial result was printed.
    pub const INTERRUPTED: u8 = 130;
}

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let outcome = match cli.command {
        cli::Command::Load(args) => launch::run(*args),
        cli::Command::Verify(args) => verify::run(args),
        cli::Command::Run(args) => run::run(args),
        cli::Command::Runs(args) => run::list(args),
        cli::Command::Show(args) => run::show(args),
        cli::Command::Report(args) => report::report(args),
        cli::Command::Compare(args) => report::compare(args),
        cli::Command::Merge(args) => merge::run(args),
        cli::Command::Site(args) => site::run(args),
        cli::Command::Attack(args) => attack::run(args),
    };
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            // A closed stdout (`netbench load ... | head`) is not a failure.
            if err
                .chain()
                .filter_map(|e| e.downcast_ref::<std::io::Error>())
                .any(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::from(exit::OK);
            }
            eprintln!("netbench: error: {}", error_line(&err));
            ExitCode::from(exit::FAILURE)
        }
    }
}

/// The error and its causes on one line, each cause once: the library
/// errors already name their cause in their message (`cannot open the
/// results store X: file is not a database; check ...`), and anyhow's
/// alternate form would repeat it after them.
fn error_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        // SQLite's own cause reads `Error code 26: file is not a database`
        // under rusqlite's `file is not a database`: its last part counts.
        let last = text.rsplit(": ").next().unwrap_or(&text);
        if line.contains(&text) || line.contains(last) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}
