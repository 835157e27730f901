//! The transcriber core on Speechmatics real-time, in virtual time: `StartRecognition` first and
//! audio only after `RecognitionStarted`, `AudioAdded` as flow control (never more than 5 s ahead)
//! and liveness but not the watermark (L4), pieces joined until `EndOfUtterance` (L8), the finish
//! with the last frame sent, and each close class.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod transcriber_sim;

use transcriber_sim::*;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocols::speechmatics;
use turnguard::core::stt::transcriber::{
    Action, ProvisionReason, State, TranscriberConfig, TranscriberError,
};

const SM: &str = "wss://eu2.rt.speechmatics.example/v2?jwt=a";
const STARTED: &str = r#"{"message":"RecognitionStarted","id":"s","language_pack_info":{}}"#;

fn speechmatics() -> TranscriberConfig {
    TranscriberConfig {
        protocol: &speechmatics::PROFILE,
        ..config()
    }
}

fn text(d: &mut Drive, message: &str) -> Vec<Action> {
    d.t.on_text(message, d.now);
    d.take()
}

fn added(seq_no: u64) -> String {
    format!(r#"{{"message":"AudioAdded","seq_no":{seq_no}}}"#)
}

fn transcript(words: &str, start_ms: u64, end_ms: u64) -> String {
    format!(
        r#"{{"message":"AddTranscript","format":"2.9","metadata":{{"transcript":"{words}","start_time":{}.{:03},"end_time":{}.{:03}}},"results":[]}}"#,
        start_ms / 1000,
        start_ms % 1000,
        end_ms / 1000,
        end_ms % 1000
    )
}

const END_OF_UTTERANCE: &str =
    r#"{"message":"EndOfUtterance","metadata":{"start_time":1.0,"end_time":1.0}}"#;

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

/// Open, and the recognition started.
fn started() -> Drive {
    let mut d = Drive::opened(speechmatics(), SM);
    text(&mut d, STARTED);
    d
}

#[test]
fn start_recognition_goes_first_and_audio_waits_for_recognition_started() {
    let mut d = Drive::new(speechmatics());
    for n in 0..10 {
        d.audio(n);
    }
    d.start();
    d.t.set_start_config(Some(r#"{"transcription_config":{"language":"de"}}"#.into()));
    d.provisioned(SM);
    let opened = d.open();
    let sent_texts = texts(&opened);
    assert_eq!(sent_texts.len(), 1);
    assert!(sent_texts[0].starts_with(r#"{"message":"StartRecognition""#));
    assert!(sent_texts[0].contains(r#""transcription_config":{"language":"de"}"#));
    assert!(
        sent(&opened).is_empty(),
        "no audio before RecognitionStarted"
    );
    let mut more = d.audio(10);
    more.extend(d.advance(100));
    assert!(sent(&more).is_empty());
    let flowing = text(&mut d, STARTED);
    assert_eq!(sent(&flowing), (0..=10).collect::<Vec<_>>());
}

#[test]
fn audio_never_runs_more_than_five_seconds_ahead_of_audio_added() {
    let mut d = started();
    let mut out = 0u64;
    for n in 0..400 {
        out += sent(&d.audio(n)).len() as u64; // 8 s captured in one go
    }
    assert_eq!(out, 250, "5 s of 20 ms frames, then it waits");
    assert_eq!(
        sent(&d.advance(5_000)).len(),
        0,
        "no timer sends past the window"
    );
    // Receipts move the window: 50 receipted, 50 more go out.
    let moved = text(&mut d, &added(50));
    assert_eq!(sent(&moved), (250..300).collect::<Vec<_>>());
    let rest = text(&mut d, &added(300));
    assert_eq!(sent(&rest), (300..400).collect::<Vec<_>>());
    assert_eq!(d.t.state(), State::Open);
}

#[test]
fn audio_added_is_not_the_watermark() {
    let mut d = started();
    for n in 0..50 {
        d.audio(n); // 1 s
        d.advance(20);
    }
    text(&mut d, &added(50)); // every frame received...
    text(&mut d, &transcript("what is", 0, 600)); // ...but only 600 ms transcribed
    d.close(1006);
    d.advance(1_000);
    assert_eq!(d.t.provision_reason(), ProvisionReason::Reconnect);
    d.provisioned(SM);
    d.open();
    let resent = text(&mut d, STARTED);
    assert_eq!(
        sent(&resent),
        (30..50).collect::<Vec<_>>(),
        "from 600 ms = frame 30"
    );
    let actions = text(&mut d, &transcript("the weather", 0, 1_000));
    let mut actions2 = actions.clone();
    actions2.extend(text(&mut d, END_OF_UTTERANCE));
    assert_eq!(
        finals(&actions2),
        ["what is the weather"],
        "pieces from both connections"
    );
}

#[test]
fn a_socket_that_stops_receipting_audio_is_half_open() {
    let mut d = started();
    for n in 0..100 {
        d.audio(n);
        d.advance(20);
        if n < 10 {
            text(&mut d, &added(u64::from(n) + 1));
        }
    }
    let actions = d.advance(10_000);
    assert!(actions.contains(&Action::Close), "{actions:?}");
    assert_ne!(d.t.state(), State::Open);
    assert!(
        d.count(&Action::Provision) >= 2,
        "a fresh key for the reconnect"
    );
}

#[test]
fn stop_sends_end_of_stream_with_the_last_frame_sent_and_waits_for_end_of_transcript() {
    let mut d = started();
    for n in 0..30 {
        d.audio(n);
    }
    text(&mut d, &added(20)); // receipts lag: the last *sent* frame is 30
    text(&mut d, &transcript("hello", 0, 500));
    d.t.stop(d.now);
    let actions = d.take();
    assert_eq!(
        texts(&actions),
        [r#"{"message":"EndOfStream","last_seq_no":30}"#]
    );
    let last = text(&mut d, &transcript("there", 500, 600));
    assert_eq!(d.t.state(), State::Open, "waiting for EndOfTranscript");
    let mut end = last;
    end.extend(text(&mut d, r#"{"message":"EndOfTranscript"}"#));
    assert_eq!(
        finals(&end),
        ["hello there"],
        "the words still joining are the last final"
    );
    assert_eq!(d.t.state(), State::Stopped);
}

#[test]
fn one_final_per_end_of_utterance() {
    let mut d = started();
    let mut actions = text(
        &mut d,
        r#"{"message":"AddPartialTranscript","metadata":{"transcript":"what","start_time":0.0,"end_time":0.3},"results":[]}"#,
    );
    actions.extend(text(&mut d, &transcript("what is", 0, 600)));
    actions.extend(text(&mut d, END_OF_UTTERANCE));
    actions.extend(text(&mut d, END_OF_UTTERANCE));
    assert_eq!(finals(&actions), ["what is"]);
}

#[test]
fn close_classes() {
    let mut d = started();
    d.close(4005);
    let report = d.t.take_close_report();
    assert_eq!(
        report.map(|r| (r.class, r.delay_ms >= 10_000)),
        Some((CloseClass::Throttled, true))
    );
    d.advance(10_000);
    d.provisioned(SM);
    d.open();
    text(&mut d, STARTED);
    d.close(1008);
    d.advance(1_000);
    assert_eq!(d.t.provision_reason(), ProvisionReason::SessionOver);
    d.provisioned(SM);
    d.open();
    let actions = d.close(4001);
    assert!(actions.contains(&Action::Error(TranscriberError::FatalClose { code: 4001 })));
    assert_eq!(d.t.state(), State::Failed);
}
