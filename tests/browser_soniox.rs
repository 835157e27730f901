//! LiveTranscriber with `protocol: "soniox"` in headless Chrome and Firefox against the dev
//! stack's Soniox mock: the scenarios live in `tests/browser/soniox.js`.
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod web;

use js_sys::Function;
use turnguard::web::transcriber::LiveTranscriber;
use turnguard::web::VoiceSession;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const DEVSTACK: &str = match option_env!("TURNGUARD_DEVSTACK_URL") {
    Some(url) => url,
    None => "http://127.0.0.1:47831",
};

#[wasm_bindgen(module = "/tests/browser/soniox.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = runScenario)]
    async fn run_scenario(
        name: &str,
        devstack: &str,
        make: &Function,
        make_session: &Function,
    ) -> Result<JsValue, JsValue>;
}

async fn scenario(name: &str) {
    let make = web::factory1(LiveTranscriber::new);
    let make_session = web::factory1(VoiceSession::new);
    web::expect_scenario(name, run_scenario(name, DEVSTACK, &make, &make_session)).await;
}

scenarios! {
    one_final_per_utterance_through_end_tokens => "oneFinalPerUtteranceThroughEndTokens",
    a_drop_mid_utterance_keeps_the_words_spoken_during_the_outage => "aDropMidUtteranceKeepsTheWordsSpokenDuringTheOutage",
    an_expired_key_is_an_error_401_and_fatal => "anExpiredKeyIsAnError401AndFatal",
    error_503_starts_again_at_once => "error503StartsAgainAtOnce",
    error_429_is_throttled => "error429IsThrottled",
    error_402_is_fatal_without_a_retry => "error402IsFatalWithoutARetry",
    an_idle_socket_is_kept_open_past_the_idle_limit => "anIdleSocketIsKeptOpenPastTheIdleLimit",
    stop_finalizes_and_flushes_the_last_words => "stopFinalizesAndFlushesTheLastWords",
    a_backlog_is_resent_no_faster_than_real_time => "aBacklogIsResentNoFasterThanRealTime",
}
