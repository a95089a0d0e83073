//! `netbench verify`: conformance checks of a running server against the
//! contract, each passing, warning or failing with a one-line reason.

mod app;
mod checks;
pub mod conformance;
#[cfg(feature = "postgres")]
mod db;
#[cfg(feature = "postgres")]
mod fortunes;
mod json_comp;
mod protocols;
mod static_files;
mod upload;
#[cfg(feature = "postgres")]
mod world;
mod ws;

pub use conformance::{
    conformance, CaseResult, CaseStatus, ConformanceOptions, ConformanceReport, CASE_TIMEOUT,
    SET_DEADLINES,
};
pub use protocols::ProtocolTargets;
pub use upload::{upload_problem, MAX_UPLOAD, MIN_UPLOAD, UPLOAD_LIMIT};

use std::time::Duration;

use netbench_engine::Framing;
use serde::Serialize;

use crate::client::{Client, Response};
use crate::generator::{WorkGenerator, DEFAULT_DATES};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    Pass,
    Warn,
    Fail,
}

/// The outcome of one check.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: CheckStatus,
    pub reason: String,
}

#[derive(Debug, Clone)]
pub struct VerifyOptions {
    pub client: Client,
    /// Path prefix of the server's endpoints ("" for the root).
    pub prefix: String,
    /// Seeds the work documents; printed so a failure can be reproduced.
    pub seed: u64,
    /// Random work documents to check.
    pub documents: usize,
    /// How long the Date header may stay the same before the `date` check
    /// fails: a cached Date refreshed by a late once-a-second tick must pass,
    /// a frozen one must not (checks.rs, `date`).
    pub date_window: Duration,
    /// The database behind the server's `db` part (CONTRACT.md, "db"):
    /// with it the db checks run, and change rows through it.
    pub database_url: Option<String>,
    /// Run the `ws` checks (CONTRACT.md, "ws"): the server offers WebSocket
    /// echo at `/ws`.
    pub ws: bool,
    /// Run the `static` checks (CONTRACT.md, "static", version 1.2).
    pub static_files: bool,
    /// Run the `upload` checks (CONTRACT.md, "upload", version 1.2).
    pub upload: bool,
    /// Run the `json-comp` checks (CONTRACT.md, "json-comp", version 1.2).
    pub json_comp: bool,
    /// Run the `fortunes` checks (CONTRACT.md, "fortunes", version 1.3)
    /// against `database_url`.
    pub fortunes: bool,
    /// Run the `queries` checks (CONTRACT.md, "queries", version 1.3).
    pub queries: bool,
    /// Run the `updates` checks (CONTRACT.md, "updates", version 1.3).
    pub updates: bool,
    /// Run the `app` checks (CONTRACT.md, "app", version 1.4).
    pub app: bool,
    /// The listeners of version 1.5 (TLS, HTTP/2, h2c, gRPC): each one set
    /// runs its checks.
    pub protocols: ProtocolTargets,
    /// Run the HTTP/1.1 conformance probes (`conformance/`) too: scored in
    /// the report's `conformance`, never failing verify.
    pub conformance: bool,
}

impl VerifyOptions {
    pub fn new(client: Client, seed: u64) -> Self {
        VerifyOptions {
            client,
            prefix: String::new(),
            seed,
            documents: 50,
            date_window: Duration::from_secs(3),
            database_url: None,
            ws: false,
            static_files: false,
            upload: false,
            json_comp: false,
            fortunes: false,
            queries: false,
            updates: false,
            app: false,
            protocols: ProtocolTargets::default(),
            conformance: false,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    pub seed: u64,
    pub checks: Vec<Check>,
    /// Optional parts whose checks did not run, each with why
    /// ("db: no database given (--database-url)").
    pub skipped: Vec<String>,
    /// The conformance probes' score, when asked for (`None`: not run). A
    /// score, not a gate: `ok` never reads it.
    pub conformance: Option<ConformanceReport>,
}

impl VerifyReport {
    pub fn count(&self, status: CheckStatus) -> usize {
        self.checks.iter().filter(|c| c.status == status).count()
    }

    pub fn ok(&self) -> bool {
        self.count(CheckStatus::Fail) == 0
    }

    pub fn get(&self, name: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.name == name)
    }
}

/// An answer seen during the checks, kept for the framing and Date checks.
struct Seen {
    what: String,
    framing: Framing,
    date: Option<String>,
}

/// State shared by the checks of one run.
pub(crate) struct Ctx<'a> {
    opts: &'a VerifyOptions,
    work: WorkGenerator,
    seen: Vec<Seen>,
}

impl<'a> Ctx<'a> {
    fn path(&self, p: &str) -> String {
        format!("{}{}", self.opts.prefix, p)
    }

    fn client(&self) -> &Client {
        &self.opts.client
    }

    /// Keeps what the framing and Date checks need from an answer.
    fn saw(&mut self, what: &str, r: &Response) {
        self.seen.push(Seen {
            what: what.to_string(),
            framing: r.framing,
            date: r.header("date").map(str::to_string),
        });
    }
}

fn pass(name: &'static str, reason: impl Into<String>) -> Check {
    Check {
        name,
        status: CheckStatus::Pass,
        reason: reason.into(),
    }
}

fn warn(name: &'static str, reason: impl Into<String>) -> Check {
    Check {
        name,
        status: CheckStatus::Warn,
        reason: reason.into(),
    }
}

fn fail(name: &'static str, reason: impl Into<String>) -> Check {
    Check {
        name,
        status: CheckStatus::Fail,
        reason: reason.into(),
    }
}

/// The checks of one optional part, run when it is asked for.
type PartChecks = fn(&mut Ctx<'_>) -> Vec<Check>;

/// The checks of an optional part that reads the database, by its name.
#[cfg(feature = "postgres")]
fn database_part(part: &str) -> fn(&mut Ctx<'_>, &str) -> Vec<Check> {
    match part {
        "fortunes" => fortunes::checks,
        "queries" => world::queries_checks,
        _ => world::updates_checks,
    }
}

/// Runs every check against the server. Never panics on a bad server: every
/// problem becomes a failed check with its reason.
pub fn verify(opts: &VerifyOptions) -> VerifyReport {
    let mut ctx = Ctx {
        opts,
        work: WorkGenerator::new(opts.seed, DEFAULT_DATES),
        seen: Vec::new(),
    };
    let mut out = vec![
        checks::blank(&mut ctx),
        checks::echo(&mut ctx),
        checks::not_found(&mut ctx),
    ];
    out.extend(checks::work(&mut ctx));
    out.push(checks::split_request(&mut ctx));
    out.push(checks::chunked_request(&mut ctx));
    out.extend(checks::rejections(&mut ctx));
    out.push(checks::keep_alive(&mut ctx));
    let mut skipped = Vec::new();
    match &opts.database_url {
        #[cfg(feature = "postgres")]
        Some(url) => out.extend(db::checks(&mut ctx, url)),
        #[cfg(not(feature = "postgres"))]
        Some(_) => skipped.push("db: this build has no PostgreSQL client".to_string()),
        None => skipped.push("db: no database given (--database-url)".to_string()),
    }
    let database_parts = [
        (opts.fortunes, "fortunes"),
        (opts.queries, "queries"),
        (opts.updates, "updates"),
    ];
    for (asked, part) in database_parts {
        if !asked {
            skipped.push(format!(
                "{part}: not asked for (--{part} runs the {part}-* checks)"
            ));
            continue;
        }
        let Some(url) = &opts.database_url else {
            skipped.push(format!(
                "{part}: no database given (--database-url), so its answers cannot be judged"
            ));
            continue;
        };
        #[cfg(feature = "postgres")]
        out.extend(database_part(part)(&mut ctx, url));
        #[cfg(not(feature = "postgres"))]
        {
            let _ = url;
            skipped.push(format!("{part}: this build has no PostgreSQL client"));
        }
    }
    if opts.ws {
        out.extend(ws::checks(&mut ctx));
    } else {
        skipped.push("ws: not asked for (--ws runs the ws-* checks)".to_string());
    }
    let optional: [(bool, &str, PartChecks); 4] = [
        (opts.static_files, "static", static_files::checks),
        (opts.upload, "upload", upload::checks),
        (opts.json_comp, "json-comp", json_comp::checks),
        (opts.app, "app", app::checks),
    ];
    for (asked, part, run) in optional {
        if asked {
            out.extend(run(&mut ctx));
        } else {
            skipped.push(format!(
                "{part}: not asked for (--{part} runs the {part}-* checks)"
            ));
        }
    }
    let p = &opts.protocols;
    for (set, part, flag) in [
        (p.tls.is_some(), "tls", "--tls-port PORT"),
        (p.tls.is_some() && p.h2, "h2", "--h2 with --tls-port PORT"),
        (p.h2c.is_some(), "h2c", "--h2c-port PORT"),
        (p.grpc.is_some(), "grpc", "--grpc-port PORT"),
    ] {
        if !set {
            skipped.push(format!("{part}: not asked for ({flag} runs its checks)"));
        }
    }
    out.extend(protocols::checks(&mut ctx, p));
    out.push(checks::framing(&ctx));
    out.push(checks::date(&mut ctx));
    let conformance = opts.conformance.then(|| {
        let client = &opts.client;
        let mut probes = ConformanceOptions::new(
            client.addr,
            client.host.clone(),
            format!("{}/blank", opts.prefix),
        );
        // The contract's `/echo/` tells pipelined answers apart by body.
        probes.target.echo_prefix = Some(opts.prefix.clone());
        conformance(&probes)
    });
    VerifyReport {
        seed: opts.seed,
        checks: out,
        skipped,
        conformance,
    }
}
