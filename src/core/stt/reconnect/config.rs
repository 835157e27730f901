//! The limits of a reconnect policy and their documented defaults.

use crate::core::stt::backoff::Jitter;

/// Limits of one policy. [`ReconnectConfig::default`] gives the values of DESIGN.md.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReconnectConfig {
    /// How long a socket must stay open before its close resets the backoff (R1), inclusive.
    pub stable_open_ms: u64,
    /// Length of the sliding window that limits re-provisions (R3).
    pub reprovision_window_ms: u64,
    /// Re-provisions allowed in any one window (R3); 0 means a dead session stops at once.
    pub max_reprovisions_per_window: u32,
    /// Cap of the first backoff delay.
    pub initial_delay_ms: u64,
    /// Largest backoff delay: no decision waits longer.
    pub max_delay_ms: u64,
    /// How delays are drawn from their cap.
    pub jitter: Jitter,
    /// Seed of the jitter PRNG. The shell seeds it from `crypto.getRandomValues`; tests fix it.
    pub random_seed: u64,
    /// Consecutive failed connects (closed before open) to one URL that make it dead (R5).
    /// 0 behaves as 1.
    pub max_failed_connects: u32,
    /// Consecutive `provision()` calls that may fail with a retryable failure (no HTTP status,
    /// 408, 429, 5xx) before the policy gives up (L7). 0 behaves as 1.
    pub max_provision_attempts: u32,
}

impl ReconnectConfig {
    /// Default `stable_open_ms`.
    pub const DEFAULT_STABLE_OPEN_MS: u64 = 5_000;
    /// Default `reprovision_window_ms`: five minutes.
    pub const DEFAULT_REPROVISION_WINDOW_MS: u64 = 300_000;
    /// Default `max_reprovisions_per_window`.
    pub const DEFAULT_MAX_REPROVISIONS_PER_WINDOW: u32 = 2;
    /// Default `initial_delay_ms`.
    pub const DEFAULT_INITIAL_DELAY_MS: u64 = 500;
    /// Default `max_delay_ms`.
    pub const DEFAULT_MAX_DELAY_MS: u64 = 30_000;
    /// Default `max_failed_connects`.
    pub const DEFAULT_MAX_FAILED_CONNECTS: u32 = 3;
    /// Default `max_provision_attempts`.
    pub const DEFAULT_MAX_PROVISION_ATTEMPTS: u32 = 5;
}

impl Default for ReconnectConfig {
    fn default() -> Self {
        ReconnectConfig {
            stable_open_ms: Self::DEFAULT_STABLE_OPEN_MS,
            reprovision_window_ms: Self::DEFAULT_REPROVISION_WINDOW_MS,
            max_reprovisions_per_window: Self::DEFAULT_MAX_REPROVISIONS_PER_WINDOW,
            initial_delay_ms: Self::DEFAULT_INITIAL_DELAY_MS,
            max_delay_ms: Self::DEFAULT_MAX_DELAY_MS,
            jitter: Jitter::Full,
            random_seed: 0,
            max_failed_connects: Self::DEFAULT_MAX_FAILED_CONNECTS,
            max_provision_attempts: Self::DEFAULT_MAX_PROVISION_ATTEMPTS,
        }
    }
}
