//! `netbench report` and `netbench compare`: read runs from the store, hand
//! them to the reporters, write the result where the user asked.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use netbench_report::{
    build_report, compare_json, compare_pair, compare_with as compare_runs, judge_gate_with,
    judge_pair, pair_json, write_compare_html_gated, write_compare_text, write_csv,
    write_gate_text, write_html, write_markdown, write_pair_gate, write_pair_text, GateOptions,
    Report,
};
use netbench_suite::store::Store;

use crate::cli::{CompareArgs, CompareFormat, ReportArgs, ReportFormat};
use crate::exit;
use crate::run::{open_existing, run_or_latest};

pub(crate) fn load(store: &Store, id: i64) -> Result<Report> {
    let detail = store
        .run(id)
        .with_context(|| format!("reading run {id} (`netbench runs` lists them)"))?;
    Ok(build_report(&detail))
}

/// Writes through a temporary file renamed into place, so a crash or Ctrl-C
/// never leaves half a report where a whole one was.
fn write_file(path: &Path, body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    if path.is_dir() {
        bail!(
            "{} is a folder; give -o a file name, such as {}",
            path.display(),
            path.join("report.html").display()
        );
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the folder {}", dir.display()))?;
    }
    let tmp = partial_path(path);
    let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mut out = BufWriter::new(file);
    let written = body(&mut out)
        .and_then(|()| out.flush())
        .with_context(|| format!("writing {}", tmp.display()));
    drop(out);
    let moved = written.and_then(|()| {
        std::fs::rename(&tmp, path)
            .with_context(|| format!("moving {} to {}", tmp.display(), path.display()))
    });
    if moved.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    moved
}

/// `report.html` is written as `report.html.partial` first.
fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}

fn write_out(
    output: Option<&Path>,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    match output {
        Some(path) => {
            write_file(path, body)?;
            eprintln!("wrote {}", path.display());
            Ok(())
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            body(&mut out)?;
            Ok(out.flush()?)
        }
    }
}

/// Pretty JSON and a final newline, as every text file should end.
fn write_json(out: &mut dyn Write, value: &impl serde::Serialize) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}

pub(crate) fn report(args: ReportArgs) -> Result<u8> {
    let store = open_existing(&args.store)?;
    let id = run_or_latest(&store, args.run, &args.store)?;
    let report = load(&store, id)?;
    let output: Option<PathBuf> = match (args.output, args.format) {
        (Some(p), _) => Some(p),
        (None, ReportFormat::Html) => Some(default_html_path(&args.store.db, id)),
        (None, _) => None,
    };
    write_out(output.as_deref(), |mut out| match args.format {
        ReportFormat::Html => write_html(&mut out, &report),
        ReportFormat::Md => write_markdown(&mut out, &report),
        ReportFormat::Csv => write_csv(&mut out, &report),
        ReportFormat::Json => write_json(out, &report),
    })?;
    Ok(exit::OK)
}

/// `results/run-7/report.html` beside `results/netbench.sqlite`.
fn default_html_path(db: &Path, run: i64) -> PathBuf {
    db.parent()
        .unwrap_or(Path::new("."))
        .join(format!("run-{run}"))
        .join("report.html")
}

pub(crate) fn compare(args: CompareArgs) -> Result<u8> {
    if let Some(pair) = &args.pair {
        return compare_variants(&args, &pair[0], &pair[1]);
    }
    let store = open_existing(&args.store)?;
    let a = load(&store, args.run_a)?;
    let run_b = args
        .run_b
        .context("compare needs a second run, or --pair A B")?;
    let b = load(&store, run_b)?;
    let c = compare_runs(&a, &b, !args.absolute);
    let options = GateOptions {
        noise_floor: args.noise_floor,
        max_floor: args.max_floor,
    };
    let gate = args
        .fail_on
        .as_ref()
        .map(|rules| judge_gate_with(&c, rules, options));
    write_out(args.output.as_deref(), |mut out| match args.format {
        CompareFormat::Text => {
            write_compare_text(&mut out, &c)?;
            match &gate {
                Some(g) => {
                    writeln!(out)?;
                    write_gate_text(&mut out, g)
                }
                None => Ok(()),
            }
        }
        CompareFormat::Html => write_compare_html_gated(&mut out, &c, gate.as_ref()),
        CompareFormat::Json => write_json(out, &compare_json(&c, gate.as_ref())),
    })?;
    let Some(gate) = gate else {
        return Ok(exit::OK);
    };
    // A CI log shows stderr: the decision goes there too whenever stdout
    // does not carry it as text.
    if args.output.is_some() || args.format != CompareFormat::Text {
        write_gate_text(&mut std::io::stderr().lock(), &gate)?;
    }
    Ok(if gate.passed() {
        exit::OK
    } else {
        exit::REGRESSION
    })
}

/// `compare RUN --pair A B`: two variants of one run, paired within its
/// rounds (the report library's `pair`), judged by --fail-on when given.
fn compare_variants(args: &CompareArgs, a: &str, b: &str) -> Result<u8> {
    if args.format == CompareFormat::Html {
        bail!("--pair writes text or JSON; use --format text or --format json");
    }
    let store = open_existing(&args.store)?;
    let report = load(&store, args.run_a)?;
    let p = compare_pair(&report, a, b)?;
    let gate = args.fail_on.as_ref().map(|rules| judge_pair(&p, rules));
    write_out(args.output.as_deref(), |mut out| match args.format {
        CompareFormat::Json => write_json(out, &pair_json(&p, gate.as_ref())),
        _ => write_pair_text(&mut out, &p, gate.as_ref()),
    })?;
    let Some(gate) = gate else {
        return Ok(exit::OK);
    };
    if args.output.is_some() || args.format != CompareFormat::Text {
        write_pair_gate(&mut std::io::stderr().lock(), &gate)?;
    }
    Ok(if gate.passed() {
        exit::OK
    } else {
        exit::REGRESSION
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partial_file_keeps_the_whole_name() {
        assert_eq!(
            partial_path(Path::new("out/r.html")),
            PathBuf::from("out/r.html.partial")
        );
        assert_eq!(partial_path(Path::new("r")), PathBuf::from("r.partial"));
    }

    #[test]
    fn html_goes_beside_the_store() {
        assert_eq!(
            default_html_path(Path::new("results/netbench.sqlite"), 7),
            PathBuf::from("results/run-7/report.html")
        );
        assert_eq!(
            default_html_path(Path::new("db.sqlite"), 1),
            PathBuf::from("run-1/report.html")
        );
    }
}
