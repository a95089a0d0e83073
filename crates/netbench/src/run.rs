//! `netbench run`, `netbench runs`, `netbench show`: open the store, hand the
//! suite to the runner, print the table.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use netbench_report::{build_report, write_run_table};
use netbench_suite::store::{RunStatus, Store};
use netbench_suite::{run_suite, Event, Observer, Repetitions, RunRequest, Suite};

use crate::cli::{RepetitionsArg, RunArgs, ShowArgs, StoreArgs, DEFAULT_DB};
use crate::exit;
use crate::machine_lock::MachineLock;
use crate::run_progress::ConsoleProgress;

pub(crate) fn open(args: &StoreArgs) -> Result<Store> {
    Store::open(&args.db)
        .with_context(|| format!("opening the results store {}", args.db.display()))
}

/// Opens a store only to read it: a store that is not there is a typo (or
/// no run yet), never a reason to make one.
pub(crate) fn open_existing(args: &StoreArgs) -> Result<Store> {
    let store = Store::open_existing(&args.db)?;
    // Read anyway (it may be all there is), but never without a word.
    if let Some(damage) = store.damage() {
        eprintln!(
            "netbench: warning: the results store {} is damaged (SQLite's check: {damage}); what follows may be incomplete or wrong: restore it from a copy",
            args.db.display()
        );
    }
    Ok(store)
}

pub(crate) fn run(args: RunArgs) -> Result<u8> {
    let mut store = open(&args.store)?;
    // The suite as the file says it; repetitions from the command line (or
    // the stored run's override) are a fact of the run, kept beside it.
    let (suite, repetitions) = match args.resume {
        Some(id) => {
            let stored = store
                .run(id)
                .with_context(|| format!("finding run {id} to resume"))?;
            if stored.status == RunStatus::Complete {
                bail!("run {id} is already complete; `netbench show {id}` prints it");
            }
            // Running here means a live netbench holds it (one that died
            // leaves it reading as interrupted).
            if stored.status == RunStatus::Running {
                bail!(
                    "run {id} is being measured by another netbench right now; wait for it \
                     to end (`netbench runs` shows its status), or stop that process first"
                );
            }
            let suite = Suite::parse(&stored.suite, &stored.suite_toml)
                .context("the stored suite of that run")?;
            let kept = match (stored.adaptive, stored.repetitions) {
                (Some(a), _) => Some(Repetitions::Auto(a)),
                (None, Some(n)) => Some(Repetitions::Count(n)),
                (None, None) => None,
            };
            (suite, kept)
        }
        None => {
            let suite = Suite::load(&args.suite, &args.suites)?;
            let given = match args.repetitions {
                Some(RepetitionsArg::Count(n)) => Some(Repetitions::Count(n)),
                Some(RepetitionsArg::Auto) => Some(Repetitions::Auto(suite.auto_settings())),
                None => None,
            };
            (suite, given)
        }
    };
    if !args.servers.is_dir() {
        bail!(
            "no servers folder at {}; run netbench from the project's root or pass --servers",
            args.servers.display()
        );
    }
    let project_dir = std::env::current_dir()?;
    let cache_dir = args
        .store
        .db
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_default();
    let cancel = Arc::new(AtomicBool::new(false));
    crate::signals::stop_on_signals(&cancel)?;
    let Some(mut lock) = take_machine(args.no_wait, &cancel)? else {
        eprintln!("netbench: interrupted while waiting for the other run; nothing was started");
        return Ok(exit::INTERRUPTED);
    };
    let request = RunRequest {
        suite,
        servers_dir: args.servers.clone(),
        project_dir,
        build_cache: cache_dir.join("build-cache.json"),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        resume: args.resume,
        repetitions,
        settle: netbench_report::stats::settled,
        cancel,
        ready_within: netbench_suite::READY_WITHIN,
        // The hostile kind's attackers are this program's `attack`.
        attacker: std::env::current_exe().ok(),
    };
    let mut progress = NotingRun {
        console: ConsoleProgress::new(),
        lock: &mut lock,
        db: &args.store.db,
    };
    let outcome = run_suite(&request, &mut store, &mut progress);
    // Every server, guard and database of the run is stopped and waited
    // for by now: a child still alive is an orphan a server left, adopted
    // by this process as subreaper. What netbench holds, it stops.
    let adopted = netbench_suite::stop_adopted();
    if adopted > 0 {
        eprintln!(
            "netbench: stopped {adopted} process{} a server left behind outside its process group",
            if adopted == 1 { "" } else { "es" }
        );
    }
    let outcome = outcome?;
    drop(lock);

    let detail = store.run(outcome.run)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(out)?;
    write_run_table(&mut out, &build_report(&detail))?;
    let db = args.store.db.display();
    let db_arg = if args.store.db == Path::new(DEFAULT_DB) {
        String::new()
    } else {
        format!(" --db {db}")
    };
    writeln!(
        out,
        "\nstored in {db} as run {id}; `netbench report {id}{db_arg}` writes its HTML report",
        id = outcome.run
    )?;
    out.flush()?;
    Ok(match outcome.status {
        RunStatus::Interrupted => {
            eprintln!(
                "netbench: interrupted; finish it with `netbench run --resume {}`",
                outcome.run
            );
            exit::INTERRUPTED
        }
        RunStatus::Complete => {
            let excluded = detail.servers.iter().any(|s| s.excluded_reason.is_some());
            let failed = detail.measurements.iter().any(|m| m.failure.is_some());
            if excluded || failed {
                exit::TOO_MANY_ERRORS
            } else {
                exit::OK
            }
        }
        _ => exit::FAILURE,
    })
}

/// The machine's measuring lock: taken at once, or after waiting for the
/// run that holds it (saying on stderr who that is), or refused with
/// `--no-wait`; None when a cancel came while waiting.
fn take_machine(no_wait: bool, cancel: &AtomicBool) -> Result<Option<MachineLock>> {
    let path = MachineLock::path();
    let take = || {
        MachineLock::try_take(&path)
            .with_context(|| format!("taking the machine's run lock {}", path.display()))
    };
    let holder = match take()? {
        Ok(lock) => return Ok(Some(lock)),
        Err(holder) => holder,
    };
    if no_wait {
        bail!(
            "another run is measuring on this machine ({holder}; lock {}); two at once would \
             skew each other's numbers: try again when it ends, or leave out --no-wait to wait \
             for it",
            path.display()
        );
    }
    eprintln!(
        "netbench: another run is measuring on this machine ({holder}; lock {}); waiting for it \
         to end (Ctrl-C gives up)",
        path.display()
    );
    loop {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(None);
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        if let Ok(lock) = take()? {
            eprintln!("netbench: the other run ended; starting");
            return Ok(Some(lock));
        }
    }
}

/// The console's progress, and the run's id written into the machine lock
/// for whoever waits.
struct NotingRun<'a> {
    console: ConsoleProgress,
    lock: &'a mut MachineLock,
    db: &'a Path,
}

impl Observer for NotingRun<'_> {
    fn event(&mut self, e: Event<'_>) {
        if let Event::Started { run, .. } = &e {
            self.lock.note(*run, self.db);
        }
        self.console.event(e);
    }
}

pub(crate) fn list(args: StoreArgs) -> Result<u8> {
    let store = open_existing(&args)?;
    let runs = store.runs()?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if runs.is_empty() {
        writeln!(
            out,
            "no runs in {}; start one with `netbench run quick`",
            args.db.display()
        )?;
    }
    for r in runs {
        writeln!(
            out,
            "{:>4}  {:<10}  {:<11}  {}  {} ok, {} failed",
            r.id,
            netbench_report::terminal_safe(&r.suite),
            r.status.as_str(),
            r.started_at,
            r.ok,
            r.failed
        )?;
    }
    Ok(exit::OK)
}

/// The run the user named, or the latest one in the store.
pub(crate) fn run_or_latest(store: &Store, run: Option<i64>, args: &StoreArgs) -> Result<i64> {
    match run {
        Some(id) => Ok(id),
        None => store.latest_run()?.with_context(|| {
            format!(
                "no runs in {}; start one with `netbench run quick`",
                args.db.display()
            )
        }),
    }
}

pub(crate) fn show(args: ShowArgs) -> Result<u8> {
    let store = open_existing(&args.store)?;
    let id = run_or_latest(&store, args.run, &args.store)?;
    let detail = store.run(id)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    write_run_table(&mut out, &build_report(&detail))?;
    Ok(exit::OK)
}
