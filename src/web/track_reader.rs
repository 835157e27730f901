//! A microphone track read directly, where the browser offers it (`MediaStreamTrackProcessor`:
//! Chromium): its audio comes to the page as the capture delivers it, 10 ms at a time, without
//! Web Audio's graph between them. In the room (Chromium on PulseAudio) a sound reached the page
//! 45 ms sooner this way than through an `AudioWorkletNode` posting 20 ms frames (25–65 ms, 15
//! tone bursts), and 40 ms sooner than one posting every render quantum: the graph's own buffering,
//! not the frame size. With the session's whole page (its player, its capture's own context) a
//! user's "stop" reached the voice detector 105 ms sooner. Elsewhere the capture worklet does the
//! same job (microphone.rs).
//!
//! The processor reads the track itself, not a clone: a clone would hold the device open after
//! the app stops its track (until the next check of the tracks), and a page that reopens its
//! microphone would get the old device back. Cancelling the reader leaves the track live (Chromium),
//! so a track the app owns stays the app's; no frame is handed on after the reader is dropped.

use crate::core::stt::capture_framer::{mix_into, CaptureFramer};
use crate::web::glue::settle_quietly;
use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::Cell;
use js_sys::{Float32Array, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{MediaStreamTrack, ReadableStream, ReadableStreamDefaultReader};

#[wasm_bindgen]
extern "C" {
    /// `MediaStreamTrackProcessor` as the global names it when called (a page or a test may
    /// remove it; web-sys has it only behind its unstable APIs).
    #[wasm_bindgen(js_name = MediaStreamTrackProcessor)]
    type TrackProcessor;
    #[wasm_bindgen(constructor, catch, js_class = "MediaStreamTrackProcessor")]
    fn new(init: &JsValue) -> Result<TrackProcessor, JsValue>;
    #[wasm_bindgen(method, getter)]
    fn readable(this: &TrackProcessor) -> ReadableStream;

    /// WebCodecs' `AudioData`: one piece of the capture.
    type AudioData;
    #[wasm_bindgen(method, getter, js_name = numberOfFrames)]
    fn number_of_frames(this: &AudioData) -> u32;
    #[wasm_bindgen(method, getter, js_name = numberOfChannels)]
    fn number_of_channels(this: &AudioData) -> u32;
    #[wasm_bindgen(method, getter, js_name = sampleRate)]
    fn sample_rate(this: &AudioData) -> f64;
    #[wasm_bindgen(method, catch, js_name = copyTo)]
    fn copy_to(this: &AudioData, into: &Float32Array, options: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(method)]
    fn close(this: &AudioData);
}

/// Pieces the processor holds while the page is busy, before it drops the oldest: about a
/// second of 10 ms pieces (the worklet's messages queue without a bound; this is the bound).
const BUFFERED_PIECES: u32 = 100;

/// Whether this browser can read a track directly.
pub(crate) fn available() -> bool {
    Reflect::get(
        &js_sys::global(),
        &JsValue::from_str("MediaStreamTrackProcessor"),
    )
    .is_ok_and(|constructor| constructor.is_function())
}

/// Reads a track until dropped.
pub(crate) struct TrackReader {
    reader: ReadableStreamDefaultReader,
    stopped: Rc<Cell<bool>>,
}

impl TrackReader {
    /// Starts reading `track`; `on_frame` gets PCM16 frames of 20 ms at `sample_rate`.
    pub(crate) fn start(
        track: &MediaStreamTrack,
        sample_rate: u32,
        mut on_frame: impl FnMut(Vec<u8>) + 'static,
    ) -> Result<TrackReader, JsValue> {
        let init = js_sys::Object::new();
        let _ = Reflect::set(&init, &JsValue::from_str("track"), track);
        let _ = Reflect::set(
            &init,
            &JsValue::from_str("maxBufferSize"),
            &JsValue::from(BUFFERED_PIECES),
        );
        let processor = TrackProcessor::new(&init)?;
        let reader = ReadableStreamDefaultReader::new(&processor.readable())?;
        let stopped = Rc::new(Cell::new(false));
        let (pieces, done) = (reader.clone(), Rc::clone(&stopped));
        spawn_local(async move {
            let mut framer: Option<CaptureFramer> = None;
            let (mut mono, mut plane) = (Vec::new(), Vec::new());
            let mut scratch: Option<Float32Array> = None;
            let options = js_sys::Object::new();
            let _ = Reflect::set(
                &options,
                &JsValue::from_str("format"),
                &JsValue::from_str("f32-planar"),
            );
            while !done.get() {
                let Ok(result) = JsFuture::from(pieces.read()).await else {
                    return;
                };
                let value = Reflect::get(&result, &JsValue::from_str("value")).unwrap_or_default();
                if value.is_undefined() {
                    return; // done: the track ended, or the reader was cancelled
                }
                let piece: AudioData = value.unchecked_into();
                let read = read_mono(&piece, &options, &mut scratch, &mut mono, &mut plane);
                let rate = piece.sample_rate(); // 0 once closed
                piece.close();
                if done.get() || !read {
                    continue;
                }
                let framer = match &mut framer {
                    Some(framer) if framer.input_rate() == rate => framer,
                    _ => framer.insert(CaptureFramer::new(rate, sample_rate)),
                };
                framer.push(&mono, &mut on_frame);
            }
        });
        Ok(TrackReader { reader, stopped })
    }
}

/// The piece's channels mixed into `mono` (`options`: `copyTo`'s, `format` set); false when it
/// could not be copied.
fn read_mono(
    piece: &AudioData,
    options: &js_sys::Object,
    scratch: &mut Option<Float32Array>,
    mono: &mut Vec<f32>,
    plane: &mut Vec<f32>,
) -> bool {
    let frames = piece.number_of_frames();
    let channels = piece.number_of_channels().max(1);
    let length = frames as usize;
    let buffer = match scratch {
        Some(buffer) if buffer.length() == frames => buffer,
        _ => scratch.insert(Float32Array::new_with_length(frames)),
    };
    mono.clear();
    mono.resize(length, 0.0);
    plane.resize(length, 0.0);
    for channel in 0..channels {
        let _ = Reflect::set(options, &JsValue::from_str("planeIndex"), &channel.into());
        if piece.copy_to(buffer, options).is_err() {
            return false;
        }
        buffer.copy_to(plane);
        mix_into(mono, plane, channels);
    }
    true
}

impl Drop for TrackReader {
    fn drop(&mut self) {
        self.stopped.set(true);
        settle_quietly(Ok(self.reader.cancel()));
    }
}
