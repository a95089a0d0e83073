//! Where a load's result goes: the text or JSON report on stdout, the
//! histogram file, and the exit code. Shared by `load` and `merge`.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use netbench_engine::{write_part, LoadPlan, LoadResult, PlanSummary};
use netbench_report::{load_json, write_load_text, LoadContext, WorkSource};
use serde_json::{json, Value};

use crate::exit;

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
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = std::path::PathBuf::from(tmp);
    let write = || -> Result<()> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        write_part(&mut file, context, &PlanSummary::of(plan), result)?;
        file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    };
    write().with_context(|| format!("writing the histogram file {}", path.display()))
}

/// The exit code of a finished load (or merge).
pub(crate) fn exit_code(result: &LoadResult, max_error_rate: f64) -> u8 {
    if result.interrupted {
        return exit::INTERRUPTED;
    }
    if result.error_rate() > max_error_rate {
        eprintln!(
            "netbench: error rate {:.4} is above --max-error-rate {}",
            result.error_rate(),
            max_error_rate
        );
        return exit::TOO_MANY_ERRORS;
    }
    exit::OK
}
