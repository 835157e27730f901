//! LiveTranscriber in headless Chrome and Firefox against the dev stack's mock Gladia live STT:
//! the scenarios live in `tests/browser/transcriber.js`. `scripts/test.sh` starts the dev stack
//! and sets `TURNGUARD_DEVSTACK_URL` for the build.
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod web;

use js_sys::Function;
use turnguard::web::transcriber::{gladia_provisioner, LiveTranscriber};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const DEVSTACK: &str = match option_env!("TURNGUARD_DEVSTACK_URL") {
    Some(url) => url,
    None => "http://127.0.0.1:47831",
};

#[wasm_bindgen(module = "/tests/browser/transcriber.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = runScenario)]
    async fn run_scenario(
        name: &str,
        devstack: &str,
        make: &Function,
        make_provisioner: &Function,
    ) -> Result<JsValue, JsValue>;
}

async fn scenario(name: &str) {
    let make = web::factory1(LiveTranscriber::new);
    let make_provisioner = web::factory1(gladia_provisioner);
    web::expect_scenario(name, run_scenario(name, DEVSTACK, &make, &make_provisioner)).await;
}

scenarios! {
    normal_mode_delivers_partials_and_finals => "normalModeDeliversPartialsAndFinals",
    close_4403_loop_provisions_three_times_then_fails => "close4403LoopProvisionsThreeTimesThenFails",
    drop_1006_backs_off_with_growing_gaps_to_the_same_session => "drop1006BacksOffWithGrowingGapsToTheSameSession",
    frames_across_a_drop_all_reach_the_server_in_order => "framesAcrossADropAllReachTheServerInOrder",
    a_page_in_the_back_forward_cache_closes_its_socket_and_reconnects_when_shown => "aPageInTheBackForwardCacheClosesItsSocketAndReconnectsWhenShown",
    a_half_open_socket_is_closed_after_ack_timeout_ms_and_its_unacknowledged_audio_goes_out_again => "aHalfOpenSocketIsClosedAfterAckTimeoutMsAndItsUnacknowledgedAudioGoesOutAgain",
    buffered_audio_survives_sockets_that_die_at_once => "bufferedAudioSurvivesSocketsThatDieAtOnce",
    overflow_drops_the_oldest_and_reports_it => "overflowDropsTheOldestAndReportsIt",
    provision_429_backs_off_then_succeeds => "provision429BacksOffThenSucceeds",
    provision_401_fails_with_its_status => "provision401FailsWithItsStatus",
    stop_sends_stop_recording_once_and_nothing_connects_after => "stopSendsStopRecordingOnceAndNothingConnectsAfter",
    reentrant_stop_from_on_final => "reentrantStopFromOnFinal",
    free_from_on_final_detaches_at_once => "freeFromOnFinalDetachesAtOnce",
    throwing_callbacks_are_reported_and_change_nothing => "throwingCallbacksAreReportedAndChangeNothing",
    slow_handshake_times_out_then_opens => "slowHandshakeTimesOutThenOpens",
    gladia_provisioner_sends_the_key_itself => "gladiaProvisionerSendsTheKeyItself",
    microphone_stream_is_captured_at_16_khz => "microphoneStreamIsCapturedAt16kHz",
    the_track_is_read_without_web_audio_where_the_browser_can => "theTrackIsReadWithoutWebAudioWhereTheBrowserCan",
    bad_input_throws_named_errors => "badInputThrowsNamedErrors",
}

/// getUserMedia with the fake device and permission flags of webdriver.json.
#[wasm_bindgen_test]
async fn fake_microphone_frames_reach_the_server() {
    scenario("fakeMicrophoneFramesReachTheServer").await;
}
