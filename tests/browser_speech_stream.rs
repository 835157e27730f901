//! Streamed speech (issue 18) in headless Chrome and Firefox on a real AudioContext: SpeechPlayer
//! and VoiceSession fed raw PCM streams, and openAiCompatibleSpeech against the dev stack. The
//! scenarios live in `tests/browser/speech_stream.js`.
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod web;

use js_sys::Function;
use turnguard::web::speech_route::open_ai_compatible_speech;
use turnguard::web::{SpeechPlayer, VoiceSession};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(module = "/tests/browser/speech_stream.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = runScenario)]
    async fn run_scenario(
        name: &str,
        devstack: &str,
        make: &Function,
        session: &Function,
        speech: &Function,
    ) -> Result<JsValue, JsValue>;
}

#[wasm_bindgen(module = "/tests/browser/audio.js")]
extern "C" {
    // Declared so wasm-bindgen ships the helpers beside the scenario files that import them.
    #[wasm_bindgen(js_name = quantum)]
    fn _quantum(context: &JsValue) -> f64;
}

fn player(options: JsValue) -> Result<SpeechPlayer, JsValue> {
    SpeechPlayer::new(Some(options))
}

async fn scenario(name: &str) {
    let make = web::factory1(player);
    let session = web::factory1(VoiceSession::new);
    let speech = web::factory1(open_ai_compatible_speech);
    web::expect_scenario(
        name,
        run_scenario(name, web::devstack_url(), &make, &session, &speech),
    )
    .await;
}

scenarios! {
    odd_chunk_sizes_play_gapless_at_the_streams_own_rate => "oddChunkSizesPlayGaplessAtTheStreamsOwnRate",
    a_split_stereo_frame_of_floats_is_carried_and_deinterleaved => "aSplitStereoFrameOfFloatsIsCarriedAndDeinterleaved",
    a_part_that_comes_late_starts_at_once_and_is_counted_as_an_underrun => "aPartThatComesLateStartsAtOnceAndIsCountedAsAnUnderrun",
    a_stalled_or_failing_stream_is_skipped_and_the_next_sentence_plays => "aStalledOrFailingStreamIsSkippedAndTheNextSentencePlays",
    a_stop_during_the_first_chunk_between_chunks_or_between_sentences_cancels_and_drops_the_rest => "aStopDuringTheFirstChunkBetweenChunksOrBetweenSentencesCancelsAndDropsTheRest",
    a_suspended_context_holds_an_arriving_stream_in_order_until_resume => "aSuspendedContextHoldsAnArrivingStreamInOrderUntilResume",
    bad_stream_descriptors_reject_with_named_errors => "badStreamDescriptorsRejectWithNamedErrors",
    a_session_speaks_through_open_ai_compatible_speech_and_a_barge_in_mid_stream_counts_only_what_played => "aSessionSpeaksThroughOpenAiCompatibleSpeechAndABargeInMidStreamCountsOnlyWhatPlayed",
    a_stalled_stream_is_skipped_after_tts_timeout_ms_and_the_turn_goes_on => "aStalledStreamIsSkippedAfterTtsTimeoutMsAndTheTurnGoesOn",
    a_stream_that_broke_after_it_sounded_keeps_its_turn_until_its_tail_ends_and_ends_the_heard_text => "aStreamThatBrokeAfterItSoundedKeepsItsTurnUntilItsTailEndsAndEndsTheHeardText",
    a_stream_that_keeps_sending_after_its_signal_aborted_never_plays_again => "aStreamThatKeepsSendingAfterItsSignalAbortedNeverPlaysAgain",
}
