//! The store's resident-server events (schema 12): written one at a time as
//! they happen, read back in order. Named parameters and columns, so a
//! column added later cannot shift the others.

use netbench_records::{ServerEvent, ServerEventKind};
use rusqlite::named_params;

use super::{fail, no_such_run, run_exists, to_i64, Store, StoreError};

impl Store {
    /// Records one event of a resident server of `run`, after the ones
    /// recorded before it.
    pub fn record_event(&self, run: i64, e: &ServerEvent) -> Result<(), StoreError> {
        let failed = fail(&self.path, "recording a server's event");
        let tx = self.write().map_err(&failed)?;
        if !run_exists(&tx, run).map_err(&failed)? {
            return Err(no_such_run(&self.path, run));
        }
        tx.execute(
            "INSERT INTO server_events (run_id, seq, server, variant, round, at, event,
                                        waited_s, cpu_s, rss_bytes, detail)
             VALUES (:run, (SELECT coalesce(max(seq) + 1, 0) FROM server_events
                            WHERE run_id = :run),
                     :server, :variant, :round, :at, :event, :waited_s, :cpu_s,
                     :rss_bytes, :detail)",
            named_params! {
                ":run": run,
                ":server": e.server,
                ":variant": e.variant,
                ":round": e.round,
                ":at": e.at,
                ":event": e.kind.as_str(),
                ":waited_s": e.waited_s,
                ":cpu_s": e.cpu_s,
                ":rss_bytes": e.rss_bytes.map(to_i64),
                ":detail": e.detail,
            },
        )
        .map_err(&failed)?;
        tx.commit().map_err(&failed)
    }

    /// Every event of `run`'s resident servers, in the order they happened
    /// (none for a run whose servers were not resident).
    pub fn server_events(&self, run: i64) -> Result<Vec<ServerEvent>, StoreError> {
        events_of(&self.conn, run).map_err(fail(&self.path, "reading a run's server events"))
    }
}

/// `run`'s server events in order, read on `conn` (a transaction's, for
/// [`Store::run`]'s one snapshot).
pub(super) fn events_of(
    conn: &rusqlite::Connection,
    run: i64,
) -> rusqlite::Result<Vec<ServerEvent>> {
    let mut stmt = conn.prepare_cached(
        "SELECT server, variant, round, at, event, waited_s, cpu_s, rss_bytes, detail
         FROM server_events WHERE run_id = :run ORDER BY seq",
    )?;
    let rows = stmt.query_map(named_params! { ":run": run }, |row| {
        let event: String = row.get("event")?;
        let kind = ServerEventKind::parse(&event).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                4,
                rusqlite::types::Type::Text,
                format!("unknown server event {event:?}").into(),
            )
        })?;
        Ok(ServerEvent {
            server: row.get("server")?,
            variant: row.get("variant")?,
            round: row.get("round")?,
            at: row.get("at")?,
            kind,
            waited_s: row.get("waited_s")?,
            cpu_s: row.get("cpu_s")?,
            rss_bytes: row
                .get::<_, Option<i64>>("rss_bytes")?
                .map(|b| b.max(0) as u64),
            detail: row.get("detail")?,
        })
    })?;
    rows.collect()
}

impl Store {
    /// The fixed-rate cells of `run` whose server could not keep up with
    /// the suite's rate in the first round (it was measured at a lower
    /// one): with resident servers their later rounds are not run, since a
    /// lower rate's CPU per request is not comparable with the row's. A
    /// later round that misses the rate (a slow moment of the host) is kept
    /// as measured, and the statistics leave that round out of the cell.
    pub fn fixed_rate_not_held(
        &self,
        run: i64,
    ) -> Result<std::collections::HashSet<netbench_records::CellId>, StoreError> {
        let failed = fail(&self.path, "reading a run's fixed-rate cells");
        let mut stmt = self
            .conn
            .prepare(
                "SELECT DISTINCT server, variant, scenario, connections FROM measurements
                 WHERE run_id = :run AND status = 'ok' AND repetition = 1
                   AND json_extract(facts, '$.kind') = 'fixed-rate'
                   AND json_extract(facts, '$.offered_per_s')
                       < json_extract(facts, '$.rate_per_s')",
            )
            .map_err(&failed)?;
        let rows = stmt
            .query_map(named_params! { ":run": run }, |row| {
                Ok(netbench_records::CellId {
                    server: row.get("server")?,
                    variant: row.get("variant")?,
                    scenario: row.get("scenario")?,
                    connections: row.get("connections")?,
                })
            })
            .map_err(&failed)?;
        rows.collect::<Result<_, _>>().map_err(&failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_back_in_the_order_they_were_recorded() {
        let store = Store::open_in_memory().unwrap();
        let run = store
            .begin_run(&crate::store::tests::new_run_for_tests())
            .unwrap();
        let event = |kind, round| ServerEvent {
            server: "go-nethttp".into(),
            variant: "twin".into(),
            round,
            at: "2026-12-07T22:00:00Z".into(),
            kind,
            waited_s: Some(61.5),
            cpu_s: Some(0.25),
            rss_bytes: Some(12 << 20),
            detail: Some("exit status: 3".into()),
        };
        let written = vec![
            event(ServerEventKind::Started, 0),
            event(ServerEventKind::Idle, 2),
            event(ServerEventKind::Crashed, 2),
            event(ServerEventKind::Restarted, 2),
        ];
        for e in &written {
            store.record_event(run, e).unwrap();
        }
        assert_eq!(store.server_events(run).unwrap(), written);
        assert!(store.record_event(run + 1, &written[0]).is_err());
        assert!(store.server_events(run + 1).unwrap().is_empty());
    }
}
