//! `netbench attack`: the typed attack plan from the arguments, one call
//! into the attack crate, the summary printed, the exit code chosen.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use netbench_attack::{AttackKind, AttackRequest};

use crate::cli::{AttackArgs, AttackKindArg};
use crate::exit;
use crate::signals::stop_on_signals;

pub(crate) fn run(args: AttackArgs) -> Result<u8> {
    let request = AttackRequest {
        kind: kind_of(args.kind),
        url: args.url.clone(),
        connections: args.connections,
        duration: args.duration,
        interval: args.interval,
        path: args.path.clone(),
    };
    // Every bound, and the loopback check, before any socket is opened.
    let plan = request.plan()?;
    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signals(&stop)?;
    let outcome = netbench_attack::run(&plan, &stop).context("the attack could not start")?;
    if let Some(n) = outcome.capped_to {
        eprintln!(
            "netbench: warning: the open-file limit allows {n} connections, not the {} asked \
             for; raise it with `ulimit -n`",
            plan.connections
        );
    }
    let summary = &outcome.summary;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        serde_json::to_writer(&mut out, summary)?;
        writeln!(out)?;
    } else {
        writeln!(out, "{summary}")?;
    }
    out.flush()?;
    Ok(if stop.load(Ordering::Relaxed) {
        exit::INTERRUPTED
    } else if summary.connections_opened == 0 {
        eprintln!(
            "netbench: not one connection to {} could be opened in {:.1} s; is the server \
             listening?",
            plan.target.addr(),
            summary.seconds
        );
        exit::NOTHING_REACHED
    } else {
        exit::OK
    })
}

fn kind_of(arg: AttackKindArg) -> AttackKind {
    match arg {
        AttackKindArg::Slowloris => AttackKind::Slowloris,
        AttackKindArg::SlowRead => AttackKind::SlowRead,
        AttackKindArg::Malformed => AttackKind::Malformed,
        AttackKindArg::Oversized => AttackKind::Oversized,
        AttackKindArg::ConnFlood => AttackKind::ConnFlood,
        AttackKindArg::TcpFrag => AttackKind::TcpFrag,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn every_kind_keeps_its_name() {
        for arg in AttackKindArg::value_variants() {
            let name = arg.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(kind_of(*arg).name(), name);
        }
    }
}
