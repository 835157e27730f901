//! ReconnectPolicy through its JS API in headless Chrome and Firefox; the scenarios live in
//! `tests/browser/policy.js`.
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod web;

use js_sys::Function;
use turnguard::web::ReconnectPolicy;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(module = "/tests/browser/policy.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = runScenario)]
    async fn run_scenario(name: &str, make: &Function) -> Result<JsValue, JsValue>;
}

async fn scenario(name: &str) {
    let make = web::factory1(|options| ReconnectPolicy::new(Some(options)));
    web::expect_scenario(name, run_scenario(name, &make)).await;
}

scenarios! {
    accept_then_4403_reprovisions_twice_then_stops => "acceptThen4403ReprovisionsTwiceThenStops",
    accept_then_1006_grows_to_the_cap_and_never_resets_on_open => "acceptThen1006GrowsToTheCapAndNeverResetsOnOpen",
    stable_open_resets_the_backoff_inclusive => "stableOpenResetsTheBackoffInclusive",
    detach_stops_everything => "detachStopsEverything",
    provisioning_failures_back_off_or_stop => "provisioningFailuresBackOffOrStop",
    seeded_jitter_is_repeatable_and_within_the_cap => "seededJitterIsRepeatableAndWithinTheCap",
    three_failed_connects_make_the_url_dead => "threeFailedConnectsMakeTheUrlDead",
    end_session_reprovisions_within_the_window => "endSessionReprovisionsWithinTheWindow",
    provisioning_without_a_status_gives_up_after_max_provision_attempts => "provisioningWithoutAStatusGivesUpAfterMaxProvisionAttempts",
    free_is_idempotent => "freeIsIdempotent",
    bad_input_throws_named_errors => "badInputThrowsNamedErrors",
}
