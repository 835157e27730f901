//! Speech output over Web Audio (P1, P3, P4): the engine behind `SpeechPlayer` and `VoiceSession`.
//!
//! The sans-IO [`PlaybackSchedule`] decides where each buffer starts on the audio clock; this file
//! performs it with `AudioBufferSourceNode`s into one `GainNode`. A stop ramps that gain to zero
//! over one render quantum (no click), stops the sources at the end of the ramp, and puts a fresh
//! gain in place for what plays next.
//!
//! Events go to the owner's sink after every borrow is released, so a sink may call back into
//! the engine (or free its owner).

use crate::core::queue::Queue;
use crate::core::voice::playback::{ChunkHeard, PartEnded, PlaybackSchedule, Stopped};
use crate::core::voice::vad::level_db;
use crate::web::convert::{range_error, type_error};
use crate::web::glue::{self, settle_quietly};
use crate::web::id_map::IdMap;
use alloc::boxed::Box;
use alloc::rc::{Rc, Weak};
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use js_sys::{ArrayBuffer, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AudioBuffer, AudioBufferSourceNode, AudioContext, AudioContextState, AudioNode,
    AudioScheduledSourceNode, GainNode,
};

/// Frames per render quantum in every browser.
const RENDER_QUANTUM_FRAMES: f64 = 128.0;

/// What the engine reports to its owner.
pub(crate) enum PlayerEvent {
    /// The first buffer of a turn's playback was scheduled.
    Start(String),
    /// A later buffer of the turn was scheduled after silence: the agent sounds again.
    Resumed(String),
    /// A turn's audio ran out or was stopped; heard milliseconds from the audio clock.
    End(String, f64),
    /// One chunk played to its end; its seconds of audio (every part, for a stream).
    ChunkEnded(u64, f64),
    /// A stream's last byte came: its chunk's audio is complete (it may still be playing).
    StreamClosed(u64),
    /// The first part of a chunk was scheduled to start this many milliseconds from now.
    ChunkStarted(u64, f64),
    /// A part of a streamed chunk started late, after this many milliseconds of silence.
    Underrun(String, f64),
    /// One chunk could not be decoded, or its stream failed or stalled (`stalled`): it left the
    /// line, or (`plays_out`) plays out what was scheduled of it, nothing more, and its
    /// `ChunkEnded` still comes.
    ChunkFailed {
        seq: u64,
        stalled: bool,
        plays_out: bool,
    },
    /// Audio waits on a context the browser keeps suspended: `resume()` from a user gesture.
    NeedsGesture,
    /// A whole buffer about to play has this mean level and this loudest 10 ms (dBFS).
    Level { mean_db: f64, peak_db: f64 },
    /// The context was closed under the engine (not by its own drop), or runs with a clock that
    /// stands still (`stalled`: iOS after an interruption): nothing plays on it any more.
    /// Reported once.
    Closed { stalled: bool },
}

pub(crate) type Sink = Box<dyn Fn(PlayerEvent)>;

pub(crate) struct AudioOut {
    context: AudioContext,
    /// Created by the engine: it resumes it once itself and closes it on drop.
    own_context: bool,
    output: AudioNode,
    gain: RefCell<Option<GainNode>>,
    /// The gain of the last stop, ramped to zero: disconnected at the next stop.
    retired_gain: RefCell<Option<GainNode>>,
    pub(crate) schedule: RefCell<PlaybackSchedule>,
    /// Started sources by their own id, with the chunk each plays a part of.
    sources: RefCell<IdMap<(u64, AudioBufferSourceNode)>>,
    next_source: Cell<u64>,
    /// Decoded parts waiting for their turn in line, per chunk in arrival order.
    pub(crate) buffers: RefCell<IdMap<Queue<AudioBuffer>>>,
    /// Readers of streams still arriving, by chunk: a stop cancels them.
    pub(crate) readers: RefCell<IdMap<web_sys::ReadableStreamDefaultReader>>,
    needs_gesture_reported: Cell<bool>,
    closed_reported: Cell<bool>,
    /// Paused for the user's voice (V7): the context is suspended by us, not by the browser,
    /// and its clock stands where the pause began.
    paused: Cell<bool>,
    /// The engine's own first `resume()` is pending: no gesture is needed yet.
    auto_resume_pending: Cell<bool>,
    on_state_change: Closure<dyn FnMut()>,
    sink: Sink,
    /// What only a session reads: levels for the echo meter (V8) and a clock that stands still.
    /// A bare `SpeechPlayer` gets neither, and copies no buffer to measure it.
    watches: Watches,
    weak: Weak<AudioOut>,
}

/// Whether an engine reports what a session needs beyond playback.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Watches {
    /// Playback only (a `SpeechPlayer`).
    Playback,
    /// Also [`PlayerEvent::Level`] of what plays and [`PlayerEvent::Closed`] for a stalled clock.
    Session,
}

impl AudioOut {
    /// An engine on `context` (a fresh `AudioContext` when `None`) playing into `output` (the
    /// context's destination when `None`).
    pub(crate) fn new(
        context: Option<AudioContext>,
        output: Option<AudioNode>,
        sink: Sink,
        watches: Watches,
    ) -> Result<Rc<AudioOut>, JsValue> {
        let own_context = context.is_none();
        let context = match context {
            Some(context) => context,
            None => AudioContext::new()?,
        };
        let output = output.unwrap_or_else(|| context.destination().into());
        let engine = Rc::new_cyclic(|weak: &Weak<AudioOut>| {
            let on_change = weak.clone();
            AudioOut {
                context,
                own_context,
                output,
                gain: RefCell::new(None),
                retired_gain: RefCell::new(None),
                schedule: RefCell::new(PlaybackSchedule::new()),
                sources: RefCell::new(IdMap::default()),
                next_source: Cell::new(0),
                buffers: RefCell::new(IdMap::default()),
                readers: RefCell::new(IdMap::default()),
                needs_gesture_reported: Cell::new(false),
                closed_reported: Cell::new(false),
                paused: Cell::new(false),
                auto_resume_pending: Cell::new(false),
                on_state_change: Closure::new(move || {
                    if let Some(engine) = on_change.upgrade() {
                        engine.on_state_change();
                    }
                }),
                sink,
                watches,
                weak: weak.clone(),
            }
        });
        let _ = engine.context.add_event_listener_with_callback(
            "statechange",
            engine.on_state_change.as_ref().unchecked_ref(),
        );
        if own_context && engine.context.state() == AudioContextState::Suspended {
            // Our own context may start suspended even where autoplay is allowed: try once.
            engine.auto_resume_pending.set(true);
            let weak = engine.weak.clone();
            let resumed = engine.context.resume();
            wasm_bindgen_futures::spawn_local(async move {
                if let Ok(promise) = resumed {
                    let _ = JsFuture::from(promise).await;
                }
                if let Some(engine) = weak.upgrade() {
                    engine.auto_resume_pending.set(false);
                    engine.flush();
                }
            });
        }
        Ok(engine)
    }

    pub(crate) fn context(&self) -> &AudioContext {
        &self.context
    }

    /// `"idle" | "playing" | "suspended"`.
    pub(crate) fn state(&self) -> &'static str {
        match self.context.state() {
            AudioContextState::Running if self.schedule.borrow().is_busy() => "playing",
            AudioContextState::Running | AudioContextState::Closed => "idle",
            // "suspended", and Safari's "interrupted" (a call, a locked screen), which web-sys
            // does not name: the clock stands still either way.
            _ => "suspended",
        }
    }

    /// Plays a decoded buffer after everything enqueued before it. `None` when the turn was
    /// stopped: the audio is dropped.
    pub(crate) fn enqueue_buffer(&self, turn_id: &str, buffer: AudioBuffer) -> Option<u64> {
        let seq = self.schedule.borrow_mut().enqueue(turn_id)?;
        self.schedule.borrow_mut().decoded(seq, buffer.duration());
        self.report_level(&buffer);
        self.buffers
            .borrow_mut()
            .insert(seq, Queue::from_iter([buffer]));
        self.flush();
        Some(seq)
    }

    /// Decodes `bytes` and plays them in enqueue order. The sequence number (`None`: dropped)
    /// and a promise that resolves once the chunk is decoded (or dropped), or rejects with a
    /// `RangeError` when the bytes cannot be decoded.
    pub(crate) fn enqueue_encoded(
        &self,
        turn_id: &str,
        bytes: &ArrayBuffer,
    ) -> (Option<u64>, Promise) {
        let Some(seq) = self.schedule.borrow_mut().enqueue(turn_id) else {
            return (None, Promise::resolve(&JsValue::UNDEFINED));
        };
        let decoding = match self.context.decode_audio_data(bytes) {
            Ok(promise) => promise,
            Err(error) => {
                self.chunk_failed(seq);
                return (Some(seq), Promise::reject(&decode_error(&error)));
            }
        };
        let weak = self.weak.clone();
        let done = glue::promise(async move {
            let decoded = JsFuture::from(decoding).await;
            let Some(engine) = weak.upgrade() else {
                return Ok(JsValue::UNDEFINED);
            };
            match decoded.and_then(JsCast::dyn_into::<AudioBuffer>) {
                Ok(buffer) => {
                    let kept = engine.schedule.borrow_mut().decoded(seq, buffer.duration());
                    if kept {
                        engine.report_level(&buffer);
                        engine
                            .buffers
                            .borrow_mut()
                            .insert(seq, Queue::from_iter([buffer]));
                        engine.flush();
                    }
                    Ok(JsValue::UNDEFINED)
                }
                Err(error) => {
                    engine.chunk_failed(seq);
                    Err(decode_error(&error))
                }
            }
        });
        (Some(seq), done)
    }

    /// The level of a whole buffer about to play, for the echo's return loss (V8).
    fn report_level(&self, buffer: &AudioBuffer) {
        if self.watches != Watches::Session {
            return;
        }
        if let Ok(samples) = buffer.get_channel_data(0) {
            self.report_samples_level(&samples, buffer.sample_rate());
        }
    }

    /// The level of audio about to play (its first channel): its mean square and its loudest
    /// 10 ms, in dBFS.
    pub(crate) fn report_samples_level(&self, samples: &[f32], sample_rate: f32) {
        if samples.is_empty() || self.watches != Watches::Session {
            return;
        }
        let block = ((sample_rate / 100.0) as usize).max(1);
        let (mut total, mut loudest) = (0.0, 0.0_f64);
        for part in samples.chunks(block) {
            let sum: f64 = part.iter().map(|s| f64::from(*s) * f64::from(*s)).sum();
            total += sum;
            loudest = loudest.max(sum / part.len() as f64);
        }
        (self.sink)(PlayerEvent::Level {
            mean_db: level_db(total / samples.len() as f64),
            peak_db: level_db(loudest),
        });
    }

    pub(crate) fn chunk_failed(&self, seq: u64) {
        self.stream_failed(seq, false);
    }

    /// The chunk failed (a stream that errored or stalled: `stalled`); what was scheduled of it
    /// plays out, nothing more is added, and the line moves on.
    pub(crate) fn stream_failed(&self, seq: u64, stalled: bool) {
        let now = self.context.current_time();
        let ended = self.schedule.borrow_mut().failed(seq, now);
        let plays_out = ended.chunk_done || self.schedule.borrow().is_queued(seq);
        self.buffers.borrow_mut().remove(&seq);
        (self.sink)(PlayerEvent::ChunkFailed {
            seq,
            stalled,
            plays_out,
        });
        self.report_part_ended(seq, ended);
        self.flush();
    }

    /// Silences at once and returns what played of the current turn (P1, P3). Every turn in line
    /// is stopped: its later audio is dropped.
    pub(crate) fn stop(&self) -> Stopped {
        let now = self.context.current_time();
        let stopped = self.schedule.borrow_mut().stop(now);
        self.buffers.borrow_mut().clear();
        // Paused, the agent is already silent and the clock stands at the pause: silence at that
        // very instant, so nothing sounds once the context runs again.
        let was_paused = self.paused.replace(false);
        let quantum = if was_paused {
            0.0
        } else {
            RENDER_QUANTUM_FRAMES / f64::from(self.context.sample_rate().max(1.0))
        };
        let silent_at = now + quantum;
        let gain = self.gain.borrow_mut().take();
        if let Some(gain) = gain {
            let param = gain.gain();
            let _ = param.cancel_scheduled_values(now);
            let _ = param.set_value_at_time(param.value(), now);
            let _ = param.linear_ramp_to_value_at_time(0.0, silent_at);
            let previous = self.retired_gain.borrow_mut().replace(gain);
            if let Some(previous) = previous {
                let _ = previous.disconnect();
            }
        }
        let sources: Vec<AudioBufferSourceNode> = {
            let mut all = self.sources.borrow_mut();
            let ids: Vec<u64> = all
                .iter()
                .filter(|(_, (seq, _))| stopped.sources.contains(seq))
                .map(|(id, _)| *id)
                .collect();
            ids.iter()
                .filter_map(|id| all.remove(id))
                .map(|(_, source)| source)
                .collect()
        };
        for source in sources {
            let _ = AudioScheduledSourceNode::stop_with_when(&source, silent_at);
        }
        if was_paused {
            settle_quietly(self.context.resume());
        }
        let readers: Vec<web_sys::ReadableStreamDefaultReader> = {
            let mut all = self.readers.borrow_mut();
            stopped
                .sources
                .iter()
                .filter_map(|seq| all.remove(seq))
                .collect()
        };
        for reader in readers {
            // Later chunks are dropped: the stream is released at once.
            crate::web::audio_stream::cancel(&reader);
        }
        if let (Some(turn_id), false) = (&stopped.turn_id, stopped.chunks.is_empty()) {
            (self.sink)(PlayerEvent::End(turn_id.clone(), stopped.heard_ms));
        }
        stopped
    }

    /// Pauses where it is (V7): the context is suspended, so its clock, and with it every
    /// scheduled buffer and the heard time, stands still until [`AudioOut::unpause`].
    /// Returns what played of `turn_id` by then.
    pub(crate) fn pause(&self, turn_id: &str) -> Vec<ChunkHeard> {
        if !self.paused.replace(true) {
            settle_quietly(self.context.suspend());
        }
        let now = self.context.current_time();
        self.schedule.borrow().heard_chunks(turn_id, now)
    }

    /// Goes on from the pause, gapless: the clock runs on from where it stood.
    pub(crate) fn unpause(&self) {
        if self.paused.replace(false) {
            settle_quietly(self.context.resume());
        }
    }

    /// `context.resume()`: call it from a user gesture. Queued audio then plays in order.
    pub(crate) fn resume(&self) -> Promise {
        if self.paused.get() {
            // Paused for the user's voice: the pause's end resumes the context, not a gesture.
            return Promise::resolve(&JsValue::UNDEFINED);
        }
        let resumed = self.context.resume();
        let weak = self.weak.clone();
        glue::promise(async move {
            JsFuture::from(resumed?).await?;
            if let Some(engine) = weak.upgrade() {
                engine.flush();
            }
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Schedules what is ready; reports a needed gesture when audio waits on a suspended context.
    pub(crate) fn flush(&self) {
        let running = self.context.state() == AudioContextState::Running;
        let now = self.context.current_time();
        let scheduled = self.schedule.borrow_mut().schedule(now, running);
        let mut events = Vec::new();
        for chunk in scheduled {
            let buffer = self
                .buffers
                .borrow_mut()
                .get_mut(&chunk.seq)
                .and_then(Queue::pop_front);
            let started =
                buffer.and_then(|buffer| self.start_source(chunk.seq, &buffer, chunk.start));
            if started.is_none() {
                // A closed context: the part counts as played so the line moves on.
                self.finish_part(chunk.seq);
                continue;
            }
            if chunk.first_of_chunk {
                events.push(PlayerEvent::ChunkStarted(
                    chunk.seq,
                    (chunk.start - now) * 1000.0,
                ));
            }
            if chunk.gap_ms > 0.0 {
                events.push(PlayerEvent::Underrun(chunk.turn_id.clone(), chunk.gap_ms));
            }
            if chunk.first_of_turn {
                events.push(PlayerEvent::Start(chunk.turn_id));
            } else if chunk.after_silence {
                events.push(PlayerEvent::Resumed(chunk.turn_id));
            }
        }
        let waiting = !running && self.schedule.borrow().is_busy() && !self.paused.get();
        if waiting
            && self.context.state() == AudioContextState::Suspended
            && !self.auto_resume_pending.get()
            && !self.needs_gesture_reported.replace(true)
        {
            events.push(PlayerEvent::NeedsGesture);
        }
        for event in events {
            (self.sink)(event);
        }
    }

    fn start_source(&self, seq: u64, buffer: &AudioBuffer, at: f64) -> Option<()> {
        let gain = self.current_gain()?;
        let source = self.context.create_buffer_source().ok()?;
        source.set_buffer(Some(buffer));
        source.connect_with_audio_node(&gain).ok()?;
        let weak = self.weak.clone();
        let id = self.next_source.get();
        self.next_source.set(id.wrapping_add(1));
        let on_ended = Closure::once_into_js(move || {
            if let Some(engine) = weak.upgrade() {
                engine.on_ended(id);
            }
        });
        AudioScheduledSourceNode::set_onended(&source, Some(on_ended.unchecked_ref()));
        AudioScheduledSourceNode::start_with_when(&source, at).ok()?;
        self.sources.borrow_mut().insert(id, (seq, source));
        Some(())
    }

    fn current_gain(&self) -> Option<GainNode> {
        if let Some(gain) = self.gain.borrow().as_ref() {
            return Some(gain.clone());
        }
        let gain = self.context.create_gain().ok()?;
        gain.connect_with_audio_node(&self.output).ok()?;
        *self.gain.borrow_mut() = Some(gain.clone());
        Some(gain)
    }

    /// A source ended: by itself, or stopped (then it already left `sources` and counts no more).
    fn on_ended(&self, id: u64) {
        let source = self.sources.borrow_mut().remove(&id);
        if let Some((seq, source)) = source {
            let _ = source.disconnect();
            self.finish_part(seq);
        }
    }

    fn finish_part(&self, seq: u64) {
        let now = self.context.current_time();
        let ended = self.schedule.borrow_mut().part_ended(seq, now);
        self.report_part_ended(seq, ended);
    }

    /// A stream's last byte came: its audio is complete; the chunks behind it may play.
    pub(crate) fn stream_closed(&self, seq: u64, ended: PartEnded) {
        (self.sink)(PlayerEvent::StreamClosed(seq));
        self.report_part_ended(seq, ended);
        self.flush();
    }

    /// A chunk that is done (every part played, no more to come) and perhaps its turn.
    pub(crate) fn report_part_ended(&self, seq: u64, ended: PartEnded) {
        if ended.chunk_done {
            (self.sink)(PlayerEvent::ChunkEnded(seq, ended.chunk_seconds));
        }
        if let Some(turn) = ended.turn {
            (self.sink)(PlayerEvent::End(turn.turn_id, turn.heard_ms));
        }
    }

    fn on_state_change(&self) {
        match self.context.state() {
            AudioContextState::Running => {
                self.needs_gesture_reported.set(false);
                self.watch_clock();
            }
            AudioContextState::Closed => {
                self.report_closed(false);
                return;
            }
            _ => {}
        }
        self.flush();
    }
}

/// How long a running context's clock may stand still after it (re)started before the context
/// counts as dead: Safari on iOS has left `currentTime` frozen after `resume()` resolved.
const STALL_CHECK_MS: i32 = 3000;

impl AudioOut {
    fn report_closed(&self, stalled: bool) {
        if !self.closed_reported.replace(true) {
            (self.sink)(PlayerEvent::Closed { stalled });
        }
    }

    /// Checks, [`STALL_CHECK_MS`] after the context started running, that its clock moved.
    fn watch_clock(&self) {
        if self.watches != Watches::Session {
            return;
        }
        let started_at = self.context.current_time();
        let weak = self.weak.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let _ = JsFuture::from(glue::delay(STALL_CHECK_MS)).await;
            let Some(engine) = weak.upgrade() else { return };
            let running = engine.context.state() == AudioContextState::Running;
            if running && engine.context.current_time() <= started_at {
                engine.report_closed(true);
            }
        });
    }
}

impl Drop for AudioOut {
    fn drop(&mut self) {
        let _ = self.context.remove_event_listener_with_callback(
            "statechange",
            self.on_state_change.as_ref().unchecked_ref(),
        );
        for reader in self.readers.borrow_mut().drain().map(|(_, reader)| reader) {
            crate::web::audio_stream::cancel(&reader);
        }
        for source in self
            .sources
            .borrow_mut()
            .drain()
            .map(|(_, (_, source))| source)
        {
            AudioScheduledSourceNode::set_onended(&source, None);
            let _ = AudioScheduledSourceNode::stop(&source);
            let _ = source.disconnect();
        }
        for gain in [
            self.gain.borrow_mut().take(),
            self.retired_gain.borrow_mut().take(),
        ]
        .into_iter()
        .flatten()
        {
            let _ = gain.disconnect();
        }
        if self.own_context {
            settle_quietly(self.context.close());
        }
    }
}

/// A `TypeError` saying what is missing where there is no Web Audio (Node, SSR, a test runner
/// without a DOM), before anything else fails with a less helpful "is not a constructor".
pub(crate) fn require_web_audio(class: &str) -> Result<(), JsValue> {
    let constructor = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("AudioContext"))?;
    if constructor.is_function() {
        return Ok(());
    }
    Err(type_error(&[class, " needs Web Audio and this environment has no AudioContext (Node, SSR, a test runner without a browser): create it in a browser page. TurnController and ReconnectPolicy work anywhere"].concat()))
}

fn decode_error(cause: &JsValue) -> JsValue {
    let detail = js_sys::Reflect::get(cause, &JsValue::from_str("message"))
        .ok()
        .and_then(|message| message.as_string())
        .unwrap_or_default();
    range_error(&["audio could not be decoded: ", &detail].concat())
}
