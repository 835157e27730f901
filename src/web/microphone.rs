//! Microphone capture (L5): `getUserMedia` + an `AudioWorklet` that mixes to mono, resamples to the
//! transcriber's sample rate and hands over PCM16 frames of 20 ms (320 samples at 16 kHz).
//!
//! The graph lives in `glue.js`, the worklet in `capture-worklet.js` (shipped as
//! `pkg/capture-worklet.js` for pages whose CSP forbids `blob:` scripts); this file owns a running
//! capture as an RAII handle: dropping a [`Capture`] stops its frames at once, disconnects the
//! nodes, closes its `AudioContext`, and stops the tracks of a stream it opened itself (a stream
//! the app passed in stays the app's to stop). Every failure on the way releases what was taken.

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/web/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = isMediaStream)]
    fn is_media_stream_js(value: &JsValue) -> bool;
    #[wasm_bindgen(js_name = startCapture)]
    fn start_capture(
        stream: &JsValue,
        target_rate: u32,
        on_frame: &Function,
        adopt: &JsValue,
        worklet_url: &JsValue,
        worklet_source: &str,
        on_blocked: &JsValue,
    ) -> Promise;
    #[wasm_bindgen(js_name = stopCapture)]
    fn stop_capture(capture: &JsValue);
}

#[wasm_bindgen(module = "/src/web/capture-worklet.js")]
extern "C" {
    #[wasm_bindgen(js_name = captureWorkletSource)]
    fn capture_worklet_source() -> String;
}

/// Whether `value` is a `MediaStream`.
pub(crate) fn is_media_stream(value: &JsValue) -> bool {
    is_media_stream_js(value)
}

/// Where the capture worklet comes from.
pub(crate) enum WorkletSource {
    /// The worklet's source as a `blob:` URL (needs `blob:` in the CSP's `script-src`).
    Blob,
    /// This URL, normally a same-origin copy of `capture-worklet.js`.
    Url(String),
}

/// Starts capturing `stream` (the default microphone when `undefined`); `on_frame(pcm: Int16Array)`
/// gets every frame. Once it runs, `adopt` gets the [`Capture`]; its error rejects the promise, as
/// does the browser's (e.g. `NotAllowedError` when the user refused the microphone). A worklet
/// that cannot load rejects with turnguard's `worklet_blocked` error, handed to `on_blocked` first.
pub(crate) fn start(
    stream: &JsValue,
    sample_rate: u32,
    on_frame: &Function,
    worklet: &WorkletSource,
    adopt: impl FnOnce(Capture) -> Result<(), JsValue> + 'static,
    on_blocked: impl FnOnce(JsValue) + 'static,
) -> Promise {
    let adopt = Closure::once_into_js(move |handle: JsValue| adopt(Capture(handle)));
    let on_blocked = Closure::once_into_js(on_blocked);
    let (url, source) = match worklet {
        WorkletSource::Blob => (JsValue::UNDEFINED, capture_worklet_source()),
        WorkletSource::Url(url) => (JsValue::from_str(url), String::new()),
    };
    start_capture(
        stream,
        sample_rate,
        on_frame,
        &adopt,
        &url,
        &source,
        &on_blocked,
    )
}

/// A running capture; stopped when dropped.
pub(crate) struct Capture(JsValue);

impl Drop for Capture {
    fn drop(&mut self) {
        stop_capture(&self.0);
    }
}
