//! VoiceSession in headless Chrome and Firefox against the dev stack (mock live STT, mock TTS) on
//! a real AudioContext: the scenarios live in `tests/browser/session.js`.
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod web;

use js_sys::Function;
use turnguard::web::VoiceSession;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(module = "/tests/browser/session.js")]
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

async fn scenario(name: &str) {
    let make = web::factory1(VoiceSession::new);
    web::expect_scenario(name, run_scenario(name, web::devstack_url(), &make)).await;
}

scenarios! {
    the_voice_detector_hears_speech_not_silence_or_hum => "theVoiceDetectorHearsSpeechNotSilenceOrHum",
    fluxs_eager_end_of_turn_starts_the_answer_early_and_the_latency_record_says_so => "fluxsEagerEndOfTurnStartsTheAnswerEarlyAndTheLatencyRecordSaysSo",
    a_throwing_callback_is_reported_once_and_the_session_goes_on => "aThrowingCallbackIsReportedOnceAndTheSessionGoesOn",
    a_spoken_answer_is_observable_step_by_step_without_text => "aSpokenAnswerIsObservableStepByStepWithoutText",
    a_barge_in_is_reported_with_its_cause_and_the_heard_part => "aBargeInIsReportedWithItsCauseAndTheHeardPart",
    a_transcriber_flap_is_reported_state_by_state => "aTranscriberFlapIsReportedStateByState",
    listening_means_the_socket_opened_and_the_transcriber_is_in_sight => "listeningMeansTheSocketOpenedAndTheTranscriberIsInSight",
    a_scripted_final_gets_a_spoken_answer => "aScriptedFinalGetsASpokenAnswer",
    speech_start_during_the_answer_silences_it_and_history_keeps_the_heard_part => "speechStartDuringTheAnswerSilencesItAndHistoryKeepsTheHeardPart",
    a_pause_nothing_confirms_resumes_where_it_stopped_and_the_whole_answer_is_heard => "aPauseNothingConfirmsResumesWhereItStoppedAndTheWholeAnswerIsHeard",
    the_agents_own_word_where_paused_resumes_and_another_word_cuts => "theAgentsOwnWordWherePausedResumesAndAnotherWordCuts",
    a_throttled_timer_holds_no_deadline_back_while_audio_comes => "aThrottledTimerHoldsNoDeadlineBackWhileAudioComes",
    a_context_suspended_under_the_answer_holds_it_asks_for_a_gesture_and_goes_on_whole => "aContextSuspendedUnderTheAnswerHoldsItAsksForAGestureAndGoesOnWhole",
    a_context_closed_under_the_answer_cuts_it_with_what_played_and_the_next_turn_speaks_in_a_new_one => "aContextClosedUnderTheAnswerCutsItWithWhatPlayedAndTheNextTurnSpeaksInANewOne",
    tts_audio_resolving_after_an_interrupt_never_plays => "ttsAudioResolvingAfterAnInterruptNeverPlays",
    a_final_during_thinking_cancels_the_old_turn_and_starts_the_new_one => "aFinalDuringThinkingCancelsTheOldTurnAndStartsTheNewOne",
    every_sentence_failing_speaks_the_recovery_text_synthesized_once => "everySentenceFailingSpeaksTheRecoveryTextSynthesizedOnce",
    stop_twice_ends_the_microphone_and_nothing_reconnects => "stopTwiceEndsTheMicrophoneAndNothingReconnects",
    a_lost_microphone_is_opened_again_and_the_session_goes_on => "aLostMicrophoneIsOpenedAgainAndTheSessionGoesOn",
    a_new_default_microphone_is_followed_without_losing_the_session => "aNewDefaultMicrophoneIsFollowedWithoutLosingTheSession",
    a_context_whose_clock_stands_still_after_resume_is_replaced => "aContextWhoseClockStandsStillAfterResumeIsReplaced",
    callbacks_may_stop_and_free_the_session => "callbacksMayStopAndFreeTheSession",
    a_slow_synthesis_is_skipped_after_tts_timeout_ms => "aSlowSynthesisIsSkippedAfterTtsTimeoutMs",
    the_echo_guard_ignores_speech_starts_and_partials_but_a_final_still_barges_in => "theEchoGuardIgnoresSpeechStartsAndPartialsButAFinalStillBargesIn",
    the_echo_guard_restarts_when_the_agent_sounds_again_after_silence => "theEchoGuardRestartsWhenTheAgentSoundsAgainAfterSilence",
    barge_ins_in_every_gap_count_only_what_the_audio_clock_played => "bargeInsInEveryGapCountOnlyWhatTheAudioClockPlayed",
    stop_free_or_interrupt_from_any_callback_leaves_no_stale_work => "stopFreeOrInterruptFromAnyCallbackLeavesNoStaleWork",
    start_settles_when_provisioning_keeps_failing => "startSettlesWhenProvisioningKeepsFailing",
    a_suspended_context_asks_for_a_gesture_and_speaks_after_resume => "aSuspendedContextAsksForAGestureAndSpeaksAfterResume",
    bad_options_and_arguments_throw_named_errors => "badOptionsAndArgumentsThrowNamedErrors",
}
