//! The speech path of a `VoiceSession` (P2): the app's `synthesize` with an abort signal per
//! sentence, the recovery audio decoded once and kept, and the engine's playback events back to
//! the core.

use super::Shared;
use crate::core::voice::playback::ChunkHeard;
use crate::web::audio::{AudioOut, PlayerEvent, Sink, Watches};
use crate::web::audio_stream::{collect, StreamSpec};
use crate::web::callbacks::Args;
use crate::web::convert::coded_error;
use crate::web::driver;
use crate::web::id_map::IdMap;
use crate::web::js_object::JsObject;
use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::vec::Vec;
use js_sys::{ArrayBuffer, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AudioBuffer, DomException};

/// One `synthesize` call: its abort, and its audio once it came.
struct Job {
    abort: AbortController,
    audio: Option<JsValue>,
}

/// The speech path's browser resources.
#[derive(Default)]
pub(super) struct SpeechIo {
    jobs: IdMap<Job>,
    /// The engine's sequence number of each job's chunk, for what played of it.
    pub(super) chunks: IdMap<u64>,
    /// The recovery text's decoded audio: synthesized once per session.
    recovery_audio: Option<AudioBuffer>,
    /// The `synthesize` signal of each job whose audio stream still arrives.
    streams: IdMap<AbortController>,
}

impl Shared {
    pub(super) fn synthesize(self: &Rc<Self>, job: u64, turn_id: &str, text: &str, recovery: bool) {
        let abort_controller =
            AbortController::new().unwrap_or_else(|_| JsValue::UNDEFINED.unchecked_into());
        let request = JsObject::new()
            .set("turnId", turn_id)
            .set("signal", abort_controller.signal())
            .build();
        self.speech.borrow_mut().jobs.insert(
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
                // A stream descriptor of a bad shape: the sentence is skipped (`tts_failed`).
                Ok(audio) if StreamSpec::is_descriptor(&audio) => {
                    StreamSpec::parse(&audio, "synthesize result").map(|_| audio)
                }
                other => other,
            };
            let ok = match audio {
                Ok(audio) if is_audio(&audio) => {
                    let mut io = shared.speech.borrow_mut();
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
                    if shared.speech.borrow_mut().jobs.remove(&job).is_none() {
                        return;
                    }
                    false
                }
            };
            shared.voice_input(|voice, now| voice.on_synthesized(job, ok, now));
        });
    }

    /// The recovery audio decoded once, so it can be replayed (an `ArrayBuffer` decodes once).
    async fn decode(&self, audio: JsValue) -> Result<JsValue, JsValue> {
        if StreamSpec::is_descriptor(&audio) {
            // Replayed whole, so read to its end once (the stream can be read only once).
            let spec = StreamSpec::parse(&audio, "synthesize result")?;
            let idle = self.tts_timeout_ms();
            let engine = self.engine();
            return collect(engine.context(), spec, idle)
                .await
                .map(JsValue::from);
        }
        match audio.dyn_into::<ArrayBuffer>() {
            Ok(bytes) => {
                let promise = self.engine().context().decode_audio_data(&bytes)?;
                JsFuture::from(promise).await
            }
            Err(audio) => Ok(audio),
        }
    }

    pub(super) fn play(self: &Rc<Self>, job: u64, turn_id: &str, recovery: bool) {
        let audio = {
            let mut io = self.speech.borrow_mut();
            let own = io.jobs.remove(&job).and_then(|live| {
                let is_stream = live.audio.as_ref().is_some_and(StreamSpec::is_descriptor);
                if is_stream {
                    // Its signal stays live while the stream arrives: a stop aborts it.
                    io_streams_insert(&mut io.streams, job, live.abort.clone());
                }
                live.audio
            });
            if recovery {
                io.recovery_audio.clone().map(JsValue::from).or(own)
            } else {
                own
            }
        };
        let stream = audio
            .as_ref()
            .filter(|audio| StreamSpec::is_descriptor(audio))
            .and_then(|audio| StreamSpec::parse(audio, "synthesize result").ok());
        let is_stream = stream.is_some();
        let seq = match (stream, audio) {
            (Some(spec), _) => {
                let idle = self.tts_timeout_ms();
                self.engine().enqueue_stream(turn_id, spec, idle)
            }
            (None, Some(audio)) => match audio.dyn_into::<AudioBuffer>() {
                Ok(buffer) => self.engine().enqueue_buffer(turn_id, buffer),
                Err(audio) => match audio.dyn_into::<ArrayBuffer>() {
                    Ok(bytes) => {
                        let (seq, decoded) = self.engine().enqueue_encoded(turn_id, &bytes);
                        // A failed decode comes back as `ChunkFailed`; the rejection is handled.
                        wasm_bindgen_futures::spawn_local(async move {
                            let _ = JsFuture::from(decoded).await;
                        });
                        seq
                    }
                    Err(_) => None,
                },
            },
            (None, None) => None,
        };
        match seq {
            Some(seq) => {
                self.speech.borrow_mut().chunks.insert(job, seq);
                if is_stream {
                    self.voice_update(|voice, _| voice.on_stream_opened(job));
                }
            }
            None => {
                self.release_stream(job);
                self.voice_update(|voice, now| voice.on_play_failed(job, now));
            }
        }
    }

    pub(super) fn on_player_event(self: &Rc<Self>, event: PlayerEvent) {
        let job_of = |seq: u64| {
            let io = self.speech.borrow();
            io.chunks
                .iter()
                .find(|(_, chunk)| *chunk == seq)
                .map(|(job, _)| *job)
        };
        match event {
            PlayerEvent::Start(turn_id) => {
                self.emit_playback_started(&turn_id);
                self.voice_input(|voice, now| voice.on_playback_started(&turn_id, now));
            }
            PlayerEvent::Resumed(turn_id) => {
                self.voice_input(|voice, now| voice.on_playback_started(&turn_id, now));
            }
            PlayerEvent::ChunkEnded(seq, seconds) => {
                if let Some(job) = job_of(seq) {
                    self.speech.borrow_mut().chunks.remove(&job);
                    self.speech.borrow_mut().streams.remove(&job);
                    self.voice_input(|voice, now| {
                        voice.on_audio_measured(job, seconds * 1000.0);
                        voice.on_chunk_ended(job, now);
                    });
                }
            }
            PlayerEvent::ChunkStarted(seq, lead_ms) => {
                if let Some(job) = job_of(seq) {
                    self.voice_input(|voice, now| voice.on_sentence_audio(job, lead_ms, now));
                }
            }
            PlayerEvent::StreamClosed(seq) => {
                if let Some(job) = job_of(seq) {
                    self.speech.borrow_mut().streams.remove(&job);
                    self.voice_input(|voice, _| voice.on_stream_closed(job));
                }
            }
            PlayerEvent::ChunkFailed {
                seq,
                stalled,
                plays_out,
            } => {
                if let Some(job) = job_of(seq) {
                    // What was scheduled plays out: its end must still find the job.
                    if !plays_out {
                        self.speech.borrow_mut().chunks.remove(&job);
                    }
                    if self.release_stream(job) {
                        self.voice_input(|voice, now| voice.on_stream_failed(job, stalled, now));
                    } else {
                        self.voice_input(|voice, now| voice.on_play_failed(job, now));
                    }
                }
            }
            PlayerEvent::Underrun(turn_id, gap_ms) => self.emit_underrun(&turn_id, gap_ms),
            PlayerEvent::NeedsGesture => {
                let callback = &self.callbacks.on_needs_gesture;
                self.call("onNeedsGesture", callback, Args::None, None);
            }
            PlayerEvent::Closed { stalled } => self.on_output_closed(stalled),
            PlayerEvent::Level { mean_db, peak_db } => {
                self.driver
                    .update(|core, _| core.on_output_level(mean_db, peak_db));
            }
            PlayerEvent::End(turn_id, heard_ms) => {
                if !self.stopping.get() {
                    self.emit_playback_ended(&turn_id, heard_ms, None);
                }
            }
        }
    }
}

impl Shared {
    /// The engine, for one call: a new one comes when its context was closed under it.
    pub(super) fn engine(&self) -> Rc<AudioOut> {
        self.engine.borrow().clone()
    }

    /// The engine's context was closed under it (`close()` by other code, a browser that gave up
    /// the device): the current turn is cut with what played of it, then speech goes on in a new
    /// context of the session's own at the default output. A turn cannot go on in the new context
    /// from where it stood: its audio was scheduled on the closed one.
    fn on_output_closed(self: &Rc<Self>, stalled: bool) {
        driver::input(self, |core, now| core.on_output_closed(now));
        let this = self.this.clone();
        let sink: Sink = Box::new(move |event| {
            if let Some(shared) = this.upgrade() {
                shared.on_player_event(event);
            }
        });
        let replaced = match AudioOut::new(None, None, sink, Watches::Session) {
            Ok(engine) => {
                *self.engine.borrow_mut() = engine;
                true
            }
            Err(cause) => {
                let message = "the session's AudioContext was closed, or its clock stood still, and a new one could not be made: no more speech plays";
                self.report_error(&coded_error(message, Some(&cause), "audio_closed", false));
                false
            }
        };
        self.emit_output_closed(replaced, stalled);
    }

    /// How long a `synthesize` (or a stream between two of its reads) may bring nothing.
    fn tts_timeout_ms(&self) -> u64 {
        self.driver
            .read(|core| core.voice().tts_timeout_ms())
            .unwrap_or(8000)
    }

    /// Aborts a synthesis still in flight and forgets its result.
    pub(super) fn abort_synthesis(&self, job: u64) {
        let aborted = self.speech.borrow_mut().jobs.remove(&job);
        if let Some(aborted) = aborted {
            abort(&aborted.abort);
        }
    }

    /// Aborts every synthesis in flight (the session stops).
    pub(super) fn abort_all_synthesis(&self) {
        let jobs: Vec<Job> = self
            .speech
            .borrow_mut()
            .jobs
            .drain()
            .map(|(_, job)| job)
            .collect();
        for job in jobs {
            abort(&job.abort);
        }
    }

    /// The player's chunks, each with the TTS job it plays.
    pub(super) fn by_job(&self, chunks: &[ChunkHeard]) -> Vec<(u64, ChunkHeard)> {
        let speech = self.speech.borrow();
        let job_of = |seq: u64| {
            speech
                .chunks
                .iter()
                .find(|(_, s)| *s == seq)
                .map(|(j, _)| *j)
        };
        chunks
            .iter()
            .filter_map(|chunk| Some((job_of(chunk.seq)?, *chunk)))
            .collect()
    }

    /// Silences the engine and reports what it cut as one `playback_ended` with `cut: true`.
    pub(super) fn stop_engine(&self) -> crate::core::voice::playback::Stopped {
        self.stopping.set(true);
        let stopped = self.engine().stop();
        self.stopping.set(false);
        self.emit_stopped(&stopped);
        stopped
    }

    /// Aborts the signal of a stream job that is still arriving; true if it was one.
    pub(super) fn release_stream(&self, job: u64) -> bool {
        let aborted = self.speech.borrow_mut().streams.remove(&job);
        match aborted {
            Some(controller) => {
                abort(&controller);
                true
            }
            None => false,
        }
    }

    /// Aborts every stream still arriving (a stop or a barge-in).
    pub(super) fn release_streams(&self) {
        let all: Vec<AbortController> = self
            .speech
            .borrow_mut()
            .streams
            .drain()
            .map(|(_, c)| c)
            .collect();
        for controller in all {
            abort(&controller);
        }
    }
}

fn io_streams_insert(streams: &mut IdMap<AbortController>, job: u64, abort: AbortController) {
    streams.insert(job, abort);
}

fn is_audio(value: &JsValue) -> bool {
    value.is_instance_of::<ArrayBuffer>()
        || value.is_instance_of::<AudioBuffer>()
        || StreamSpec::is_descriptor(value)
}

pub(super) fn abort(controller: &AbortController) {
    match DomException::new_with_message_and_name("turnguard: speech cancelled", "AbortError") {
        Ok(reason) => controller.abort_with_reason(&reason),
        Err(_) => controller.abort(),
    }
}
