//! AssemblyAI Universal-Streaming v3: a turn's end sent twice (unformatted, then formatted: the
//! final), a single-use token per connect, frames of 50–1000 ms never faster than real time,
//! `ForceEndpoint` + `Terminate` answered by `Termination`, 1008 once retried then fatal.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use crate::conformance::{CloseCase, Conversation, Fixture, Said};
use crate::transcriber_sim::*;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocols::assemblyai::{FORCE_ENDPOINT, PROFILE, TERMINATE};
use turnguard::core::stt::transcriber::{Action, ProvisionReason, State, TranscriberError};

pub const FIXTURE: Fixture = Fixture {
    profile: &PROFILE,
    url: "wss://aai.example/v3/ws?sample_rate=16000&encoding=pcm_s16le&format_turns=true&token=a",
    start: None,
    started: None,
    utterance,
    partial: |said| turn(said, false, false, said.text, false),
    piece: Some(|said| vec![turn(said, false, false, said.text, true)]),
    speech_start: Some(|said| {
        format!(
            r#"{{"type":"SpeechStarted","timestamp":{}}}"#,
            said.start_ms
        )
    }),
    ack: None,
    receipt: None,
    session_over: None,
    finish: |_| vec![FORCE_ENDPOINT.into(), TERMINATE.into()],
    end: &[r#"{"type":"Termination","audio_duration_seconds":2,"session_duration_seconds":3}"#],
    closes: &[
        CloseCase::codes(&[1008, 3005], CloseClass::Retry),
        CloseCase::codes(&[3006, 3007], CloseClass::Fatal),
        CloseCase::codes(&[3008], CloseClass::SessionOver),
        CloseCase::codes(&[3009], CloseClass::Throttled),
    ],
    ignored: &[
        r#"{"type":"Begin","id":"s1","expires_at":1}"#,
        r#"{"type":"Error","error_code":3005,"error":"server error"}"#,
    ],
    unknown: &[r#"{"type":"Warning","warning_code":1}"#, r#"{"type":"Heartbeat"}"#],
    malformed: &[r#"{"type":"Turn"}"#, "{"],
};

/// A caption, the unformatted end of turn (not the final), the formatted one (the final), and a
/// repeat of it.
fn utterance(said: &Said) -> Vec<String> {
    let unformatted = said.text.to_lowercase().replace(['.', ',', '?', '!'], "");
    vec![
        turn(said, false, false, said.first_word(), false),
        turn(said, true, false, &unformatted, true),
        turn(said, true, true, said.text, true),
        turn(said, true, true, said.text, true),
    ]
}

/// A `Turn` of `said` (its number on this connection) whose words are `transcript`'s, final or
/// not, ending at `said.end_ms`.
fn turn(
    said: &Said,
    end_of_turn: bool,
    formatted: bool,
    transcript: &str,
    final_words: bool,
) -> String {
    let words: Vec<String> = transcript
        .split_whitespace()
        .map(|word| {
            format!(
                r#"{{"text":"{word}","start":{},"end":{},"confidence":0.9,"word_is_final":{final_words}}}"#,
                said.start_ms, said.end_ms
            )
        })
        .collect();
    format!(
        r#"{{"type":"Turn","turn_order":{},"turn_is_formatted":{formatted},"end_of_turn":{end_of_turn},"transcript":"{transcript}","end_of_turn_confidence":0.9,"words":[{}]}}"#,
        said.turn,
        words.join(",")
    )
}

#[test]
fn a_second_1008_before_a_session_began_is_fatal() {
    let mut c = Conversation::opened(&FIXTURE);
    c.d.advance(1_000);
    c.d.close(1008); // a reused token: one fresh one
    c.d.advance(1_000);
    assert_eq!(c.d.t.provision_reason(), ProvisionReason::Reconnect);
    assert_eq!(c.d.t.state(), State::Provisioning);
    c.provisioned();
    c.open();
    let actions = c.d.close(1008);
    assert!(actions.contains(&Action::Error(TranscriberError::FatalClose { code: 1008 })));
    assert_eq!(c.d.t.state(), State::Failed);
}

#[test]
fn a_session_that_began_makes_the_next_1008_a_retry_again() {
    let mut c = Conversation::opened(&FIXTURE);
    c.d.close(1008);
    c.reconnect();
    c.hear(r#"{"type":"Begin","id":"s2","expires_at":1}"#);
    c.d.close(1008);
    assert_eq!(c.d.t.state(), State::Backoff);
}

#[test]
fn without_format_turns_the_unformatted_end_of_turn_is_the_final() {
    const PLAIN: Fixture = Fixture {
        url: "wss://aai.example/v3/ws?sample_rate=16000&encoding=pcm_s16le&token=a",
        ..FIXTURE
    };
    let mut c = Conversation::opened(&PLAIN);
    let said = c.next("What is it?", 0, 900);
    let actions = c.hear(&turn(&said, true, false, "what is it", true));
    assert_eq!(finals(&actions), ["what is it"]);
    assert_eq!(finals(&c.hear(&turn(&said, true, true, "What is it?", true))), [] as [String; 0]);
}
