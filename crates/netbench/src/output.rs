//! Where a load's result goes: the text or JSON report on stdout, the
//! histogram file, and the exit code. Shared by `load` and `merge`.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use netbench_engine::{write_part, LoadPlan, LoadResult, PlanSummary};
use netbench_report::{load_json, write_load_text, LoadContext, WorkSource};
use serde_json::{json, Value};

use crate::exit;
use crate::slo::{self, LatencySlo};

/// What a histogram file keeps of the command line, for the merged report.
pub(crate) fn context_json(ctx: &LoadContext<'_>) -> Value {
    json!({
        "url": ctx.url,
        "method": ctx.method,
        "work": ctx.work.map(|w| json!({
            "documents": w.documents,
            "dates": w.dates,
            "seed": w.seed,
        })),
    })
}

/// The work source a histogram file's context names, if any.
pub(crate) fn work_of(context: &Value) -> Option<WorkSource> {
    let w = context.get("work")?;
    let n = |k: &str| w.get(k).and_then(Value::as_u64);
    Some(WorkSource {
        documents: n("documents")? as usize,
        dates: n("dates")? as usize,
        seed: n("seed")?,
    })
}

pub(crate) fn print(json: bool, ctx: &LoadContext<'_>, result: &LoadResult) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &load_json(ctx, result))?;
        writeln!(out)?;
    } else {
        write_load_text(&mut out, ctx, result)?;
    }
    out.flush()?;
    Ok(())
}

/// Writes the histogram file through a temporary name, so a crash never
/// leaves half a file where a whole one is expected.
pub(crate) fn write_histogram(
    path: &Path,
    context: Value,
    plan: &LoadPlan,
    result: &LoadResult,
) -> Result<()> {
    HistogramOut::open(path)?.write(context, plan, result)
}

/// A histogram file opened before a run, so a path that cannot be written
/// (a folder, a place without permission) is refused before anything is
/// measured, not after (issue 27). The result goes to a temporary file
/// beside it, renamed into place once whole; dropped unwritten, the
/// temporary file goes.
pub(crate) struct HistogramOut {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
}

impl HistogramOut {
    /// Checks `path`, makes its folder if missing, and opens the temporary
    /// file beside it.
    pub(crate) fn open(path: &Path) -> Result<Self> {
        if path.is_dir() {
            bail!(
                "--histogram-out {} is a folder; give a file name, such as {}",
                path.display(),
                path.join("load.hlog").display()
            );
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).with_context(|| {
                format!(
                    "making the folder {} for --histogram-out; give a path that can be written",
                    parent.display()
                )
            })?;
        }
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".partial");
        let tmp = PathBuf::from(tmp);
        let file = File::create(&tmp).with_context(|| {
            format!(
                "opening {} for --histogram-out; give a path that can be written",
                tmp.display()
            )
        })?;
        Ok(HistogramOut {
            path: path.to_path_buf(),
            tmp,
            file: Some(file),
        })
    }

    /// Writes the result and renames the file into place.
    pub(crate) fn write(
        mut self,
        context: Value,
        plan: &LoadPlan,
        result: &LoadResult,
    ) -> Result<()> {
        let file = self.file.take().expect("written once");
        let write = || -> Result<()> {
            let mut file = std::io::BufWriter::new(file);
            write_part(&mut file, context, &PlanSummary::of(plan), result)?;
            file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            std::fs::rename(&self.tmp, &self.path)?;
            Ok(())
        };
        write().with_context(|| format!("writing the histogram file {}", self.path.display()))
    }
}

impl Drop for HistogramOut {
    fn drop(&mut self) {
        // Renamed away when written; otherwise half a file or an empty one.
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Prints a finished result, then writes its histogram file: a result
/// measured is never lost to a file that could not be written (the error
/// follows it).
pub(crate) fn print_then_write(
    json: bool,
    ctx: &LoadContext<'_>,
    result: &LoadResult,
    histogram: Option<HistogramOut>,
) -> Result<()> {
    print(json, ctx, result)?;
    if let Some(h) = histogram {
        h.write(context_json(ctx), ctx.plan, result)?;
    }
    Ok(())
}

/// The exit code of a finished load: interrupted, or else whether it met
/// --max-error-rate and every latency objective. Every miss is printed,
/// not only the first, so one run tells the whole story.
pub(crate) fn exit_code(result: &LoadResult, max_error_rate: f64, slos: &[LatencySlo]) -> u8 {
    if result.interrupted {
        return exit::INTERRUPTED;
    }
    let mut code = exit::OK;
    if result.attempts() == 0 {
        // "0 good, 0 errors" passed before (issue 42): what was still in
        // flight at the end is neither, and never a pass. (Answers that all
        // failed are --max-error-rate's to judge.)
        eprintln!(
            "netbench: nothing was answered while measuring: {} {} still in flight at the end, none answered or failed",
            result.unfinished.requests,
            if result.unfinished.requests == 1 { "request" } else { "requests" }
        );
        code = exit::NOTHING_ANSWERED;
    }
    if result.error_rate() > max_error_rate {
        eprintln!(
            "netbench: error rate {:.4} is above --max-error-rate {}",
            result.error_rate(),
            max_error_rate
        );
        code = exit::TOO_MANY_ERRORS;
    }
    for line in slo::missed(result, slos) {
        eprintln!("netbench: {line}");
        code = exit::SLO_MISSED;
    }
    code
}
