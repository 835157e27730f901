//! What a `VoiceSession` tells the app's `onEvent` (beside the controller's own events): plain
//! objects with `type`, `at` (epoch ms) and ids, indexes and timings only — never what the user
//! said or what the agent answered, never a credential or a header (T14).

use super::Shared;
use crate::core::stt::transcriber::{State, Transcriber, TranscriberError};
use crate::core::time::Millis;
use crate::core::voice::latency::TurnLatency;
use crate::core::voice::playback::Stopped;
use crate::core::voice::VoiceEvent;
use crate::web::callbacks::Args;
use crate::web::js_object::JsObject;
use alloc::rc::Rc;
use wasm_bindgen::prelude::*;

fn event(shared: &Shared, kind: &str) -> JsObject {
    JsObject::new()
        .set("type", kind)
        .set("at", shared.driver.now().0 as f64)
}

/// `turn_latency`: every mark in epoch milliseconds (`null` where that step never happened),
/// and voice-to-voice, from the end of the user's speech to the first sound.
fn latency_event(shared: &Shared, latency: &TurnLatency) -> JsObject {
    let ms = |at: Option<Millis>| at.map_or(JsValue::NULL, |at| JsValue::from_f64(at.0 as f64));
    let us = |us: Option<u64>| us.map_or(JsValue::NULL, |us| JsValue::from_f64(us as f64 / 1000.0));
    event(shared, "turn_latency")
        .set("turnId", latency.turn_id.as_str())
        .set("speechEndAt", ms(latency.speech_end_at))
        .set("finalAt", ms(latency.final_at))
        .set("routeCalledAt", ms(latency.route_called_at))
        .set("firstTokenAt", ms(latency.first_token_at))
        .set("firstSentenceAt", ms(latency.first_sentence_at))
        .set("synthesizeAt", ms(latency.synthesize_at))
        .set("firstAudioAt", ms(latency.first_audio_at))
        .set("firstSoundAt", us(latency.first_sound_at_us))
        .set("voiceToVoiceMs", us(latency.voice_to_voice_us()))
        .set("preemptive", latency.preemption.as_str())
}

fn index(index: usize) -> f64 {
    index as f64
}

impl Shared {
    /// Sends one event to `options.onEvent` (none once the session was freed).
    pub(super) fn emit(&self, event: JsObject) {
        if !self.driver.is_disposed() {
            self.app.event(&event.build());
        }
    }

    /// A core event: to `onEvent` without its text; a queued sentence's text to `onSpeech`.
    pub(super) fn on_voice_event(self: &Rc<Self>, voice_event: VoiceEvent) {
        let object = match voice_event {
            VoiceEvent::SentenceQueued {
                turn_id,
                index: at,
                recovery,
                text,
            } => {
                let info = JsObject::new()
                    .set("index", index(at))
                    .set("recovery", recovery)
                    .build();
                let (turn_js, text) = (JsValue::from_str(&turn_id), JsValue::from_str(&text));
                let args = Args::Three(&turn_js, &text, &info);
                let on_speech = self.callbacks.on_speech.as_ref();
                self.app
                    .call_optional("onSpeech", on_speech, args, Some(&turn_js));
                event(self, "sentence_queued")
                    .set("turnId", turn_id)
                    .set("index", index(at))
                    .set("recovery", recovery)
            }
            VoiceEvent::TtsStarted {
                turn_id,
                index: at,
                recovery,
            } => event(self, "tts_started")
                .set("turnId", turn_id)
                .set("index", index(at))
                .set("recovery", recovery),
            VoiceEvent::TtsFinished { turn_id, index: at } => event(self, "tts_finished")
                .set("turnId", turn_id)
                .set("index", index(at)),
            VoiceEvent::SentenceAudio {
                turn_id,
                index: at,
                starts_in_us,
            } => event(self, "sentence_audio")
                .set("turnId", turn_id)
                .set("index", index(at))
                .set("startsInMs", starts_in_us as f64 / 1000.0),
            VoiceEvent::TtsFailed {
                turn_id,
                index: at,
                code,
            } => event(self, "tts_failed")
                .set("turnId", turn_id)
                .set("index", index(at))
                .set("code", code),
            VoiceEvent::BargeIn { turn_id, cause } => event(self, "barge_in")
                .set("turnId", turn_id)
                .set("cause", cause.as_str()),
            VoiceEvent::TurnLatency(latency) => latency_event(self, &latency),
            VoiceEvent::Backchannel { turn_id } => {
                event(self, "backchannel").set("turnId", turn_id)
            }
            VoiceEvent::Voice { speaking, audio_ms } => event(self, "vad")
                .set("speaking", speaking)
                .set("atMs", audio_ms as f64),
            VoiceEvent::Echo {
                echo_db,
                return_loss_db,
                raised,
            } => event(self, "echo")
                .set("echoDb", echo_db)
                .set(
                    "returnLossDb",
                    return_loss_db.map_or(JsValue::NULL, JsValue::from),
                )
                .set("raised", raised),
            VoiceEvent::Paused { turn_id, cause } => event(self, "paused")
                .set("turnId", turn_id)
                .set("cause", cause.as_str()),
            VoiceEvent::Resumed { turn_id, paused_ms } => event(self, "resumed")
                .set("turnId", turn_id)
                .set("pausedMs", paused_ms as f64),
        };
        self.emit(object);
    }

    /// A part of a streamed sentence started late: the stream fell behind playback.
    pub(super) fn emit_underrun(&self, turn_id: &str, gap_ms: f64) {
        self.emit(
            event(self, "underrun")
                .set("turnId", turn_id)
                .set("gapMs", gap_ms),
        );
    }

    /// The audio output's context was closed under the session; `replaced`: speech goes on in a
    /// new one.
    pub(super) fn emit_output_closed(&self, replaced: bool, stalled: bool) {
        self.emit(
            event(self, "output_closed")
                .set("replaced", replaced)
                .set("stalled", stalled),
        );
    }

    pub(super) fn emit_playback_started(&self, turn_id: &str) {
        self.emit(event(self, "playback_started").set("turnId", turn_id));
    }

    /// The turn's audio ran out (`cut: false`) or was stopped (`cut: true`, with what of the
    /// scheduled audio never played).
    pub(super) fn emit_playback_ended(
        &self,
        turn_id: &str,
        heard_ms: f64,
        unheard_ms: Option<f64>,
    ) {
        let mut object = event(self, "playback_ended")
            .set("turnId", turn_id)
            .set("heardMs", libm::round(heard_ms.max(0.0)))
            .set("cut", unheard_ms.is_some());
        if let Some(unheard_ms) = unheard_ms {
            object = object.set("unheardMs", libm::round(unheard_ms.max(0.0)));
        }
        self.emit(object);
    }

    /// What `engine.stop()` silenced, as a cut `playback_ended`: nothing when nothing played, nor
    /// when nothing was left in line (the turn's audio ran out, and its end was reported then).
    pub(super) fn emit_stopped(&self, stopped: &Stopped) {
        let Some(turn_id) = &stopped.turn_id else {
            return;
        };
        if stopped.chunks.is_empty() {
            return;
        }
        let unheard: f64 = stopped
            .chunks
            .iter()
            .map(|chunk| (chunk.duration_ms - chunk.played_ms).max(0.0))
            .sum();
        if stopped.sources.is_empty() && unheard <= 0.0 {
            return;
        }
        self.emit_playback_ended(turn_id, stopped.heard_ms, Some(unheard));
    }

    /// The transcriber's state, with its counters at that moment.
    pub(super) fn emit_transcriber_state(&self, state: State) {
        let stats = self
            .driver
            .read(|core| core.transcriber().map(Transcriber::stats))
            .flatten()
            .unwrap_or_default();
        self.emit(
            event(self, "transcriber_state")
                .set("state", state.as_str())
                .set("provisions", stats.provisions as f64)
                .set("connections", stats.connections as f64)
                .set("framesDropped", stats.frames_dropped as f64),
        );
    }

    /// A transcriber error, as its code, terminality, HTTP status and dropped frames.
    pub(super) fn emit_transcriber_error(&self, error: &TranscriberError) {
        let mut object = event(self, "transcriber_error")
            .set("code", error.code())
            .set("terminal", error.is_terminal());
        match *error {
            TranscriberError::ProvisionRejected { status } if status > 0 => {
                object = object.set("status", f64::from(status));
            }
            TranscriberError::AudioDropped { frames, .. } => {
                object = object.set("frames", frames as f64);
            }
            _ => {}
        }
        self.emit(object);
    }

    /// The app's `provision()` settled: `ok`, or the HTTP `status` its error carried.
    pub(super) fn emit_provisioned(&self, failure: Option<u16>) {
        let mut object = event(self, "provision_finished").set("ok", failure.is_none());
        if let Some(status) = failure.filter(|&status| status > 0) {
            object = object.set("status", f64::from(status));
        }
        self.emit(object);
    }
}
