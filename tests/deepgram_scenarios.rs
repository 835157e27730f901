//! The transcriber core on Deepgram listen v1, in virtual time: one final per utterance (L8),
//! fresh credentials per connect (R6), the finalized-time watermark and its paced resend (L4),
//! keepalive (L9), the finish on stop, and each close class.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod transcriber_sim;

use transcriber_sim::*;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocols::deepgram;
use turnguard::core::stt::protocols::deepgram::{CLOSE_STREAM, FINALIZE, KEEPALIVE};
use turnguard::core::stt::reconnect::ReconnectAction;
use turnguard::core::stt::transcriber::{
    Action, ProvisionReason, State, TranscriberConfig, TranscriberError,
};

const DG: &str = "wss://dg.example/v1/listen?token=a";

fn deepgram() -> TranscriberConfig {
    TranscriberConfig {
        protocol: &deepgram::PROFILE,
        ..config()
    }
}

fn text(d: &mut Drive, message: &str) -> Vec<Action> {
    d.t.on_text(message, d.now);
    d.take()
}

/// A `Results` message over `[start_ms, end_ms]` of this connection's audio.
fn results(
    transcript: &str,
    is_final: bool,
    speech_final: bool,
    start_ms: u64,
    end_ms: u64,
) -> String {
    format!(
        r#"{{"type":"Results","channel_index":[0,1],"duration":{},"start":{},"is_final":{is_final},"speech_final":{speech_final},"channel":{{"alternatives":[{{"transcript":"{transcript}"}}]}}}}"#,
        seconds(end_ms - start_ms),
        seconds(start_ms)
    )
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

fn finals(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::Final { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn texts(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::SendText(text) => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn speech_final_then_utterance_end_is_one_final() {
    let mut d = Drive::opened(deepgram(), DG);
    let mut actions = text(&mut d, &results("what is", false, false, 0, 500));
    actions.extend(text(&mut d, &results("what is the", true, false, 0, 800)));
    actions.extend(text(&mut d, &results("weather", true, true, 800, 1_400)));
    actions.extend(text(
        &mut d,
        r#"{"type":"UtteranceEnd","channel":[0,1],"last_word_end":1.3}"#,
    ));
    assert_eq!(finals(&actions), ["what is the weather"]);
    // The other order: UtteranceEnd first, then a late speech_final with nothing new.
    let mut actions = text(&mut d, &results("today", true, false, 1_400, 1_900));
    actions.extend(text(
        &mut d,
        r#"{"type":"UtteranceEnd","last_word_end":1.8}"#,
    ));
    actions.extend(text(&mut d, &results("", true, true, 1_900, 2_100)));
    assert_eq!(finals(&actions), ["today"]);
    assert!(actions.contains(&Action::Final {
        text: "today".into(),
        utterance: 2
    }));
}

#[test]
fn every_reconnect_provisions_fresh_credentials_outside_the_reprovision_window() {
    let mut d = Drive::opened(deepgram(), DG);
    assert_eq!(d.t.provision_reason(), ProvisionReason::Start);
    // Three drops in a minute (1011, NET-0001 and friends): each reconnect asks for a new token.
    for round in 0..3 {
        d.advance(10_000);
        d.close(1011);
        assert_eq!(d.t.state(), State::Backoff);
        let after = d.advance(1_000);
        assert!(
            after.contains(&Action::Provision),
            "round {round}: {after:?}"
        );
        assert_eq!(d.t.provision_reason(), ProvisionReason::Reconnect);
        d.provisioned(&format!("wss://dg.example/v1/listen?token=fresh{round}"));
        d.open();
    }
    assert_eq!(
        d.t.state(),
        State::Open,
        "R3's window counts dead sessions only"
    );
    assert_eq!(d.count(&Action::Provision), 4);
}

#[test]
fn a_close_report_names_code_class_and_delay() {
    let mut d = Drive::opened(deepgram(), DG);
    d.advance(100);
    d.t.on_close(1011, d.now);
    let report = d.t.take_close_report().expect("a report");
    assert_eq!(d.t.take_close_report(), None, "taken once");
    assert_eq!(report.code, 1011);
    assert_eq!(report.class, CloseClass::Retry);
    assert_eq!(report.next, ReconnectAction::ReconnectSameUrl);
    assert_eq!(report.delay_ms, 50);
}

#[test]
fn audio_not_finalized_is_resent_on_the_next_connection() {
    let mut d = Drive::opened(deepgram(), DG);
    for n in 0..50 {
        d.audio(n); // 50 × 20 ms = 1 s
        d.advance(20);
    }
    // The server finalized the first 600 ms only.
    text(&mut d, &results("what is", true, false, 0, 600));
    d.close(1011);
    d.advance(1_000);
    d.provisioned("wss://dg.example/v1/listen?token=b");
    let mut resent = d.open();
    resent.extend(d.advance(2_000));
    let numbers = sent(&resent);
    assert_eq!(
        numbers.first(),
        Some(&30),
        "resent from the watermark (600 ms = frame 30)"
    );
    assert_eq!(numbers, (30..50).collect::<Vec<_>>());
}

#[test]
fn finals_join_words_from_both_sides_of_a_drop() {
    let mut d = Drive::opened(deepgram(), DG);
    text(&mut d, &results("what is the", true, false, 0, 900));
    d.close(1006);
    d.advance(1_000);
    d.provisioned("wss://dg.example/v1/listen?token=b");
    d.open();
    let actions = text(&mut d, &results("weather today", true, true, 0, 1_200));
    assert_eq!(finals(&actions), ["what is the weather today"]);
}

#[test]
fn a_backlog_is_resent_no_faster_than_one_and_a_quarter_real_time() {
    let mut d = Drive::new(deepgram());
    for n in 0..250 {
        d.audio(n); // 5 s captured before the socket opens
    }
    d.start();
    d.provisioned(DG);
    let mut log = vec![(d.now.0, d.open())];
    for _ in 0..400 {
        let actions = d.advance(10);
        log.push((d.now.0, actions));
    }
    let mut sent_ms = 0u64;
    for (at, actions) in &log {
        sent_ms += 20 * sent(actions).len() as u64;
        // 1.25× the time since the open, plus the 250 ms allowance.
        assert!(
            sent_ms <= at * 125 / 100 + 250 + 20,
            "{sent_ms} ms sent by {at} ms"
        );
    }
    assert_eq!(sent_ms, 5_000, "all of it went out within 4 s");
}

#[test]
fn keepalive_goes_out_while_no_audio_flows() {
    let mut d = Drive::opened(deepgram(), DG);
    let idle = d.advance(9_000);
    assert_eq!(texts(&idle), [KEEPALIVE, KEEPALIVE], "at 4 s and 8 s");
    // Audio flowing: no keepalive.
    let mut flowing = Vec::new();
    for n in 0..300 {
        flowing.extend(d.audio(n));
        flowing.extend(d.advance(20));
    }
    assert!(texts(&flowing).is_empty());
}

#[test]
fn stop_sends_finalize_and_close_stream_after_the_backlog_and_waits_for_metadata() {
    let mut d = Drive::new(deepgram());
    for n in 0..100 {
        d.audio(n); // 2 s waiting
    }
    d.start();
    d.provisioned(DG);
    let opened = d.open();
    assert!(sent(&opened).len() < 100, "paced");
    d.t.stop(d.now);
    let mut actions = d.take();
    assert!(
        !texts(&actions).contains(&FINALIZE.to_owned()),
        "not before the audio"
    );
    actions.extend(d.advance(3_000));
    let stop_at = actions
        .iter()
        .position(|a| *a == Action::SendText(FINALIZE.into()))
        .expect("finish sent");
    assert_eq!(sent(&actions[..stop_at]).len() + sent(&opened).len(), 100);
    assert_eq!(texts(&actions[stop_at..]), [FINALIZE, CLOSE_STREAM]);
    let last = text(&mut d, &results("bye", true, true, 0, 2_000));
    assert_eq!(
        finals(&last),
        ["bye"],
        "the last words arrive while stopping"
    );
    text(
        &mut d,
        r#"{"type":"Metadata","request_id":"r","duration":2.0}"#,
    );
    assert_eq!(d.t.state(), State::Stopped);
}

#[test]
fn close_1008_is_fatal_without_a_retry() {
    let mut d = Drive::opened(deepgram(), DG);
    let actions = d.close(1008);
    assert!(actions.contains(&Action::Error(TranscriberError::FatalClose { code: 1008 })));
    assert_eq!(d.t.state(), State::Failed);
    assert_eq!(d.advance(60_000), []);
    assert_eq!(d.count(&Action::Provision), 1);
}

#[test]
fn expired_tokens_refused_at_the_handshake_end_the_session_by_r5() {
    let mut d = Drive::new(deepgram());
    d.start();
    d.provisioned(DG);
    // Three handshakes refused (the browser says 1006, never open), each with a fresh token.
    for _ in 0..2 {
        d.close(1006);
        d.advance(1_000);
        assert_eq!(d.t.provision_reason(), ProvisionReason::Reconnect);
        d.provisioned(DG);
    }
    d.close(1006);
    d.advance(1_000);
    assert_eq!(d.t.provision_reason(), ProvisionReason::SessionOver);
    d.provisioned(DG);
    d.open();
    assert_eq!(d.t.state(), State::Open);
}
