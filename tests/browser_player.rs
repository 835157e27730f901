//! SpeechPlayer in headless Chrome and Firefox on a real AudioContext: the scenarios live in
//! `tests/browser/player.js`. Where the browser cannot run an AudioContext, they say so.
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod web;

use js_sys::Function;
use turnguard::web::SpeechPlayer;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(module = "/tests/browser/player.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = runScenario)]
    async fn run_scenario(name: &str, devstack: &str, make: &Function) -> Result<JsValue, JsValue>;
}

#[wasm_bindgen(module = "/tests/browser/audio.js")]
extern "C" {
    // Declared so wasm-bindgen ships the helpers beside the scenario files that import them.
    #[wasm_bindgen(js_name = quantum)]
    fn _quantum(context: &JsValue) -> f64;
}

fn make(options: JsValue) -> Result<SpeechPlayer, JsValue> {
    SpeechPlayer::new(Some(options))
}

async fn scenario(name: &str) {
    let make = web::factory1(make);
    web::expect_scenario(name, run_scenario(name, web::devstack_url(), &make)).await;
}

scenarios! {
    a_throwing_callback_is_reported_once_and_the_player_goes_on => "aThrowingCallbackIsReportedOnceAndThePlayerGoesOn",
    three_chunks_play_gapless_and_end_with_their_length => "threeChunksPlayGaplessAndEndWithTheirLength",
    stop_mid_chunk_returns_heard_from_the_audio_clock_and_silences_within_a_quantum => "stopMidChunkReturnsHeardFromTheAudioClockAndSilencesWithinAQuantum",
    audio_of_a_stopped_turn_never_plays_even_when_its_decode_finishes_later => "audioOfAStoppedTurnNeverPlaysEvenWhenItsDecodeFinishesLater",
    chunks_play_in_enqueue_order_when_decodes_finish_out_of_order => "chunksPlayInEnqueueOrderWhenDecodesFinishOutOfOrder",
    a_suspended_context_waits_for_a_gesture_then_plays_in_order => "aSuspendedContextWaitsForAGestureThenPlaysInOrder",
    callbacks_may_stop_and_free_the_player => "callbacksMayStopAndFreeThePlayer",
    bad_input_rejects_with_named_errors => "badInputRejectsWithNamedErrors",
}
