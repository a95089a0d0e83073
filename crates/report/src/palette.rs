//! The HTML report's colours: one hue family per threading model, and within
//! it a shade per server, so servers built the same way read as a group in
//! every chart. Computed here, not in the browser, so the tables, the key and
//! the charts cannot disagree.

use netbench_records::Model;

use crate::model::{model_rank, Report};

/// Hue (degrees), saturation and lightness (percent) of a model's middle
/// shade. Hues are at least 20° apart; lightness is lowered where a hue is
/// bright (yellows, greens) so thin lines stay readable on white.
fn family(model: Option<Model>) -> (f64, f64, f64) {
    match model {
        Some(Model::ThreadPerConnection) => (0.0, 68.0, 50.0),
        Some(Model::ThreadPool) => (27.0, 85.0, 50.0),
        Some(Model::Processes) => (48.0, 80.0, 42.0),
        Some(Model::GreenThreads) => (88.0, 55.0, 38.0),
        Some(Model::WorkStealing) => (140.0, 50.0, 38.0),
        Some(Model::EventLoopsPerCore) => (180.0, 60.0, 35.0),
        Some(Model::EventLoop) => (215.0, 62.0, 48.0),
        Some(Model::VirtualThreads) => (268.0, 52.0, 55.0),
        Some(Model::Coroutines) => (318.0, 55.0, 50.0),
        None => (0.0, 0.0, 50.0),
    }
}

/// The hue of a model's family; None for an unknown model, which is grey.
pub(crate) fn model_hue(model: Option<Model>) -> Option<f64> {
    model.map(|m| family(Some(m)).0)
}

/// The colour that stands for a model in the key: its middle shade.
pub(crate) fn model_color(model: Option<Model>) -> String {
    let (h, s, l) = family(model);
    hex(h, s, l)
}

/// The model's name as a manifest writes it, or "unknown".
pub(crate) fn model_name(model: Option<Model>) -> &'static str {
    model.map_or("unknown", Model::as_str)
}

/// What a model means (contract/CONTRACT.md, "Manifest").
pub(crate) fn model_meaning(model: Option<Model>) -> &'static str {
    match model {
        Some(Model::ThreadPerConnection) => "an OS thread per connection, blocking I/O",
        Some(Model::ThreadPool) => "a bounded pool of OS threads takes the requests, blocking I/O",
        Some(Model::EventLoop) => "one thread running one event loop",
        Some(Model::EventLoopsPerCore) => {
            "one event loop per core, each connection owned by one loop"
        }
        Some(Model::WorkStealing) => "async tasks on a work-stealing pool of threads",
        Some(Model::GreenThreads) => "runtime-scheduled lightweight threads over a poller",
        Some(Model::VirtualThreads) => {
            "JVM virtual threads: a thread per request on a few carriers"
        }
        Some(Model::Coroutines) => {
            "coroutines suspended on I/O and resumed on a dispatcher's threads"
        }
        Some(Model::Processes) => "several processes, each with its own loop or threads",
        None => "the stored manifest names no model (written before netbench kept one)",
    }
}

/// One server's place in the report's colours.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Swatch {
    pub label: String,
    pub model: Option<Model>,
    pub color: String,
}

/// A colour for every server the report lists (its servers, then any column
/// without a server record), in column order: servers of one model get
/// shades of its hue, darkest first.
pub(crate) fn swatches(r: &Report) -> Vec<Swatch> {
    let mut servers: Vec<(String, Option<Model>)> = r
        .servers
        .iter()
        .map(|s| (s.label.clone(), s.model))
        .collect();
    for c in &r.columns {
        if !servers.iter().any(|(l, _)| l == c) {
            servers.push((c.clone(), None));
        }
    }
    swatches_of(servers)
}

/// [`swatches`] of any set of labels with their models (the site's, over
/// every run): the same rule, so a server's colour on the site is the shade
/// a report of all of them would give it.
pub(crate) fn swatches_of(mut servers: Vec<(String, Option<Model>)>) -> Vec<Swatch> {
    servers.sort_by(|a, b| (model_rank(a.1), &a.0).cmp(&(model_rank(b.1), &b.0)));
    servers
        .iter()
        .map(|(label, model)| {
            let group: Vec<&String> = servers
                .iter()
                .filter(|(_, m)| m == model)
                .map(|(l, _)| l)
                .collect();
            let i = group.iter().position(|l| *l == label).unwrap_or(0);
            let (h, s, l) = family(*model);
            Swatch {
                label: label.clone(),
                model: *model,
                color: hex(h, s, shade(l, i, group.len())),
            }
        })
        .collect()
}

/// The lightness of shade `i` of `n` around a family's middle `base`: up to
/// 12 points apart, the whole range at most 40 points and kept within 22..78.
fn shade(base: f64, i: usize, n: usize) -> f64 {
    if n <= 1 {
        return base;
    }
    let step = (40.0 / (n - 1) as f64).min(12.0);
    let span = step * (n - 1) as f64;
    let low = (base - span / 2.0).clamp(22.0, 78.0 - span);
    low + step * i as f64
}

/// `#rrggbb` of an HSL colour (hue in degrees, the others in percent).
fn hex(h: f64, s: f64, l: f64) -> String {
    let (s, l) = (s / 100.0, l / 100.0);
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let hp = (h.rem_euclid(360.0)) / 60.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    format!("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hue (degrees) and saturation (0..1) of `#rrggbb`.
    fn hue_sat(hex: &str) -> (f64, f64) {
        let v = |i: usize| f64::from(u8::from_str_radix(&hex[i..i + 2], 16).unwrap()) / 255.0;
        let (r, g, b) = (v(1), v(3), v(5));
        let max = r.max(g).max(b);
        let min = r.min(g).min(b);
        let d = max - min;
        let l = (max + min) / 2.0;
        if d == 0.0 {
            return (0.0, 0.0);
        }
        let s = d / (1.0 - (2.0 * l - 1.0).abs());
        let h = if max == r {
            60.0 * ((g - b) / d).rem_euclid(6.0)
        } else if max == g {
            60.0 * ((b - r) / d + 2.0)
        } else {
            60.0 * ((r - g) / d + 4.0)
        };
        (h, s)
    }

    fn apart(a: f64, b: f64) -> f64 {
        let d = (a - b).abs() % 360.0;
        d.min(360.0 - d)
    }

    #[test]
    fn hsl_to_hex() {
        assert_eq!(hex(0.0, 100.0, 50.0), "#ff0000");
        assert_eq!(hex(120.0, 100.0, 50.0), "#00ff00");
        assert_eq!(hex(240.0, 100.0, 25.0), "#000080");
        assert_eq!(hex(0.0, 0.0, 50.0), "#808080");
    }

    #[test]
    fn every_model_has_its_own_hue_and_unknown_is_grey() {
        let hues: Vec<f64> = Model::ALL
            .iter()
            .map(|&m| hue_sat(&model_color(Some(m))).0)
            .collect();
        for (i, a) in hues.iter().enumerate() {
            for b in &hues[i + 1..] {
                assert!(apart(*a, *b) >= 20.0, "{hues:?}");
            }
        }
        assert_eq!(hue_sat(&model_color(None)).1, 0.0);
        assert_eq!(model_hue(None), None);
    }

    #[test]
    fn shades_of_one_model_keep_its_hue_and_differ() {
        for model in Model::ALL {
            let (h, s, l) = family(Some(model));
            for n in [1, 2, 3, 5, 9] {
                let shades: Vec<String> = (0..n).map(|i| hex(h, s, shade(l, i, n))).collect();
                for c in &shades {
                    let (hue, _) = hue_sat(c);
                    assert!(apart(hue, h) <= 6.0, "{model:?} {c} hue {hue}");
                }
                let mut distinct = shades.clone();
                distinct.dedup();
                assert_eq!(distinct.len(), n, "{model:?}: {shades:?}");
            }
        }
        assert_eq!(shade(50.0, 0, 1), 50.0);
        assert_eq!((shade(50.0, 0, 2), shade(50.0, 1, 2)), (44.0, 56.0));
        // Kept off black and white: a dark family's shades move up.
        assert_eq!(shade(30.0, 0, 5), 22.0);
        assert_eq!(shade(30.0, 4, 5), 62.0);
    }
}
