//! The order a round visits its cells in, with resident servers: a fresh
//! random permutation per round, drawn from the run's stored seed and the
//! round's number (so a resumed run keeps every round's order, and a report
//! can say which order ran). Random, so that a slow episode of the host (on
//! this machine whole minutes can run at half speed) lands on whichever
//! servers happen to be measured then, differently each round, and never on
//! one server's cells every time; paired statistics within rounds then
//! cancel it. Pure: no clock, no I/O.

/// The order seed of round `round` of a run whose seed is `seed`.
fn round_seed(seed: u64, round: u32) -> u64 {
    splitmix(seed ^ splitmix(u64::from(round)))
}

/// SplitMix64: a well-mixed 64-bit step (Steele, Lea and Flood, 2014),
/// enough for shuffling and cheap to write down; no crate needed.
fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A stream of random numbers from one seed.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        splitmix(self.0)
    }

    /// Uniform in `0..n` (n > 0), by rejection, so no index is favoured.
    fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }
}

/// Shuffles `items` (Fisher-Yates) into round `round`'s order.
pub fn shuffle<T>(items: &mut [T], seed: u64, round: u32) {
    let mut draws = Draws(round_seed(seed, round));
    for i in (1..items.len()).rev() {
        let j = draws.below(i + 1);
        items.swap(i, j);
    }
}

/// The order of a round's cells. Every round after the first is shuffled
/// whole. The first round warms each resident process, so it visits the
/// servers in a shuffled order, each server's cells together, those whose
/// kind warms until steady first (`warms_first`): a kind measured without
/// its own warm-up (a fixed rate) then meets a warm process.
/// `server_of` names a cell's server (and variant).
pub fn order<T, S: PartialEq + Clone>(
    cells: &mut Vec<T>,
    seed: u64,
    round: u32,
    first_round: bool,
    server_of: impl Fn(&T) -> S,
    warms_first: impl Fn(&T) -> bool,
) {
    if !first_round {
        shuffle(cells, seed, round);
        return;
    }
    let mut servers: Vec<S> = Vec::new();
    for c in cells.iter() {
        let s = server_of(c);
        if !servers.contains(&s) {
            servers.push(s);
        }
    }
    shuffle(&mut servers, seed, round);
    let mut keyed: Vec<((usize, bool, usize), T)> = cells
        .drain(..)
        .enumerate()
        .map(|(i, c)| {
            let s = server_of(&c);
            let at = servers.iter().position(|x| *x == s).unwrap_or(0);
            ((at, !warms_first(&c), i), c)
        })
        .collect();
    keyed.sort_by_key(|(k, _)| *k);
    cells.extend(keyed.into_iter().map(|(_, c)| c));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_s_order_depends_only_on_the_seed_and_the_round() {
        let base: Vec<u32> = (0..40).collect();
        let mut a = base.clone();
        let mut b = base.clone();
        shuffle(&mut a, 7, 3);
        shuffle(&mut b, 7, 3);
        assert_eq!(a, b, "the same seed and round give the same order");
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, base, "a permutation: every cell once");
        assert_ne!(a, base, "shuffled");
        let mut other_round = base.clone();
        shuffle(&mut other_round, 7, 4);
        assert_ne!(a, other_round, "each round has its own order");
        let mut other_seed = base.clone();
        shuffle(&mut other_seed, 8, 3);
        assert_ne!(a, other_seed, "each run has its own order");
    }

    /// Over many rounds every cell takes every place about equally often:
    /// no server is always measured first, or always after the same one.
    #[test]
    fn every_cell_takes_every_place_about_equally_often() {
        const N: usize = 6;
        const ROUNDS: u32 = 6_000;
        let mut at = [[0u32; N]; N];
        for round in 1..=ROUNDS {
            let mut cells: Vec<usize> = (0..N).collect();
            shuffle(&mut cells, 42, round);
            for (place, &c) in cells.iter().enumerate() {
                at[c][place] += 1;
            }
        }
        let expected = f64::from(ROUNDS) / N as f64;
        for row in at {
            for count in row {
                // 5 standard deviations of a binomial(6000, 1/6): ~145.
                assert!(
                    (f64::from(count) - expected).abs() < 150.0,
                    "{count} against {expected}: {at:?}"
                );
            }
        }
    }

    #[test]
    fn the_first_round_keeps_each_server_s_cells_together_warming_kinds_first() {
        // (server, warms until steady, name)
        let mut cells = vec![
            ("a", false, "a-rate"),
            ("b", true, "b-blank"),
            ("a", true, "a-blank"),
            ("b", false, "b-rate"),
            ("c", true, "c-blank"),
            ("a", true, "a-work"),
        ];
        order(&mut cells, 1, 1, true, |c| c.0, |c| c.1);
        let servers: Vec<&str> = cells.iter().map(|c| c.0).collect();
        let mut runs = servers.clone();
        runs.dedup();
        assert_eq!(runs.len(), 3, "each server's cells together: {servers:?}");
        for s in ["a", "b", "c"] {
            let mine: Vec<bool> = cells.iter().filter(|c| c.0 == s).map(|c| c.1).collect();
            let warmed_first = mine.windows(2).all(|w| w[0] >= w[1]);
            assert!(warmed_first, "{s}: {mine:?}");
        }
        // The warming cells keep the suite's order among themselves.
        let a: Vec<&str> = cells.iter().filter(|c| c.0 == "a").map(|c| c.2).collect();
        assert_eq!(a, ["a-blank", "a-work", "a-rate"]);
        // Later rounds mix servers.
        let mut later = cells.clone();
        let mixed = (2..20).any(|round| {
            order(&mut later, 1, round, false, |c| c.0, |c| c.1);
            let mut s: Vec<&str> = later.iter().map(|c| c.0).collect();
            s.dedup();
            s.len() > 3
        });
        assert!(mixed, "later rounds interleave servers");
    }
}
