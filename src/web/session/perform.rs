//! The session machine's actions, each routed to the I/O that performs it: the ladder's to the
//! route calls `TurnController` uses, the transcriber's to the socket and `provision()` code
//! `LiveTranscriber` uses, the voice core's to the speech path and the app's callbacks.

use super::Shared;
use crate::core::stt::transcriber::Action as SttAction;
use crate::core::turn::Action as TurnAction;
use crate::core::voice::session::{SessionAction, SessionCore};
use crate::core::voice::{VoiceAction, VoiceError};
use crate::web::callbacks::Args;
use crate::web::convert::{coded_error, range_error};
use crate::web::driver::{Driver, Shell};
use crate::web::js_object::JsObject;
use crate::web::transcriber::TranscriberIo;
use alloc::rc::Rc;
use js_sys::Reflect;
use wasm_bindgen::prelude::*;

impl Shell for Shared {
    type Machine = SessionCore;

    fn driver(&self) -> &Driver<SessionCore> {
        &self.driver
    }

    fn this(&self) -> Option<Rc<Self>> {
        self.this.upgrade()
    }

    fn perform(self: &Rc<Self>, action: SessionAction) {
        match action {
            SessionAction::Turn(action) => self.perform_turn(action),
            SessionAction::Stt(action) => self.perform_stt(action),
            SessionAction::Voice(action) => self.perform_voice(action),
            SessionAction::TurnRefused { error, .. } => {
                self.report_error(&range_error(&error.message()));
            }
        }
    }
}

impl Shared {
    fn perform_turn(self: &Rc<Self>, action: TurnAction) {
        let Some(action) = self.ladder.perform(self.as_ref(), action) else {
            return;
        };
        match action {
            TurnAction::Settled(record) => {
                let (turn_js, record_js) = self.ladder.settle(&record);
                let args = Args::One(&record_js);
                self.call("onTurn", &self.callbacks.on_turn, args, Some(&turn_js));
            }
            // The controller's events, `controller.onEvent` first, then `onEvent` (same object).
            TurnAction::Event(event) if !self.driver.is_disposed() => {
                let event = self.ladder.event_js(self.as_ref(), &event);
                let app_on_event = &self.callbacks.controller_on_event;
                self.call("controller.onEvent", app_on_event, Args::One(&event), None);
                self.app.event(&event);
            }
            // Sentences, answers and recoveries go to the voice core inside the machine.
            _ => {}
        }
    }

    fn perform_stt(self: &Rc<Self>, action: SttAction) {
        let Some(stt) = &self.stt else {
            return;
        };
        let Some(action) = stt.perform(self.as_ref(), action) else {
            return;
        };
        match action {
            SttAction::StateChanged(state) => {
                // `transcriber.onEvent` gets the close the transcriber just answered, if any.
                if self.callbacks.transcriber_on_event.is_some() {
                    if let Some(event) = TranscriberIo::close_event(self.as_ref()) {
                        self.transcriber_event(&event);
                    }
                }
                self.emit_transcriber_state(state);
                stt.state_changed(state);
            }
            SttAction::Error(error) => {
                self.emit_transcriber_error(&error);
                self.report_error(&stt.error_js(&error));
            }
            // The guess's text stays inside: events carry no conversation text.
            SttAction::EagerFinal { utterance, .. } => {
                self.transcriber_hint("eager_end_of_turn", utterance)
            }
            SttAction::Resumed { utterance } => self.transcriber_hint("turn_resumed", utterance),
            // Transcripts and speech starts go to the voice core inside the machine.
            _ => {}
        }
    }

    fn perform_voice(self: &Rc<Self>, action: VoiceAction) {
        match action {
            VoiceAction::StateChanged(state) => {
                let name = JsValue::from_str(state.as_str());
                let callback = &self.callbacks.on_state_change;
                self.call("onStateChange", callback, Args::One(&name), None);
            }
            VoiceAction::Caption { text, is_final } => {
                let (text, is_final) = (JsValue::from_str(&text), JsValue::from_bool(is_final));
                let args = Args::Two(&text, &is_final);
                self.call("onCaption", &self.callbacks.on_caption, args, None);
            }
            VoiceAction::Synthesize {
                job,
                turn_id,
                text,
                recovery,
            } => self.synthesize(job, &turn_id, &text, recovery),
            VoiceAction::AbortSynthesis { job } => self.abort_synthesis(job),
            VoiceAction::Play {
                job,
                turn_id,
                recovery,
            } => self.play(job, &turn_id, recovery),
            VoiceAction::PausePlayback { turn_id } => {
                let chunks = self.by_job(&self.engine().pause(&turn_id));
                self.voice_update(|voice, _| voice.on_playback_paused(&turn_id, &chunks));
            }
            VoiceAction::ResumePlayback { .. } => self.engine().unpause(),
            VoiceAction::StopPlayback { turn_id } => {
                self.release_streams();
                let stopped = self.stop_engine();
                let chunks = self.by_job(&stopped.chunks);
                self.speech.borrow_mut().chunks.clear();
                self.voice_update(|voice, _| voice.on_playback_stopped(&turn_id, &chunks));
            }
            // The ladder's history was trimmed inside; `onHeard` is the app's.
            VoiceAction::SetHeard { turn_id, text } => {
                let (turn_js, text_js) = (JsValue::from_str(&turn_id), JsValue::from_str(&text));
                let args = Args::Two(&turn_js, &text_js);
                self.call("onHeard", &self.callbacks.on_heard, args, Some(&turn_js));
            }
            VoiceAction::Error(error) => self.report_error(&voice_error(&error)),
            VoiceAction::Event(event) => self.on_voice_event(event),
            // R4: the transcriber stops inside the machine; here TTS is aborted, the engine
            // silenced and the microphone released.
            VoiceAction::Detach => {
                self.abort_all_synthesis();
                self.release_streams();
                self.stop_engine();
                if let Some(stt) = &self.stt {
                    stt.release_microphone();
                }
            }
            // Turns start and end in the ladder inside the machine.
            VoiceAction::StartTurn { .. } | VoiceAction::InterruptTurn { .. } => {}
        }
    }

    /// `transcriber.onEvent`, the app's own listener of the transcriber.
    fn transcriber_event(&self, event: &JsValue) {
        let callback = &self.callbacks.transcriber_on_event;
        self.call("transcriber.onEvent", callback, Args::One(event), None);
    }

    /// The provider's end-of-turn guess, or its withdrawal, to `transcriber.onEvent`.
    fn transcriber_hint(&self, kind: &str, utterance: u64) {
        if self.callbacks.transcriber_on_event.is_some() {
            let event = JsObject::new()
                .set("type", kind)
                .set("utterance", utterance as f64)
                .build();
            self.transcriber_event(&event);
        }
    }
}

fn voice_error(error: &VoiceError) -> JsValue {
    let js = coded_error(error.message(), None, error.code(), false);
    let _ = Reflect::set(&js, &"turnId".into(), &error.turn_id().into());
    js
}
