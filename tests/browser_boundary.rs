//! TurnController's JS boundary under a hostile app, in headless Chrome and Firefox: the
//! scenarios live in `tests/browser/boundary.js`.
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod web;

use js_sys::Function;
use turnguard::web::TurnController;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(module = "/tests/browser/boundary.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = runScenario)]
    async fn run_scenario(
        name: &str,
        make: &Function,
        memory: &JsValue,
    ) -> Result<JsValue, JsValue>;
}

async fn scenario(name: &str) {
    let make = web::factory2(TurnController::new);
    web::expect_scenario(name, run_scenario(name, &make, &wasm_bindgen::memory())).await;
}

scenarios! {
    free_from_every_callback_is_silent_and_idempotent => "freeFromEveryCallbackIsSilentAndIdempotent",
    interrupt_from_every_callback => "interruptFromEveryCallback",
    run_from_every_callback_starts_one_turn_each => "runFromEveryCallbackStartsOneTurnEach",
    hostile_route_results_are_attempt_failures => "hostileRouteResultsAreAttemptFailures",
    works_without_abort_signal_any => "worksWithoutAbortSignalAny",
    streams_that_ignore_their_signal_release_everything => "streamsThatIgnoreTheirSignalReleaseEverything",
    endless_and_huge_answers_are_cut_at_max_answer_chars => "endlessAndHugeAnswersAreCutAtMaxAnswerChars",
    oversize_input_is_refused_before_it_is_copied => "oversizeInputIsRefusedBeforeItIsCopied",
}
