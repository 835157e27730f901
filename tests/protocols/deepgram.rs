//! Deepgram listen v1: finalized segments joined until `speech_final` or `UtteranceEnd` (not
//! both), a fresh JWT per connect, 1.25× pacing, `KeepAlive`, `Finalize` + `CloseStream` answered
//! by `Metadata`, 1008 fatal.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use crate::conformance::{CloseCase, Conversation, Fixture, Said};
use crate::transcriber_sim::*;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocols::deepgram::{CLOSE_STREAM, FINALIZE, PROFILE};
use turnguard::core::stt::transcriber::State;

pub const FIXTURE: Fixture = Fixture {
    profile: &PROFILE,
    url: "wss://dg.example/v1/listen?model=nova-3&encoding=linear16&sample_rate=16000",
    start: None,
    started: None,
    utterance,
    partial: |said| results(said.text, false, false, said.start_ms, said.end_ms),
    piece: Some(|said| vec![results(said.text, true, false, said.start_ms, said.end_ms)]),
    speech_start: Some(|said| {
        format!(
            r#"{{"type":"SpeechStarted","channel":[0],"timestamp":{}}}"#,
            seconds(said.start_ms)
        )
    }),
    ack: None,
    receipt: None,
    session_over: None,
    finish: |_| vec![FINALIZE.into(), CLOSE_STREAM.into()],
    end: &[METADATA],
    closes: &[
        CloseCase::codes(&[1011, 1000], CloseClass::Retry),
        CloseCase::codes(&[1008], CloseClass::Fatal),
    ],
    ignored: &[r#"{"type":"UtteranceEnd","channel":[0,1],"last_word_end":1.0}"#],
    unknown: &[r#"{"type":"Brand_New"}"#],
    malformed: &[r#"{"type":"Results"}"#, r#"{"is_final":true}"#],
};

const METADATA: &str = r#"{"type":"Metadata","request_id":"r","duration":2.0}"#;

/// An interim result, a finalized segment, the last one with `speech_final`, then the
/// `UtteranceEnd` that must not make a second final.
fn utterance(said: &Said) -> Vec<String> {
    let (head, tail) = said.text.rsplit_once(' ').unwrap_or(("", said.text));
    let middle = (said.start_ms + said.end_ms) / 2;
    vec![
        results(said.first_word(), false, false, said.start_ms, middle),
        results(head, true, false, said.start_ms, middle),
        results(tail, true, true, middle, said.end_ms),
        utterance_end(said.end_ms),
    ]
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
        r#"{{"type":"Results","channel_index":[0,1],"duration":{},"start":{},"is_final":{is_final},"speech_final":{speech_final},"channel":{{"alternatives":[{{"transcript":"{transcript}","confidence":0.9,"words":[]}}]}},"metadata":{{"request_id":"r"}}}}"#,
        seconds(end_ms - start_ms),
        seconds(start_ms)
    )
}

fn utterance_end(last_word_end_ms: u64) -> String {
    format!(
        r#"{{"type":"UtteranceEnd","channel":[0,1],"last_word_end":{}}}"#,
        seconds(last_word_end_ms)
    )
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

#[test]
fn utterance_end_before_speech_final_is_the_one_final() {
    let mut c = Conversation::opened(&FIXTURE);
    let mut actions = c.hear(&results("what is", false, false, 0, 500));
    actions.extend(c.hear(&results("what is the weather", true, false, 0, 1_300)));
    actions.extend(c.hear(&utterance_end(1_300)));
    // A late speech_final with nothing new.
    actions.extend(c.hear(&results("", true, true, 1_300, 1_500)));
    assert_eq!(finals(&actions), ["what is the weather"]);
}

#[test]
fn a_finalize_flush_ends_the_utterance_and_speech_final_after_it_adds_none() {
    let mut c = Conversation::opened(&FIXTURE);
    c.hear(&results("last", true, false, 0, 400));
    let flushed = r#"{"type":"Results","start":0.4,"duration":0.2,"is_final":true,"speech_final":false,"from_finalize":true,"channel":{"alternatives":[{"transcript":"words"}]}}"#;
    let mut actions = c.hear(flushed);
    actions.extend(c.hear(&results("", true, true, 600, 700)));
    actions.extend(c.hear(&utterance_end(600)));
    assert_eq!(finals(&actions), ["last words"]);
}

#[test]
fn segments_still_joining_at_the_metadata_are_the_last_final() {
    let mut c = Conversation::opened(&FIXTURE);
    c.d.t.stop(c.d.now);
    assert_eq!(messages(&c.d.take()), [FINALIZE, CLOSE_STREAM]);
    let mut actions = c.hear(&results("no speech final", true, false, 0, 900));
    assert_eq!(c.d.t.state(), State::Open);
    actions.extend(c.hear(METADATA));
    assert_eq!(finals(&actions), ["no speech final"]);
    assert_eq!(c.d.t.state(), State::Stopped);
}
