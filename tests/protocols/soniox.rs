//! Soniox real-time: the configuration (with the key from `provision()`) first, final tokens
//! joined until `<end>`, `<fin>` answering `finalize`, `final_audio_proc_ms` as the watermark, the
//! keepalive, an empty text frame ending the audio, closes classified by the error before them.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use crate::conformance::{CloseCase, Conversation, Fixture, Said, Start};
use crate::transcriber_sim::*;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocols::soniox::{FINALIZE, PROFILE};
use turnguard::core::stt::transcriber::State;

/// An error message of this code, as Soniox sends it before closing.
macro_rules! error {
    ($code:literal) => {
        concat!(r#"{"error_code":"#, $code, r#","error_message":"m"}"#)
    };
}

pub const FIXTURE: Fixture = Fixture {
    profile: &PROFILE,
    url: "wss://stt-rt.soniox.example/transcribe-websocket",
    start: Some(Start {
        prefix: r#"{"model":"stt-rt-v3","audio_format":"pcm_s16le","sample_rate":16000"#,
        config: r#"{"api_key":"temp-1"}"#,
    }),
    started: None,
    utterance,
    partial: |said| tokens(&words(said.text, false), 0),
    piece: Some(|said| vec![tokens(&words(said.text, true), said.end_ms)]),
    speech_start: None,
    ack: None,
    receipt: None,
    session_over: None,
    finish: |_| vec![FINALIZE.into(), String::new()],
    end: &[FINISHED],
    closes: &[
        CloseCase::after(error!(400), &[1000], CloseClass::Fatal),
        CloseCase::after(error!(401), &[1000], CloseClass::Fatal),
        CloseCase::after(error!(402), &[1000], CloseClass::Fatal),
        CloseCase::after(error!(403), &[1000], CloseClass::Fatal),
        CloseCase::after(error!(429), &[1000], CloseClass::Throttled),
        CloseCase::after(error!(408), &[1000], CloseClass::Retry),
        CloseCase::after(error!(500), &[1011], CloseClass::Retry),
        CloseCase::after(error!(503), &[1000], CloseClass::Retry),
        CloseCase::codes(&[1000], CloseClass::Retry),
    ],
    ignored: &[r#"{"tokens":[],"final_audio_proc_ms":0,"total_audio_proc_ms":0}"#],
    unknown: &[r#"{"other":1}"#],
    malformed: &["x", r#"{"tokens":7"#],
};

const FINISHED: &str =
    r#"{"tokens":[],"final_audio_proc_ms":0,"total_audio_proc_ms":0,"finished":true}"#;

/// A non-final token, the final ones with `<end>`, then a lone `<end>` that ends nothing.
fn utterance(said: &Said) -> Vec<String> {
    let mut finals = words(said.text, true);
    finals.push(("<end>".into(), true));
    vec![
        tokens(&words(said.first_word(), false), 0),
        tokens(&finals, said.end_ms),
        tokens(&[("<end>".into(), true)], said.end_ms),
    ]
}

/// `text`'s words as tokens, each but the first with its leading space.
fn words(text: &str, is_final: bool) -> Vec<(String, bool)> {
    text.split_whitespace()
        .enumerate()
        .map(|(i, word)| (if i == 0 { word.into() } else { format!(" {word}") }, is_final))
        .collect()
}

fn tokens(list: &[(String, bool)], final_ms: u64) -> String {
    let tokens: Vec<String> = list
        .iter()
        .map(|(text, is_final)| {
            format!(r#"{{"text":"{text}","confidence":0.9,"is_final":{is_final}}}"#)
        })
        .collect();
    format!(
        r#"{{"tokens":[{}],"final_audio_proc_ms":{final_ms},"total_audio_proc_ms":{final_ms}}}"#,
        tokens.join(",")
    )
}

#[test]
fn fin_makes_the_words_still_joining_the_last_final_before_finished() {
    let mut c = Conversation::opened(&FIXTURE);
    c.hear(&tokens(&words("bye", true), 400));
    c.d.t.stop(c.d.now);
    assert_eq!(messages(&c.d.take()), [FINALIZE, ""]);
    let last = c.hear(&tokens(&[(" now".into(), true), ("<fin>".into(), true)], 800));
    assert_eq!(finals(&last), ["bye now"]);
    assert_eq!(c.d.t.state(), State::Open, "waiting for finished");
    c.hear(FINISHED);
    assert_eq!(c.d.t.state(), State::Stopped);
}

#[test]
fn final_tokens_still_joining_when_finished_comes_are_the_last_final() {
    let mut c = Conversation::opened(&FIXTURE);
    c.hear(&tokens(&words("so long", true), 400));
    c.d.t.stop(c.d.now);
    c.d.take();
    assert_eq!(finals(&c.hear(FINISHED)), ["so long"]);
    assert_eq!(c.d.t.state(), State::Stopped);
}
