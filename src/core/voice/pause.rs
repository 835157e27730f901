//! Pause, then cut or resume (V7): the user's voice pauses the agent before anything is cut.
//!
//! While a turn thinks or speaks, voice the page's detector hears for `min_speech_ms` (or the
//! provider's speech start, a hint outside the echo guard) pauses the agent: the player stops
//! the audio clock where it is, the turn goes on. The pause becomes a barge-in when the
//! transcriber brings a final that is not only backchannels, a partial of such words as long as
//! `min_partial_chars`, or voice that lasts `confirm_ms`; it resumes, gapless, when nothing
//! confirms within `false_interruption_ms` of the voice's end, or at once for a final of
//! backchannel words. A shorter partial does not confirm: a recognizer's first guess at "uh huh"
//! or "yeah" is often another word ("uh", "you"), and a word it never makes final (a guess at a
//! leak of the agent's echo) was not said. What the user heard is counted
//! on the player's audio clock, which stands still while paused (P3).

use super::{BargeInCause, VoiceAction, VoiceCore, VoiceEvent, VoiceState};
use crate::core::time::Millis;
use alloc::borrow::ToOwned;

/// What paused the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseCause {
    /// The page's voice detector heard `min_speech_ms` of voice.
    Voice,
    /// The provider reported the start of speech.
    SpeechStart,
}

impl PauseCause {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            PauseCause::Voice => "voice",
            PauseCause::SpeechStart => "speech_start",
        }
    }
}

/// Where the user's voice began: on the session's clock, for the timers, and in the captured
/// audio, for what it lasted (the two part when audio comes faster than real time).
#[derive(Clone, Copy, Debug)]
pub(super) struct VoiceStart {
    pub(super) at: Millis,
    pub(super) audio_ms: u64,
}

impl VoiceStart {
    /// The same voice, counted from `now` on: the audio is taken to have gone on in real time.
    pub(super) fn moved_to(self, now: Millis) -> Self {
        VoiceStart {
            at: now,
            audio_ms: self
                .audio_ms
                .saturating_add(now.0.saturating_sub(self.at.0)),
        }
    }
}

impl VoiceCore {
    /// Whether the agent is paused, waiting for the user's words to confirm or not.
    #[must_use]
    pub fn is_paused(&self) -> bool {
        self.paused_at.is_some()
    }

    /// The voice detector hears the user now.
    pub(super) fn voice_heard(&self) -> bool {
        self.voice_started.is_some()
    }

    /// A turn thinks or speaks: what a pause may hold.
    fn may_pause(&self) -> bool {
        matches!(self.state, VoiceState::Thinking | VoiceState::Speaking)
    }

    /// When the pause logic must act next: the pause after `min_speech_ms` of voice, the cut
    /// after `confirm_ms` of it, or the resume `false_interruption_ms` after it ended.
    pub(super) fn pause_deadline(&self) -> Option<Millis> {
        if !self.may_pause() {
            return None;
        }
        let config = &self.config;
        let voice_started_at = self.voice_started.map(|start| start.at);
        match (self.paused_at, voice_started_at) {
            (None, Some(start)) if config.min_speech_ms > 0 => {
                Some(start.after(config.min_speech_ms))
            }
            (Some(_), Some(start)) => Some(start.after(config.confirm_ms)),
            (Some(paused_at), None) => {
                let quiet_since = self
                    .voice_ended_at
                    .map_or(paused_at, |end| end.max(paused_at));
                Some(quiet_since.after(config.false_interruption_ms))
            }
            _ => None,
        }
    }

    pub(super) fn handle_pause_timeout(&mut self, now: Millis) {
        if self.pause_deadline().map_or(true, |due| now < due) {
            return;
        }
        match (self.is_paused(), self.voice_heard()) {
            (false, true) => self.pause_for(PauseCause::Voice, now),
            (true, true) => self.barge_in_and_listen(BargeInCause::Voice, now),
            (true, false) => self.resume(now),
            (false, false) => {}
        }
    }

    /// A voice that lasted `lasted_ms` ended at `at`: the pause, or the cut, it earned if its
    /// timer has not fired yet.
    pub(super) fn on_voice_ended(&mut self, lasted_ms: u64, at: Millis) {
        if !self.may_pause() {
            return;
        }
        let (min_speech_ms, confirm_ms) = (self.config.min_speech_ms, self.config.confirm_ms);
        if !self.is_paused() && min_speech_ms > 0 && lasted_ms >= min_speech_ms {
            self.pause_for(PauseCause::Voice, at);
        }
        if self.is_paused() && lasted_ms >= confirm_ms {
            self.barge_in_and_listen(BargeInCause::Voice, at);
        }
    }

    /// Pauses the current turn (nothing when none thinks or speaks, or already paused).
    pub(super) fn pause_for(&mut self, cause: PauseCause, now: Millis) {
        if self.is_paused() || !self.may_pause() {
            return;
        }
        let Some(turn_id) = self.current_turn().map(str::to_owned) else {
            return;
        };
        self.paused_at = Some(now);
        // Where this pause fell is known once the player says what played
        // (`on_playback_paused`).
        self.words.paused_on.clear();
        self.push(VoiceAction::PausePlayback {
            turn_id: turn_id.clone(),
        });
        self.push(VoiceAction::Event(VoiceEvent::Paused { turn_id, cause }));
    }

    /// The pause was a false alarm: the agent goes on where it stopped.
    pub(super) fn resume(&mut self, now: Millis) {
        // A pause ends with its turn (`end_turn`, `check_done`): the current turn is the paused one.
        let (Some(paused_at), Some(turn_id)) =
            (self.paused_at, self.current_turn().map(str::to_owned))
        else {
            return;
        };
        self.paused_at = None;
        let paused_ms = now.0.saturating_sub(paused_at.0);
        self.push(VoiceAction::ResumePlayback {
            turn_id: turn_id.clone(),
        });
        self.push(VoiceAction::Event(VoiceEvent::Resumed {
            turn_id,
            paused_ms,
        }));
    }
}
