//! Calling the app's `provision({ signal, reason, attempt })` (L1, L2, L7) so that nothing it does can throw
//! out of the transcriber: a `provision` that throws, a result whose `then` getter or `then` throws,
//! a result whose `url`/`id`/`protocols`/`config` getters throw, a rejection whose `status` getter
//! throws — each is a provisioning failure without an HTTP status.

use crate::web::convert::is_whole;
use crate::web::js_object::JsObject;
use alloc::string::String;
use js_sys::{Array, Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// How a `provision()` call ended.
pub(super) enum Provisioned {
    /// The session: its URL (empty when the result had none or its `protocols` were not strings),
    /// its `id` (a string or `undefined`), the socket's subprotocols (an array of strings or
    /// `undefined`) and `config` (an object or `undefined`).
    Session {
        url: String,
        id: JsValue,
        protocols: JsValue,
        config: JsValue,
    },
    /// A failure with the HTTP status of the rejection, or 0 (network, timeout, a throw);
    /// `unreachable` when it rejected with a `TypeError`, as `fetch` does for no network or a
    /// CORS refusal.
    Failed { status: u16, unreachable: bool },
}

/// Calls `provision({ signal, reason, attempt })` now (the caller holds no borrow) and gives a
/// promise of what it gave, which [`outcome`] reads. Never throws.
pub(super) fn call(provision: &Function, signal: &JsValue, reason: &str, attempt: u32) -> Promise {
    let request = JsObject::new()
        .set("signal", signal.clone())
        .set("reason", reason)
        .set("attempt", attempt)
        .build();
    // `resolve` adopts a thenable through its `then` and turns a throwing `then` getter (or a
    // `then` that throws) into a rejection; `Promise.resolve` would read `constructor` of a real
    // promise unguarded.
    Promise::new(&mut |resolve, reject| {
        let _ = match provision.call1(&JsValue::UNDEFINED, &request) {
            Ok(session) => resolve.call1(&JsValue::UNDEFINED, &session),
            Err(error) => reject.call1(&JsValue::UNDEFINED, &error),
        };
    })
}

/// How the call settled: reads the session's `url` and `id`, or the rejection's `status`.
pub(super) async fn outcome(settled: Promise) -> Provisioned {
    match JsFuture::from(settled).await {
        Ok(session) => session_of(&session),
        Err(error) => Provisioned::Failed {
            status: status_of(&error),
            unreachable: error.is_instance_of::<js_sys::TypeError>(),
        },
    }
}

/// `url`, `id`, `protocols` and `config` of what `provision()` resolved to; a getter that throws
/// is a failure.
fn session_of(session: &JsValue) -> Provisioned {
    let fields = ["url", "id", "protocols", "config"].map(|key| read(session, key));
    let [Ok(url), Ok(id), Ok(protocols), Ok(config)] = fields else {
        return Provisioned::Failed {
            status: 0,
            unreachable: false,
        };
    };
    let strings = |list: &JsValue| {
        Array::is_array(list) && Array::from(list).every(&mut |item, _, _| item.is_string())
    };
    // Subprotocols that are not strings would be stringified by the browser: refused as a URL
    // that cannot be used (a terminal `invalid_url`), never sent.
    let protocols_ok = protocols.is_undefined() || strings(&protocols);
    Provisioned::Session {
        url: url.as_string().filter(|_| protocols_ok).unwrap_or_default(),
        id: if id.is_string() {
            id
        } else {
            JsValue::UNDEFINED
        },
        protocols: if protocols_ok {
            protocols
        } else {
            JsValue::UNDEFINED
        },
        config: if config.is_object() {
            config
        } else {
            JsValue::UNDEFINED
        },
    }
}

/// The HTTP status a rejection carries: a whole `status` from 100 to 599, else 0.
fn status_of(error: &JsValue) -> u16 {
    read(error, "status")
        .ok()
        .and_then(|status| status.as_f64())
        .filter(|status| is_whole(*status) && (100.0..=599.0).contains(status))
        .map_or(0, |status| status as u16)
}

/// `value[key]` as `value?.[key]` reads it: `undefined` for `null`, `undefined` and primitives
/// (whose properties the protocol never uses); `Err` when a getter or proxy throws.
fn read(value: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    if value.is_object() || value.is_function() {
        Reflect::get(value, &JsValue::from_str(key))
    } else {
        Ok(JsValue::UNDEFINED)
    }
}
