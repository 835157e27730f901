//! What the voice session's core reports: its state, its non-terminal errors, and the actions
//! the shell performs in order.

use crate::core::voice::latency::TurnLatency;
use alloc::boxed::Box;
use alloc::string::String;
use core::fmt;

/// `idle | listening | thinking | speaking | stopped | failed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoiceState {
    /// Not started.
    Idle,
    /// Waiting for the user.
    Listening,
    /// A turn runs and nothing of its answer plays yet.
    Thinking,
    /// The answer (or the recovery text) plays.
    Speaking,
    /// `stop()` was called; terminal.
    Stopped,
    /// The transcriber failed for good; terminal.
    Failed,
}

impl VoiceState {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            VoiceState::Idle => "idle",
            VoiceState::Listening => "listening",
            VoiceState::Thinking => "thinking",
            VoiceState::Speaking => "speaking",
            VoiceState::Stopped => "stopped",
            VoiceState::Failed => "failed",
        }
    }

    #[must_use]
    pub fn is_terminal(self) -> bool {
        matches!(self, VoiceState::Stopped | VoiceState::Failed)
    }
}

/// Non-terminal problems of the speech path.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VoiceError {
    /// `synthesize` rejected or returned no audio: the sentence was skipped.
    TtsFailed { turn_id: String },
    /// `synthesize` did not settle within `tts_timeout_ms`: the sentence was skipped.
    TtsTimeout { turn_id: String },
}

impl VoiceError {
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            VoiceError::TtsFailed { .. } => "tts_failed",
            VoiceError::TtsTimeout { .. } => "tts_timeout",
        }
    }

    #[must_use]
    pub fn turn_id(&self) -> &str {
        match self {
            VoiceError::TtsFailed { turn_id } | VoiceError::TtsTimeout { turn_id } => turn_id,
        }
    }
}

impl VoiceError {
    /// The error's text, as `onError` gets it.
    pub fn message(&self) -> &'static str {
        match self {
            VoiceError::TtsFailed { .. } => "synthesis failed; the sentence was skipped",
            VoiceError::TtsTimeout { .. } => "synthesis timed out; the sentence was skipped",
        }
    }
}

impl fmt::Display for VoiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// What started a barge-in (V2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BargeInCause {
    Partial,
    Final,
    Button,
    /// Voice heard for `confirm_ms` while paused (V7).
    Voice,
    /// Not the user: the audio output was closed under the turn (its context), and the answer
    /// cannot go on from there; what played of it is what was heard.
    OutputClosed,
}

impl BargeInCause {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            BargeInCause::Partial => "partial",
            BargeInCause::Final => "final",
            BargeInCause::Button => "button",
            BargeInCause::Voice => "voice",
            BargeInCause::OutputClosed => "output_closed",
        }
    }
}

/// The core's observable steps. `index` is the sentence's place in its turn (0-based); the
/// recovery text comes after the answer's sentences with `recovery: true`. Only `SentenceQueued`
/// holds text, for the app's `onSpeech`: the shell leaves it out of `onEvent`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VoiceEvent {
    /// An accepted sentence (or the recovery text) joined the turn's speech queue.
    SentenceQueued {
        turn_id: String,
        index: usize,
        recovery: bool,
        text: String,
    },
    /// `synthesize` was called for it.
    TtsStarted {
        turn_id: String,
        index: usize,
        recovery: bool,
    },
    /// `synthesize` gave audio for it.
    TtsFinished { turn_id: String, index: usize },
    /// Its first audio was scheduled on the audio clock (for a stream, at its first bytes): it
    /// starts sounding `starts_in_us` microseconds later.
    SentenceAudio {
        turn_id: String,
        index: usize,
        starts_in_us: u64,
    },
    /// `synthesize` failed or timed out: the sentence is skipped (`code` as the error's).
    TtsFailed {
        turn_id: String,
        index: usize,
        code: &'static str,
    },
    /// The user's speech, a final or the app cut the turn.
    BargeIn {
        turn_id: String,
        cause: BargeInCause,
    },
    /// Where the turn's time went; the session adds the ladder's marks.
    TurnLatency(Box<TurnLatency>),
    /// The user said only backchannel words while the agent spoke: no cut, no turn (V6).
    Backchannel { turn_id: String },
    /// The page's voice detector heard the user start or stop, `audio_ms` into the capture.
    Voice { speaking: bool, audio_ms: u64 },
    /// The agent's echo in the microphone, measured once (V8): its loudest level (dBFS), the
    /// return loss (dB) where the player's level is known, and whether the detector's threshold
    /// rises above it while the agent sounds.
    Echo {
        echo_db: i32,
        return_loss_db: Option<i32>,
        raised: bool,
    },
    /// The user's voice paused the agent (V7): silent, its place kept.
    Paused {
        turn_id: String,
        cause: crate::core::voice::PauseCause,
    },
    /// Nothing confirmed the pause: the agent goes on where it paused.
    Resumed { turn_id: String, paused_ms: u64 },
}

/// What the shell must do, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum VoiceAction {
    StateChanged(VoiceState),
    Caption {
        text: String,
        is_final: bool,
    },
    /// `controller.run(turn_id, input)`.
    StartTurn {
        turn_id: String,
        input: String,
    },
    /// `controller.interrupt(turn_id)` (false for a turn already accepted: harmless).
    InterruptTurn {
        turn_id: String,
    },
    /// Call `synthesize(text, { turnId, signal })`; report with `on_synthesized`. `recovery`:
    /// keep the decoded audio, it is asked for once per session.
    Synthesize {
        job: u64,
        turn_id: String,
        text: String,
        recovery: bool,
    },
    /// Abort the signal of a synthesis still in flight and forget its result.
    AbortSynthesis {
        job: u64,
    },
    /// Enqueue the job's audio to the player (the cached recovery audio when `recovery`).
    Play {
        job: u64,
        turn_id: String,
        recovery: bool,
    },
    /// Pause the player where it is (its audio clock stands still); the turn goes on (V7).
    PausePlayback {
        turn_id: String,
    },
    /// Resume the paused player, gapless.
    ResumePlayback {
        turn_id: String,
    },
    /// Stop the player and report what played with `on_playback_stopped`.
    StopPlayback {
        turn_id: String,
    },
    /// `controller.setHeardText(turn_id, text)`.
    SetHeard {
        turn_id: String,
        text: String,
    },
    Error(VoiceError),
    /// Something the app may log or draw (`onEvent`): ids and timings only, never text.
    Event(VoiceEvent),
    /// Stop the transcriber (R4) and release the microphone.
    Detach,
}
