//! LiveTranscriber with `protocol: "assemblyai"` in headless Chrome and Firefox against the dev
//! stack's AssemblyAI mock: the scenarios live in `tests/browser/assemblyai.js`.
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

#[wasm_bindgen(module = "/tests/browser/assemblyai.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = runScenario)]
    async fn run_scenario(name: &str, devstack: &str, make: &Function) -> Result<JsValue, JsValue>;
}

async fn scenario(name: &str) {
    let make = web::factory1(LiveTranscriber::new);
    web::expect_scenario(name, run_scenario(name, DEVSTACK, &make)).await;
}

scenarios! {
    one_final_per_turn_the_formatted_one => "oneFinalPerTurnTheFormattedOne",
    a_backlog_never_trips_3007 => "aBacklogNeverTrips3007",
    a_drop_mid_turn_keeps_the_words_spoken_during_the_outage => "aDropMidTurnKeepsTheWordsSpokenDuringTheOutage",
    an_expired_token_gets_one_fresh_one => "anExpiredTokenGetsOneFreshOne",
    a_reused_token_is_refused_twice_and_the_transcriber_fails => "aReusedTokenIsRefusedTwiceAndTheTranscriberFails",
    a_session_cap_ends_the_session_and_it_is_reprovisioned => "aSessionCapEndsTheSessionAndItIsReprovisioned",
    too_many_sessions_waits_the_throttled_delay => "tooManySessionsWaitsTheThrottledDelay",
    server_error_3005_is_retried_and_3007_is_fatal => "serverError3005IsRetriedAnd3007IsFatal",
    stop_flushes_the_last_words => "stopFlushesTheLastWords",
    three_drops_in_a_minute_with_single_use_tokens_do_not_fail => "threeDropsInAMinuteWithSingleUseTokensDoNotFail",
}
