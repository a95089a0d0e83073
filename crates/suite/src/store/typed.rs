//! The rows of the typed records of schema 9: a run's scenarios and what
//! each server variant is (netbench-records' `ScenarioRecord` and
//! `ServerFacts`): writing them, reading them back, and filling them for
//! runs stored before, from the suite file and manifests those runs kept.

use rusqlite::{params, OptionalExtension, Transaction};

use netbench_records::{
    Bandwidth, NetPlacement, Offer, Protocol, ScenarioRecord, ServerFacts, Tier,
};

use crate::manifest::Model;
use crate::records_of::{scenario_records_of_text, server_facts, with_toolchain};

fn to_sql_err(e: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(e.to_string().into())
}

/// Writes a run's scenarios (a run writes them once, when it begins).
pub(super) fn insert_scenarios(
    tx: &Transaction<'_>,
    run: i64,
    scenarios: &[ScenarioRecord],
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare(
        "INSERT INTO scenarios (run_id, position, name, kind, endpoint, connections, keepalive,
                                requests_per_connection, needs, net_placement,
                                net_bandwidth_bps, same_cells_as, protocol, streams)
         VALUES (:run, :position, :name, :kind, :endpoint, :connections, :keepalive,
                 :requests_per_connection, :needs, :net_placement, :net_bandwidth_bps,
                 :same_cells_as, :protocol, :streams)",
    )?;
    for s in scenarios {
        stmt.execute(rusqlite::named_params! {
            ":run": run,
            ":position": s.position,
            ":name": s.name,
            ":kind": s.kind,
            ":endpoint": s.endpoint,
            ":connections": serde_json::to_string(&s.connections).map_err(to_sql_err)?,
            ":keepalive": s.keepalive,
            ":requests_per_connection": s.requests_per_connection,
            ":needs": s.needs.map(Offer::as_str),
            ":net_placement": s.placement.as_str(),
            ":net_bandwidth_bps": s.bandwidth.map(|b| b.bits_per_s as i64),
            ":same_cells_as": s.same_cells_as,
            ":protocol": s.protocol.as_str(),
            ":streams": s.streams,
        })?;
    }
    Ok(())
}

fn from_sql_err(column: usize, e: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        column,
        rusqlite::types::Type::Text,
        e.to_string().into(),
    )
}

/// A run's scenarios in the suite's order.
pub(super) fn read_scenarios(
    tx: &Transaction<'_>,
    run: i64,
) -> rusqlite::Result<Vec<ScenarioRecord>> {
    let mut stmt = tx.prepare(
        "SELECT position, name, kind, endpoint, connections, keepalive, requests_per_connection,
                needs, net_placement, net_bandwidth_bps, same_cells_as, protocol, streams
         FROM scenarios WHERE run_id = ?1 ORDER BY position",
    )?;
    let rows = stmt.query_map(params![run], |row| {
        let connections: String = row.get(4)?;
        let needs: Option<String> = row.get(7)?;
        let placement: String = row.get(8)?;
        Ok(ScenarioRecord {
            position: row.get(0)?,
            name: row.get(1)?,
            kind: row.get(2)?,
            endpoint: row.get(3)?,
            connections: serde_json::from_str(&connections).map_err(|e| from_sql_err(4, e))?,
            keepalive: row.get(5)?,
            requests_per_connection: row.get(6)?,
            needs: match needs {
                Some(n) => Some(
                    Offer::parse(&n).ok_or_else(|| from_sql_err(7, format!("{n:?} is no part")))?,
                ),
                None => None,
            },
            placement: NetPlacement::parse(&placement)
                .ok_or_else(|| from_sql_err(8, format!("{placement:?} is no placement")))?,
            bandwidth: row.get::<_, Option<i64>>(9)?.map(|b| Bandwidth {
                bits_per_s: b as u64,
            }),
            same_cells_as: row.get(10)?,
            protocol: {
                let p: String = row.get("protocol")?;
                Protocol::parse(&p)
                    .ok_or_else(|| from_sql_err(11, format!("{p:?} is no protocol")))?
            },
            streams: row.get("streams")?,
        })
    })?;
    rows.collect()
}

/// Writes a server variant's facts on its row, with the toolchain of the
/// run's environment when the facts do not carry one.
pub(super) fn write_server_facts(
    tx: &Transaction<'_>,
    run: i64,
    server: &str,
    variant: &str,
    facts: &ServerFacts,
) -> rusqlite::Result<()> {
    let environment: Option<String> = tx
        .query_row(
            "SELECT environment FROM runs WHERE id = ?1",
            params![run],
            |r| r.get(0),
        )
        .optional()?;
    let environment: serde_json::Value = environment
        .and_then(|e| serde_json::from_str(&e).ok())
        .unwrap_or_default();
    let f = with_toolchain(facts.clone(), &environment);
    let offers: Vec<&str> = f.offers.iter().map(|o| o.as_str()).collect();
    tx.execute(
        "UPDATE servers SET language = ?4, language_version = ?5, toolchain = ?6, framework = ?7,
                            framework_version = ?8, model = ?9, tier = ?10, website = ?11,
                            description = ?12, offers = ?13
         WHERE run_id = ?1 AND server = ?2 AND variant = ?3",
        params![
            run,
            server,
            variant,
            f.language,
            f.language_version,
            f.toolchain,
            f.framework,
            f.framework_version,
            f.model.map(Model::as_str),
            f.tier.as_str(),
            f.website,
            f.description,
            serde_json::to_string(&offers).map_err(to_sql_err)?,
        ],
    )?;
    Ok(())
}

/// The columns [`read_server_facts`] reads, in its order, to append to a
/// SELECT of the servers table.
pub(super) const SERVER_FACTS_COLUMNS: &str = "language, language_version, toolchain, framework, \
     framework_version, model, tier, website, description, offers";

/// A server variant's facts from its row, starting at column `at` of
/// [`SERVER_FACTS_COLUMNS`]. A model or part this netbench does not know
/// reads as unknown, as it would from the manifest.
pub(super) fn read_server_facts(
    row: &rusqlite::Row<'_>,
    at: usize,
) -> rusqlite::Result<ServerFacts> {
    let model: Option<String> = row.get(at + 5)?;
    let tier: String = row.get(at + 6)?;
    let offers: String = row.get(at + 9)?;
    let offers: Vec<String> = serde_json::from_str(&offers).map_err(|e| from_sql_err(at + 9, e))?;
    Ok(ServerFacts {
        language: row.get(at)?,
        language_version: row.get(at + 1)?,
        toolchain: row.get(at + 2)?,
        framework: row.get(at + 3)?,
        framework_version: row.get(at + 4)?,
        model: model.as_deref().and_then(Model::parse),
        tier: Tier::parse(&tier).unwrap_or_default(),
        website: row.get(at + 7)?,
        description: row.get(at + 8)?,
        offers: offers.iter().filter_map(|o| Offer::parse(o)).collect(),
    })
}

/// Fills the typed records of every run stored before schema 9 from the
/// texts it kept: its scenarios from its suite file (none when that no
/// longer parses), each server's facts from its manifest and the run's
/// environment.
pub(super) fn typed_records(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let runs: Vec<(i64, String, String)> = {
        let mut stmt = tx.prepare("SELECT id, suite, suite_toml FROM runs ORDER BY id")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for (id, suite, suite_toml) in runs {
        insert_scenarios(tx, id, &scenario_records_of_text(&suite, &suite_toml))?;
    }
    let servers: Vec<(i64, String, String, String)> = {
        let mut stmt = tx.prepare("SELECT run_id, server, variant, manifest_toml FROM servers")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for (run, server, variant, manifest) in servers {
        write_server_facts(
            tx,
            run,
            &server,
            &variant,
            &server_facts(&manifest, &variant),
        )?;
    }
    Ok(())
}
