//! What the browser test files share: a factory turning a Rust constructor into a JS function,
//! and a runner that turns a rejected scenario into a test failure with the JS stack.

#![allow(dead_code)]

use js_sys::Function;

/// One `#[wasm_bindgen_test]` per scenario: `test_name => "jsScenarioName",` — each runs the
/// test file's own `scenario(name)`.
macro_rules! scenarios {
    ($($test:ident => $name:literal,)*) => {
        $(
            #[wasm_bindgen_test]
            async fn $test() {
                scenario($name).await;
            }
        )*
    };
}
use std::future::Future;
use wasm_bindgen::prelude::*;

// Declaring the shared helpers as a module of their own makes wasm-bindgen ship them beside the
// scenario files, which import them.
#[wasm_bindgen(module = "/tests/browser/support.js")]
extern "C" {
    fn sleep(ms: u32) -> js_sys::Promise;
}

/// `make(a, b)` for JS: calls `construct` and hands the JS object back (or throws its error).
pub fn factory2<T: Into<JsValue> + 'static>(
    construct: fn(JsValue, JsValue) -> Result<T, JsValue>,
) -> Function {
    Closure::<dyn Fn(JsValue, JsValue) -> Result<JsValue, JsValue>>::new(move |a, b| {
        construct(a, b).map(Into::into)
    })
    .into_js_value()
    .unchecked_into()
}

/// `make(a)` for JS.
pub fn factory1<T: Into<JsValue> + 'static>(
    construct: fn(JsValue) -> Result<T, JsValue>,
) -> Function {
    Closure::<dyn Fn(JsValue) -> Result<JsValue, JsValue>>::new(move |a| {
        construct(a).map(Into::into)
    })
    .into_js_value()
    .unchecked_into()
}

/// Awaits a scenario and fails the test with its message and JS stack if it rejected.
pub async fn expect_scenario(name: &str, scenario: impl Future<Output = Result<JsValue, JsValue>>) {
    // Lets the page settle between scenarios.
    let _ = wasm_bindgen_futures::JsFuture::from(sleep(0)).await;
    if let Err(error) = scenario.await {
        let message = js_sys::Reflect::get(&error, &"stack".into())
            .ok()
            .and_then(|stack| stack.as_string())
            .unwrap_or_else(|| format!("{error:?}"));
        panic!("{name}: {message}");
    }
}

/// The dev stack the suites talk to (scripts/test.sh starts it and sets the variable).
pub fn devstack_url() -> &'static str {
    option_env!("TURNGUARD_DEVSTACK_URL").unwrap_or("http://127.0.0.1:47831")
}
