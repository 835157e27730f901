//! The voice session's state machine (V1–V4, P2): which turn is current, what reaches TTS and
//! when, when the user's speech is a barge-in, and what the user heard of a cut answer.
//!
//! Same shape as the turn ladder: inputs carry `now`, outputs are pulled with
//! [`VoiceCore::poll_action`], the one timer (a TTS timeout) is [`VoiceCore::poll_timeout`] and
//! [`VoiceCore::handle_timeout`]. The shell owns the transcriber, the controller, the TTS calls and
//! the player, and reports back what they did.
//!
//! - Finals start turns with fresh ids (`<session_id>:turn-<n>`); partials feed captions only (T1).
//! - TTS gets only accepted sentences and the fixed recovery text, in order, with a look-ahead of
//!   one sentence: the next is requested while the current one plays (P2).
//! - A failed or timed-out synthesis skips its sentence with a non-terminal error; a turn whose
//!   every sentence failed is spoken as the recovery text, whose audio is synthesized once.
//! - Barge-in (V2, V4): `speech_start` or a partial of at least `min_partial_chars`, outside the
//!   echo guard, while thinking or speaking interrupts the turn, aborts its TTS, stops the player
//!   and sets the turn's history to what was heard (P3: by the audio clock only).
//! - Stale work (V5): ending a turn drops what was queued for it, so a re-entrant stop or
//!   interrupt from an app callback leaves no turn start, `synthesize` or playback behind.

use crate::core::heard::{heard_text, SpokenSentence};
use crate::core::playback::ChunkHeard;
use crate::core::time::Millis;
use std::collections::VecDeque;

pub use crate::core::voice_config::VoiceConfig;
pub use crate::core::voice_output::{
    BargeInCause, VoiceAction, VoiceError, VoiceEvent, VoiceState,
};

use crate::core::voice_turn::Sentence;
pub use crate::core::voice_turn::SpeakingTurn;

/// The recovery text's audio: synthesized once, then replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RecoveryAudio {
    Missing,
    Requested(u64),
    Cached,
}

/// What became of one answer sentence by the time its turn was cut (P3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// Its audio played to the end (the chunk ended).
    Played,
    /// Synthesis or decoding failed: it was never spoken and is left out.
    Skipped,
    /// Its audio went to the player: the audio clock says how much played.
    Cut(u64),
    /// Its audio was still streaming in: how much played is measured, its total length is
    /// estimated (see [`VoiceCore::estimated_ms`]).
    CutStream(u64),
    /// Not yet synthesized: nothing of it played.
    Unplayed,
}

impl Fate {
    fn of(sentence: &Sentence) -> Self {
        match (sentence.job, sentence.enqueued, sentence.finished) {
            (Some(_), true, true) => Fate::Played,
            (Some(job), true, false) if sentence.streaming => Fate::CutStream(job),
            (Some(job), true, false) => Fate::Cut(job),
            (_, false, true) => Fate::Skipped,
            _ => Fate::Unplayed,
        }
    }
}

/// The voice session's decisions. See the module doc.
#[derive(Debug)]
pub struct VoiceCore {
    config: VoiceConfig,
    state: VoiceState,
    turn: Option<SpeakingTurn>,
    next_turn: u64,
    next_job: u64,
    recovery_audio: RecoveryAudio,
    /// When the current playback started, for the echo guard.
    playback_started_at: Option<Millis>,
    /// Sentences of turns cut by a barge-in, until the player says what played of them.
    cut_turns: Vec<(String, Vec<(Fate, String)>)>,
    /// Audio of sentences played in full and their characters: the session's measured speech
    /// rate, for the length of a stream cut before it all arrived (P3).
    measured_ms: f64,
    measured_chars: f64,
    actions: VecDeque<VoiceAction>,
}

/// Milliseconds of speech per character assumed before the session measured any: slower than
/// the TTS voices measured (espeak-ng 175 wpm ≈ 65 ms, OpenAI's voices ≈ 60–70 ms), so an
/// unmeasured estimate errs long and counts fewer words heard, never more (P3).
pub const DEFAULT_MS_PER_CHAR: f64 = 90.0;

impl VoiceCore {
    #[must_use]
    pub fn new(config: VoiceConfig) -> Self {
        VoiceCore {
            config,
            state: VoiceState::Idle,
            turn: None,
            next_turn: 1,
            next_job: 1,
            recovery_audio: RecoveryAudio::Missing,
            playback_started_at: None,
            cut_turns: Vec::new(),
            measured_ms: 0.0,
            measured_chars: 0.0,
            actions: VecDeque::new(),
        }
    }

    #[must_use]
    pub fn state(&self) -> VoiceState {
        self.state
    }

    /// How long a `synthesize` (or a stream between two of its reads) may bring nothing.
    #[must_use]
    pub fn tts_timeout_ms(&self) -> u64 {
        self.config.tts_timeout_ms
    }

    /// The id of the turn being thought about or spoken, if any.
    #[must_use]
    pub fn current_turn(&self) -> Option<&str> {
        self.turn.as_ref().map(|turn| turn.turn_id.as_str())
    }

    /// The session listens from now on.
    pub fn start(&mut self) {
        if self.state == VoiceState::Idle {
            self.set_state(VoiceState::Listening);
        }
    }

    /// A final transcript from the transcriber: as [`VoiceCore::on_final`], except that a final
    /// shorter than `min_partial_chars` inside the echo guard is the agent's own echo (V4): a
    /// caption only, no barge-in and no turn. (Measured: a converging echo canceller lets the
    /// agent's first syllables through as a one- or two-word final within the first second.)
    pub fn on_spoken_final(&mut self, text: &str, now: Millis) {
        let short = text.trim().chars().count() < self.config.min_partial_chars;
        if short && self.in_echo_guard(now) && !self.state.is_terminal() {
            self.push(VoiceAction::Caption {
                text: text.to_owned(),
                is_final: true,
            });
            return;
        }
        self.on_final(text, now);
    }

    /// A final transcript, or typed text: a barge-in if a turn is current, then a new turn.
    pub fn on_final(&mut self, text: &str, now: Millis) {
        if self.state.is_terminal() || text.trim().is_empty() {
            return;
        }
        self.push(VoiceAction::Caption {
            text: text.to_owned(),
            is_final: true,
        });
        self.barge_in(BargeInCause::Final, now);
        let turn_id = match &self.config.session_id {
            Some(session) => format!("{session}:turn-{}", self.next_turn),
            None => format!("turn-{}", self.next_turn),
        };
        self.next_turn = self.next_turn.wrapping_add(1);
        self.turn = Some(SpeakingTurn::new(&turn_id));
        self.push(VoiceAction::StartTurn {
            turn_id,
            input: text.to_owned(),
        });
        self.set_state(VoiceState::Thinking);
    }

    /// A partial transcript: a caption, and a barge-in when long enough and outside the echo
    /// guard (V4).
    pub fn on_partial(&mut self, text: &str, now: Millis) {
        if self.state.is_terminal() {
            return;
        }
        self.push(VoiceAction::Caption {
            text: text.to_owned(),
            is_final: false,
        });
        let long_enough = text.trim().chars().count() >= self.config.min_partial_chars.max(1);
        if long_enough && !self.in_echo_guard(now) {
            self.barge_in_and_listen(BargeInCause::Partial, now);
        }
    }

    /// The user started speaking: a barge-in unless within the echo guard of a playback (V4).
    pub fn on_speech_start(&mut self, now: Millis) {
        if !self.in_echo_guard(now) {
            self.barge_in_and_listen(BargeInCause::SpeechStart, now);
        }
    }

    /// V4: within `echo_guard_ms` of each playback start (the agent starts sounding after
    /// silence), what the microphone hears while the agent speaks is taken for its own echo.
    fn in_echo_guard(&self, now: Millis) -> bool {
        self.state == VoiceState::Speaking
            && self
                .playback_started_at
                .is_some_and(|at| now < at.after(self.config.echo_guard_ms))
    }

    /// `interrupt()` from the app (a button): a barge-in.
    pub fn interrupt(&mut self, now: Millis) {
        self.barge_in_and_listen(BargeInCause::Button, now);
    }

    /// A complete accepted sentence of `turn_id` (the controller's `onSentence`).
    pub fn on_sentence(&mut self, turn_id: &str, text: &str, now: Millis) {
        let Some(turn) = self.current_mut(turn_id) else {
            return;
        };
        let index = turn.sentences.len();
        turn.sentences.push(Sentence::new(text));
        self.push(VoiceAction::Event(VoiceEvent::SentenceQueued {
            turn_id: turn_id.to_owned(),
            index,
            recovery: false,
            text: text.to_owned(),
        }));
        self.feed_tts(now);
    }

    /// The turn's answer is complete (`onAcceptedText`): no more sentences come.
    pub fn on_accepted(&mut self, turn_id: &str, now: Millis) {
        if let Some(turn) = self.current_mut(turn_id) {
            turn.text_complete = true;
        }
        self.feed_tts(now);
        self.check_done();
    }

    /// The turn got no answer (`onRecovery`): the recovery text is spoken.
    pub fn on_recovery(&mut self, turn_id: &str, now: Millis) {
        if let Some(turn) = self.current_mut(turn_id) {
            turn.text_complete = true;
            turn.wants_recovery = true;
        }
        self.feed_tts(now);
    }

    /// The turn settled (its `run` promise resolved): nothing more comes from the controller.
    pub fn on_turn_settled(&mut self, turn_id: &str, now: Millis) {
        if let Some(turn) = self.current_mut(turn_id) {
            turn.text_complete = true;
        }
        self.feed_tts(now);
        self.check_done();
    }

    /// A synthesis finished: `ok` when it gave audio. Unknown (aborted) jobs are ignored: their
    /// audio never plays.
    pub fn on_synthesized(&mut self, job: u64, ok: bool, now: Millis) {
        if self.recovery_audio == RecoveryAudio::Requested(job) {
            self.recovery_audio = if ok {
                RecoveryAudio::Cached
            } else {
                RecoveryAudio::Missing
            };
        }
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        let Some(index) = turn.in_flight_index(job) else {
            return;
        };
        turn.in_flight = None;
        self.finish_synthesis(index, ok, now);
    }

    /// The job's audio could not be played (undecodable, or its turn was stopped meanwhile): the
    /// sentence counts as finished.
    pub fn on_play_failed(&mut self, job: u64, now: Millis) {
        if let Some(turn) = self.turn.as_mut() {
            if let Some(sentence) = turn.sentences.iter_mut().find(|s| s.job == Some(job)) {
                sentence.enqueued = false;
                sentence.finished = true;
            }
        }
        self.feed_tts(now);
        self.check_done();
    }

    /// The player started sounding `turn_id`: its first audio, or audio again after the line
    /// ran dry (a slow synthesis or decode). Either restarts the echo guard (V4).
    pub fn on_playback_started(&mut self, turn_id: &str, now: Millis) {
        if self.current_turn() == Some(turn_id) && !self.state.is_terminal() {
            self.playback_started_at = Some(now);
            self.set_state(VoiceState::Speaking);
        }
    }

    /// One chunk (a sentence's audio) finished playing.
    pub fn on_chunk_ended(&mut self, job: u64, now: Millis) {
        if let Some(turn) = self.turn.as_mut() {
            if let Some(sentence) = turn.sentences.iter_mut().find(|s| s.job == Some(job)) {
                sentence.finished = true;
            }
        }
        self.feed_tts(now);
        self.check_done();
    }

    /// What played of a stopped turn, per job, from the audio clock: the heard text goes to the
    /// history before anything queued after the stop (the next turn must see it).
    /// The sentence's audio is a stream (its `synthesize` resolved with one): its total length
    /// is known only once the stream closes.
    pub fn on_stream_opened(&mut self, job: u64) {
        if let Some(sentence) = self.sentence_mut(job) {
            sentence.streaming = true;
        }
    }

    /// The sentence's stream closed: every byte of its audio arrived.
    pub fn on_stream_closed(&mut self, job: u64) {
        if let Some(sentence) = self.sentence_mut(job) {
            sentence.streaming = false;
        }
    }

    /// The sentence's stream failed or stalled for `tts_timeout_ms` (`stalled`): it is skipped
    /// (whatever of it was already scheduled plays out), and the turn goes on.
    pub fn on_stream_failed(&mut self, job: u64, stalled: bool, now: Millis) {
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        let Some(index) = turn
            .sentences
            .iter()
            .position(|s| s.job == Some(job) && !s.finished)
        else {
            return;
        };
        if let Some(sentence) = turn.sentences.get_mut(index) {
            sentence.enqueued = false;
            sentence.streaming = false;
            if !sentence.recovery {
                turn.succeeded = turn.succeeded.saturating_sub(1);
            }
        }
        self.skip(index, stalled, now);
    }

    /// The first audio of the sentence of `job` was scheduled to start `lead_ms` from now on the
    /// audio clock (an event for timelines: first sound per sentence).
    pub fn on_sentence_audio(&mut self, job: u64, lead_ms: f64) {
        let Some(turn) = self.turn.as_ref() else {
            return;
        };
        let Some(index) = turn.sentences.iter().position(|s| s.job == Some(job)) else {
            return;
        };
        let event = VoiceEvent::SentenceAudio {
            turn_id: turn.turn_id.clone(),
            index,
            // `as` saturates: a negative or NaN lead is 0.
            starts_in_us: (lead_ms * 1000.0) as u64,
        };
        self.push(VoiceAction::Event(event));
    }

    /// A sentence's audio played in full and lasted `duration_ms`: one more measurement of the
    /// session's speech rate.
    pub fn on_audio_measured(&mut self, job: u64, duration_ms: f64) {
        let chars = self
            .turn
            .as_ref()
            .and_then(|turn| turn.sentences.iter().find(|s| s.job == Some(job)))
            .map(|s| s.text.trim().chars().count());
        if let Some(chars) = chars.filter(|chars| *chars > 0) {
            if duration_ms.is_finite() && duration_ms > 0.0 {
                self.measured_ms += duration_ms;
                self.measured_chars += chars as f64;
            }
        }
    }

    /// The estimated length of `text` spoken: the session's measured milliseconds per
    /// character, or [`DEFAULT_MS_PER_CHAR`] before any sentence played in full.
    #[must_use]
    pub fn estimated_ms(&self, text: &str) -> f64 {
        let per_char = if self.measured_chars > 0.0 {
            self.measured_ms / self.measured_chars
        } else {
            DEFAULT_MS_PER_CHAR
        };
        per_char * text.trim().chars().count() as f64
    }

    fn sentence_mut(&mut self, job: u64) -> Option<&mut Sentence> {
        self.turn
            .as_mut()?
            .sentences
            .iter_mut()
            .find(|s| s.job == Some(job))
    }

    pub fn on_playback_stopped(&mut self, turn_id: &str, chunks: &[(u64, ChunkHeard)]) {
        let Some(index) = self.cut_turns.iter().position(|(cut, _)| cut == turn_id) else {
            return;
        };
        let (_, texts) = self.cut_turns.swap_remove(index);
        let estimates: Vec<f64> = texts
            .iter()
            .map(|(_, text)| self.estimated_ms(text))
            .collect();
        // P3: only the audio clock says what played. A sentence whose chunk ended played in
        // full; a skipped one was never spoken; any other without a measured chunk (still
        // synthesizing, decoding, waiting for a gesture, dropped) played nothing.
        let spoken: Vec<SpokenSentence<'_>> = texts
            .iter()
            .zip(estimates)
            .filter(|((fate, _), _)| *fate != Fate::Skipped)
            .map(|((fate, text), estimate)| {
                let measured = match fate {
                    Fate::Played => Some((1.0, 1.0)),
                    Fate::Cut(job) => chunks
                        .iter()
                        .find(|(played_job, _)| played_job == job)
                        .map(|(_, chunk)| (chunk.duration_ms, chunk.played_ms)),
                    // What arrived is a lower bound of its length; the estimate may be longer.
                    // The longer of the two counts fewer words: never more than the clock allows.
                    Fate::CutStream(job) => chunks
                        .iter()
                        .find(|(played_job, _)| played_job == job)
                        .map(|(_, chunk)| (chunk.duration_ms.max(estimate), chunk.played_ms)),
                    Fate::Skipped | Fate::Unplayed => None,
                };
                let (duration_ms, played_ms) = measured.unwrap_or((f64::INFINITY, 0.0));
                SpokenSentence {
                    text,
                    duration_ms,
                    played_ms,
                }
            })
            .collect();
        let text = heard_text(&spoken);
        self.actions.push_front(VoiceAction::SetHeard {
            turn_id: turn_id.to_owned(),
            text,
        });
    }

    /// The transcriber failed for good: the session fails (terminal) after silencing.
    pub fn on_transcriber_failed(&mut self, now: Millis) {
        if self.state.is_terminal() {
            return;
        }
        self.end_turn(now);
        self.set_state(VoiceState::Failed);
    }

    /// `stop()`: detach, interrupt, silence, abort TTS (V3). Idempotent.
    pub fn stop(&mut self, now: Millis) {
        if self.state == VoiceState::Stopped {
            return;
        }
        self.end_turn(now);
        self.push(VoiceAction::Detach);
        self.set_state(VoiceState::Stopped);
    }

    #[must_use]
    pub fn poll_timeout(&self) -> Option<Millis> {
        self.turn
            .as_ref()
            .and_then(|turn| turn.in_flight)
            .map(|(_, deadline)| deadline)
    }

    pub fn handle_timeout(&mut self, now: Millis) {
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        let Some((index, deadline)) = turn.in_flight else {
            return;
        };
        if now < deadline {
            return;
        }
        turn.in_flight = None;
        let job = turn.sentences.get(index).and_then(|s| s.job);
        if let Some(job) = job {
            if self.recovery_audio == RecoveryAudio::Requested(job) {
                self.recovery_audio = RecoveryAudio::Missing;
            }
            self.push(VoiceAction::AbortSynthesis { job });
        }
        self.skip(index, true, now);
    }

    #[must_use]
    pub fn poll_action(&mut self) -> Option<VoiceAction> {
        self.actions.pop_front()
    }

    fn finish_synthesis(&mut self, index: usize, ok: bool, now: Millis) {
        if !ok {
            self.skip(index, false, now);
            return;
        }
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        let Some(sentence) = turn.sentences.get_mut(index) else {
            return;
        };
        sentence.enqueued = true;
        turn.succeeded += 1;
        let finished = VoiceEvent::TtsFinished {
            turn_id: turn.turn_id.clone(),
            index,
        };
        let action = VoiceAction::Play {
            job: sentence.job.unwrap_or_default(),
            turn_id: turn.turn_id.clone(),
            recovery: sentence.recovery,
        };
        self.push(VoiceAction::Event(finished));
        self.push(action);
        self.feed_tts(now);
    }

    fn skip(&mut self, index: usize, timed_out: bool, now: Millis) {
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        if let Some(sentence) = turn.sentences.get_mut(index) {
            sentence.finished = true;
            if !sentence.recovery {
                turn.failed += 1;
            }
        }
        let turn_id = turn.turn_id.clone();
        let error = if timed_out {
            VoiceError::TtsTimeout { turn_id }
        } else {
            VoiceError::TtsFailed { turn_id }
        };
        self.push(VoiceAction::Event(VoiceEvent::TtsFailed {
            turn_id: error.turn_id().to_owned(),
            index,
            code: error.code(),
        }));
        self.push(VoiceAction::Error(error));
        self.feed_tts(now);
        self.check_done();
    }

    /// Requests the next sentence when nothing is being synthesized and at most one sentence's
    /// audio waits or plays (a look-ahead of one).
    fn feed_tts(&mut self, now: Millis) {
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        if self.state.is_terminal() || turn.in_flight.is_some() || turn.unfinished_audio() > 1 {
            return;
        }
        // Every sentence failed: the recovery text is spoken instead (once).
        if turn.text_complete && turn.all_failed() && !turn.wants_recovery {
            turn.wants_recovery = true;
        }
        if turn.wants_recovery && !turn.recovery_queued {
            turn.recovery_queued = true;
            let queued = VoiceEvent::SentenceQueued {
                turn_id: turn.turn_id.clone(),
                index: turn.sentences.len(),
                recovery: true,
                text: self.config.recovery_text.clone(),
            };
            turn.sentences
                .push(Sentence::recovery(&self.config.recovery_text));
            self.actions.push_back(VoiceAction::Event(queued));
        }
        let Some(index) = turn.next_unrequested() else {
            return;
        };
        let job = self.next_job;
        self.next_job = self.next_job.wrapping_add(1);
        let turn_id = turn.turn_id.clone();
        let Some(sentence) = turn.sentences.get_mut(index) else {
            return;
        };
        sentence.job = Some(job);
        if sentence.recovery && self.recovery_audio == RecoveryAudio::Cached {
            sentence.enqueued = true;
            self.push(VoiceAction::Play {
                job,
                turn_id,
                recovery: true,
            });
            self.feed_tts(now);
            return;
        }
        if sentence.recovery {
            self.recovery_audio = RecoveryAudio::Requested(job);
        }
        let started = VoiceEvent::TtsStarted {
            turn_id: turn_id.clone(),
            index,
            recovery: sentence.recovery,
        };
        let action = VoiceAction::Synthesize {
            job,
            turn_id,
            text: sentence.text.clone(),
            recovery: sentence.recovery,
        };
        turn.in_flight = Some((index, now.after(self.config.tts_timeout_ms)));
        self.push(VoiceAction::Event(started));
        self.push(action);
    }

    /// Back to listening once the turn has nothing left to say or play.
    fn check_done(&mut self) {
        let done = self.turn.as_ref().is_some_and(SpeakingTurn::is_done);
        if done && !self.state.is_terminal() {
            self.turn = None;
            self.playback_started_at = None;
            self.set_state(VoiceState::Listening);
        }
    }

    /// V2: a barge-in by `cause` ends the current turn (if any), reported as an event first.
    fn barge_in(&mut self, cause: BargeInCause, now: Millis) {
        if let Some(turn_id) = self.current_turn().map(str::to_owned) {
            self.push(VoiceAction::Event(VoiceEvent::BargeIn { turn_id, cause }));
        }
        self.end_turn(now);
    }

    /// Interrupts the current turn, aborts its TTS, silences it, and trims its history entry to
    /// what was heard. Nothing when no turn is current. The caller sets the next state.
    fn end_turn(&mut self, _now: Millis) {
        let Some(turn) = self.turn.take() else {
            return;
        };
        self.playback_started_at = None;
        let never_started = self.drop_queued_work(&turn.turn_id);
        if !turn.settled_text() && !never_started {
            self.push(VoiceAction::InterruptTurn {
                turn_id: turn.turn_id.clone(),
            });
        }
        if let Some((index, _)) = turn.in_flight {
            if let Some(job) = turn.sentences.get(index).and_then(|s| s.job) {
                if self.recovery_audio == RecoveryAudio::Requested(job) {
                    self.recovery_audio = RecoveryAudio::Missing;
                }
                self.push(VoiceAction::AbortSynthesis { job });
            }
        }
        let answer: Vec<(Fate, String)> = turn
            .sentences
            .iter()
            .filter(|sentence| !sentence.recovery)
            .map(|sentence| (Fate::of(sentence), sentence.text.clone()))
            .collect();
        if turn.any_enqueued() {
            if !answer.is_empty() {
                // The shell answers each stop at once; a few are kept in case it never does.
                if self.cut_turns.len() >= 4 {
                    self.cut_turns.remove(0);
                }
                self.cut_turns.push((turn.turn_id.clone(), answer));
            }
            self.push(VoiceAction::StopPlayback {
                turn_id: turn.turn_id.clone(),
            });
        } else if !answer.is_empty() {
            self.push(VoiceAction::SetHeard {
                turn_id: turn.turn_id.clone(),
                text: String::new(),
            });
        }
    }

    /// V5: work queued for `turn_id` before it ended is never performed (a re-entrant `stop()`,
    /// `free()` or `interrupt()` from a callback runs while earlier actions still wait). A queued
    /// `Play` gives its audio back with `AbortSynthesis`. Returns whether the turn's own
    /// `StartTurn` was still queued (then the controller never saw it).
    fn drop_queued_work(&mut self, turn_id: &str) -> bool {
        let mut start_dropped = false;
        let mut released = Vec::new();
        self.actions.retain(|action| match action {
            VoiceAction::StartTurn { turn_id: id, .. } if id == turn_id => {
                start_dropped = true;
                false
            }
            VoiceAction::Synthesize { turn_id: id, .. }
            | VoiceAction::Event(VoiceEvent::TtsStarted { turn_id: id, .. }) => id != turn_id,
            VoiceAction::Play {
                job, turn_id: id, ..
            } if id == turn_id => {
                released.push(*job);
                false
            }
            _ => true,
        });
        for job in released {
            self.push(VoiceAction::AbortSynthesis { job });
        }
        start_dropped
    }

    /// A barge-in that leaves the session listening (speech, a partial, a button).
    fn barge_in_and_listen(&mut self, cause: BargeInCause, now: Millis) {
        self.barge_in(cause, now);
        if !self.state.is_terminal() && self.state != VoiceState::Idle {
            self.set_state(VoiceState::Listening);
        }
    }

    fn current_mut(&mut self, turn_id: &str) -> Option<&mut SpeakingTurn> {
        self.turn.as_mut().filter(|turn| turn.turn_id == turn_id)
    }

    fn set_state(&mut self, state: VoiceState) {
        if self.state != state {
            self.state = state;
            self.push(VoiceAction::StateChanged(state));
        }
    }

    fn push(&mut self, action: VoiceAction) {
        self.actions.push_back(action);
    }
}
