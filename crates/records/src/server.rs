//! What a run records of a server variant beyond its build: its threading
//! model, tier, language and framework, read from its manifest when the run
//! recorded it, so readers never parse a stored manifest again.

use serde::{Deserialize, Serialize};

/// How a server spreads connections over threads and processes
/// (contract/CONTRACT.md, "Manifest"). A closed list: a report groups and
/// colours by it, so a typo must fail the manifest, not make a new group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// An OS thread per connection, blocking I/O.
    ThreadPerConnection,
    /// A bounded pool of OS threads takes requests, blocking I/O.
    ThreadPool,
    /// One thread running one event loop.
    EventLoop,
    /// One event loop per core, each connection owned by one loop.
    EventLoopsPerCore,
    /// Async tasks on a work-stealing pool of threads (tokio multi-thread).
    WorkStealing,
    /// Runtime-scheduled lightweight threads over a poller (goroutines, GHC).
    GreenThreads,
    /// JVM virtual threads, a thread per request on few carriers.
    VirtualThreads,
    /// Coroutines suspended on I/O, resumed on a dispatcher's threads.
    Coroutines,
    /// Several processes, each with its own loop or threads.
    Processes,
}

impl Model {
    pub const ALL: [Model; 9] = [
        Model::ThreadPerConnection,
        Model::ThreadPool,
        Model::EventLoop,
        Model::EventLoopsPerCore,
        Model::WorkStealing,
        Model::GreenThreads,
        Model::VirtualThreads,
        Model::Coroutines,
        Model::Processes,
    ];

    /// The name as written in a manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            Model::ThreadPerConnection => "thread-per-connection",
            Model::ThreadPool => "thread-pool",
            Model::EventLoop => "event-loop",
            Model::EventLoopsPerCore => "event-loops-per-core",
            Model::WorkStealing => "work-stealing",
            Model::GreenThreads => "green-threads",
            Model::VirtualThreads => "virtual-threads",
            Model::Coroutines => "coroutines",
            Model::Processes => "processes",
        }
    }
}

/// Whether settings are the framework's defaults or documented tuning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    #[default]
    Default,
    Tuned,
}

/// An optional part of the contract (contract/CONTRACT.md: `db` and `ws`
/// since version 1.1, `static`, `upload` and `json-comp` since 1.2,
/// `fortunes`, `queries` and `updates` since 1.3, `app` since 1.4, `tls`,
/// `h2`, `h2c` and `grpc` since 1.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", try_from = "String")]
pub enum Offer {
    /// `GET /db` and `GET /db/list`, read from PostgreSQL.
    Db,
    /// `GET /ws`, WebSocket echo.
    Ws,
    /// `GET /static/14k` and `/static/1m`, files from disk with validators.
    Static,
    /// `POST /upload`, answered with the body's length and SHA-256.
    Upload,
    /// `POST /work` compressed when `Accept-Encoding` allows it.
    JsonComp,
    /// `GET /fortunes`, an HTML page of a PostgreSQL table (contract 1.3).
    Fortunes,
    /// `GET /queries?queries=N`, N World rows each read by a query (1.3).
    Queries,
    /// `GET /updates?queries=N`, N World rows read, changed and written (1.3).
    Updates,
    /// `GET /app?page=K` and `POST /app/logout`: a session found and
    /// locked, a page rendered and gzipped (1.4).
    App,
    /// Every endpoint over TLS on `TLS_PORT` (1.5).
    Tls,
    /// HTTP/2 over TLS by ALPN on `TLS_PORT` (1.5; needs `tls`).
    H2,
    /// HTTP/2 with prior knowledge on `H2C_PORT` (1.5).
    H2c,
    /// The gRPC service `netbench.Work` on `GRPC_PORT` (1.5).
    Grpc,
}

impl Offer {
    pub fn as_str(self) -> &'static str {
        match self {
            Offer::Db => "db",
            Offer::Ws => "ws",
            Offer::Static => "static",
            Offer::Upload => "upload",
            Offer::JsonComp => "json-comp",
            Offer::Fortunes => "fortunes",
            Offer::Queries => "queries",
            Offer::Updates => "updates",
            Offer::App => "app",
            Offer::Tls => "tls",
            Offer::H2 => "h2",
            Offer::H2c => "h2c",
            Offer::Grpc => "grpc",
        }
    }
}

impl TryFrom<String> for Offer {
    type Error = String;

    fn try_from(name: String) -> Result<Offer, String> {
        Offer::parse(&name).ok_or_else(|| {
            let known: Vec<&str> = Offer::ALL.iter().map(|o| o.as_str()).collect();
            format!(
                "unknown part `{name}` in `offers`: the parts are {}",
                known.join(", ")
            )
        })
    }
}

impl Model {
    /// A model's name as a manifest writes it; None for a name this
    /// netbench does not know.
    pub fn parse(name: &str) -> Option<Model> {
        Model::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Default => "default",
            Tier::Tuned => "tuned",
        }
    }

    pub fn parse(name: &str) -> Option<Tier> {
        [Tier::Default, Tier::Tuned]
            .into_iter()
            .find(|t| t.as_str() == name)
    }
}

impl Offer {
    pub const ALL: [Offer; 13] = [
        Offer::Db,
        Offer::Ws,
        Offer::Static,
        Offer::Upload,
        Offer::JsonComp,
        Offer::Fortunes,
        Offer::Queries,
        Offer::Updates,
        Offer::App,
        Offer::Tls,
        Offer::H2,
        Offer::H2c,
        Offer::Grpc,
    ];

    pub fn parse(name: &str) -> Option<Offer> {
        Offer::ALL.into_iter().find(|o| o.as_str() == name)
    }
}

/// What a server variant is, from its manifest (and, for the toolchain, the
/// run's environment), recorded with it when the run records the server.
/// A manifest stored by an older netbench may lack what today's requires
/// (its model): the fields it has are still filled.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerFacts {
    pub language: String,
    /// The oldest version the code needs, from the manifest ("" if unsaid).
    pub language_version: String,
    /// The version of the toolchain that built and ran it this time ("1.26.8"),
    /// when the run's environment names it.
    pub toolchain: Option<String>,
    pub framework: String,
    pub framework_version: String,
    /// The variant's own model, else the server's; None when the manifest
    /// names none this netbench knows.
    pub model: Option<Model>,
    /// A variant's tier is its own: it does not inherit the server's.
    pub tier: Tier,
    pub website: String,
    /// The variant's description, else the server's.
    pub description: String,
    /// The contract's optional parts it serves (CONTRACT.md, versions 1.1
    /// and 1.2).
    pub offers: Vec<Offer>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_as_what_they_name() {
        for m in Model::ALL {
            assert_eq!(Model::parse(m.as_str()), Some(m));
        }
        for o in Offer::ALL {
            assert_eq!(Offer::parse(o.as_str()), Some(o));
        }
        assert_eq!(Tier::parse("tuned"), Some(Tier::Tuned));
        assert_eq!(Model::parse("event-loops"), None);
        assert_eq!(Tier::parse("fast"), None);
    }

    #[test]
    fn offers_read_from_json_by_name_and_refuse_others_saying_why() {
        let parts: Vec<Offer> = serde_json::from_str(
            r#"["static", "upload", "json-comp", "db", "fortunes", "queries", "updates"]"#,
        )
        .unwrap();
        assert_eq!(
            parts,
            [
                Offer::Static,
                Offer::Upload,
                Offer::JsonComp,
                Offer::Db,
                Offer::Fortunes,
                Offer::Queries,
                Offer::Updates
            ]
        );
        assert_eq!(
            serde_json::to_string(&Offer::JsonComp).unwrap(),
            "\"json-comp\""
        );
        assert_eq!(
            serde_json::from_str::<Offer>("\"app\"").unwrap(),
            Offer::App
        );
        let unknown = serde_json::from_str::<Offer>("\"json_comp\"").unwrap_err();
        assert!(
            unknown.to_string().contains("unknown part `json_comp`"),
            "{unknown}"
        );
        assert!(unknown.to_string().contains("json-comp"), "{unknown}");
    }
}
