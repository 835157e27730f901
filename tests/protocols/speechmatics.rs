//! Speechmatics real-time: `StartRecognition` first and audio only after `RecognitionStarted`,
//! `AudioAdded` receipts as flow control (5 s ahead at most) but not the watermark, pieces joined
//! until `EndOfUtterance`, `EndOfStream` with the last frame sent, answered by `EndOfTranscript`.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use crate::conformance::{CloseCase, Conversation, Fixture, Said, Start};
use crate::transcriber_sim::*;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocols::speechmatics::PROFILE;
use turnguard::core::stt::transcriber::State;

pub const FIXTURE: Fixture = Fixture {
    profile: &PROFILE,
    url: "wss://eu2.rt.speechmatics.example/v2?jwt=a",
    start: Some(Start {
        prefix: r#"{"message":"StartRecognition","audio_format":{"type":"raw","encoding":"pcm_s16le","sample_rate":16000}"#,
        config: r#"{"transcription_config":{"language":"de"}}"#,
    }),
    started: Some(r#"{"message":"RecognitionStarted","id":"s","language_pack_info":{}}"#),
    utterance,
    partial: |said| transcript("AddPartialTranscript", said.text, said.start_ms, said.end_ms),
    piece: Some(|said| vec![transcript("AddTranscript", said.text, said.start_ms, said.end_ms)]),
    speech_start: None,
    ack: None,
    receipt: Some(|seq_no| format!(r#"{{"message":"AudioAdded","seq_no":{seq_no}}}"#)),
    session_over: None,
    finish: |frames| vec![format!(r#"{{"message":"EndOfStream","last_seq_no":{frames}}}"#)],
    end: &[END_OF_TRANSCRIPT],
    closes: &[
        CloseCase::codes(&[1003, 4001, 4003, 4004, 4006], CloseClass::Fatal),
        CloseCase::codes(&[1011, 4005, 4013], CloseClass::Throttled),
        CloseCase::codes(&[1008], CloseClass::SessionOver),
        CloseCase::codes(&[4002], CloseClass::Retry),
    ],
    ignored: &[
        r#"{"message":"Info","type":"recognition_quality","reason":"x"}"#,
        r#"{"message":"Warning","type":"idle_timeout"}"#,
    ],
    unknown: &[r#"{"message":"New"}"#],
    malformed: &[r#"{"message":"AudioAdded"}"#, "[]"],
};

const END_OF_TRANSCRIPT: &str = r#"{"message":"EndOfTranscript"}"#;

/// A caption, the transcript, and `EndOfUtterance` twice (the second ends nothing).
fn utterance(said: &Said) -> Vec<String> {
    let end = end_of_utterance(said.end_ms);
    vec![
        transcript("AddPartialTranscript", said.first_word(), said.start_ms, said.end_ms),
        transcript("AddTranscript", said.text, said.start_ms, said.end_ms),
        end.clone(),
        end,
    ]
}

fn transcript(message: &str, words: &str, start_ms: u64, end_ms: u64) -> String {
    format!(
        r#"{{"message":"{message}","format":"2.9","metadata":{{"transcript":"{words}","start_time":{},"end_time":{}}},"results":[]}}"#,
        seconds(start_ms),
        seconds(end_ms)
    )
}

fn end_of_utterance(at_ms: u64) -> String {
    let at = seconds(at_ms);
    format!(r#"{{"message":"EndOfUtterance","metadata":{{"start_time":{at},"end_time":{at}}}}}"#)
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

#[test]
fn end_of_stream_names_the_last_frame_sent_though_receipts_lag() {
    let mut c = Conversation::opened(&FIXTURE);
    c.capture(30);
    c.hear(r#"{"message":"AudioAdded","seq_no":20}"#);
    c.d.t.stop(c.d.now);
    assert_eq!(
        messages(&c.d.take()),
        [r#"{"message":"EndOfStream","last_seq_no":30}"#]
    );
}

#[test]
fn pieces_still_joining_at_end_of_transcript_are_the_last_final() {
    let mut c = Conversation::opened(&FIXTURE);
    let mut actions = c.hear(&transcript("AddTranscript", "hello", 0, 500));
    c.d.t.stop(c.d.now);
    c.d.take();
    actions.extend(c.hear(&transcript("AddTranscript", "there", 500, 600)));
    actions.extend(c.hear(&transcript("AddTranscript", ".", 600, 600)));
    assert_eq!(c.d.t.state(), State::Open, "waiting for EndOfTranscript");
    actions.extend(c.hear(END_OF_TRANSCRIPT));
    assert_eq!(finals(&actions), ["hello there."], "punctuation attached");
    assert_eq!(c.d.t.state(), State::Stopped);
}
