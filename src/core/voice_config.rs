//! Options of a voice session (V4, P2).

/// Options of a voice session.
#[derive(Clone, Debug, PartialEq)]
pub struct VoiceConfig {
    /// The fixed text spoken when a turn has no answer (T8).
    pub recovery_text: String,
    /// A partial transcript this long (Unicode scalar values) is a barge-in. Default 1.
    pub min_partial_chars: usize,
    /// Speech starts this soon after a playback started are ignored (slow echo cancellation).
    pub echo_guard_ms: u64,
    /// A `synthesize` call slower than this is abandoned and its sentence skipped. Default 8000.
    pub tts_timeout_ms: u64,
    /// Names the session in its turn ids, `<session_id>:turn-<n>`, so that request ids (and the
    /// idempotency keys a backend deduplicates on) differ across sessions and page loads (T2).
    /// `None`: `turn-<n>`, unique within this session only. The shell draws a random one.
    pub session_id: Option<String>,
}

impl VoiceConfig {
    #[must_use]
    pub fn new(recovery_text: impl Into<String>) -> Self {
        VoiceConfig {
            recovery_text: recovery_text.into(),
            min_partial_chars: 1,
            echo_guard_ms: 0,
            tts_timeout_ms: 8000,
            session_id: None,
        }
    }
}
