//! LiveTranscriber with `protocol: "speechmatics"` in headless Chrome and Firefox against the dev
//! stack's Speechmatics mock: the scenarios live in `tests/browser/speechmatics.js`.
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

#[wasm_bindgen(module = "/tests/browser/speechmatics.js")]
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
    one_final_per_utterance_through_end_of_utterance => "oneFinalPerUtteranceThroughEndOfUtterance",
    a_backlog_never_runs_more_than_five_seconds_ahead_of_audio_added => "aBacklogNeverRunsMoreThanFiveSecondsAheadOfAudioAdded",
    a_drop_mid_utterance_keeps_the_words_spoken_during_the_outage => "aDropMidUtteranceKeepsTheWordsSpokenDuringTheOutage",
    an_expired_key_is_refused_and_the_next_connect_gets_a_fresh_one => "anExpiredKeyIsRefusedAndTheNextConnectGetsAFreshOne",
    close_1008_provisions_a_new_session => "close1008ProvisionsANewSession",
    close_4001_is_fatal_without_a_retry => "close4001IsFatalWithoutARetry",
    close_4005_is_throttled_not_dead => "close4005IsThrottledNotDead",
    a_socket_that_stops_receipting_is_closed_and_replaced => "aSocketThatStopsReceiptingIsClosedAndReplaced",
    an_idle_socket_stays_open => "anIdleSocketStaysOpen",
    stop_sends_end_of_stream_with_the_last_frame_sent_and_flushes => "stopSendsEndOfStreamWithTheLastFrameSentAndFlushes",
}
