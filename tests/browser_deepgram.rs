//! LiveTranscriber with `protocol: "deepgram"` in headless Chrome and Firefox against the dev
//! stack's Deepgram mock: the scenarios live in `tests/browser/deepgram.js`.
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

#[wasm_bindgen(module = "/tests/browser/deepgram.js")]
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
    one_final_per_utterance_through_speech_final_and_utterance_end => "oneFinalPerUtteranceThroughSpeechFinalAndUtteranceEnd",
    a_drop_mid_utterance_keeps_the_words_spoken_during_the_outage => "aDropMidUtteranceKeepsTheWordsSpokenDuringTheOutage",
    an_expired_token_is_refused_and_the_next_connect_gets_a_fresh_one => "anExpiredTokenIsRefusedAndTheNextConnectGetsAFreshOne",
    three_refused_handshakes_end_the_session_and_it_is_reprovisioned => "threeRefusedHandshakesEndTheSessionAndItIsReprovisioned",
    close_1008_is_fatal_without_a_retry => "close1008IsFatalWithoutARetry",
    an_idle_socket_is_kept_open_past_the_ten_second_limit => "anIdleSocketIsKeptOpenPastTheTenSecondLimit",
    stop_flushes_the_last_words => "stopFlushesTheLastWords",
    three_drops_in_a_minute_with_fresh_tokens_do_not_fail => "threeDropsInAMinuteWithFreshTokensDoNotFail",
    a_backlog_is_resent_no_faster_than_the_provider_allows => "aBacklogIsResentNoFasterThanTheProviderAllows",
    the_protocol_option_is_checked => "theProtocolOptionIsChecked",
    subprotocols_that_are_not_strings_fail_as_an_unusable_url => "subprotocolsThatAreNotStringsFailAsAnUnusableUrl",
    voice_session_passes_the_protocol_and_its_events_through => "voiceSessionPassesTheProtocolAndItsEventsThrough",
}
