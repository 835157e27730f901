//! TurnController in headless Chrome and Firefox: the scenarios live in
//! `tests/browser/controller.js` and run against the real browser APIs.
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod web;

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

async fn scenario(name: &str) {
    let make = web::factory2(TurnController::new);
    web::expect_scenario(name, run_scenario(name, &make)).await;
}

scenarios! {
    primary_times_out_then_fallback_answers => "primaryTimesOutThenFallbackAnswers",
    preemptive_attempts_are_kept_or_discarded_and_never_heard_early => "preemptiveAttemptsAreKeptOrDiscardedAndNeverHeardEarly",
    interrupt_while_generating_is_silent => "interruptWhileGeneratingIsSilent",
    both_routes_fail_one_recovery => "bothRoutesFailOneRecovery",
    non_retryable_failure_goes_straight_to_recovery => "nonRetryableFailureGoesStraightToRecovery",
    duplicate_run_starts_nothing => "duplicateRunStartsNothing",
    answer_after_deadline_is_late => "answerAfterDeadlineIsLate",
    deadline_shorter_than_attempt_timeout => "deadlineShorterThanAttemptTimeout",
    route_throws_synchronously => "routeThrowsSynchronously",
    non_string_never_reaches_tts => "nonStringNeverReachesTts",
    throwing_on_accepted_text_changes_nothing => "throwingOnAcceptedTextChangesNothing",
    throwing_on_event_and_on_error_are_reported_once_without_a_loop => "throwingOnEventAndOnErrorAreReportedOnceWithoutALoop",
    reentrant_calls_from_on_accepted_text => "reentrantCallsFromOnAcceptedText",
    reentrant_calls_from_generate => "reentrantCallsFromGenerate",
    forty_concurrent_turns_with_random_faults => "fortyConcurrentTurnsWithRandomFaults",
    invalid_options_throw_named_errors => "invalidOptionsThrowNamedErrors",
    dispose_aborts_running_turns => "disposeAbortsRunningTurns",
    session_and_retry_budgets => "sessionAndRetryBudgets",
    history_and_events_stay_bounded_and_clean => "historyAndEventsStayBoundedAndClean",
}
