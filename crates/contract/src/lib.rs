//! The server contract (contract/CONTRACT.md) as code: the reference answer
//! to a work document, a seeded generator of distinct work requests with their
//! expected answers, the static files as a formula, and the conformance
//! checks behind `netbench verify`.

pub mod app;
mod client;
pub mod db;
mod digest;
pub mod fortunes;
mod generator;
pub mod grpc;
mod requests;
mod rng;
mod static_files;
mod timefmt;
mod verify;
mod work;
pub mod world;
mod ws_client;

pub use client::{Client, ClientError, Response};
pub use digest::{decode, sha256_hex, Coding, DecodeError, MAX_DECODED};
pub use generator::{WorkCase, WorkGenerator, DEFAULT_DATES};
pub use requests::{
    blank_request, echo_request, static_request, upload_requests, work_br_requests,
    work_browser_requests, work_gzip_requests, work_requests, BROWSER_HEADERS, UPLOAD_SIZES,
};
pub use rng::SplitMix64;
pub use static_files::{static_bytes, static_file, write_static_files, StaticFile, STATIC_FILES};
pub use timefmt::{format_http_date, format_iso_millis, parse_http_date, parse_iso_millis};
pub use verify::conformance::case_ids as conformance_case_ids;
pub use verify::{
    conformance, CaseResult, CaseStatus, ConformanceOptions, ConformanceReport, CASE_TIMEOUT,
    SET_DEADLINES,
};
pub use verify::{
    upload_problem, verify, Check, CheckStatus, ProtocolTargets, VerifyOptions, VerifyReport,
    MAX_UPLOAD, MIN_UPLOAD, UPLOAD_LIMIT,
};
pub use work::{answer, Rejection};
pub use ws_client::{Frame, WsClient, WsError};

/// The contract version this crate implements (CONTRACT.md, "Version").
pub const CONTRACT_VERSION: &str = "1.5";
