//! The histogram file of one load (`--histogram-out`), written and read as
//! bytes (the caller opens the file). It is an HdrHistogram interval log, so
//! HdrHistogram's own tools read it: the latency and connect-time histograms
//! as compressed V2, tagged, over the measured window (StartTime and BaseTime
//! are the window's start). One comment line carries the rest of the result
//! and the plan, which an exact merge needs and the log format has no place
//! for.

use std::io::{self, Write};
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::plan::{LoadPlan, Pacing, Stop, WsPlan};
use crate::result::LoadResult;

/// The comment line's prefix and format name; bumped when its meaning changes.
const MARK: &str = "netbench ";
pub const PART_FORMAT: &str = "netbench-part/1";
const LATENCY: &str = "latency";
const CONNECT: &str = "connect";

/// What a part file holds besides its histograms' buckets.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Header {
    format: String,
    context: serde_json::Value,
    plan: PlanSummary,
    /// Its histograms are not in the JSON (serde skips them): they are the
    /// log's tagged intervals.
    result: LoadResult,
}

/// A part read back: the result with its histograms.
#[derive(Debug, Clone)]
pub struct PartFile {
    /// Whatever the writer passed (the URL and method, for the report).
    pub context: serde_json::Value,
    pub plan: PlanSummary,
    pub result: LoadResult,
}

/// A plan without its request bytes: what a report of a merged run shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSummary {
    pub addr: SocketAddr,
    pub connections: usize,
    pub workers: usize,
    pub stop: Stop,
    pub pacing: Pacing,
    pub warmup: Duration,
    pub timeout: Duration,
    pub keepalive: bool,
    pub pipeline: usize,
    pub requests_per_connection: Option<u32>,
    pub reconnect: bool,
    pub distinct_requests: usize,
    pub ws: Option<WsPlan>,
}

impl PlanSummary {
    pub fn of(plan: &LoadPlan) -> Self {
        PlanSummary {
            addr: plan.addr,
            connections: plan.connections,
            workers: plan.workers,
            stop: plan.stop,
            pacing: plan.pacing,
            warmup: plan.warmup,
            timeout: plan.timeout,
            keepalive: plan.keepalive,
            pipeline: plan.pipeline,
            requests_per_connection: plan.requests_per_connection,
            reconnect: plan.reconnect,
            distinct_requests: plan.requests.len(),
            ws: plan.ws.clone(),
        }
    }

    /// The plan for a report's header; it has no request bytes, so it cannot
    /// be run (`distinct_requests` says how many there were).
    pub fn to_plan(&self) -> LoadPlan {
        LoadPlan {
            addr: self.addr,
            connections: self.connections,
            workers: self.workers,
            stop: self.stop,
            pacing: self.pacing,
            warmup: self.warmup,
            timeout: self.timeout,
            keepalive: self.keepalive,
            pipeline: self.pipeline,
            requests_per_connection: self.requests_per_connection,
            reconnect: self.reconnect,
            requests: Vec::new(),
            ws: self.ws.clone(),
            sources: Vec::new(),
            io: Default::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PartError {
    #[error("not a netbench histogram file (no `#{MARK}` line); write one with `netbench load --histogram-out`")]
    NotAPart,
    #[error("its format is {0}, this netbench reads {PART_FORMAT}; merge with the netbench that wrote it")]
    Format(String),
    #[error("its netbench line is damaged: {0}")]
    Header(#[source] serde_json::Error),
    #[error("its histogram log is damaged at byte {0}")]
    Log(usize),
    #[error("its {0} histogram is missing")]
    Missing(&'static str),
    #[error("its {0} histogram does not decode: {1}")]
    Decode(&'static str, String),
    #[error("it could not be written: {0}")]
    Io(#[from] io::Error),
}

fn unix(ns: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(ns)
}

/// Writes a result (which must carry its histograms) as a part file.
pub fn write_part(
    out: &mut impl Write,
    context: serde_json::Value,
    plan: &PlanSummary,
    result: &LoadResult,
) -> Result<(), PartError> {
    let [from, to] = result.window_unix_ns;
    let header = Header {
        format: PART_FORMAT.to_string(),
        context,
        plan: plan.clone(),
        result: result.clone(),
    };
    let line = serde_json::to_string(&header).map_err(PartError::Header)?;
    let mut serializer = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment("Histograms of one netbench load: latency and connect time in nanoseconds, over the measured window")
        .with_start_time(unix(from))
        .with_base_time(unix(from))
        // The max column is for people: milliseconds.
        .with_max_value_divisor(1e6)
        .begin_log_with(out, &mut serializer)?;
    let len = Duration::from_nanos(to.saturating_sub(from));
    let empty = Histogram::<u64>::new(3).expect("constant precision is valid");
    for (tag, h) in [
        (LATENCY, result.latency_histogram.as_ref()),
        (CONNECT, result.connect_histogram.as_ref()),
    ] {
        log.write_histogram(h.unwrap_or(&empty), Duration::ZERO, len, Tag::new(tag))
            .map_err(|e| PartError::Io(io::Error::other(e.to_string())))?;
    }
    log.write_comment(&format!("{MARK}{line}"))?;
    Ok(())
}

/// Reads a part file back, histograms included.
pub fn read_part(bytes: &[u8]) -> Result<PartFile, PartError> {
    let text = String::from_utf8_lossy(bytes);
    let json = text
        .lines()
        .find_map(|l| {
            l.strip_prefix('#')
                .and_then(|l| l.strip_prefix(MARK))
                .filter(|json| json.starts_with('{'))
        })
        .ok_or(PartError::NotAPart)?;
    let format = serde_json::from_str::<serde_json::Value>(json)
        .map_err(PartError::Header)?
        .get("format")
        .and_then(|f| f.as_str().map(str::to_string))
        .unwrap_or_default();
    if format != PART_FORMAT {
        return Err(PartError::Format(format));
    }
    let header: Header = serde_json::from_str(json).map_err(PartError::Header)?;
    let mut result = header.result;
    for entry in IntervalLogIterator::new(bytes) {
        let entry = entry.map_err(|e| match e {
            hdrhistogram::serialization::interval_log::LogIteratorError::ParseError { offset } => {
                PartError::Log(offset)
            }
        })?;
        let LogEntry::Interval(interval) = entry else {
            continue;
        };
        let (name, slot) = match interval.tag().map(|t| t.as_str()) {
            Some(LATENCY) => (LATENCY, &mut result.latency_histogram),
            Some(CONNECT) => (CONNECT, &mut result.connect_histogram),
            _ => continue,
        };
        let raw = base64::engine::general_purpose::STANDARD
            .decode(interval.encoded_histogram())
            .map_err(|e| PartError::Decode(name, e.to_string()))?;
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut io::Cursor::new(raw))
            .map_err(|e| PartError::Decode(name, format!("{e:?}")))?;
        *slot = Some(h);
    }
    if result.latency_histogram.is_none() {
        return Err(PartError::Missing(LATENCY));
    }
    if result.connect_histogram.is_none() {
        return Err(PartError::Missing(CONNECT));
    }
    Ok(PartFile {
        context: header.context,
        plan: header.plan,
        result,
    })
}
