//! Streamed speech (issue 18): a `{ stream, format, sampleRate, channels? }` of raw PCM played
//! part by part as it arrives. Each read's whole frames become an `AudioBuffer` at the stream's
//! own rate (Web Audio resamples it to the context's), appended to the chunk's place in line; the
//! bytes of a torn frame wait for the next read ([`PcmFramer`]). A read that brings nothing for
//! the idle timeout, an error, or a value that is not bytes fails the chunk; a stop cancels the
//! reader, and a part that arrives after it is dropped.

use super::audio::AudioOut;
use crate::core::queue::Queue;
use crate::core::voice::pcm::{PcmFormat, PcmFramer};
use crate::web::convert::{is_whole, range_error, type_error, Fields};
use crate::web::glue::{clear_timeout, delay, set_timeout_with_argument};
use alloc::rc::Rc;
use alloc::vec;
use alloc::vec::Vec;
use js_sys::{ArrayBuffer, Float32Array, Function, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStream, ReadableStreamDefaultReader};

/// Look-ahead bound: a stream pauses its reads while this much audio waits ahead of the
/// playhead (scheduled or queued), so a fast TTS never buffers a whole answer in memory.
const MAX_BUFFERED_SECONDS: f64 = 20.0;
/// How often a paused reader checks whether it may read again.
const PAUSE_MS: i32 = 50;

/// A validated stream descriptor.
pub(crate) struct StreamSpec {
    pub(crate) stream: ReadableStream,
    pub(crate) format: PcmFormat,
    pub(crate) sample_rate: f32,
    pub(crate) channels: u32,
}

impl StreamSpec {
    /// Whether `value` is meant as a stream descriptor (an object with a `stream` field).
    pub(crate) fn is_descriptor(value: &JsValue) -> bool {
        value.is_object()
            && js_sys::Reflect::has(value, &JsValue::from_str("stream")).unwrap_or(false)
    }

    /// `{ stream: ReadableStream, format: "pcm16" | "f32", sampleRate, channels? }`; a
    /// `TypeError`/`RangeError` naming the field (`path.stream`, …) otherwise.
    pub(crate) fn parse(value: &JsValue, path: &str) -> Result<StreamSpec, JsValue> {
        let fields = Fields::of(value, path)?;
        let stream = fields
            .get("stream")?
            .dyn_into::<ReadableStream>()
            .map_err(|_| type_error(&[path, ".stream must be a ReadableStream"].concat()))?;
        if stream.locked() {
            return Err(type_error(
                &[path, ".stream is locked by another reader"].concat(),
            ));
        }
        let format = fields.get("format")?;
        let format = match format.as_string() {
            Some(name) => PcmFormat::parse(&name).ok_or_else(|| {
                range_error(&[path, ".format must be \"pcm16\" or \"f32\" (encoded audio: resolve with an ArrayBuffer)"].concat())
            })?,
            None => return Err(type_error(&[path, ".format must be a string"].concat())),
        };
        let rate = fields
            .get("sampleRate")?
            .as_f64()
            .ok_or_else(|| type_error(&[path, ".sampleRate must be a number"].concat()))?;
        // The range every browser's createBuffer accepts.
        if !(8000.0..=96000.0).contains(&rate) {
            return Err(range_error(
                &[path, ".sampleRate must be from 8000 to 96000"].concat(),
            ));
        }
        let channels = fields.get("channels")?;
        let channels = if channels.is_undefined() {
            1.0
        } else {
            channels
                .as_f64()
                .ok_or_else(|| type_error(&[path, ".channels must be a number"].concat()))?
        };
        if !is_whole(channels) || !(1.0..=8.0).contains(&channels) {
            return Err(range_error(
                &[path, ".channels must be a whole number from 1 to 8"].concat(),
            ));
        }
        Ok(StreamSpec {
            stream,
            format,
            sample_rate: rate as f32,
            channels: channels as u32,
        })
    }
}

/// How one read ended.
enum Read {
    Bytes(Vec<u8>),
    Done,
    /// No bytes for the idle timeout.
    Stalled,
    /// The stream errored, or brought something that is not bytes.
    Failed,
}

impl AudioOut {
    /// Plays a stream after everything enqueued before it, part by part as it arrives. `None`
    /// when the turn was stopped (the stream is cancelled). `idle_ms`: how long a read may bring
    /// nothing before the chunk fails as stalled.
    pub(crate) fn enqueue_stream(
        self: &Rc<Self>,
        turn_id: &str,
        spec: StreamSpec,
        idle_ms: u64,
    ) -> Option<u64> {
        let Some(seq) = self.schedule.borrow_mut().enqueue(turn_id) else {
            discard(&spec.stream.cancel());
            return None;
        };
        let reader: ReadableStreamDefaultReader = match spec.stream.get_reader().dyn_into() {
            Ok(reader) => reader,
            Err(_) => {
                self.chunk_failed(seq);
                return Some(seq);
            }
        };
        self.readers.borrow_mut().insert(seq, reader.clone());
        let weak = Rc::downgrade(self);
        wasm_bindgen_futures::spawn_local(async move {
            let mut framer = PcmFramer::new(spec.format, spec.channels as usize);
            loop {
                // Look-ahead bound: wait while enough audio is ahead of the playhead.
                loop {
                    let Some(engine) = weak.upgrade() else {
                        return cancel(&reader);
                    };
                    if !engine.schedule.borrow().is_queued(seq) {
                        return cancel(&reader);
                    }
                    let ahead = engine
                        .schedule
                        .borrow()
                        .buffered_seconds(engine.context().current_time());
                    if ahead < MAX_BUFFERED_SECONDS {
                        break;
                    }
                    drop(engine);
                    let _ = JsFuture::from(delay(PAUSE_MS)).await;
                }
                let read = read(&reader, idle_ms).await;
                let Some(engine) = weak.upgrade() else {
                    return cancel(&reader);
                };
                if !engine.schedule.borrow().is_queued(seq) {
                    // Stopped meanwhile: this part and every later one is dropped.
                    return cancel(&reader);
                }
                match read {
                    Read::Bytes(bytes) => engine.append_frames(seq, &spec, framer.push(&bytes)),
                    Read::Done => {
                        engine.readers.borrow_mut().remove(&seq);
                        if framer.frames() == 0 {
                            engine.stream_failed(seq, false);
                        } else {
                            let now = engine.context().current_time();
                            let ended = engine.schedule.borrow_mut().close(seq, now);
                            engine.stream_closed(seq, ended);
                        }
                        return;
                    }
                    Read::Stalled | Read::Failed => {
                        engine.readers.borrow_mut().remove(&seq);
                        cancel(&reader);
                        engine.stream_failed(seq, matches!(read, Read::Stalled));
                        return;
                    }
                }
            }
        });
        Some(seq)
    }

    /// One read's whole frames as a buffer at the stream's rate, appended to its chunk.
    fn append_frames(&self, seq: u64, spec: &StreamSpec, channels: Vec<Vec<f32>>) {
        let frames = channels.first().map_or(0, Vec::len);
        if frames == 0 {
            return; // a torn frame only: it waits for the next read
        }
        let Ok(length) = u32::try_from(frames) else {
            return self.stream_failed(seq, false);
        };
        let buffer = match self
            .context()
            .create_buffer(spec.channels, length, spec.sample_rate)
        {
            Ok(buffer) => buffer,
            Err(_) => return self.stream_failed(seq, false),
        };
        for (index, samples) in (0i32..).zip(channels.iter()) {
            let array = Float32Array::from(samples.as_slice());
            // `copyToChannel` takes the view: no copy through wasm memory views that may move.
            if buffer
                .copy_to_channel_with_f32_array(&array, index)
                .is_err()
            {
                return self.stream_failed(seq, false);
            }
        }
        if self.schedule.borrow_mut().append(seq, buffer.duration()) {
            if let Some(first) = channels.first() {
                self.report_samples_level(first, spec.sample_rate);
            }
            let mut buffers = self.buffers.borrow_mut();
            match buffers.get_mut(&seq) {
                Some(parts) => parts.push_back(buffer),
                None => {
                    buffers.insert(seq, Queue::from_iter([buffer]));
                }
            }
            drop(buffers);
            self.flush();
        }
    }
}

/// Reads a whole stream into one `AudioBuffer` (the recovery text, replayed from memory).
pub(crate) async fn collect(
    context: &web_sys::AudioContext,
    spec: StreamSpec,
    idle_ms: u64,
) -> Result<web_sys::AudioBuffer, JsValue> {
    let reader: ReadableStreamDefaultReader = spec.stream.get_reader().dyn_into()?;
    let mut framer = PcmFramer::new(spec.format, spec.channels as usize);
    let mut channels: Vec<Vec<f32>> = vec![Vec::new(); spec.channels as usize];
    loop {
        match read(&reader, idle_ms).await {
            Read::Bytes(bytes) => {
                for (all, part) in channels.iter_mut().zip(framer.push(&bytes)) {
                    all.extend(part);
                }
            }
            Read::Done => break,
            Read::Stalled | Read::Failed => {
                cancel(&reader);
                return Err(range_error("the audio stream failed or stalled"));
            }
        }
    }
    let frames = channels.first().map_or(0, Vec::len);
    let length = u32::try_from(frames)
        .ok()
        .filter(|frames| *frames > 0)
        .ok_or_else(|| range_error("the audio stream was empty"))?;
    let buffer = context.create_buffer(spec.channels, length, spec.sample_rate)?;
    for (index, samples) in (0i32..).zip(channels.iter()) {
        buffer.copy_to_channel_with_f32_array(&Float32Array::from(samples.as_slice()), index)?;
    }
    Ok(buffer)
}

/// `reader.read()` raced against `idle_ms` of nothing.
async fn read(reader: &ReadableStreamDefaultReader, idle_ms: u64) -> Read {
    let timeout = i32::try_from(idle_ms).unwrap_or(i32::MAX);
    let stall = JsValue::from_str("turnguard:stalled");
    // The timer calls the promise's own `resolve` with the marker: no Rust closure, so a read
    // that wins the race and clears the timer leaves nothing behind (a `Closure::once_into_js`
    // that is never called is never freed: one leaked per part read).
    let mut timer_id = JsValue::UNDEFINED;
    let timer = Promise::new(&mut |resolve: Function, _reject: Function| {
        timer_id = set_timeout_with_argument(&resolve, timeout, &stall);
    });
    let race = Promise::race(&js_sys::Array::of2(&reader.read(), &timer));
    let result = JsFuture::from(race).await;
    clear_timeout(&timer_id);
    let Ok(result) = result else {
        return Read::Failed;
    };
    if result == stall {
        return Read::Stalled;
    }
    let done = js_sys::Reflect::get(&result, &JsValue::from_str("done"))
        .ok()
        .is_some_and(|done| done.is_truthy());
    if done {
        return Read::Done;
    }
    let value = js_sys::Reflect::get(&result, &JsValue::from_str("value")).unwrap_or_default();
    if let Some(bytes) = value.dyn_ref::<Uint8Array>() {
        return Read::Bytes(bytes.to_vec());
    }
    if let Some(bytes) = value.dyn_ref::<ArrayBuffer>() {
        return Read::Bytes(Uint8Array::new(bytes).to_vec());
    }
    Read::Failed
}

/// Cancels a reader; its promise's rejection (a stream that errored) is handled.
pub(crate) fn cancel(reader: &ReadableStreamDefaultReader) {
    discard(&reader.cancel());
}

fn discard(promise: &Promise) {
    crate::web::promise::discard(promise, &crate::web::promise::ignore());
}
