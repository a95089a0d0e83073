//! `netbench site`: every run of the store into a report each, the site
//! built once from them, written into the folder the user gave.

use anyhow::{bail, Context, Result};
use netbench_report::site::{build_site, write_site};

use crate::cli::SiteArgs;
use crate::exit;
use crate::report::load;
use crate::run::open_existing;

pub(crate) fn run(args: SiteArgs) -> Result<u8> {
    let store = open_existing(&args.store)?;
    let runs = store.runs()?;
    if runs.is_empty() {
        bail!(
            "no runs in {}; start one with `netbench run quick`",
            args.store.db.display()
        );
    }
    let reports = runs
        .iter()
        .map(|r| load(&store, r.id))
        .collect::<Result<Vec<_>>>()?;
    let site = build_site(reports);
    let written = write_site(&site, &args.output, args.force)
        .with_context(|| format!("writing the site into {}", args.output.display()))?;
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    eprintln!(
        "wrote {} ({}, {}) to {}{}; open {}",
        count(written.files.len(), "page"),
        count(site.runs.len(), "run"),
        count(site.servers.len(), "server"),
        args.output.display(),
        if written.removed.is_empty() {
            String::new()
        } else {
            format!(
                ", removed {} no longer part of it",
                count(written.removed.len(), "page")
            )
        },
        args.output.join("index.html").display()
    );
    Ok(exit::OK)
}
