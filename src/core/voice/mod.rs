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
//! - Barge-in (V2, V4, V7): the user's voice (or the provider's speech start) pauses the agent;
//!   a word that is not a backchannel, a final, or long voice turns the pause into a cut, as does a
//!   partial of at least `min_partial_chars` outside the echo guard. A cut interrupts the turn,
//!   aborts its TTS, stops the player and sets the turn's history to what was heard (P3: by the
//!   audio clock only). See `pause.rs`.
//! - Stale work (V5): ending a turn drops what was queued for it, so a re-entrant stop or
//!   interrupt from an app callback leaves no turn start, `synthesize` or playback behind.

use crate::core::text::decimal;
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
pub mod backchannel;
mod config;
mod cut;
pub mod eager;
pub mod echo;
pub mod echo_words;
pub mod heard;
pub mod latency;
#[cfg(feature = "earshot")]
mod neural;
mod output;
mod pause;
pub mod pcm;
pub mod playback;
pub mod session;
mod tts;
mod turn;
pub mod vad;
mod word_gate;

use crate::core::queue::Queue;
use crate::core::time::Millis;

pub use config::VoiceConfig;
pub use cut::DEFAULT_MS_PER_CHAR;
pub use output::{BargeInCause, VoiceAction, VoiceError, VoiceEvent, VoiceState};
pub use pause::PauseCause;
pub use turn::SpeakingTurn;

use cut::Fate;
use latency::TurnLatency;
use pause::VoiceStart;
use tts::RecoveryAudio;
use turn::Sentence;
use word_gate::WordGate;

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
    actions: Queue<VoiceAction>,
    /// The latest partial transcript and when its text last changed: the user's last words.
    partial: String,
    words_changed_at: Option<Millis>,
    /// The voice detector's word on the user: the voice going on now (`None`: silence), and
    /// when their voice last ended.
    voice_started: Option<VoiceStart>,
    voice_ended_at: Option<Millis>,
    /// When the agent paused the current turn for the user's voice, until the turn is cut or
    /// resumes, or ends (V7).
    paused_at: Option<Millis>,
    /// Which of the provider's words are the user's (V8).
    words: WordGate,
}

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
            actions: Queue::new(),
            partial: String::new(),
            words_changed_at: None,
            voice_started: None,
            voice_ended_at: None,
            paused_at: None,
            words: WordGate::default(),
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
    /// The id the next final's turn will have (a preemptive attempt starts under it, T17).
    #[must_use]
    pub fn next_turn_id(&self) -> String {
        match &self.config.session_id {
            Some(session) => [session, ":turn-", &decimal(self.next_turn)].concat(),
            None => ["turn-", &decimal(self.next_turn)].concat(),
        }
    }

    pub fn start(&mut self) {
        if self.state == VoiceState::Idle {
            self.set_state(VoiceState::Listening);
        }
    }

    /// A final transcript from the transcriber: as [`VoiceCore::on_final`], except that a final
    /// shorter than `min_partial_chars` inside the echo guard is the agent's own echo (V4): a
    /// caption only, no barge-in and no turn. (Measured: a converging echo canceller lets the
    /// agent's first syllables through as a one- or two-word final within the first second.)
    /// So is any final while the echo would pass for voice and the detector heard none, a short
    /// one no voice came with while the agent sounds, and one whose utterance began as the echo
    /// with too little of the user's after it (V8; the user's words after the agent's are the
    /// turn), and a short one of the agent's words where it paused (a canceller's leak: V8).
    /// Returns whether the final was taken for the echo.
    pub fn on_spoken_final(&mut self, text: &str, now: Millis) -> bool {
        let began_as_echo = self.words.utterance_ended();
        let users = self.users_words(text, began_as_echo);
        let short = self.is_short(text);
        let echo = (short
            && (self.in_echo_guard(now)
                || self.voiceless(now)
                || self.agents_words_where_paused(text)))
            || self.words_are_echo(now);
        match users {
            Some(users) if !echo => {
                self.on_final(&users, now);
                false
            }
            _ if self.state.is_terminal() => false,
            _ => {
                self.push(VoiceAction::Caption {
                    text: text.to_owned(),
                    is_final: true,
                });
                true
            }
        }
    }

    /// A final transcript, or typed text: a barge-in if a turn is current, then a new turn.
    pub fn on_final(&mut self, text: &str, now: Millis) {
        if self.state.is_terminal() || text.trim().is_empty() {
            return;
        }
        if self.state == VoiceState::Speaking && self.config.backchannels.only(text) {
            // "Okay" while the agent speaks: it goes on, and nothing new starts (V6).
            self.push(VoiceAction::Caption {
                text: text.to_owned(),
                is_final: true,
            });
            if let Some(turn_id) = self.current_turn().map(str::to_owned) {
                self.push(VoiceAction::Event(VoiceEvent::Backchannel { turn_id }));
            }
            self.resume(now);
            return;
        }
        self.push(VoiceAction::Caption {
            text: text.to_owned(),
            is_final: true,
        });
        self.barge_in(BargeInCause::Final, now);
        let turn_id = self.next_turn_id();
        self.next_turn = self.next_turn.wrapping_add(1);
        let mut turn = SpeakingTurn::new(&turn_id);
        // The end of the user's speech: the voice detector's, where it hears silence now;
        // else the last change of the words.
        let words_end = self.words_changed_at.take();
        let speech_end_at = match (self.voice_heard(), self.voice_ended_at.take()) {
            (false, Some(ended)) => Some(ended),
            (true, _) => None,
            (false, None) => words_end,
        };
        self.partial.clear();
        if let Some(start) = self.voice_started.as_mut() {
            // Voice that goes on past the final counts for the new turn from now (V7).
            *start = start.moved_to(now);
        }
        turn.latency = Some(Box::new(TurnLatency::new(&turn_id, speech_end_at, now)));
        self.turn = Some(turn);
        self.push(VoiceAction::StartTurn {
            turn_id,
            input: text.to_owned(),
        });
        self.set_state(VoiceState::Thinking);
    }

    /// A partial transcript: a caption, and a barge-in when long enough and outside the echo
    /// guard (V4). Of an utterance that began as the agent's echo, only the user's words after it
    /// count (V8).
    pub fn on_partial(&mut self, text: &str, now: Millis) {
        if self.state.is_terminal() {
            return;
        }
        self.push(VoiceAction::Caption {
            text: text.to_owned(),
            is_final: false,
        });
        if self.partial != text {
            text.clone_into(&mut self.partial);
            self.words_changed_at = Some(now);
        }
        let echo_now = self.words_are_echo(now);
        if text.trim().is_empty() {
            // The provider heard nothing yet: the next words begin an utterance.
            self.words.utterance_ended();
            return;
        }
        let began_as_echo = self.words.begin_utterance(echo_now);
        if echo_now {
            return;
        }
        let Some(users) = self.users_words(text, began_as_echo) else {
            return;
        };
        if self.is_short(&users) && self.voiceless(now) {
            return;
        }
        let backchannel =
            self.state == VoiceState::Speaking && self.config.backchannels.only(&users);
        // A partial long enough cuts by itself outside the echo guard, which a pause ends (V4,
        // V7). A shorter one leaves a pause to its final: a recognizer's first guess at a short
        // utterance is often another word ("uh" of "uh huh", "you" of "yeah"). (`users` is never
        // blank.)
        let confirms = !self.is_short(&users) && !self.in_echo_guard(now);
        if confirms && !backchannel {
            self.barge_in_and_listen(BargeInCause::Partial, now);
        }
    }

    /// The page's voice detector heard the user start (`speaking`) or stop, at `at` (the
    /// session's clock) and `audio_ms` into the captured audio. Reported as an event; its silence
    /// is the end of the user's speech in the turn's latency record.
    pub fn on_voice(&mut self, speaking: bool, at: Millis, audio_ms: u64) {
        if speaking {
            self.voice_started = Some(VoiceStart { at, audio_ms });
        } else {
            let started = self.voice_started.take();
            self.voice_ended_at = Some(at);
            // Audio that came in faster than real time (a burst after a stall) may end a voice
            // before its timers fired: what it lasted, in audio, still counts (V7).
            if let Some(lasted) = started.map(|start| audio_ms.saturating_sub(start.audio_ms)) {
                self.on_voice_ended(lasted, at);
            }
        }
        self.push(VoiceAction::Event(VoiceEvent::Voice { speaking, audio_ms }));
    }

    /// The provider heard the user start: a pause unless within the echo guard of a playback
    /// (V4, V7). Only the user's words or voice turn a pause into a cut.
    pub fn on_speech_start(&mut self, now: Millis) {
        if !self.in_echo_guard(now) && !self.words_are_echo(now) {
            self.pause_for(PauseCause::SpeechStart, now);
        }
    }

    /// Since when the agent sounds without a pause (the last playback start after silence), for
    /// the echo's measure (V8); `None` while it is silent or paused.
    #[must_use]
    pub fn sounding_since(&self) -> Option<Millis> {
        if self.state != VoiceState::Speaking || self.is_paused() {
            return None;
        }
        self.playback_started_at
    }

    /// The echo's first measurement (V8), as an event.
    pub fn report_echo(&mut self, report: echo::EchoReport) {
        let whole_db = |db: f64| libm::round(db) as i32;
        self.push(VoiceAction::Event(VoiceEvent::Echo {
            echo_db: whole_db(report.echo_db),
            return_loss_db: report.return_loss_db.map(whole_db),
            raised: report.raised,
        }));
    }

    /// V4: within `echo_guard_ms` of each playback start (the agent starts sounding after
    /// silence), what the microphone hears while the agent speaks is taken for its own echo.
    fn in_echo_guard(&self, now: Millis) -> bool {
        // Paused, the agent is silent: what the microphone hears is the user's (V7).
        !self.is_paused()
            && self.state == VoiceState::Speaking
            && self
                .playback_started_at
                .is_some_and(|at| now < at.after(self.config.echo_guard_ms))
    }

    /// `interrupt()` from the app (a button): a barge-in.
    pub fn interrupt(&mut self, now: Millis) {
        self.barge_in_and_listen(BargeInCause::Button, now);
    }

    /// The audio output was closed under the session: the current turn, thinking or speaking,
    /// ends as a cut with what played of it; the next turn speaks through the new output.
    pub fn on_output_closed(&mut self, now: Millis) {
        self.barge_in_and_listen(BargeInCause::OutputClosed, now);
    }

    /// A complete accepted sentence of `turn_id` (the controller's `onSentence`).
    pub fn on_sentence(&mut self, turn_id: &str, text: &str, now: Millis) {
        let Some(turn) = self.current_mut(turn_id) else {
            return;
        };
        let index = turn.sentences.len();
        turn.sentences.push(Sentence::new(text));
        if let Some(latency) = turn.latency.as_mut() {
            latency.first_sentence_at.get_or_insert(now);
        }
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
            if let Some(latency) = turn.latency.as_mut() {
                latency.first_sentence_at.get_or_insert(now);
            }
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

    /// The player started sounding `turn_id`: its first audio, or audio again after the line
    /// ran dry (a slow synthesis or decode). Either restarts the echo guard (V4).
    pub fn on_playback_started(&mut self, turn_id: &str, now: Millis) {
        if self.current_turn() == Some(turn_id) && !self.state.is_terminal() {
            self.playback_started_at = Some(now);
            self.set_state(VoiceState::Speaking);
        }
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
    pub fn poll_action(&mut self) -> Option<VoiceAction> {
        self.actions.pop_front()
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
        let Some(mut turn) = self.turn.take() else {
            return;
        };
        let was_paused = self.paused_at.take().is_some();
        self.report_latency(&mut turn);
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
            // The stop ends a pause too.
            self.push(VoiceAction::StopPlayback {
                turn_id: turn.turn_id.clone(),
            });
            return;
        }
        if !answer.is_empty() {
            self.push(VoiceAction::SetHeard {
                turn_id: turn.turn_id.clone(),
                text: String::new(),
            });
        }
        if was_paused {
            // Nothing of the turn reached the player: it only needs to run again.
            self.push(VoiceAction::ResumePlayback {
                turn_id: turn.turn_id,
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

    /// Reports the turn's latency record, once: at its first sound, else when it ends.
    fn report_latency(&mut self, turn: &mut SpeakingTurn) {
        if let Some(latency) = turn.latency.take() {
            self.push(VoiceAction::Event(VoiceEvent::TurnLatency(latency)));
        }
    }

    fn push(&mut self, action: VoiceAction) {
        self.actions.push_back(action);
    }
}
