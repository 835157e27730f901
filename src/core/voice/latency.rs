//! Where a turn's time went: one record per turn, from the end of the user's speech to the
//! agent's first sound, reported once (the `turn_latency` event).
//!
//! The voice core marks what it sees (speech end, final, first sentence, `synthesize` called,
//! first audio back, first sound on the audio clock); the session adds the ladder's marks (route
//! called, first token, the preemptive outcome) from the turn's record when it goes out. Every
//! mark is on the session's clock; the first sound is the audio clock's start of the first
//! buffer, carried over to that clock when it was scheduled (P3), in microseconds.

use crate::core::time::Millis;
use crate::core::turn::record::{AttemptResult, TurnRecord};
use alloc::borrow::ToOwned;
use alloc::string::String;

/// What became of a turn's preemptive attempt (T17).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preemption {
    /// None was started.
    #[default]
    NotTried,
    /// The final kept one: it is the turn's answer or first rung.
    Kept,
    /// Every one was discarded.
    Discarded,
}

impl Preemption {
    /// The name JS sees.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Preemption::NotTried => "not_tried",
            Preemption::Kept => "kept",
            Preemption::Discarded => "discarded",
        }
    }

    /// What the record says of its preemptive attempts.
    #[must_use]
    pub fn of(record: &TurnRecord) -> Self {
        let mut preemptive = record.attempts.iter().filter(|a| a.preemptive).peekable();
        if preemptive.peek().is_none() {
            return Preemption::NotTried;
        }
        if preemptive.any(|attempt| attempt.result != AttemptResult::Discarded) {
            Preemption::Kept
        } else {
            Preemption::Discarded
        }
    }
}

/// One turn's marks. `None`: that step never happened (a recovery has no route answer, a cut
/// turn may have no sound).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TurnLatency {
    pub turn_id: String,
    /// The user's last words: when the transcript last changed before the final.
    pub speech_end_at: Option<Millis>,
    /// The final transcript arrived.
    pub final_at: Option<Millis>,
    /// The answering attempt's route was called (before the final for a kept preemptive one).
    pub route_called_at: Option<Millis>,
    /// Its first text arrived.
    pub first_token_at: Option<Millis>,
    /// The first sentence (or the recovery text) reached the voice core.
    pub first_sentence_at: Option<Millis>,
    /// `synthesize` was called for it.
    pub synthesize_at: Option<Millis>,
    /// Its audio reached the page (resolved, or a stream's first chunk).
    pub first_audio_at: Option<Millis>,
    /// Its first sample sounds, on the audio clock, in microseconds of the session's clock.
    pub first_sound_at_us: Option<u64>,
    pub preemption: Preemption,
}

impl TurnLatency {
    pub(crate) fn new(turn_id: &str, speech_end_at: Option<Millis>, final_at: Millis) -> Self {
        TurnLatency {
            turn_id: turn_id.to_owned(),
            speech_end_at: speech_end_at.or(Some(final_at)),
            final_at: Some(final_at),
            ..TurnLatency::default()
        }
    }

    /// From the end of the user's speech to the agent's first sound, in microseconds.
    #[must_use]
    pub fn voice_to_voice_us(&self) -> Option<u64> {
        let end_us = self.speech_end_at?.0.saturating_mul(1000);
        Some(self.first_sound_at_us?.saturating_sub(end_us))
    }

    /// The ladder's marks, from the turn's record: its answering attempt (accepted, else the
    /// last one) and what became of its preemptive attempts.
    pub fn add_ladder_marks(&mut self, record: &TurnRecord) {
        let answering = record
            .attempts
            .iter()
            .find(|a| Some(&a.request_id) == record.accepted_request_id.as_ref())
            .or_else(|| {
                record
                    .attempts
                    .iter()
                    .rev()
                    .find(|a| a.result != AttemptResult::Discarded)
            });
        if let Some(attempt) = answering {
            self.route_called_at = Some(attempt.started_at);
            self.first_token_at = attempt.first_text_at;
        }
        self.preemption = Preemption::of(record);
    }
}
