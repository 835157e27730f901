//! The session id in every turn id (`<sessionId>:turn-<n>`): the app's `sessionId`, or 64 random
//! bits from the platform's `crypto.getRandomValues`, so request ids (idempotency keys) never
//! repeat across sessions and page loads. The core never draws randomness; the shell does, here.

use crate::web::convert::{range_error, type_error, Fields};
use alloc::string::String;
use js_sys::{Function, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

const MAX_CHARS: usize = 128;

/// `options.sessionId`, checked: it ends up in request ids and `idempotency-key` headers.
pub(super) fn session_id(fields: &Fields<'_>) -> Result<String, JsValue> {
    let Some(id) = fields.optional_string("sessionId")? else {
        return random_id();
    };
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if id.is_empty() || id.len() > MAX_CHARS || !id.chars().all(allowed) {
        return Err(range_error(
            "options.sessionId must be 1 to 128 letters, digits, '-', '_' or '.'",
        ));
    }
    Ok(id)
}

/// 16 hex digits from `crypto.getRandomValues` (a page, a worker and Node 20 all have it).
fn random_id() -> Result<String, JsValue> {
    let missing = || {
        type_error(
            "options.sessionId is required where crypto.getRandomValues is missing (it makes each session's turn ids unique)",
        )
    };
    let crypto = Reflect::get(&js_sys::global(), &JsValue::from_str("crypto"))?;
    if !crypto.is_object() {
        return Err(missing());
    }
    let fill: Function = Reflect::get(&crypto, &JsValue::from_str("getRandomValues"))?
        .dyn_into()
        .map_err(|_| missing())?;
    let bytes = Uint8Array::new_with_length(8);
    fill.call1(&crypto, &bytes)?;
    let mut id = String::with_capacity(16);
    for byte in bytes.to_vec() {
        for digit in [byte >> 4, byte & 15] {
            id.extend(char::from_digit(u32::from(digit), 16));
        }
    }
    Ok(id)
}
