//! OpenAI Realtime transcription: 24 kHz base64 audio, one final per item in commit order whatever
//! order completions come in, a client secret per connect, the completed items' `audio_end_ms`
//! as the watermark, `session_expired` a session over, close 4000 fatal, the finish a commit.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use crate::conformance::{CloseCase, Conversation, Fixture, Said};
use crate::transcriber_sim::*;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocols::openai::{COMMIT, PROFILE};
use turnguard::core::stt::transcriber::{Action, State};

pub const FIXTURE: Fixture = Fixture {
    profile: &PROFILE,
    url: "wss://oa.example/v1/realtime?intent=transcription",
    start: None,
    started: None,
    utterance,
    partial: |said| delta(&item(said), said.text),
    piece: None,
    speech_start: Some(|said| speech_started(&item(said), said.start_ms)),
    ack: None,
    receipt: None,
    session_over: Some(
        r#"{"type":"error","event_id":"e","error":{"type":"invalid_request_error","code":"session_expired","message":"Your session hit the maximum duration of 60 minutes."}}"#,
    ),
    finish: |_| vec![COMMIT.into()],
    // The server commits what the finish's commit found (an item with no `speech_stopped`) and
    // completes it.
    end: &[
        r#"{"type":"input_audio_buffer.committed","event_id":"e","previous_item_id":null,"item_id":"finish"}"#,
        r#"{"type":"conversation.item.input_audio_transcription.completed","event_id":"e","item_id":"finish","content_index":0,"transcript":""}"#,
    ],
    closes: &[
        CloseCase::codes(&[1001, 1011], CloseClass::Retry),
        CloseCase::codes(&[4000], CloseClass::Fatal),
    ],
    ignored: &[
        r#"{"type":"session.created","session":{}}"#,
        r#"{"type":"error","error":{"code":"invalid_value"}}"#,
        r#"{"type":"conversation.item.created","item":{}}"#,
    ],
    unknown: &[r#"{"type":"rate_limits.updated"}"#],
    malformed: &[r#"{"type":"input_audio_buffer.committed"}"#],
};

fn item(said: &Said) -> String {
    format!("item_{}", said.id)
}

/// The VAD's start and stop, the commit, a delta, the completion, and a repeated completion.
fn utterance(said: &Said) -> Vec<String> {
    let id = item(said);
    vec![
        speech_started(&id, said.start_ms),
        stopped(&id, said.end_ms),
        committed(&id),
        delta(&id, said.first_word()),
        completed(&id, said.text),
        completed(&id, said.text),
    ]
}

fn speech_started(id: &str, start_ms: u64) -> String {
    format!(
        r#"{{"type":"input_audio_buffer.speech_started","event_id":"e","audio_start_ms":{start_ms},"item_id":"{id}"}}"#
    )
}

fn stopped(id: &str, end_ms: u64) -> String {
    format!(
        r#"{{"type":"input_audio_buffer.speech_stopped","event_id":"e","audio_end_ms":{end_ms},"item_id":"{id}"}}"#
    )
}

fn committed(id: &str) -> String {
    format!(
        r#"{{"type":"input_audio_buffer.committed","event_id":"e","previous_item_id":null,"item_id":"{id}"}}"#
    )
}

fn delta(id: &str, delta: &str) -> String {
    format!(
        r#"{{"type":"conversation.item.input_audio_transcription.delta","event_id":"e","item_id":"{id}","content_index":0,"delta":"{delta}"}}"#
    )
}

fn completed(id: &str, transcript: &str) -> String {
    format!(
        r#"{{"type":"conversation.item.input_audio_transcription.completed","event_id":"e","item_id":"{id}","content_index":0,"transcript":"{transcript}","usage":{{"type":"duration","seconds":1}}}}"#
    )
}

/// The finals among `actions` with their utterance numbers.
fn numbered(actions: &[Action]) -> Vec<(String, u64)> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::Final { text, utterance } => Some((text.clone(), *utterance)),
            _ => None,
        })
        .collect()
}

#[test]
fn finals_come_in_commit_order_when_completions_do_not() {
    let mut c = Conversation::opened(&FIXTURE);
    let mut actions = c.hear(&stopped("a", 900));
    actions.extend(c.hear(&committed("a")));
    actions.extend(c.hear(&delta("a", "what is")));
    actions.extend(c.hear(&stopped("b", 1_800)));
    actions.extend(c.hear(&committed("b")));
    actions.extend(c.hear(&delta("b", "the")));
    actions.extend(c.hear(&delta("b", " weather")));
    assert_eq!(partials(&actions), ["what is", "the", "the weather"]);
    // b completes first: it waits for a.
    assert_eq!(numbered(&c.hear(&completed("b", "The weather?"))), []);
    let both = c.hear(&completed("a", "What is"));
    assert_eq!(numbered(&both), [("What is".into(), 1), ("The weather?".into(), 2)]);
    assert_eq!(numbered(&c.hear(&completed("b", "The weather."))), []);
}

#[test]
fn a_completion_before_its_commit_commits_it() {
    let mut c = Conversation::opened(&FIXTURE);
    let actions = c.hear(&completed("a", "early"));
    assert_eq!(numbered(&actions), [("early".into(), 1)]);
    assert_eq!(numbered(&c.hear(&committed("a"))), []);
}

#[test]
fn a_failed_item_does_not_hold_back_the_next() {
    let mut c = Conversation::opened(&FIXTURE);
    c.hear(&committed("a"));
    c.hear(&committed("b"));
    c.hear(&completed("b", "second"));
    let actions = c.hear(
        r#"{"type":"conversation.item.input_audio_transcription.failed","item_id":"a","content_index":0,"error":{"type":"transcription_error","code":"x","message":"m"}}"#,
    );
    assert_eq!(numbered(&actions), [("second".into(), 1)]);
}

#[test]
fn audio_goes_out_as_24_khz_pcm_in_input_audio_buffer_append() {
    let mut c = Conversation::opened(&FIXTURE);
    let audio = texts(&c.capture(1)).pop().unwrap_or_default();
    // 320 samples at 16 kHz are 480 at 24 kHz: 960 bytes, 1280 base64 characters.
    let envelope = r#"{"type":"input_audio_buffer.append","audio":""}"#;
    assert_eq!(audio.len(), envelope.len() + 1_280);
    assert!(audio.starts_with(r#"{"type":"input_audio_buffer.append","audio":"AQA"#), "{audio}");
}

#[test]
fn stop_finishes_once_the_commits_item_and_every_earlier_one_completed() {
    let mut c = Conversation::opened(&FIXTURE);
    c.hear(&stopped("a", 900));
    c.hear(&committed("a"));
    c.capture(10);
    c.d.t.stop(c.d.now);
    assert_eq!(messages(&c.d.take()), [COMMIT]);
    // a completes before the server answered the commit: not finished yet.
    assert_eq!(numbered(&c.hear(&completed("a", "hello"))), [("hello".into(), 1)]);
    assert_eq!(c.d.t.state(), State::Open, "the commit's item is still to come");
    c.hear(&committed("last"));
    assert_eq!(c.d.t.state(), State::Open, "committed, not completed");
    let last = c.hear(&completed("last", "there"));
    assert_eq!(numbered(&last), [("there".into(), 2)]);
    assert_eq!(c.d.t.state(), State::Stopped);
}

#[test]
fn stop_with_nothing_to_commit_finishes_on_the_empty_buffer_error() {
    let mut c = Conversation::opened(&FIXTURE);
    c.d.t.stop(c.d.now);
    c.d.take();
    c.hear(
        r#"{"type":"error","error":{"type":"invalid_request_error","code":"input_audio_buffer_commit_empty","message":"m"}}"#,
    );
    assert_eq!(c.d.t.state(), State::Stopped);
}
