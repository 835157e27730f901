//! LiveTranscriber with `protocol: "openai"` in headless Chrome and Firefox against the dev
//! stack's OpenAI Realtime mock: the scenarios live in `tests/browser/openai.js`.
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

#[wasm_bindgen(module = "/tests/browser/openai.js")]
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
    one_final_per_item_in_commit_order_when_completions_are_not => "oneFinalPerItemInCommitOrderWhenCompletionsAreNot",
    resampled_audio_reaches_the_mock_at_24_khz_with_its_duration => "resampledAudioReachesTheMockAt24KhzWithItsDuration",
    a_drop_mid_utterance_keeps_the_words_spoken_during_the_outage => "aDropMidUtteranceKeepsTheWordsSpokenDuringTheOutage",
    an_expired_secret_is_refused_and_the_next_connect_gets_a_fresh_one => "anExpiredSecretIsRefusedAndTheNextConnectGetsAFreshOne",
    session_expired_provisions_a_new_session => "sessionExpiredProvisionsANewSession",
    close_4000_is_fatal_without_a_retry => "close4000IsFatalWithoutARetry",
    an_idle_socket_stays_open => "anIdleSocketStaysOpen",
    stop_commits_and_flushes_the_last_words => "stopCommitsAndFlushesTheLastWords",
    three_drops_with_fresh_secrets_do_not_fail => "threeDropsWithFreshSecretsDoNotFail",
}
