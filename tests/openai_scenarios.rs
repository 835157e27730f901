//! The transcriber core on OpenAI Realtime transcription, in virtual time: one final per item in
//! commit order whatever order completions come in (L8), 24 kHz base64 audio, fresh credentials
//! per connect (R6), the completed items' `audio_end_ms` as the watermark (L4), `session_expired`
//! as a session over, close 4000 fatal, and the finish on stop.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod transcriber_sim;

use transcriber_sim::*;
use turnguard::core::stt::protocols::openai;
use turnguard::core::stt::protocols::openai::COMMIT;
use turnguard::core::stt::transcriber::{
    Action, ProvisionReason, State, TranscriberConfig, TranscriberError,
};

const OA: &str = "wss://oa.example/v1/realtime?intent=transcription";

fn openai() -> TranscriberConfig {
    TranscriberConfig {
        protocol: &openai::PROFILE,
        ..config()
    }
}

fn text(d: &mut Drive, message: &str) -> Vec<Action> {
    d.t.on_text(message, d.now);
    d.take()
}

fn committed(id: &str) -> String {
    format!(
        r#"{{"type":"input_audio_buffer.committed","event_id":"e","previous_item_id":null,"item_id":"{id}"}}"#
    )
}

fn stopped(id: &str, end_ms: u64) -> String {
    format!(
        r#"{{"type":"input_audio_buffer.speech_stopped","event_id":"e","audio_end_ms":{end_ms},"item_id":"{id}"}}"#
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

fn finals(actions: &[Action]) -> Vec<(String, u64)> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::Final { text, utterance } => Some((text.clone(), *utterance)),
            _ => None,
        })
        .collect()
}

fn partials(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::Partial { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn finals_come_in_commit_order_when_completions_do_not() {
    let mut d = Drive::opened(openai(), OA);
    let mut actions = text(&mut d, &stopped("a", 900));
    actions.extend(text(&mut d, &committed("a")));
    actions.extend(text(&mut d, &delta("a", "what is")));
    actions.extend(text(&mut d, &stopped("b", 1_800)));
    actions.extend(text(&mut d, &committed("b")));
    actions.extend(text(&mut d, &delta("b", "the")));
    actions.extend(text(&mut d, &delta("b", " weather")));
    assert_eq!(partials(&actions), ["what is", "the", "the weather"]);
    // b completes first: it waits for a.
    let early = text(&mut d, &completed("b", "The weather?"));
    assert_eq!(finals(&early), []);
    let both = text(&mut d, &completed("a", "What is"));
    assert_eq!(
        finals(&both),
        [("What is".into(), 1), ("The weather?".into(), 2)]
    );
    // A repeated completion (formatted duplicate) makes no second final.
    assert_eq!(finals(&text(&mut d, &completed("b", "The weather."))), []);
    assert_eq!(finals(&text(&mut d, &completed("a", "What is."))), []);
    assert_eq!(d.t.stats().unknown_messages, 0);
}

#[test]
fn a_failed_item_does_not_hold_back_the_next() {
    let mut d = Drive::opened(openai(), OA);
    text(&mut d, &committed("a"));
    text(&mut d, &committed("b"));
    text(&mut d, &completed("b", "second"));
    let actions = text(
        &mut d,
        r#"{"type":"conversation.item.input_audio_transcription.failed","item_id":"a","content_index":0,"error":{"type":"transcription_error","code":"x","message":"m"}}"#,
    );
    assert_eq!(finals(&actions), [("second".into(), 1)]);
}

#[test]
fn audio_goes_out_as_24_khz_base64_json() {
    let mut d = Drive::opened(openai(), OA);
    let text = texts(&d.audio(7)).pop().unwrap_or_default();
    assert_eq!(
        Some(text.len()),
        // 320 samples at 16 kHz are 480 at 24 kHz: 960 bytes, 1280 base64 characters.
        Some(r#"{"type":"input_audio_buffer.append","audio":""}"#.len() + 1_280)
    );
    assert!(
        text.starts_with(r#"{"type":"input_audio_buffer.append","audio":"BwA"#),
        "{text}"
    );
}

#[test]
fn audio_of_items_not_completed_is_resent_on_the_next_connection() {
    let mut d = Drive::opened(openai(), OA);
    for n in 0..50 {
        d.audio(n); // 1 s
        d.advance(20);
    }
    // Item a (0–600 ms) completed; item b (to 1000 ms) was still transcribing at the drop.
    text(&mut d, &stopped("a", 600));
    text(&mut d, &committed("a"));
    text(&mut d, &completed("a", "what is"));
    text(&mut d, &stopped("b", 1_000));
    text(&mut d, &committed("b"));
    d.close(1006);
    d.advance(1_000);
    assert_eq!(d.t.provision_reason(), ProvisionReason::Reconnect);
    d.provisioned(OA);
    let mut resent = d.open();
    resent.extend(d.advance(100));
    assert_eq!(
        sent(&resent),
        (30..50).collect::<Vec<_>>(),
        "from 600 ms = frame 30"
    );
    // b's completion on the old connection never comes; the new session's item is the final.
    text(&mut d, &committed("c"));
    let actions = text(&mut d, &completed("c", "the weather"));
    assert_eq!(finals(&actions), [("the weather".into(), 2)]);
}

#[test]
fn session_expired_provisions_a_new_session() {
    let mut d = Drive::opened(openai(), OA);
    let actions = text(
        &mut d,
        r#"{"type":"error","event_id":"e","error":{"type":"invalid_request_error","code":"session_expired","message":"Your session hit the maximum duration of 60 minutes."}}"#,
    );
    assert!(actions.contains(&Action::Close), "{actions:?}");
    d.close(1001);
    d.advance(1_000);
    assert_eq!(d.t.provision_reason(), ProvisionReason::SessionOver);
    assert_eq!(d.count(&Action::Provision), 2);
}

#[test]
fn close_4000_is_fatal_other_closes_retry() {
    let mut d = Drive::opened(openai(), OA);
    d.close(1011);
    d.advance(1_000);
    d.provisioned(OA);
    d.open();
    assert_eq!(d.t.state(), State::Open);
    let actions = d.close(4000);
    assert!(actions.contains(&Action::Error(TranscriberError::FatalClose { code: 4000 })));
    assert_eq!(d.t.state(), State::Failed);
    assert_eq!(d.advance(60_000), []);
}

#[test]
fn other_errors_and_unknown_messages_are_skipped() {
    let mut d = Drive::opened(openai(), OA);
    text(&mut d, r#"{"type":"session.created","session":{}}"#);
    text(
        &mut d,
        r#"{"type":"error","error":{"code":"invalid_value"}}"#,
    );
    text(&mut d, r#"{"type":"rate_limits.updated"}"#);
    text(&mut d, r#"{"type":"input_audio_buffer.committed"}"#);
    assert_eq!(d.t.state(), State::Open);
    assert_eq!(d.t.stats().unknown_messages, 1);
    assert_eq!(d.t.stats().malformed_messages, 1);
}

#[test]
fn stop_commits_and_finishes_once_the_last_item_completed() {
    let mut d = Drive::opened(openai(), OA);
    text(&mut d, &stopped("a", 900));
    text(&mut d, &committed("a"));
    for n in 0..10 {
        d.audio(n);
    }
    d.t.stop(d.now);
    let actions = d.take();
    assert_eq!(texts(&actions), [COMMIT]);
    // a completes before the server answered the commit: not finished yet.
    let first = text(&mut d, &completed("a", "hello"));
    assert_eq!(finals(&first), [("hello".into(), 1)]);
    assert_eq!(
        d.t.state(),
        State::Open,
        "the commit's item is still to come"
    );
    text(&mut d, &committed("last"));
    let last = text(&mut d, &completed("last", "there"));
    assert_eq!(finals(&last), [("there".into(), 2)]);
    assert_eq!(d.t.state(), State::Stopped);
}

#[test]
fn stop_with_nothing_to_commit_finishes_on_the_empty_buffer_error() {
    let mut d = Drive::opened(openai(), OA);
    d.t.stop(d.now);
    d.take();
    text(
        &mut d,
        r#"{"type":"error","error":{"type":"invalid_request_error","code":"input_audio_buffer_commit_empty","message":"m"}}"#,
    );
    assert_eq!(d.t.state(), State::Stopped);
}
