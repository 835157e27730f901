//! LiveTranscriber with `protocol: "elevenlabs"` in headless Chrome and Firefox against the dev
//! stack's ElevenLabs Scribe mock: the scenarios live in `tests/browser/elevenlabs.js`.
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

#[wasm_bindgen(module = "/tests/browser/elevenlabs.js")]
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
    one_final_per_commit_though_each_comes_in_two_forms => "oneFinalPerCommitThoughEachComesInTwoForms",
    a_drop_resends_the_uncommitted_audio_with_the_last_final_as_context => "aDropResendsTheUncommittedAudioWithTheLastFinalAsContext",
    a_refused_token_is_an_auth_error_and_fatal => "aRefusedTokenIsAnAuthErrorAndFatal",
    the_session_time_limit_provisions_a_new_session => "theSessionTimeLimitProvisionsANewSession",
    unaccepted_terms_is_fatal_in_both_spellings => "unacceptedTermsIsFatalInBothSpellings",
    rate_limited_is_throttled => "rateLimitedIsThrottled",
    an_idle_socket_stays_open => "anIdleSocketStaysOpen",
    stop_commits_and_flushes_the_last_words => "stopCommitsAndFlushesTheLastWords",
    three_drops_with_fresh_tokens_do_not_fail => "threeDropsWithFreshTokensDoNotFail",
}
