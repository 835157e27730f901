//! The transcriber core on AssemblyAI Universal-Streaming v3, in virtual time: frame sizes and
//! real-time pacing (3007 must never trip), one final per turn (L8), fresh single-use tokens (R6),
//! each close class, and the finish on stop.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod transcriber_sim;

use transcriber_sim::*;
use turnguard::core::stt::protocols::assemblyai;
use turnguard::core::stt::protocols::assemblyai::{FORCE_ENDPOINT, TERMINATE};
use turnguard::core::stt::transcriber::{
    Action, ProvisionReason, State, TranscriberConfig, TranscriberError,
};

const AAI: &str =
    "wss://aai.example/v3/ws?sample_rate=16000&encoding=pcm_s16le&format_turns=true&token=a";

fn assemblyai() -> TranscriberConfig {
    TranscriberConfig {
        protocol: &assemblyai::PROFILE,
        ..config()
    }
}

fn text(d: &mut Drive, message: &str) -> Vec<Action> {
    d.t.on_text(message, d.now);
    d.take()
}

fn turn(
    order: u64,
    end_of_turn: bool,
    formatted: bool,
    transcript: &str,
    final_end_ms: u64,
) -> String {
    format!(
        r#"{{"type":"Turn","turn_order":{order},"turn_is_formatted":{formatted},"end_of_turn":{end_of_turn},"transcript":"{transcript}","words":[{{"text":"{transcript}","start":0,"end":{final_end_ms},"word_is_final":true}}]}}"#
    )
}

fn sizes(actions: &[Action]) -> Vec<usize> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::SendBinary(bytes) => Some(bytes.len()),
            _ => None,
        })
        .collect()
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

#[test]
fn twenty_millisecond_frames_go_out_as_fifty_to_a_thousand_millisecond_chunks() {
    let mut d = Drive::opened(assemblyai(), AAI);
    let mut actions = Vec::new();
    for n in 0..20 {
        actions.extend(d.audio(n));
        actions.extend(d.advance(20));
    }
    // 20 ms frames joined three at a time: 60 ms = 1920 bytes, never under 50 ms (1600).
    let sent = sizes(&actions);
    assert!(!sent.is_empty());
    assert!(
        sent.iter().all(|&size| (1_600..=32_000).contains(&size)),
        "{sent:?}"
    );
    // A 3 s frame is split into pieces of at most 1 s.
    let big = d.t.send_audio(vec![0; 96_000], d.now);
    assert!(big);
    let mut actions = d.take();
    actions.extend(d.advance(4_000));
    assert!(
        sizes(&actions).iter().all(|&size| size <= 32_000),
        "{:?}",
        sizes(&actions)
    );
}

#[test]
fn a_backlog_goes_out_no_faster_than_real_time() {
    let mut d = Drive::new(assemblyai());
    for n in 0..249 {
        d.audio(n); // 4.98 s captured before the socket opens: 83 chunks of 60 ms
    }
    d.start();
    d.provisioned(AAI);
    let mut log = vec![(d.now.0, d.open())];
    for _ in 0..600 {
        let actions = d.advance(10);
        log.push((d.now.0, actions));
    }
    let mut sent_bytes = 0u64;
    for (at, actions) in &log {
        sent_bytes += sizes(actions).iter().sum::<usize>() as u64;
        let sent_ms = sent_bytes / 32;
        assert!(
            sent_ms <= at + 100,
            "{sent_ms} ms of audio sent by {at} ms: faster than real time"
        );
    }
    assert_eq!(sent_bytes, 249 * 640, "all of it within 6 s");
}

#[test]
fn the_formatted_end_of_turn_is_the_only_final() {
    let mut d = Drive::opened(assemblyai(), AAI);
    let mut actions = text(&mut d, &turn(0, false, false, "what", 300));
    actions.extend(text(&mut d, &turn(0, true, false, "what is it", 900)));
    actions.extend(text(&mut d, &turn(0, true, true, "What is it?", 900)));
    actions.extend(text(&mut d, &turn(1, true, false, "next", 1_500)));
    actions.extend(text(&mut d, &turn(1, true, true, "Next.", 1_500)));
    assert_eq!(finals(&actions), ["What is it?", "Next."]);
}

#[test]
fn every_connect_gets_a_fresh_token_and_a_second_1008_in_a_row_is_fatal() {
    let mut d = Drive::opened(assemblyai(), AAI);
    d.advance(1_000);
    d.close(1008); // a reused token: one fresh one
    d.advance(1_000);
    assert_eq!(d.t.provision_reason(), ProvisionReason::Reconnect);
    assert_eq!(d.t.state(), State::Provisioning);
    d.provisioned(AAI);
    d.open();
    let actions = d.close(1008);
    assert!(actions.contains(&Action::Error(TranscriberError::FatalClose { code: 1008 })));
    assert_eq!(d.t.state(), State::Failed);
}

#[test]
fn close_3008_reprovisions_3009_waits_the_throttled_delay_3007_fails() {
    let mut d = Drive::opened(assemblyai(), AAI);
    text(&mut d, r#"{"type":"Begin","id":"s1","expires_at":0}"#);
    d.advance(10_000);
    d.close(3008);
    d.advance(1_000);
    assert_eq!(
        d.t.provision_reason(),
        ProvisionReason::SessionOver,
        "a session cap: a new session"
    );
    d.provisioned(AAI);
    d.open();
    d.advance(10_000);
    d.close(3009);
    let report_delay = d.t.poll_timeout().map(|at| at.0 - d.now.0);
    assert_eq!(
        report_delay,
        Some(10_000),
        "too many sessions: at least throttledDelayMs"
    );
    d.advance(10_000);
    d.provisioned(AAI);
    d.open();
    let actions = d.close(3007);
    assert!(actions.contains(&Action::Error(TranscriberError::FatalClose { code: 3007 })));
}

#[test]
fn stop_pads_the_tail_then_sends_force_endpoint_and_terminate() {
    let mut d = Drive::opened(assemblyai(), AAI);
    let mut actions = Vec::new();
    for n in 0..4 {
        actions.extend(d.audio(n)); // 80 ms: one 60 ms chunk, 20 ms left over
        actions.extend(d.advance(20));
    }
    d.t.stop(d.now);
    actions.extend(d.take());
    actions.extend(d.advance(500));
    let stop_at = actions
        .iter()
        .position(|a| *a == Action::SendText(FORCE_ENDPOINT.into()))
        .expect("finish sent");
    assert_eq!(
        sizes(&actions[..stop_at]),
        [1_920, 1_600],
        "the 20 ms tail padded to 50 ms"
    );
    assert_eq!(texts(&actions[stop_at..]), [FORCE_ENDPOINT, TERMINATE]);
    let last = text(&mut d, &turn(0, true, true, "Bye.", 100));
    assert_eq!(finals(&last), ["Bye."]);
    text(
        &mut d,
        r#"{"type":"Termination","audio_duration_seconds":1,"session_duration_seconds":1}"#,
    );
    assert_eq!(d.t.state(), State::Stopped);
}
