//! LiveTranscriber with every protocol of the dev stack's list, in headless Chrome and Firefox
//! against each protocol's mock: one suite for all of them, fed per protocol by its descriptor's
//! fixture (`www/protocols/<name>.mjs`). Each scenario runs for every protocol at once; the
//! scenarios live in `tests/browser/protocols.js`.
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod web;

use js_sys::Function;
use turnguard::web::transcriber::LiveTranscriber;
use turnguard::web::VoiceSession;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(module = "/tests/browser/protocols.js")]
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
    web::expect_scenario(
        name,
        run_scenario(name, web::devstack_url(), &make, &make_session),
    )
    .await;
}

scenarios! {
    one_final_per_utterance => "oneFinalPerUtterance",
    a_drop_mid_utterance_keeps_the_words_spoken_during_the_outage => "aDropMidUtteranceKeepsTheWordsSpokenDuringTheOutage",
    a_refused_handshake_is_retried_and_reported_at_once => "aRefusedHandshakeIsRetriedAndReportedAtOnce",
    refused_handshakes_before_any_open_fail_as_connect_failed => "refusedHandshakesBeforeAnyOpenFailAsConnectFailed",
    an_expired_credential => "anExpiredCredential",
    a_fatal_close_is_terminal_without_a_retry => "aFatalCloseIsTerminalWithoutARetry",
    the_sessions_end_is_reprovisioned => "theSessionsEndIsReprovisioned",
    a_throttled_close_waits_the_throttled_delay => "aThrottledCloseWaitsTheThrottledDelay",
    an_idle_socket_stays_open => "anIdleSocketStaysOpen",
    stop_flushes_the_last_words => "stopFlushesTheLastWords",
    three_drops_in_a_minute_do_not_fail => "threeDropsInAMinuteDoNotFail",
    a_backlog_is_resent_no_faster_than_the_provider_allows => "aBacklogIsResentNoFasterThanTheProviderAllows",
    a_socket_that_stops_acknowledging_is_closed_and_replaced => "aSocketThatStopsAcknowledgingIsClosedAndReplaced",
    subprotocols_that_are_not_strings_fail_as_an_unusable_url => "subprotocolsThatAreNotStringsFailAsAnUnusableUrl",
    voice_session_passes_the_protocol_through => "voiceSessionPassesTheProtocolThrough",
    the_protocol_option_is_checked_against_the_list => "theProtocolOptionIsCheckedAgainstTheList",
    protocol_specific_scenarios => "protocolSpecificScenarios",
}
