//! LiveTranscriber under hostile conditions (issue 8), in headless Chrome and Firefox against the
//! dev stack's mock Gladia live STT: dead URLs, ended sessions, provisioning that never ends or
//! always throws, hostile provision results, a 64 MiB text frame, a text frame at `maxMessageBytes`, the microphone released on
//! failure, `workletUrl`, and `free()` from every callback. The scenarios live in
//! `tests/browser/transcriber_ends.js`. A suite of its own, so that a test page loads few modules
//! at once (a page with many stalled the browsers here now and then).
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod web;

use js_sys::Function;
use turnguard::web::transcriber::LiveTranscriber;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const DEVSTACK: &str = match option_env!("TURNGUARD_DEVSTACK_URL") {
    Some(url) => url,
    None => "http://127.0.0.1:47831",
};

#[wasm_bindgen(module = "/tests/browser/transcriber_ends.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = runScenario)]
    async fn run_scenario(name: &str, devstack: &str, make: &Function) -> Result<JsValue, JsValue>;
}

async fn scenario(name: &str) {
    let make = web::factory1(LiveTranscriber::new);
    web::expect_scenario(name, run_scenario(name, DEVSTACK, &make)).await;
}

scenarios! {
    a_dead_token_from_the_start_fails_as_connect_failed => "aDeadTokenFromTheStartFailsAsConnectFailed",
    a_backend_without_cors_is_named_at_the_first_failure => "aBackendWithoutCorsIsNamedAtTheFirstFailure",
    end_session_in_use_reprovisions_never_the_old_url => "endSessionInUseReprovisionsNeverTheOldUrl",
    end_session_every_time_fails_with_dead_session => "endSessionEveryTimeFailsWithDeadSession",
    provision_that_never_settles_is_aborted_retried_then_fails => "provisionThatNeverSettlesIsAbortedRetriedThenFails",
    always_throwing_provision_fails_after_max_provision_attempts => "alwaysThrowingProvisionFailsAfterMaxProvisionAttempts",
    hostile_provision_results_are_provisioning_failures => "hostileProvisionResultsAreProvisioningFailures",
    big_text_frame_is_skipped_counted_and_the_session_goes_on => "bigTextFrameIsSkippedCountedAndTheSessionGoesOn",
    text_frame_at_the_bound_is_read_one_byte_over_is_skipped => "textFrameAtTheBoundIsReadOneByteOverIsSkipped",
    microphone_is_released_when_the_worklet_cannot_load => "microphoneIsReleasedWhenTheWorkletCannotLoad",
    worklet_url_loads_the_shipped_worklet_file => "workletUrlLoadsTheShippedWorkletFile",
    free_is_idempotent_and_safe_from_every_callback => "freeIsIdempotentAndSafeFromEveryCallback",
}
