//! A voice session as one machine (V1): its transcriber, its turn ladder and its voice core under
//! one queue of actions and one timer, wired here in Rust. Transcriber finals and partials go to
//! the voice core; its turns go to the ladder; the ladder's sentences, answers and recoveries go
//! back to the voice core, which asks for speech. What is left for the shell is I/O: routes,
//! sockets, `provision()`, TTS, the player and the app's callbacks ([`SessionAction`]).
//!
//! Each part's actions are routed when they are polled, not when they are queued, so the V5
//! re-checks hold across parts: a re-entrant `stop()` drops the voice core's queued `StartTurn`
//! before the ladder ever sees it, and a ladder sentence of a cut turn is dropped by the ladder's
//! own `may_speak` at the moment it would go out. The ladder drains first, then the voice core,
//! then the transcriber: a turn's route call comes right after its start (as if the ladder were
//! called inline), and what the ladder reports of an input (its events, stamped with the input's
//! time, and the settled record) comes before the speech it leads to.

use crate::core::stt::transcriber::{self, State as SttState, Transcriber};
use crate::core::time::Millis;
use crate::core::turn::{self, StartError, TurnLadder};
use crate::core::voice::eager::{EagerTracker, Guess};
use crate::core::voice::echo::EchoMeter;
use crate::core::voice::vad::{VoiceChange, VoiceDetector};
use crate::core::voice::{VoiceAction, VoiceCore, VoiceEvent, VoiceState};
use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;

/// What the shell performs for a voice session, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum SessionAction {
    /// The ladder's I/O: call or abort a route, a settled record (`onTurn`), an event.
    Turn(turn::Action),
    /// The transcriber's I/O: `provision()`, the socket, its state, its errors and close events.
    Stt(transcriber::Action),
    /// The speech path and the app's session callbacks.
    Voice(VoiceAction),
    /// The ladder refused a turn (its input over `maxInputChars`): report it; the turn is over.
    TurnRefused { turn_id: String, error: StartError },
}

/// The voice session's machine. Feed a part with [`SessionCore::ladder_at`],
/// [`SessionCore::voice_at`] or [`SessionCore::transcriber_at`], or the session-wide inputs
/// ([`SessionCore::stop`], …); drain [`SessionCore::poll_action`]; wake at
/// [`SessionCore::poll_timeout`].
#[derive(Debug)]
pub struct SessionCore {
    ladder: TurnLadder,
    voice: VoiceCore,
    /// `None` when the session takes typed input only.
    stt: Option<Transcriber>,
    /// The time of the last input: routing at poll time feeds the next part at it.
    now: Millis,
    /// `start()` was called with a transcriber: the session listens once its socket opens.
    listen_on_open: bool,
    /// Guesses the end of the user's turn before the final, when preemptive attempts are on.
    eager: Option<EagerTracker>,
    /// The turn a guess started a preemptive attempt for, until its final.
    guessed_turn: Option<String>,
    /// Voice detection on the captured audio, where the session listens (V6).
    vad: Option<VoiceDetector>,
    /// The agent's echo in the captured audio, so the detector does not take it for the user (V8).
    echo: EchoMeter,
}

impl SessionCore {
    #[must_use]
    pub fn new(ladder: TurnLadder, voice: VoiceCore, stt: Option<Transcriber>) -> Self {
        let vad = stt
            .as_ref()
            .map(|stt| VoiceDetector::new(stt.config().sample_rate));
        SessionCore {
            vad,
            ladder,
            voice,
            stt,
            now: Millis(0),
            listen_on_open: false,
            eager: None,
            guessed_turn: None,
            echo: EchoMeter::default(),
        }
    }

    /// What the capture says of its echo canceller (`getSettings().echoCancellation`): without
    /// one, the first half second the agent sounds is not taken for voice until measured (V8).
    pub fn set_echo_canceller(&mut self, on: bool) {
        self.echo.set_canceller(on);
    }

    /// A buffer the player is about to play: its mean level and its loudest 10 ms (dBFS), for the
    /// echo's return loss (V8).
    pub fn on_output_level(&mut self, mean_db: f64, peak_db: f64) {
        self.echo.on_output(mean_db, peak_db);
    }

    /// Turns preemptive attempts on (T17): the provider's eager end of turn or, where the
    /// protocol has none, a partial still for `eager_silence_ms` starts the next turn's first
    /// attempt before its final.
    pub fn enable_preemptive(&mut self, eager_silence_ms: u64) {
        let provider_guesses = self
            .stt
            .as_ref()
            .is_some_and(|stt| stt.protocol().eager_end_of_turn);
        let mut tracker = EagerTracker::new(eager_silence_ms);
        if provider_guesses {
            tracker.follow_provider_only();
        }
        self.eager = Some(tracker);
    }

    #[must_use]
    pub fn ladder(&self) -> &TurnLadder {
        &self.ladder
    }

    #[must_use]
    pub fn voice(&self) -> &VoiceCore {
        &self.voice
    }

    #[must_use]
    pub fn transcriber(&self) -> Option<&Transcriber> {
        self.stt.as_ref()
    }

    /// The ladder, for one input at `now` (a route's answer, heard text).
    pub fn ladder_at(&mut self, now: Millis) -> &mut TurnLadder {
        self.advance(now);
        &mut self.ladder
    }

    /// The voice core, for one input at `now` (typed text, TTS and playback reports).
    pub fn voice_at(&mut self, now: Millis) -> &mut VoiceCore {
        self.advance(now);
        &mut self.voice
    }

    /// The transcriber, if the session has one, for one input at `now` (socket, `provision()`,
    /// audio).
    pub fn transcriber_at(&mut self, now: Millis) -> Option<&mut Transcriber> {
        self.advance(now);
        self.stt.as_mut()
    }

    /// The app's `interrupt()`: a barge-in. The cut turn is interrupted in the ladder at once, so
    /// a route call queued for it is never made (V5).
    pub fn interrupt(&mut self, now: Millis) {
        let turn = self.current_turn();
        self.voice_at(now).interrupt(now);
        self.interrupt_turn(turn, now);
    }

    /// The audio output was closed under the session: the current turn is cut like a barge-in
    /// (its heard part kept) and interrupted in the ladder.
    pub fn on_output_closed(&mut self, now: Millis) {
        let turn = self.current_turn();
        self.voice_at(now).on_output_closed(now);
        self.interrupt_turn(turn, now);
    }

    /// `stop()`: the current turn ends at once in the voice core and the ladder; the transcriber
    /// stops (R4) when the voice core's `Detach` is polled.
    pub fn stop(&mut self, now: Millis) {
        let turn = self.current_turn();
        self.voice_at(now).stop(now);
        self.interrupt_turn(turn, now);
        // A guess whose final will not come now: its attempt is aborted.
        if let Some(guessed) = self.guessed_turn.take() {
            if self.ladder.is_pending(&guessed) {
                self.ladder_at(now).interrupt(&guessed, now);
            }
        }
    }

    /// `free()`: [`SessionCore::stop`], every running turn cancelled and the transcriber detached
    /// at once (no waiting for its last transcripts).
    pub fn dispose(&mut self, now: Millis) {
        self.stop(now);
        self.ladder_at(now).interrupt_all(now);
        if let Some(stt) = self.transcriber_at(now) {
            stt.dispose(now);
        }
    }

    /// When `handle_timeout` must be called next: the earliest deadline of the three parts.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Millis> {
        [
            self.ladder.poll_timeout(),
            self.voice.poll_timeout(),
            self.stt.as_ref().and_then(Transcriber::poll_timeout),
            self.eager.as_ref().and_then(EagerTracker::poll_timeout),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Fires what is due in every part. Early or repeated calls are harmless.
    pub fn handle_timeout(&mut self, now: Millis) {
        self.now = self.now.max(now);
        self.ladder.handle_timeout(now);
        self.voice.handle_timeout(now);
        if let Some(stt) = &mut self.stt {
            stt.handle_timeout(now);
        }
        let guess = self
            .eager
            .as_mut()
            .and_then(|eager| eager.handle_timeout(now));
        self.guess(guess, now);
    }

    /// Starts or withdraws a preemptive attempt for the next turn (T17). A guess counts only
    /// while the session listens: while it thinks or speaks, the user's words are a barge-in.
    fn guess(&mut self, guess: Option<Guess>, now: Millis) {
        match guess {
            // Words that are the agent's echo guess nothing (V8).
            Some(Guess::Start(text))
                if self.voice.state() == VoiceState::Listening
                    && !self.voice.words_are_echo(now)
                    && !self.voice.utterance_began_as_echo() =>
            {
                let turn_id = self.voice.next_turn_id();
                if let Ok(turn::Preempted::Started) =
                    self.ladder_at(now).start_preemptive(&turn_id, &text, now)
                {
                    self.guessed_turn = Some(turn_id);
                }
            }
            Some(Guess::Withdraw) => {
                if let Some(guessed) = &self.guessed_turn {
                    self.ladder.discard_preemptive(guessed, now);
                }
            }
            _ => {}
        }
    }

    /// The next thing the shell must do. What one part tells another is passed on here, inside;
    /// call until `None`.
    #[must_use]
    #[inline(never)]
    pub fn poll_action(&mut self) -> Option<SessionAction> {
        loop {
            if let Some(action) = self.poll_part()? {
                return Some(action);
            }
        }
    }

    /// Takes the next action of the first part (ladder, voice core, transcriber) that has one
    /// and routes it: `None` when no part has one, `Some(None)` when it was passed on inside.
    fn poll_part(&mut self) -> Option<Option<SessionAction>> {
        if let Some(action) = self.ladder.poll_action() {
            return Some(self.route_ladder(action));
        }
        if let Some(action) = self.voice.poll_action() {
            return Some(self.route_voice(action));
        }
        let action = self.stt.as_mut().and_then(Transcriber::poll_action)?;
        Some(self.route_stt(action))
    }

    fn route_ladder(&mut self, action: turn::Action) -> Option<SessionAction> {
        let now = self.now;
        match action {
            // Checked right before each leaves, as the controller does before calling the app
            // (T6, T12): not one sentence of a cut turn.
            turn::Action::Sentence { turn_id, text } => {
                if self.ladder.may_speak(&turn_id) {
                    self.voice_at(now).on_sentence(&turn_id, &text, now);
                }
                None
            }
            turn::Action::Deliver { turn_id, .. } => {
                if self.ladder.may_deliver(&turn_id) {
                    self.voice_at(now).on_accepted(&turn_id, now);
                }
                None
            }
            turn::Action::Recover { turn_id, .. } => {
                self.voice_at(now).on_recovery(&turn_id, now);
                None
            }
            turn::Action::Settled(record) => {
                let turn_id = record.turn_id.clone();
                self.voice_at(now).on_turn_settled(&turn_id, now);
                Some(SessionAction::Turn(turn::Action::Settled(record)))
            }
            other => Some(SessionAction::Turn(other)),
        }
    }

    fn route_voice(&mut self, action: VoiceAction) -> Option<SessionAction> {
        let now = self.now;
        match action {
            VoiceAction::StartTurn { turn_id, input } => {
                if self.guessed_turn.as_ref() == Some(&turn_id) {
                    self.guessed_turn = None;
                }
                match self.ladder_at(now).start_turn(&turn_id, &input, now) {
                    Ok(_) => None,
                    Err(error) => {
                        self.voice_at(now).on_turn_settled(&turn_id, now);
                        Some(SessionAction::TurnRefused { turn_id, error })
                    }
                }
            }
            VoiceAction::InterruptTurn { turn_id } => {
                self.ladder_at(now).interrupt(&turn_id, now);
                None
            }
            VoiceAction::Event(VoiceEvent::TurnLatency(mut latency)) => {
                if let Some(record) = self.ladder.turn(&latency.turn_id) {
                    latency.add_ladder_marks(record);
                }
                Some(SessionAction::Voice(VoiceAction::Event(
                    VoiceEvent::TurnLatency(latency),
                )))
            }
            VoiceAction::SetHeard { turn_id, text } => {
                self.ladder_at(now).set_heard_text(&turn_id, &text);
                // `onHeard` is the app's.
                Some(SessionAction::Voice(VoiceAction::SetHeard {
                    turn_id,
                    text,
                }))
            }
            VoiceAction::Detach => {
                // R4: the transcriber stops (its last transcripts are still taken, up to
                // `stopTimeoutMs`); the shell silences, aborts TTS and releases the microphone.
                if let Some(stt) = self.transcriber_at(now) {
                    stt.stop(now);
                }
                Some(SessionAction::Voice(VoiceAction::Detach))
            }
            other => Some(SessionAction::Voice(other)),
        }
    }

    fn route_stt(&mut self, action: transcriber::Action) -> Option<SessionAction> {
        let now = self.now;
        match action {
            transcriber::Action::Partial { text, .. } => {
                self.voice_at(now).on_partial(&text, now);
                let guess = self
                    .eager
                    .as_mut()
                    .and_then(|eager| eager.on_partial(&text, now));
                self.guess(guess, now);
                None
            }
            transcriber::Action::Final { text, .. } => {
                if let Some(eager) = &mut self.eager {
                    eager.on_final();
                }
                if self.voice_at(now).on_spoken_final(&text, now) {
                    // No turn comes of it: a guess made before the words were echo goes.
                    self.guess(Some(Guess::Withdraw), now);
                }
                None
            }
            transcriber::Action::SpeechStart { .. } => {
                self.voice_at(now).on_speech_start(now);
                let guess = self.eager.as_mut().and_then(EagerTracker::on_resumed);
                self.guess(guess, now);
                None
            }
            transcriber::Action::EagerFinal { ref text, .. } => {
                let guess = self
                    .eager
                    .as_mut()
                    .and_then(|eager| eager.on_provider_guess(text));
                self.guess(guess, now);
                Some(SessionAction::Stt(action))
            }
            transcriber::Action::Resumed { .. } => {
                let guess = self.eager.as_mut().and_then(EagerTracker::on_resumed);
                self.guess(guess, now);
                Some(SessionAction::Stt(action))
            }
            transcriber::Action::StateChanged(state) => {
                if state == SttState::Failed {
                    self.voice_at(now).on_transcriber_failed(now);
                }
                if state == SttState::Open && core::mem::take(&mut self.listen_on_open) {
                    self.voice_at(now).start();
                }
                Some(SessionAction::Stt(transcriber::Action::StateChanged(state)))
            }
            other => Some(SessionAction::Stt(other)),
        }
    }

    /// The session starts: it says `listening` at once with typed input only, else once the
    /// transcriber's socket opened for the first time (not while it provisions or connects, nor
    /// when its credential is refused). The shell starts the transcriber itself.
    pub fn start(&mut self, now: Millis) {
        self.advance(now);
        if self.stt.is_some() {
            self.listen_on_open = true;
        } else {
            self.voice.start();
        }
    }

    fn current_turn(&self) -> Option<String> {
        self.voice.current_turn().map(str::to_owned)
    }

    /// Interrupts in the ladder the turn the voice core just cut (false, and harmless, for a
    /// turn the ladder never saw or that already settled).
    fn interrupt_turn(&mut self, turn: Option<String>, now: Millis) {
        if let Some(turn) = turn {
            self.ladder_at(now).interrupt(&turn, now);
        }
    }

    /// An input at `now`: routing at poll time goes on from there.
    /// Captured audio (PCM16 little-endian): heard by the voice detector, then sent to the
    /// transcriber. False when the transcriber takes no more audio.
    pub fn on_audio(&mut self, pcm: Vec<u8>, now: Millis) -> bool {
        self.advance(now);
        let mut changes = Vec::new();
        let mut heard_ms = 0;
        if let Some(vad) = &mut self.vad {
            let sounding = self.voice.sounding_since();
            vad.set_echo_floor_db(self.echo.voice_floor_db(sounding, now));
            vad.push(&pcm, |change| changes.push(change));
            heard_ms = vad.audio_ms();
            let heard = vad.take_heard();
            if let Some(report) = self.echo.observe(heard, sounding, now) {
                self.voice.report_echo(report);
            }
            let masked = self.echo.masks_words(sounding, now, heard.voice_db);
            self.voice.set_echo_masks_words(masked);
            self.voice.set_short_words_need_voice(
                vad.has_heard_voice() && self.echo.sounds_lately(sounding, now),
            );
        }
        for change in changes {
            let (speaking, audio_ms) = match change {
                VoiceChange::Started { at_ms } => (true, at_ms),
                VoiceChange::Ended { at_ms } => (false, at_ms),
            };
            // The change was `heard_ms - audio_ms` of audio ago.
            let at = Millis(now.0.saturating_sub(heard_ms.saturating_sub(audio_ms)));
            self.voice.on_voice(speaking, at, audio_ms);
            let guess = self
                .eager
                .as_mut()
                .and_then(|eager| eager.on_voice(speaking, at));
            self.guess(guess, now);
        }
        self.stt
            .as_mut()
            .is_some_and(|stt| stt.send_audio(pcm, now))
    }

    fn advance(&mut self, now: Millis) {
        self.now = self.now.max(now);
    }
}
