//! The transcriber core on Soniox real-time, in virtual time: the configuration (with the
//! temporary key from `provision()`) first, final tokens joined until `<end>` (L8),
//! `final_audio_proc_ms` as the watermark (L4), the keepalive (L9), `finalize` and the end of audio
//! on stop, and closes classified by the error before them.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod transcriber_sim;

use transcriber_sim::*;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocols::soniox;
use turnguard::core::stt::protocols::soniox::{FINALIZE, KEEPALIVE};
use turnguard::core::stt::transcriber::{
    Action, ProvisionReason, State, TranscriberConfig, TranscriberError,
};

const SX: &str = "wss://stt-rt.soniox.example/transcribe-websocket";

fn soniox() -> TranscriberConfig {
    TranscriberConfig {
        protocol: &soniox::PROFILE,
        ..config()
    }
}

fn text(d: &mut Drive, message: &str) -> Vec<Action> {
    d.t.on_text(message, d.now);
    d.take()
}

fn tokens(list: &[(&str, bool)], final_ms: u64) -> String {
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

#[test]
fn the_configuration_with_the_key_goes_first_and_audio_follows() {
    let mut d = Drive::new(soniox());
    d.audio(0);
    d.start();
    d.t.set_start_config(Some(r#"{"api_key":"temp-1"}"#.into()));
    d.provisioned(SX);
    let opened = d.open();
    let sent_texts = texts(&opened);
    assert_eq!(sent_texts.len(), 1);
    assert!(
        sent_texts[0].starts_with(r#"{"model":"#),
        "{}",
        sent_texts[0]
    );
    assert!(sent_texts[0].ends_with(r#","api_key":"temp-1"}"#));
    assert_eq!(sent(&opened), [0]);
}

#[test]
fn final_tokens_join_until_end_once() {
    let mut d = Drive::opened(soniox(), SX);
    let mut actions = text(&mut d, &tokens(&[("what", true), (" is", false)], 300));
    actions.extend(text(
        &mut d,
        &tokens(&[(" is", true), (" it", true), ("<end>", true)], 900),
    ));
    actions.extend(text(&mut d, &tokens(&[("<end>", true)], 900)));
    assert_eq!(finals(&actions), ["what is it"]);
}

#[test]
fn a_drop_resends_from_final_audio_proc_ms_and_keeps_the_final_tokens() {
    let mut d = Drive::opened(soniox(), SX);
    for n in 0..50 {
        d.audio(n);
        d.advance(20);
    }
    text(&mut d, &tokens(&[("what", true), (" is", true)], 600));
    d.close(1006);
    d.advance(1_000);
    assert_eq!(d.t.provision_reason(), ProvisionReason::Reconnect);
    d.provisioned(SX);
    let mut resent = d.open();
    resent.extend(d.advance(2_000));
    assert_eq!(
        sent(&resent),
        (30..50).collect::<Vec<_>>(),
        "from 600 ms = frame 30"
    );
    let actions = text(
        &mut d,
        &tokens(&[("the", true), (" weather", true), ("<end>", true)], 1_000),
    );
    assert_eq!(finals(&actions), ["what is the weather"]);
}

#[test]
fn keepalive_within_twenty_seconds_while_no_audio_flows() {
    let mut d = Drive::opened(soniox(), SX);
    let idle = d.advance(21_000);
    assert_eq!(texts(&idle), [KEEPALIVE, KEEPALIVE], "at 10 s and 20 s");
}

#[test]
fn stop_finalizes_ends_the_audio_and_waits_for_finished() {
    let mut d = Drive::opened(soniox(), SX);
    text(&mut d, &tokens(&[("bye", true)], 400));
    d.t.stop(d.now);
    let actions = d.take();
    assert_eq!(texts(&actions), [FINALIZE, ""]);
    let mut last = text(&mut d, &tokens(&[(" now", true), ("<fin>", true)], 800));
    assert_eq!(d.t.state(), State::Open);
    last.extend(text(
        &mut d,
        r#"{"tokens":[],"final_audio_proc_ms":800,"total_audio_proc_ms":800,"finished":true}"#,
    ));
    assert_eq!(finals(&last), ["bye now"]);
    assert_eq!(d.t.state(), State::Stopped);
}

#[test]
fn closes_are_classified_by_the_error_before_them() {
    let mut d = Drive::opened(soniox(), SX);
    text(
        &mut d,
        r#"{"error_code":503,"error_message":"Service unavailable"}"#,
    );
    d.close(1000);
    assert_eq!(
        d.t.take_close_report().map(|r| r.class),
        Some(CloseClass::Retry)
    );
    d.advance(1_000);
    d.provisioned(SX);
    d.open();
    text(
        &mut d,
        r#"{"error_code":429,"error_message":"Too many requests"}"#,
    );
    d.close(1000);
    let report = d.t.take_close_report();
    assert_eq!(report.map(|r| r.class), Some(CloseClass::Throttled));
    d.advance(report.map_or(0, |r| r.delay_ms));
    d.provisioned(SX);
    d.open();
    text(
        &mut d,
        r#"{"error_code":401,"error_message":"Invalid API key"}"#,
    );
    let actions = d.close(1000);
    assert!(actions.contains(&Action::Error(TranscriberError::FatalClose { code: 1000 })));
    assert_eq!(d.t.state(), State::Failed);
}
