//! The error objects `LiveTranscriber` hands to JS: `onError`'s (real `Error`s with a `code`) and
//! the `DOMException`s of promises it rejects.

use crate::core::stt::transcriber::TranscriberError;
use crate::web::convert::coded_error;
use js_sys::Reflect;
use wasm_bindgen::prelude::*;
use web_sys::DomException;

/// A `DOMException` named `name`.
pub(super) fn dom_error(name: &str, message: &str) -> JsValue {
    // The constructor cannot fail for a string name; a plain `Error` stands in if it ever does.
    DomException::new_with_message_and_name(message, name)
        .map_or_else(|_| js_sys::Error::new(message).into(), JsValue::from)
}

pub(super) fn aborted() -> JsValue {
    dom_error("AbortError", "the transcriber was stopped")
}

pub(super) fn freed() -> JsValue {
    dom_error("InvalidStateError", "the LiveTranscriber was freed")
}

/// What `onError` gets: an `Error` with `code`, `terminal`, and the fields of its kind.
pub(super) fn error_to_js(error: &TranscriberError) -> JsValue {
    let js = coded_error(&error.message(), None, error.code(), error.is_terminal());
    let number = |key: &str, value: f64| set(&js, key, &value.into());
    match error {
        TranscriberError::AudioDropped {
            frames,
            ms,
            total_frames,
        } => {
            number("frames", *frames as f64);
            number("ms", *ms as f64);
            number("totalFrames", *total_frames as f64);
        }
        TranscriberError::ProvisionRejected { status } if *status > 0 => {
            number("status", f64::from(*status));
        }
        TranscriberError::ProvisionExhausted { attempts }
        | TranscriberError::ProvisionUnreachable { attempts }
            if *attempts > 0 =>
        {
            number("attempts", f64::from(*attempts));
        }
        TranscriberError::FatalClose { code } => number("closeCode", f64::from(*code)),
        TranscriberError::ConnectFailed {
            protocol,
            attempt,
            attempts,
            ..
        } => {
            set(&js, "protocol", &(*protocol).into());
            number("attempt", f64::from(*attempt));
            number("attempts", f64::from(*attempts));
        }
        TranscriberError::UnexpectedMessages {
            protocol,
            count,
            kind,
        } => {
            set(&js, "protocol", &(*protocol).into());
            number("count", f64::from(*count));
            if let Some(kind) = kind {
                set(&js, "messageType", &kind.as_str().into());
            }
        }
        _ => {}
    }
    js
}

/// Setting a property of an object made here cannot fail.
fn set(object: &JsValue, key: &str, value: &JsValue) {
    let _ = Reflect::set(object, &JsValue::from_str(key), value);
}
