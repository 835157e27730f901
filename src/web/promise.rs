//! Promise chaining without an executor: `then` with a JS callback made once and reused, for I/O
//! whose every step is one promise (the chat route's `fetch` and body reads). This keeps the
//! `wasm-bindgen-futures` executor out of the `turnguard/controller` build, and makes no closure
//! per step.

use js_sys::Promise;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `promise.then(onFulfilled, onRejected)`; `undefined` passes an outcome through.
    #[wasm_bindgen(js_namespace = ["Promise", "prototype", "then"], js_name = call)]
    fn then_either(promise: &Promise, on_fulfilled: &JsValue, on_rejected: &JsValue) -> Promise;
}

/// `promise.then(onFulfilled)`: what `onFulfilled` returns (or throws) settles the result, and
/// a rejection passes through.
pub(crate) fn then(promise: &Promise, on_fulfilled: &JsValue) -> Promise {
    then_either(promise, on_fulfilled, &JsValue::UNDEFINED)
}

/// A callback that ignores its argument, for [`discard`]: made once per owner and shared.
pub(crate) fn ignore() -> JsValue {
    Closure::<dyn Fn()>::new(|| {}).into_js_value()
}

/// Handles a promise whose outcome does not matter with `ignore` (from [`ignore`]), so that its
/// rejection is not reported as unhandled.
pub(crate) fn discard(promise: &Promise, ignore: &JsValue) {
    let _ = then_either(promise, ignore, ignore);
}
