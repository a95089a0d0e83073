//! The bootstrap's random numbers: SplitMix64 (Steele, Lea and Flood,
//! OOPSLA 2014; the generator that seeds xoshiro), written here so the
//! statistics need no crate and the same seed gives the same intervals on
//! every platform and every version of a dependency.

/// A small, fast generator of 64-bit values with 64 bits of state. Not for
/// secrets; for resampling it is ample (it passes BigCrush).
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index in `0..n` (Lemire's multiply-shift: its bias is
    /// about n / 2⁶⁴, nothing at the sizes resampled here). `n` > 0.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// A uniform value in [0, 1) with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal value (Box–Muller), for synthetic data in tests
    /// and simulations.
    pub fn normal(&mut self) -> f64 {
        let u = 1.0 - self.unit(); // (0, 1]: ln is finite
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_values_match_the_reference_implementation() {
        // splitmix64.c by Sebastiano Vigna, seeded with 1234567.
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
        assert_eq!(r.next_u64(), 9817491932198370423);
    }

    #[test]
    fn indices_are_in_range_and_roughly_uniform() {
        let mut r = SplitMix64::new(7);
        let mut counts = [0usize; 5];
        for _ in 0..50_000 {
            counts[r.below(5)] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
        let mean = (0..20_000).map(|_| r.normal()).sum::<f64>() / 20_000.0;
        assert!(mean.abs() < 0.03, "{mean}");
    }
}
