//! Streaming routes, sentences, history and policies in headless Chrome and Firefox, against the
//! dev stack's mock OpenAI-compatible server (started by scripts/test.sh). The scenarios live in
//! `tests/browser/streaming.js`.
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod web;

use js_sys::Function;
use turnguard::web::{open_ai_compatible_route, TurnController};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(module = "/tests/browser/streaming.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = runScenario)]
    async fn run_scenario(
        name: &str,
        make: &Function,
        chat_route: &Function,
        base: &str,
    ) -> Result<JsValue, JsValue>;
}

async fn scenario(name: &str) {
    let make = web::factory2(TurnController::new);
    let chat_route = web::factory1(open_ai_compatible_route);
    let base = web::devstack_url();
    web::expect_scenario(name, run_scenario(name, &make, &chat_route, base)).await;
}

scenarios! {
    normal_stream_gives_one_answer_and_its_sentences_in_order => "normalStreamGivesOneAnswerAndItsSentencesInOrder",
    comments_and_split_events_decode_exactly => "commentsAndSplitEventsDecodeExactly",
    server_error_falls_back => "serverErrorFallsBack",
    unauthorized_goes_straight_to_recovery => "unauthorizedGoesStraightToRecovery",
    no_first_chunk_times_out_then_falls_back => "noFirstChunkTimesOutThenFallsBack",
    stall_after_commit_keeps_what_was_delivered_without_fallback => "stallAfterCommitKeepsWhatWasDeliveredWithoutFallback",
    interrupt_mid_stream_stops_sentences_and_aborts_the_request => "interruptMidStreamStopsSentencesAndAbortsTheRequest",
    garbage_yields_no_text_and_falls_back => "garbageYieldsNoTextAndFallsBack",
    request_bodies_carry_model_prompt_and_history_only_where_shared => "requestBodiesCarryModelPromptAndHistoryOnlyWhereShared",
    bad_route_options_throw_named_errors => "badRouteOptionsThrowNamedErrors",
    async_iterable_routes_stream_and_fallback_policies_apply => "asyncIterableRoutesStreamAndFallbackPoliciesApply",
    endless_stream_is_cut_at_max_answer_chars => "endlessStreamIsCutAtMaxAnswerChars",
    history_stays_under_history_max_chars => "historyStaysUnderHistoryMaxChars",
    reader_is_cancelled_when_the_attempt_ends_even_if_the_signal_is_ignored => "readerIsCancelledWhenTheAttemptEndsEvenIfTheSignalIsIgnored",
    generate_sends_the_chat_request_and_resolves_with_a_text_stream => "generateSendsTheChatRequestAndResolvesWithATextStream",
    generate_reports_http_and_stream_errors => "generateReportsHttpAndStreamErrors",
}
