//! ElevenLabs Scribe realtime: base64 JSON chunks (`previous_text` on the first after a
//! reconnect), one final per commit whichever of its twins comes first, word times as the
//! watermark, a single-use token per connect, the finish a manual commit, closes classified by the
//! error message before them.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use crate::conformance::{CloseCase, Conversation, Fixture, Said};
use crate::transcriber_sim::*;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocols::elevenlabs::PROFILE;

/// An error message of this type, as ElevenLabs sends it before closing.
macro_rules! error {
    ($kind:literal) => {
        concat!(r#"{"message_type":""#, $kind, r#"","error":"m"}"#)
    };
}

pub const FIXTURE: Fixture = Fixture {
    profile: &PROFILE,
    url: "wss://el.example/v1/speech-to-text/realtime?model_id=scribe_v2_realtime&token=a&include_timestamps=true",
    start: None,
    started: None,
    utterance,
    partial: |said| message("partial_transcript", said.text),
    piece: None,
    speech_start: None,
    ack: None,
    receipt: None,
    session_over: None,
    finish: |_| {
        vec![
            r#"{"message_type":"input_audio_chunk","audio_base_64":"","commit":true,"sample_rate":16000}"#
                .into(),
        ]
    },
    // A commit with nothing new: the transcript that answers the finish's commit.
    end: &[r#"{"message_type":"committed_transcript","text":""}"#],
    closes: &[
        CloseCase::after(error!("auth_error"), &[1008], CloseClass::Fatal),
        CloseCase::after(error!("unaccepted_terms"), &[1008], CloseClass::Fatal),
        CloseCase::after(error!("quota_exceeded"), &[1008], CloseClass::Fatal),
        CloseCase::after(error!("input_error"), &[1008], CloseClass::Fatal),
        CloseCase::after(error!("rate_limited"), &[1000], CloseClass::Throttled),
        CloseCase::after(error!("queue_overflow"), &[1000], CloseClass::Throttled),
        CloseCase::after(error!("resource_exhausted"), &[1000], CloseClass::Throttled),
        CloseCase::after(error!("session_time_limit_exceeded"), &[1000], CloseClass::SessionOver),
        CloseCase::after(error!("transcriber_error"), &[1011], CloseClass::Retry),
        CloseCase::codes(&[1000], CloseClass::Retry),
    ],
    ignored: &[
        r#"{"message_type":"session_started","session_id":"s"}"#,
        r#"{"message_type":"final_transcript","text":"x"}"#,
        r#"{"message_type":"edited_transcript","text":"x"}"#,
    ],
    unknown: &[r#"{"message_type":"new_thing"}"#],
    malformed: &[r#"{"text":"x"}"#, r#"{"message_type":"partial_transcript"}"#],
};

/// A caption, the commit's transcript, its twin with timestamps, and its entities.
fn utterance(said: &Said) -> Vec<String> {
    vec![
        message("partial_transcript", said.first_word()),
        message("committed_transcript", said.text),
        with_timestamps(said.text, said.end_ms),
        message("committed_transcript_entities", said.text),
    ]
}

fn message(kind: &str, text: &str) -> String {
    format!(r#"{{"message_type":"{kind}","text":"{text}"}}"#)
}

fn with_timestamps(text: &str, end_ms: u64) -> String {
    format!(
        r#"{{"message_type":"committed_transcript_with_timestamps","text":"{text}","words":[{{"text":"{text}","start":0.0,"end":{}.{:03},"type":"word"}}]}}"#,
        end_ms / 1000,
        end_ms % 1000
    )
}

#[test]
fn the_twin_with_timestamps_first_makes_the_final_and_the_plain_one_none() {
    let mut c = Conversation::opened(&FIXTURE);
    let mut actions = c.hear(&with_timestamps("What is it?", 900));
    actions.extend(c.hear(&message("committed_transcript", "What is it?")));
    actions.extend(c.hear(&with_timestamps("Next.", 1_400)));
    assert_eq!(finals(&actions), ["What is it?", "Next."]);
}

#[test]
fn the_first_chunk_after_a_reconnect_carries_the_last_final_as_previous_text() {
    let mut c = Conversation::opened(&FIXTURE);
    let first = texts(&c.capture(1));
    assert!(!first[0].contains("previous_text"), "not on the first connection");
    c.say("what is");
    c.d.close(1006);
    let mut resent = c.reconnect();
    resent.extend(c.speak(2));
    let resent = texts(&resent);
    assert!(resent[0].ends_with(r#","previous_text":"what is"}"#), "{}", resent[0]);
    assert!(
        resent[1..].iter().all(|text| !text.contains("previous_text")),
        "the first chunk only"
    );
}
