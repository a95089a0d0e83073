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
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::histogram::{LatencyHistogram, DIGITS, MAX_NS};
use crate::plan::{LoadPlan, Pacing, Stop, WsPlan};
use crate::result::LoadResult;

/// The comment line's prefix and format name; bumped when its meaning changes.
const MARK: &str = "netbench ";
pub const PART_FORMAT: &str = "netbench-part/1";
const LATENCY: &str = "latency";
const CONNECT: &str = "connect";
/// Only in the parts of a TLS run.
const HANDSHAKE: &str = "tls_handshake";

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
    /// HTTP/2: `pipeline` is then the streams per connection (false in
    /// parts written before it was kept).
    #[serde(default)]
    pub h2: bool,
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
            h2: plan.h2,
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
            tls: None,
            session: None,
            h2: self.h2,
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
    #[error(
        "its counts do not agree with its histograms ({0}); \
         the file was edited or damaged: write it again with `netbench load --histogram-out`"
    )]
    Inconsistent(String),
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
    let empty = LatencyHistogram::new().into_inner();
    for (tag, h) in [
        (LATENCY, result.latency_histogram.as_ref()),
        (CONNECT, result.connect_histogram.as_ref()),
    ] {
        log.write_histogram(h.unwrap_or(&empty), Duration::ZERO, len, Tag::new(tag))
            .map_err(|e| PartError::Io(io::Error::other(e.to_string())))?;
    }
    if let Some(tls) = &result.tls {
        let h = tls.histogram.as_ref().unwrap_or(&empty);
        log.write_histogram(h, Duration::ZERO, len, Tag::new(HANDSHAKE))
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
            Some(HANDSHAKE) => match result.tls.as_mut() {
                Some(tls) => (HANDSHAKE, &mut tls.histogram),
                None => continue,
            },
            _ => continue,
        };
        let raw = base64::engine::general_purpose::STANDARD
            .decode(interval.encoded_histogram())
            .map_err(|e| PartError::Decode(name, e.to_string()))?;
        let h = decode_histogram(&raw).map_err(|e| PartError::Decode(name, e))?;
        *slot = Some(h);
    }
    if result.latency_histogram.is_none() {
        return Err(PartError::Missing(LATENCY));
    }
    if result.connect_histogram.is_none() {
        return Err(PartError::Missing(CONNECT));
    }
    if header.plan.connections != result.configured_connections {
        return Err(PartError::Inconsistent(format!(
            "a plan of {} connections, a result of {}",
            header.plan.connections, result.configured_connections
        )));
    }
    check_counts(&result, header.plan.pipeline).map_err(PartError::Inconsistent)?;
    Ok(PartFile {
        context: header.context,
        plan: header.plan,
        result,
    })
}

/// HdrHistogram's V2 cookies: a histogram, and one deflated.
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
/// A V2 histogram's header: cookie, payload length, normalizing offset,
/// significant digits, lowest and highest value, integer-to-double ratio.
const V2_HEAD: usize = 40;
/// A count is a zig-zag LEB128 varint of at most 9 bytes.
const MAX_VARINT: usize = 9;

/// Decodes one histogram of a part, inflating it with a cap: its header must
/// name the engine's bounds, and its payload may claim no more bytes than
/// those bounds' counts can need. hdrhistogram itself allocates whatever the
/// header claims (up to 4 GiB) before reading a byte of it (issue 27).
fn decode_histogram(raw: &[u8]) -> Result<Histogram<u64>, String> {
    use std::io::Read;
    let be32 = |b: &[u8]| u32::from_be_bytes(b[..4].try_into().expect("4 bytes"));
    if raw.len() < 8 || be32(raw) != V2_COMPRESSED_COOKIE {
        return Err("not a compressed V2 histogram".into());
    }
    let deflated = &raw[8..];
    let deflated = &deflated[..(be32(&raw[4..]) as usize).min(deflated.len())];
    let mut inflate = flate2::read::ZlibDecoder::new(deflated);
    let mut v2 = vec![0u8; V2_HEAD];
    inflate
        .read_exact(&mut v2)
        .map_err(|e| format!("its header does not inflate: {e}"))?;
    let be64 = |at: usize| u64::from_be_bytes(v2[at..at + 8].try_into().expect("8 bytes"));
    if be32(&v2) != V2_COOKIE {
        return Err("not a V2 histogram inside".into());
    }
    let (digits, low, high) = (be32(&v2[12..]), be64(16), be64(24));
    if (low, high, digits) != (1, MAX_NS, u32::from(DIGITS)) {
        return Err(format!(
            "its bounds are {low}..{high} ns at {digits} digits, not netbench's \
             1..{MAX_NS} at {DIGITS}; were the parts written by different netbench versions?"
        ));
    }
    let claimed = be32(&v2[4..]) as usize;
    let most = counts_len() * MAX_VARINT;
    if claimed > most {
        return Err(format!(
            "it claims {claimed} bytes of counts, more than its bounds can need ({most})"
        ));
    }
    v2.reserve_exact(claimed);
    let got = inflate
        .take(claimed as u64)
        .read_to_end(&mut v2)
        .map_err(|e| format!("its counts do not inflate: {e}"))?;
    if got != claimed {
        return Err(format!(
            "it claims {claimed} bytes of counts and holds {got}"
        ));
    }
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut io::Cursor::new(v2))
        .map_err(|e| e.to_string())
}

/// How many counts a histogram of the engine's bounds holds.
fn counts_len() -> usize {
    static LEN: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LEN.get_or_init(|| LatencyHistogram::new().into_inner().distinct_values())
}

/// A part's counts against its own histograms and each other: what a file
/// edited by hand, or damaged, cannot keep consistent. Every figure the
/// merge adds must be finite, and the good answers are exactly the latency
/// histogram's count.
fn check_counts(r: &LoadResult, pipeline: usize) -> Result<(), String> {
    let latency = r.latency_histogram.as_ref().map_or(0, Histogram::len);
    if r.requests != latency {
        return Err(format!("{} good answers, {latency} latencies", r.requests));
    }
    let connect = r.connect_histogram.as_ref().map_or(0, Histogram::len);
    if r.connects != connect {
        return Err(format!("{} connects, {connect} connect times", r.connects));
    }
    if let Some(tls) = &r.tls {
        let times = tls.histogram.as_ref().map_or(0, Histogram::len);
        if tls.handshake.count != times || tls.resumed > times {
            return Err(format!(
                "{} TLS handshakes ({} resumed), {times} handshake times",
                tls.handshake.count, tls.resumed
            ));
        }
    }
    let [from, to] = r.window_unix_ns;
    if to < from {
        return Err("its window ends before it starts".into());
    }
    // At most one attempt a nanosecond of the window: far above what any
    // client reaches, and below what a sum of parts could overflow.
    let attempts = r
        .errors
        .iter()
        .try_fold(r.requests, |sum, (_, n)| sum.checked_add(n))
        .ok_or("its counts overflow")?;
    let window = (to - from).max(1);
    // [0, 0] is a window not recorded (files from before it was).
    if to != 0 && attempts > window {
        return Err(format!("{attempts} attempts in a window of {window} ns"));
    }
    if r.connections_answered > r.configured_connections as u64 {
        return Err(format!(
            "{} connections answered of {}",
            r.connections_answered, r.configured_connections
        ));
    }
    // Little's law: no more in flight than every connection's pipeline full
    // (twice that, for the edges of the window).
    let most = (r.configured_connections.max(1) as f64) * (pipeline.max(1) as f64) * 2.0;
    if r.achieved_concurrency > most {
        return Err(format!(
            "{} in flight on {} connections",
            r.achieved_concurrency, r.configured_connections
        ));
    }
    let figures = [
        ("duration", r.duration_s),
        ("requests per second", r.rps),
        ("client CPU", r.client_cpu_s),
        ("process CPU", r.process_cpu_s),
        ("achieved concurrency", r.achieved_concurrency),
    ];
    for (what, v) in figures {
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!("its {what} is {v}"));
        }
    }
    if let Some(rate) = r.rate {
        for v in [rate.target_per_s, rate.achieved_per_s, rate.ratio] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("its rate figure is {v}"));
            }
        }
    }
    for w in &r.workers {
        for v in [w.cpu_s, w.wall_s, w.loop_busy] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("a worker's figure is {v}"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use hdrhistogram::serialization::Serializer as _;

    use super::*;
    use crate::result::{ClientMemory, LatencySummary, Verdict};

    /// A small result of `requests` good answers over a one-second window.
    pub(crate) fn result(requests: u64, from: u64) -> LoadResult {
        let mut latency = LatencyHistogram::new();
        let mut connect = LatencyHistogram::new();
        for i in 0..requests {
            latency.record(1_000 + i);
        }
        connect.record(500);
        LoadResult {
            interrupted: false,
            requests,
            errors: Default::default(),
            duration_s: 1.0,
            rps: requests as f64,
            latency: LatencySummary::default(),
            connect: LatencySummary::default(),
            connects: 1,
            connect_timeouts: 0,
            bytes_read: 100 * requests,
            bytes_written: 50 * requests,
            measured_bytes_read: 90 * requests,
            workers: Vec::new(),
            client_cpu_s: 0.1,
            process_cpu_s: 0.2,
            configured_connections: 1,
            achieved_concurrency: 0.5,
            rate: None,
            verdict: Verdict {
                client_bound: false,
                judged: true,
                reasons: vec!["x".into()],
                busiest_cpu: 0.0,
                busiest_loop: 0.0,
                in_flight: None,
            },
            window_unix_ns: [from, from + 1_000_000_000],
            connections_answered: 1,
            memory: ClientMemory::default(),
            io: Default::default(),
            io_fallback: None,
            parts: Vec::new(),
            latency_histogram: Some(latency.into_inner()),
            tls: None,
            connect_histogram: Some(connect.into_inner()),
            unfinished: Default::default(),
        }
    }

    pub(crate) fn plan() -> PlanSummary {
        PlanSummary {
            addr: "127.0.0.1:1".parse().unwrap(),
            connections: 1,
            workers: 1,
            stop: Stop::After(Duration::from_secs(1)),
            pacing: Pacing::Closed,
            warmup: Duration::ZERO,
            timeout: Duration::from_secs(5),
            keepalive: true,
            pipeline: 1,
            requests_per_connection: None,
            reconnect: true,
            distinct_requests: 1,
            ws: None,
            h2: false,
        }
    }

    fn file(r: &LoadResult) -> String {
        let mut out = Vec::new();
        write_part(&mut out, serde_json::json!({}), &plan(), r).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The file with its netbench line's JSON changed by `edit`.
    fn edited(text: &str, edit: impl Fn(&mut serde_json::Value)) -> String {
        text.lines()
            .map(|l| match l.strip_prefix("#netbench ") {
                Some(json) => {
                    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
                    edit(&mut v);
                    format!("#netbench {v}")
                }
                None => l.to_string(),
            })
            .map(|l| l + "\n")
            .collect()
    }

    #[test]
    fn a_part_reads_back() {
        let back = read_part(file(&result(7, 1_000)).as_bytes()).unwrap();
        assert_eq!(back.result.requests, 7);
        assert_eq!(back.result.latency_histogram.unwrap().len(), 7);
    }

    /// Issue 27: a 2 KB part whose histogram claimed a 256 MiB payload made
    /// hdrhistogram allocate it before failing.
    #[test]
    fn issue_27_a_payload_claim_beyond_the_bounds_is_refused_before_allocating() {
        use std::io::Write as _;
        let text = file(&result(3, 1_000));
        // Rebuild the latency interval with a V2 header claiming 256 MiB.
        let mut v2 = Vec::new();
        v2.extend_from_slice(&V2_COOKIE.to_be_bytes());
        v2.extend_from_slice(&(256u32 << 20).to_be_bytes());
        v2.extend_from_slice(&0u32.to_be_bytes());
        v2.extend_from_slice(&u32::from(DIGITS).to_be_bytes());
        v2.extend_from_slice(&1u64.to_be_bytes());
        v2.extend_from_slice(&MAX_NS.to_be_bytes());
        v2.extend_from_slice(&1f64.to_be_bytes());
        v2.extend_from_slice(&[0; 64]);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&v2).unwrap();
        let deflated = z.finish().unwrap();
        let mut raw = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        raw.extend_from_slice(&(deflated.len() as u32).to_be_bytes());
        raw.extend_from_slice(&deflated);
        let encoded = base64::engine::general_purpose::STANDARD.encode(&raw);
        let bomb: String = text
            .lines()
            .map(|l| {
                if l.starts_with("Tag=latency,") {
                    let mut fields: Vec<&str> = l.split(',').collect();
                    *fields.last_mut().unwrap() = &encoded;
                    fields.join(",")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert!(bomb.len() < 4096);
        let err = read_part(bomb.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("more than its bounds can need"), "{err}");
        // Other bounds (a histogram of any size) are refused the same way.
        let err = decode_histogram(&{
            let mut h = Histogram::<u64>::new_with_bounds(1, u64::MAX, 5).unwrap();
            h.record(1).unwrap();
            let mut raw = Vec::new();
            V2DeflateSerializer::new().serialize(&h, &mut raw).unwrap();
            raw
        })
        .unwrap_err();
        assert!(err.contains("not netbench's"), "{err}");
    }

    /// Issue 27: counts a file claims must agree with its histograms and
    /// fit its window.
    #[test]
    fn issue_27_counts_that_disagree_with_the_histograms_are_refused() {
        let text = file(&result(5, 1_000));
        type Edit = Box<dyn Fn(&mut serde_json::Value)>;
        let cases: [(&str, Edit); 6] = [
            (
                "good answers",
                Box::new(|v| v["result"]["requests"] = 1_000_000_000_000u64.into()),
            ),
            (
                "good answers",
                Box::new(|v| v["result"]["requests"] = u64::MAX.into()),
            ),
            (
                "overflow",
                Box::new(|v| {
                    v["result"]["errors"][0] = u64::MAX.into();
                }),
            ),
            (
                "attempts in a window",
                Box::new(|v| {
                    v["result"]["errors"][0] = 1_000_000_000_000u64.into();
                }),
            ),
            (
                "in flight",
                Box::new(|v| v["result"]["achieved_concurrency"] = 1e300.into()),
            ),
            (
                "connections",
                Box::new(|v| v["result"]["configured_connections"] = u64::MAX.into()),
            ),
        ];
        for (says, edit) in cases {
            let err = read_part(edited(&text, edit).as_bytes())
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{says}: {err}");
        }
        // An infinite figure is not JSON at all, so it cannot come in as one.
        let nan = edited(&text, |v| {
            v["result"]["duration_s"] = serde_json::Value::Null
        });
        assert!(read_part(nan.as_bytes()).is_err());
    }
}
