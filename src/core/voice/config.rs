//! Options of a voice session (V4, P2).

use super::backchannel::Backchannels;
use alloc::string::String;

/// Options of a voice session.
#[derive(Clone, Debug, PartialEq)]
pub struct VoiceConfig {
    /// The fixed text spoken when a turn has no answer (T8).
    pub recovery_text: String,
    /// A partial transcript this long (Unicode scalar values) is a barge-in; a spoken final
    /// shorter than this inside the echo guard is echo. Default 16 (measured: docs/maintainers/
    /// performance.md, "Echo and the barge-in defaults").
    pub min_partial_chars: usize,
    /// Speech starts and partials this soon after the agent starts sounding are ignored: an echo
    /// canceller needs a moment to converge each time. Default 1500 (measured, as above).
    pub echo_guard_ms: u64,
    /// A `synthesize` call slower than this is abandoned and its sentence skipped. Default 8000.
    pub tts_timeout_ms: u64,
    /// Names the session in its turn ids, `<session_id>:turn-<n>`, so that request ids (and the
    /// idempotency keys a backend deduplicates on) differ across sessions and page loads (T2).
    /// `None`: `turn-<n>`, unique within this session only. The shell draws a random one.
    pub session_id: Option<String>,
    /// Voice the page's detector hears this long while the agent thinks or speaks pauses it
    /// (V7). 0 turns pausing by voice off. Default 80: measured in the room, a stop then silences
    /// the agent 210–240 ms (median) after the user's first sound, against 370 ms with 200.
    pub min_speech_ms: u64,
    /// Voice this long (from its start) turns a pause into a cut without the transcriber's
    /// word. Default 800: longer than a backchannel ("uh huh", "okay": 300–600 ms).
    pub confirm_ms: u64,
    /// A pause nothing confirms ends this long after the voice ended: the agent resumes where it
    /// paused. Default 1500.
    pub false_interruption_ms: u64,
    /// Words that never cut the agent, and a final of them alone starts no turn (V6).
    pub backchannels: Backchannels,
}

impl VoiceConfig {
    #[must_use]
    pub fn new(recovery_text: impl Into<String>) -> Self {
        VoiceConfig {
            recovery_text: recovery_text.into(),
            min_partial_chars: 16,
            echo_guard_ms: 1500,
            tts_timeout_ms: 8000,
            session_id: None,
            min_speech_ms: 80,
            confirm_ms: 800,
            false_interruption_ms: 1500,
            backchannels: Backchannels::default(),
        }
    }
}
