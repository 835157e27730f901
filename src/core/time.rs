//! Time as the core sees it: a monotonic count of milliseconds handed in by the caller.
//!
//! `std::time::Instant` panics on `wasm32-unknown-unknown`, and a state machine that reads a clock
//! cannot be tested in virtual time, so every input of the core carries a [`Millis`] instead.

use core::fmt;
use core::ops::Sub;

/// A point in time in whole milliseconds on one monotonic clock.
///
/// The browser shell feeds `Date.now()`-aligned values derived from `performance.now()`, so the
/// same numbers double as the epoch timestamps that records show; tests feed a counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Millis(pub u64);

impl Millis {
    /// This instant plus `ms`, saturating instead of overflowing.
    #[must_use]
    pub fn after(self, ms: u64) -> Millis {
        Millis(self.0.saturating_add(ms))
    }

    /// Milliseconds from `earlier` to `self`, or 0 when `earlier` is later.
    #[must_use]
    pub fn since(self, earlier: Millis) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl Sub for Millis {
    type Output = u64;
    fn sub(self, rhs: Millis) -> u64 {
        self.since(rhs)
    }
}

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.0)
    }
}
