//! The error objects `LiveTranscriber` hands to JS: `onError`'s (real `Error`s with a `code`),
//! a throwing callback's, and the `DOMException`s of promises it rejects.

use crate::core::transcriber::TranscriberError;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/web/glue.js")]
extern "C" {
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = transcriberError)]
    pub(super) fn transcriber_error(
        code: &str,
        message: &str,
        terminal: bool,
        status: u16,
        frames: f64,
        ms: f64,
        total_frames: f64,
        attempts: u32,
    ) -> JsValue;
    #[wasm_bindgen(js_name = transcriberCallbackError)]
    pub(super) fn callback_error(callback: &str, cause: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = domError)]
    pub(super) fn dom_error(name: &str, message: &str) -> JsValue;
}

pub(super) fn aborted() -> JsValue {
    dom_error("AbortError", "the transcriber was stopped")
}

pub(super) fn freed() -> JsValue {
    dom_error("InvalidStateError", "the LiveTranscriber was freed")
}

pub(super) fn error_to_js(error: &TranscriberError) -> JsValue {
    let (status, frames, ms, total, attempts) = match *error {
        TranscriberError::AudioDropped {
            frames,
            ms,
            total_frames,
        } => (0, frames, ms, total_frames, 0),
        TranscriberError::ProvisionRejected { status } => (status, 0, 0, 0, 0),
        TranscriberError::ProvisionExhausted { attempts } => (0, 0, 0, 0, attempts),
        _ => (0, 0, 0, 0, 0),
    };
    transcriber_error(
        error.code(),
        &error.to_string(),
        error.is_terminal(),
        status,
        frames as f64,
        ms as f64,
        total as f64,
        attempts,
    )
}
