//! TurnController in headless Chrome and Firefox: the scenarios live in
//! `tests/browser/controller.js` and run against the real browser APIs.
#![cfg(target_arch = "wasm32")]

use js_sys::Function;
use turnguard::web::TurnController;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(module = "/tests/browser/controller.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = runScenario)]
    async fn run_scenario(name: &str, make: &Function) -> Result<JsValue, JsValue>;
}

// Declaring the shared helpers as a module of their own makes wasm-bindgen ship them beside the
// scenarios, which import them.
#[wasm_bindgen(module = "/tests/browser/support.js")]
extern "C" {
    fn sleep(ms: u32) -> js_sys::Promise;
}

/// `make(routes, options)`: what `new TurnController(routes, options)` does in JS.
fn make() -> Function {
    Closure::<dyn Fn(JsValue, JsValue) -> Result<JsValue, JsValue>>::new(|routes, options| {
        TurnController::new(routes, options).map(JsValue::from)
    })
    .into_js_value()
    .unchecked_into()
}

async fn scenario(name: &str) {
    // Lets the page settle between scenarios.
    let _ = wasm_bindgen_futures::JsFuture::from(sleep(0)).await;
    if let Err(error) = run_scenario(name, &make()).await {
        let message = js_sys::Reflect::get(&error, &"stack".into())
            .ok()
            .and_then(|stack| stack.as_string())
            .unwrap_or_else(|| format!("{error:?}"));
        panic!("{name}: {message}");
    }
}

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

scenarios! {
    primary_times_out_then_fallback_answers => "primaryTimesOutThenFallbackAnswers",
    interrupt_while_generating_is_silent => "interruptWhileGeneratingIsSilent",
    both_routes_fail_one_recovery => "bothRoutesFailOneRecovery",
    non_retryable_failure_goes_straight_to_recovery => "nonRetryableFailureGoesStraightToRecovery",
    duplicate_run_starts_nothing => "duplicateRunStartsNothing",
    answer_after_deadline_is_late => "answerAfterDeadlineIsLate",
    deadline_shorter_than_attempt_timeout => "deadlineShorterThanAttemptTimeout",
    route_throws_synchronously => "routeThrowsSynchronously",
    non_string_never_reaches_tts => "nonStringNeverReachesTts",
    throwing_on_accepted_text_changes_nothing => "throwingOnAcceptedTextChangesNothing",
    reentrant_calls_from_on_accepted_text => "reentrantCallsFromOnAcceptedText",
    reentrant_calls_from_generate => "reentrantCallsFromGenerate",
    forty_concurrent_turns_with_random_faults => "fortyConcurrentTurnsWithRandomFaults",
    invalid_options_throw_named_errors => "invalidOptionsThrowNamedErrors",
    dispose_aborts_running_turns => "disposeAbortsRunningTurns",
    session_and_retry_budgets => "sessionAndRetryBudgets",
    history_and_events_stay_bounded_and_clean => "historyAndEventsStayBoundedAndClean",
}
