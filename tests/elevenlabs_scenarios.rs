//! The transcriber core on ElevenLabs Scribe realtime, in virtual time: base64 JSON chunks with
//! `previous_text` after a reconnect, one final per commit whichever form comes first (L8), word
//! times as the watermark (L4), a single-use token per connect (R6), the manual commit on stop,
//! and closes classified by the error message before them.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod transcriber_sim;

use transcriber_sim::*;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocols::elevenlabs;
use turnguard::core::stt::transcriber::{
    Action, ProvisionReason, State, TranscriberConfig, TranscriberError,
};

const EL: &str = "wss://el.example/v1/speech-to-text/realtime?model_id=scribe_v2_realtime&token=a&include_timestamps=true";

fn elevenlabs() -> TranscriberConfig {
    TranscriberConfig {
        protocol: &elevenlabs::PROFILE,
        ..config()
    }
}

fn text(d: &mut Drive, message: &str) -> Vec<Action> {
    d.t.on_text(message, d.now);
    d.take()
}

fn committed(text: &str, end_s: &str) -> String {
    format!(
        r#"{{"message_type":"committed_transcript_with_timestamps","text":"{text}","words":[{{"text":"{text}","start":0.0,"end":{end_s},"type":"word"}}]}}"#
    )
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
fn one_final_per_commit_and_its_twin_is_skipped() {
    let mut d = Drive::opened(elevenlabs(), EL);
    let mut actions = text(
        &mut d,
        r#"{"message_type":"session_started","session_id":"s"}"#,
    );
    actions.extend(text(
        &mut d,
        r#"{"message_type":"committed_transcript","text":"What is it?"}"#,
    ));
    actions.extend(text(&mut d, &committed("What is it?", "0.9")));
    actions.extend(text(
        &mut d,
        r#"{"message_type":"committed_transcript_entities","text":"What is it?","entities":[]}"#,
    ));
    assert_eq!(finals(&actions), ["What is it?"]);
}

#[test]
fn a_drop_resends_after_the_last_committed_word_with_the_last_final_as_context() {
    let mut d = Drive::opened(elevenlabs(), EL);
    for n in 0..50 {
        d.audio(n);
        d.advance(20);
    }
    text(&mut d, &committed("what is", "0.6"));
    d.close(1006);
    d.advance(1_000);
    assert_eq!(
        d.t.provision_reason(),
        ProvisionReason::Reconnect,
        "a fresh single-use token"
    );
    d.provisioned(EL);
    let mut resent = d.open();
    resent.extend(d.advance(100));
    assert_eq!(
        sent(&resent),
        (30..50).collect::<Vec<_>>(),
        "from 600 ms = frame 30"
    );
    let resent_texts = texts(&resent);
    let first = resent_texts.first().cloned().unwrap_or_default();
    assert!(first.ends_with(r#","previous_text":"what is"}"#), "{first}");
    assert!(
        resent_texts[1..]
            .iter()
            .all(|text| !text.contains("previous_text")),
        "the first chunk only"
    );
}

#[test]
fn stop_commits_and_the_commit_finishes_the_stream() {
    let mut d = Drive::opened(elevenlabs(), EL);
    d.audio(0);
    d.t.stop(d.now);
    let finish = texts(&d.take());
    assert_eq!(finish.len(), 1, "{finish:?}");
    assert!(finish[0].contains(r#""commit":true"#));
    let last = text(
        &mut d,
        r#"{"message_type":"committed_transcript","text":"bye"}"#,
    );
    assert_eq!(finals(&last), ["bye"]);
    assert_eq!(d.t.state(), State::Stopped);
}

#[test]
fn closes_follow_the_error_message_before_them() {
    let mut d = Drive::opened(elevenlabs(), EL);
    text(
        &mut d,
        r#"{"message_type":"session_time_limit_exceeded","error":"limit"}"#,
    );
    d.close(1000);
    assert_eq!(
        d.t.take_close_report().map(|r| r.class),
        Some(CloseClass::SessionOver)
    );
    d.advance(1_000);
    assert_eq!(d.t.provision_reason(), ProvisionReason::SessionOver);
    d.provisioned(EL);
    d.open();
    text(
        &mut d,
        r#"{"message_type":"unaccepted_terms","error":"accept the terms"}"#,
    );
    let actions = d.close(1008);
    assert!(actions.contains(&Action::Error(TranscriberError::FatalClose { code: 1008 })));
    assert_eq!(d.t.state(), State::Failed);
}
