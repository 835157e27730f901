//! Bindings to `glue.js` and to the global timer functions.

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;

// The turn ladder's JS: only the builds with the controller ship it.
#[cfg(feature = "controller")]
#[wasm_bindgen(module = "/src/web/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = newAttempt)]
    pub(crate) fn new_attempt(
        request_id: &JsValue,
        turn_id: &JsValue,
        input: &JsValue,
        history: &JsValue,
    ) -> web_sys::AbortController;
    #[wasm_bindgen(js_name = callRoute)]
    pub(crate) fn call_route(route: &JsValue, generate: &Function, id: u32, report: &Function);
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = attemptRecord)]
    pub(crate) fn attempt_record(
        request_id: &JsValue,
        route: &JsValue,
        started_at: f64,
        finished_at: f64,
        result: u8,
        failure: i32,
        http_status: u16,
        preemptive: bool,
    ) -> JsValue;
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = turnRecord)]
    pub(crate) fn turn_record(
        turn_id: &JsValue,
        input: &JsValue,
        status: u8,
        started_at: f64,
        deadline_at: f64,
        attempts: &JsValue,
        accepted_request_id: &JsValue,
        accepted_text: &JsValue,
        reason: i32,
    ) -> JsValue;
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = turnEvent)]
    pub(crate) fn turn_event(
        kind: u8,
        turn_id: &JsValue,
        at: f64,
        request_id: &JsValue,
        route: &JsValue,
        code: i32,
        failure: i32,
        http_status: u16,
        amount: f64,
    ) -> JsValue;
    #[wasm_bindgen(js_name = pushExchange)]
    pub(crate) fn push_exchange(messages: &js_sys::Array, user: &str, assistant: &str);
    #[wasm_bindgen(js_name = waitFor)]
    pub(crate) fn wait_for(waiters: &js_sys::Map, turn_id: &JsValue) -> Promise;
    #[wasm_bindgen(js_name = resolveWaiters)]
    pub(crate) fn resolve_waiters(waiters: &js_sys::Map, turn_id: &JsValue, record: &JsValue);
    #[wasm_bindgen(js_name = classifyError)]
    pub(crate) fn classify_error(error: &JsValue) -> u32;
}

#[wasm_bindgen]
extern "C" {
    // The global functions, so the module works in windows, workers and Node alike.
    #[wasm_bindgen(catch, js_name = fetch)]
    pub(crate) fn fetch(url: &JsValue, init: &web_sys::RequestInit) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = setTimeout)]
    pub(crate) fn set_timeout(handler: &Function, ms: i32) -> JsValue;
    /// `setTimeout(handler, ms, argument)`: `handler(argument)` when it fires.
    #[wasm_bindgen(js_name = setTimeout)]
    pub(crate) fn set_timeout_with_argument(
        handler: &Function,
        ms: i32,
        argument: &JsValue,
    ) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    pub(crate) fn clear_timeout(id: &JsValue);
    #[cfg(feature = "transcriber")]
    #[wasm_bindgen(js_name = setInterval)]
    pub(crate) fn set_interval(handler: &Function, ms: i32) -> JsValue;
    #[cfg(feature = "transcriber")]
    #[wasm_bindgen(js_name = clearInterval)]
    pub(crate) fn clear_interval(id: &JsValue);
}

/// A promise that resolves after `ms` milliseconds.
#[cfg(any(feature = "voice", feature = "transcriber"))]
pub(crate) fn delay(ms: i32) -> js_sys::Promise {
    js_sys::Promise::new(
        &mut |resolve: js_sys::Function, _reject: js_sys::Function| {
            set_timeout(&resolve, ms);
        },
    )
}

/// A promise for a future's outcome. `future_to_promise` is generic: each future type would get its
/// own copy of its executor closure and wrapper, so every caller shares the boxed one.
#[cfg(feature = "transcriber")]
pub(crate) fn promise(
    future: impl core::future::Future<Output = Result<JsValue, JsValue>> + 'static,
) -> Promise {
    use alloc::boxed::Box;
    use core::future::Future;
    use core::pin::Pin;
    let future: Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>> = Box::pin(future);
    wasm_bindgen_futures::future_to_promise(future)
}

/// Lets a browser promise settle without an unhandled rejection (a `resume()`, `suspend()` or
/// `close()` whose outcome changes nothing here, and which rejects once its context is closed).
#[cfg(any(feature = "voice", feature = "transcriber"))]
pub(crate) fn settle_quietly(promise: Result<js_sys::Promise, JsValue>) {
    if let Ok(promise) = promise {
        wasm_bindgen_futures::spawn_local(async move {
            let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        });
    }
}
