//! The latency percentile spectrum of a cell: the stored HdrHistograms of its
//! repetitions decoded, added together and read at fixed quantiles from the
//! median out to p99.99.

use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde::Serialize;

/// The quantiles read off, denser where the "nines" change quickly.
const QUANTILES: [f64; 22] = [
    0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99, 0.993, 0.995, 0.997, 0.998,
    0.999, 0.9993, 0.9995, 0.9997, 0.9998, 0.9999,
];

/// One point: the latency below which `quantile` of the answers came.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpectrumPoint {
    pub quantile: f64,
    /// `-log10(1 - quantile)`: 0.3 for p50, 2 for p99, 4 for p99.99; the
    /// x axis of the chart, so each nine gets the same width.
    pub nines: f64,
    pub ns: f64,
}

/// A cell's latency distribution over all its good repetitions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spectrum {
    /// Answers counted.
    pub count: u64,
    /// Only the quantiles the count supports: p99.99 needs at least 10,000
    /// answers, or it would be the maximum under another name.
    pub points: Vec<SpectrumPoint>,
    pub max_ns: f64,
}

/// Decodes one stored histogram (HdrHistogram V2 format, as the runner
/// writes it). None for a blob that does not decode.
pub fn decode(blob: &[u8]) -> Option<Histogram<u64>> {
    Deserializer::new().deserialize(&mut &blob[..]).ok()
}

/// The spectrum of the histograms added together; None when they hold no
/// answers.
pub fn spectrum<'a>(histograms: impl IntoIterator<Item = &'a Histogram<u64>>) -> Option<Spectrum> {
    let mut merged: Option<Histogram<u64>> = None;
    for h in histograms {
        match merged.as_mut() {
            None => merged = Some(h.clone()),
            // Histograms of different ranges are resized by add; a failure
            // would mean a corrupt blob, which is then left out.
            Some(m) => {
                let _ = m.add(h);
            }
        }
    }
    let h = merged.filter(|h| !h.is_empty())?;
    let count = h.len();
    let points = QUANTILES
        .iter()
        .filter(|&&q| count as f64 * (1.0 - q) >= 1.0 - 1e-9)
        .map(|&q| SpectrumPoint {
            quantile: q,
            nines: -(1.0 - q).log10(),
            ns: h.value_at_quantile(q) as f64,
        })
        .collect();
    Some(Spectrum {
        count,
        points,
        max_ns: h.max() as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::{Serializer, V2Serializer};

    fn histogram(values: impl IntoIterator<Item = u64>) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn round_trips_the_stored_format() {
        let h = histogram([1_000, 2_000, 3_000]);
        let mut blob = Vec::new();
        V2Serializer::new().serialize(&h, &mut blob).unwrap();
        let back = decode(&blob).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back.max(), h.max());
        assert!(decode(b"not a histogram").is_none());
    }

    #[test]
    fn merges_repetitions_and_keeps_only_supported_quantiles() {
        // 1,000 answers of 1 ms and 1,000 of 2 ms over two repetitions.
        let a = histogram(std::iter::repeat_n(1_000_000, 1_000));
        let b = histogram(std::iter::repeat_n(2_000_000, 1_000));
        let s = spectrum([&a, &b]).unwrap();
        assert_eq!(s.count, 2_000);
        let p50 = s.points.iter().find(|p| p.quantile == 0.5).unwrap();
        assert!((p50.ns - 1_000_000.0).abs() / 1e6 < 0.001, "{p50:?}");
        let p90 = s.points.iter().find(|p| p.quantile == 0.9).unwrap();
        assert!((p90.ns - 2_000_000.0).abs() / 2e6 < 0.001, "{p90:?}");
        assert!((p90.nines - 1.0).abs() < 1e-9);
        // 2,000 answers support p99.95 (1 beyond) but not p99.97.
        let last = s.points.last().unwrap();
        assert_eq!(last.quantile, 0.9995);
        assert!(spectrum(std::iter::empty()).is_none());
    }
}
