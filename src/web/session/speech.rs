//! The speech path of a `VoiceSession` (P2): the app's `synthesize` with an abort signal per
//! sentence, the recovery audio decoded once and kept, and the engine's playback events back to
//! the core.

use super::{Job, Shared};
use crate::web::audio::PlayerEvent;
use crate::web::driver;
use crate::web::js_object::JsObject;
use js_sys::{ArrayBuffer, Promise};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AudioBuffer, DomException};

impl Shared {
    pub(super) fn synthesize(self: &Rc<Self>, job: u64, turn_id: &str, text: &str, recovery: bool) {
        let abort_controller =
            AbortController::new().unwrap_or_else(|_| JsValue::UNDEFINED.unchecked_into());
        let request = JsObject::new()
            .set("turnId", turn_id)
            .set("signal", abort_controller.signal())
            .build();
        self.io.borrow_mut().jobs.insert(
            job,
            Job {
                abort: abort_controller,
                audio: None,
            },
        );
        let called = self.callbacks.synthesize.call2(
            &JsValue::UNDEFINED,
            &JsValue::from_str(text),
            &request,
        );
        let weak = Rc::downgrade(self);
        wasm_bindgen_futures::spawn_local(async move {
            let audio = match called {
                Ok(value) => JsFuture::from(Promise::resolve(&value)).await,
                Err(error) => Err(error),
            };
            let Some(shared) = weak.upgrade() else {
                return;
            };
            let audio = match audio {
                Ok(audio) if recovery => shared.decode(audio).await,
                other => other,
            };
            let ok = match audio {
                Ok(audio) if is_audio(&audio) => {
                    let mut io = shared.io.borrow_mut();
                    if !io.jobs.contains_key(&job) {
                        return; // aborted: its audio never plays
                    }
                    if let Some(buffer) = audio.dyn_ref::<AudioBuffer>().filter(|_| recovery) {
                        io.recovery_audio = Some(buffer.clone());
                    }
                    if let Some(live) = io.jobs.get_mut(&job) {
                        live.audio = Some(audio);
                    }
                    true
                }
                _ => {
                    if shared.io.borrow_mut().jobs.remove(&job).is_none() {
                        return;
                    }
                    false
                }
            };
            driver::input(&shared, |core, now| core.on_synthesized(job, ok, now));
        });
    }

    /// The recovery audio decoded once, so it can be replayed (an `ArrayBuffer` decodes once).
    async fn decode(&self, audio: JsValue) -> Result<JsValue, JsValue> {
        match audio.dyn_into::<ArrayBuffer>() {
            Ok(bytes) => {
                let promise = self.engine.context().decode_audio_data(&bytes)?;
                JsFuture::from(promise).await
            }
            Err(audio) => Ok(audio),
        }
    }

    pub(super) fn play(self: &Rc<Self>, job: u64, turn_id: &str, recovery: bool) {
        let audio = {
            let mut io = self.io.borrow_mut();
            let own = io.jobs.remove(&job).and_then(|job| job.audio);
            if recovery {
                io.recovery_audio.clone().map(JsValue::from).or(own)
            } else {
                own
            }
        };
        let seq = match audio {
            Some(audio) => match audio.dyn_into::<AudioBuffer>() {
                Ok(buffer) => self.engine.enqueue_buffer(turn_id, buffer),
                Err(audio) => match audio.dyn_into::<ArrayBuffer>() {
                    Ok(bytes) => {
                        let (seq, decoded) = self.engine.enqueue_encoded(turn_id, &bytes);
                        // A failed decode comes back as `ChunkFailed`; the rejection is handled.
                        wasm_bindgen_futures::spawn_local(async move {
                            let _ = JsFuture::from(decoded).await;
                        });
                        seq
                    }
                    Err(_) => None,
                },
            },
            None => None,
        };
        match seq {
            Some(seq) => {
                self.io.borrow_mut().chunks.insert(job, seq);
            }
            None => {
                self.driver
                    .update(|core, now| core.on_play_failed(job, now));
            }
        }
    }

    pub(super) fn on_player_event(self: &Rc<Self>, event: PlayerEvent) {
        let job_of = |seq: u64| {
            let io = self.io.borrow();
            io.chunks
                .iter()
                .find(|(_, chunk)| **chunk == seq)
                .map(|(job, _)| *job)
        };
        match event {
            PlayerEvent::Start(turn_id) => {
                self.emit_playback_started(&turn_id);
                driver::input(self, |core, now| core.on_playback_started(&turn_id, now));
            }
            PlayerEvent::Resumed(turn_id) => {
                driver::input(self, |core, now| core.on_playback_started(&turn_id, now));
            }
            PlayerEvent::ChunkEnded(seq) => {
                if let Some(job) = job_of(seq) {
                    self.io.borrow_mut().chunks.remove(&job);
                    driver::input(self, |core, now| core.on_chunk_ended(job, now));
                }
            }
            PlayerEvent::ChunkFailed(seq) => {
                if let Some(job) = job_of(seq) {
                    self.io.borrow_mut().chunks.remove(&job);
                    driver::input(self, |core, now| core.on_play_failed(job, now));
                }
            }
            PlayerEvent::NeedsGesture => self.call(&self.callbacks.on_needs_gesture, &[]),
            PlayerEvent::End(turn_id, heard_ms) => {
                if !self.stopping.get() {
                    self.emit_playback_ended(&turn_id, heard_ms, None);
                }
            }
        }
    }
}

fn is_audio(value: &JsValue) -> bool {
    value.is_instance_of::<ArrayBuffer>() || value.is_instance_of::<AudioBuffer>()
}

pub(super) fn abort(controller: &AbortController) {
    match DomException::new_with_message_and_name("turnguard: speech cancelled", "AbortError") {
        Ok(reason) => controller.abort_with_reason(&reason),
        Err(_) => controller.abort(),
    }
}
