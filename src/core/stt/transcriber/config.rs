//! A transcriber's limits and their documented defaults.

use crate::core::stt::protocol::{pcm_bytes_for_ms, Profile, DEFAULT_SAMPLE_RATE};
use crate::core::stt::reconnect::ReconnectConfig;

/// Limits of one transcriber. [`TranscriberConfig::new`] gives the documented defaults.
#[derive(Clone, Debug)]
pub struct TranscriberConfig {
    /// The wire protocol (one of [`crate::core::stt::protocols::ALL`]).
    pub protocol: &'static Profile,
    /// The reconnect rules (L3).
    pub reconnect: ReconnectConfig,
    /// Sample rate of the PCM16 mono audio handed to `send_audio`.
    pub sample_rate: u32,
    /// Most audio kept for a socket, in milliseconds at `sample_rate` (L4).
    pub buffer_ms: u64,
    /// How long a socket may take to open before it counts as a failed connection (1006).
    pub connect_timeout_ms: u64,
    /// How long `stop` waits for the last transcripts (the protocol's end message or the
    /// server's close).
    pub stop_timeout_ms: u64,
    /// How long one `provision()` may take before it is cancelled and counts as failed (L7).
    pub provision_timeout_ms: u64,
    /// Largest server text message read, in UTF-8 bytes; longer ones are malformed (L2).
    pub max_message_bytes: u64,
    /// Least delay before reconnecting after a close the protocol classifies as throttled.
    pub throttled_delay_ms: u64,
    /// Where the session acknowledges audio: a socket that acknowledged nothing this long while
    /// audio waited for it is half-open, closed and reconnected (L4). 0 turns it off.
    pub ack_timeout_ms: u64,
}

impl TranscriberConfig {
    /// Default `buffer_ms`: ten seconds.
    pub const DEFAULT_BUFFER_MS: u64 = 10_000;
    /// Default `connect_timeout_ms`.
    pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 10_000;
    /// Default `stop_timeout_ms`.
    pub const DEFAULT_STOP_TIMEOUT_MS: u64 = 5_000;
    /// Default `provision_timeout_ms`.
    pub const DEFAULT_PROVISION_TIMEOUT_MS: u64 = 10_000;
    /// Default `ack_timeout_ms`.
    pub const DEFAULT_ACK_TIMEOUT_MS: u64 = 10_000;
    /// Default `throttled_delay_ms`.
    pub const DEFAULT_THROTTLED_DELAY_MS: u64 = 10_000;
    /// Default `max_message_bytes`: 1 MiB.
    pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 1 << 20;

    /// The bound of the audio buffer in bytes.
    pub fn buffer_bytes(&self) -> u64 {
        pcm_bytes_for_ms(self.buffer_ms, self.sample_rate)
    }
}

impl TranscriberConfig {
    /// The documented defaults, for `protocol`.
    pub fn new(protocol: &'static Profile) -> Self {
        TranscriberConfig {
            protocol,
            reconnect: ReconnectConfig::default(),
            sample_rate: DEFAULT_SAMPLE_RATE,
            buffer_ms: Self::DEFAULT_BUFFER_MS,
            connect_timeout_ms: Self::DEFAULT_CONNECT_TIMEOUT_MS,
            stop_timeout_ms: Self::DEFAULT_STOP_TIMEOUT_MS,
            provision_timeout_ms: Self::DEFAULT_PROVISION_TIMEOUT_MS,
            max_message_bytes: Self::DEFAULT_MAX_MESSAGE_BYTES,
            throttled_delay_ms: Self::DEFAULT_THROTTLED_DELAY_MS,
            ack_timeout_ms: Self::DEFAULT_ACK_TIMEOUT_MS,
        }
    }
}
