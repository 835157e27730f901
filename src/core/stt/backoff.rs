//! Exponential backoff with full jitter, drawn from a seeded PRNG (the delays of rule L3).
//!
//! The delay before retry number `attempt` (counting from 0) is drawn from the *cap*
//! `min(max_delay_ms, initial_delay_ms · 2^attempt)`, computed with saturating arithmetic so no
//! attempt count overflows:
//! - [`Jitter::Full`]: uniform in `[0, cap]` (AWS "full jitter": clients that failed together do
//!   not come back together);
//! - [`Jitter::None`]: exactly `cap`, for tests and schedules that must be exact.
//!
//! The randomness is a SplitMix64 generator seeded by the caller: the core draws no unseeded
//! randomness, so a seed replays the same delays on every platform.

/// How a delay is drawn from its cap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Jitter {
    /// Uniform in `[0, cap]`.
    #[default]
    Full,
    /// Exactly the cap.
    None,
}

impl Jitter {
    /// The name JS sees.
    pub fn as_str(self) -> &'static str {
        match self {
            Jitter::Full => "full",
            Jitter::None => "none",
        }
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014; the seeder of `xoshiro`): one 64-bit word of state, every
/// seed — zero included — gives a full-period stream. Good enough for jitter, not for secrets.
#[derive(Clone, Debug)]
struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, bound]`, by widening multiplication (Lemire): no modulo, no overflow at
    /// `bound == u64::MAX`, and a bias below 2^-64 · bound, far under anything a timer can show.
    fn up_to(&mut self, bound: u64) -> u64 {
        let span = u128::from(bound) + 1;
        let scaled = (u128::from(self.next_u64()) * span) >> 64;
        // `scaled < span <= 2^64`, so it fits; the fallback is never taken.
        u64::try_from(scaled).unwrap_or(bound)
    }
}

/// An exponential backoff schedule with its own seeded PRNG. See the module documentation.
#[derive(Clone, Debug)]
pub struct Backoff {
    initial_delay_ms: u64,
    max_delay_ms: u64,
    jitter: Jitter,
    /// Delays handed out since the last [`Backoff::reset`].
    attempt: u32,
    rng: SplitMix64,
}

impl Backoff {
    /// A schedule at attempt 0. `initial_delay_ms` above `max_delay_ms` is allowed: the maximum
    /// wins, so every delay stays within `[0, max_delay_ms]`.
    pub fn new(initial_delay_ms: u64, max_delay_ms: u64, jitter: Jitter, seed: u64) -> Self {
        Backoff {
            initial_delay_ms,
            max_delay_ms,
            jitter,
            attempt: 0,
            rng: SplitMix64::new(seed),
        }
    }

    /// The cap of the next delay: `min(max_delay_ms, initial_delay_ms · 2^attempt)`, saturating.
    pub fn cap(&self) -> u64 {
        let growth = 2u64.saturating_pow(self.attempt);
        self.initial_delay_ms
            .saturating_mul(growth)
            .min(self.max_delay_ms)
    }

    /// The next delay in milliseconds, drawn from [`Backoff::cap`] as the jitter says; then
    /// counts one attempt.
    pub fn next_delay(&mut self) -> u64 {
        let cap = self.cap();
        let delay = match self.jitter {
            Jitter::Full => self.rng.up_to(cap),
            Jitter::None => cap,
        };
        self.attempt = self.attempt.saturating_add(1);
        delay
    }

    /// Back to attempt 0: the next delay is drawn from `initial_delay_ms` again. The PRNG stream
    /// goes on, so two resets in a row do not replay the same jitter.
    pub fn reset(&mut self) {
        self.attempt = 0;
    }

    /// Delays handed out since the last reset.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The first cap.
    pub fn initial_delay_ms(&self) -> u64 {
        self.initial_delay_ms
    }

    /// The largest cap.
    pub fn max_delay_ms(&self) -> u64 {
        self.max_delay_ms
    }

    /// How delays are drawn from their cap.
    pub fn jitter(&self) -> Jitter {
        self.jitter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_jitter_doubles_up_to_the_cap() {
        let mut backoff = Backoff::new(500, 30_000, Jitter::None, 7);
        let delays: Vec<u64> = (0..9).map(|_| backoff.next_delay()).collect();
        assert_eq!(
            delays,
            [500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]
        );
        assert_eq!(backoff.attempt(), 9);
        backoff.reset();
        assert_eq!(backoff.attempt(), 0);
        assert_eq!(backoff.next_delay(), 500);
    }

    #[test]
    fn huge_attempt_counts_saturate_instead_of_overflowing() {
        let mut backoff = Backoff::new(u64::MAX / 3, u64::MAX, Jitter::None, 0);
        backoff.attempt = u32::MAX;
        assert_eq!(backoff.next_delay(), u64::MAX);
        assert_eq!(backoff.attempt(), u32::MAX, "the count saturates too");
        let mut full = Backoff::new(1, u64::MAX, Jitter::Full, 0);
        full.attempt = 200;
        assert_eq!(full.cap(), u64::MAX);
        let _ = full.next_delay();
    }

    #[test]
    fn initial_above_max_is_clamped() {
        let mut backoff = Backoff::new(10_000, 3_000, Jitter::None, 0);
        assert_eq!(backoff.next_delay(), 3_000);
    }

    #[test]
    fn full_jitter_stays_within_the_cap_and_replays_for_a_seed() {
        let draw = |seed| {
            let mut backoff = Backoff::new(500, 30_000, Jitter::Full, seed);
            (0..200)
                .map(|_| {
                    let cap = backoff.cap();
                    let delay = backoff.next_delay();
                    assert!(delay <= cap, "{delay} > {cap}");
                    delay
                })
                .collect::<Vec<u64>>()
        };
        assert_eq!(draw(42), draw(42));
        assert_ne!(draw(42), draw(43));
    }

    #[test]
    fn full_jitter_covers_both_ends_of_a_small_range() {
        let mut rng = SplitMix64::new(0);
        let mut seen = [false; 4];
        for _ in 0..1_000 {
            let value = rng.up_to(3);
            assert!(value <= 3);
            seen[value as usize] = true;
        }
        assert_eq!(seen, [true; 4]);
        assert_eq!(rng.up_to(0), 0);
    }

    #[test]
    fn splitmix64_matches_the_reference_stream() {
        // First outputs for seed 1234567 from the reference C implementation.
        let mut rng = SplitMix64::new(1_234_567);
        assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
    }
}
