//! The protocol seam itself: the protocols are listed by name, Gladia stays the default, and on
//! Gladia `provision()` hears why it is called and every close is reported with its class.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod transcriber_sim;

use transcriber_sim::*;
use turnguard::core::reconnect::ReconnectAction;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::{protocol_named, protocol_names, PROTOCOLS};
use turnguard::core::transcriber::{Action, ProvisionReason, State, TranscriberConfig};

#[test]
fn the_protocols_are_listed_by_name_with_gladia_first() {
    let names: Vec<&str> = PROTOCOLS.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        [
            "gladia",
            "deepgram",
            "assemblyai",
            "openai",
            "speechmatics",
            "soniox",
            "elevenlabs"
        ]
    );
    assert_eq!(
        protocol_names(),
        r#""gladia", "deepgram", "assemblyai", "openai", "speechmatics", "soniox", "elevenlabs""#
    );
    for name in names {
        assert_eq!(protocol_named(name).map(|p| p.name()), Some(name));
    }
    assert!(protocol_named("whisper").is_none());
    assert_eq!(TranscriberConfig::default().protocol, "gladia");
}

#[test]
fn an_unknown_name_in_the_config_speaks_gladia() {
    let d = Drive::new(TranscriberConfig {
        protocol: "whisper",
        ..config()
    });
    assert_eq!(d.t.protocol_name(), "gladia");
    assert_eq!(d.t.finish_messages(), [r#"{"type":"stop_recording"}"#]);
}

#[test]
fn gladia_provisions_with_reason_start_then_session_over_and_never_asks_for_reconnects() {
    let mut d = Drive::opened(config(), URL);
    assert_eq!(d.t.provision_reason(), ProvisionReason::Start);
    d.advance(1_000);
    d.close(1006); // the session survives: the same URL, no provision()
    let report = d.t.take_close_report().expect("reported");
    assert_eq!(
        (report.code, report.class, report.next),
        (1006, CloseClass::Retry, ReconnectAction::ReconnectSameUrl)
    );
    let back = d.advance(1_000);
    assert!(back.contains(&Action::Connect(URL.into())));
    assert_eq!(d.count(&Action::Provision), 1);
    d.open();
    d.advance(1_000);
    d.close(4403);
    let report = d.t.take_close_report().expect("reported");
    assert_eq!(
        (report.class, report.next),
        (CloseClass::SessionOver, ReconnectAction::Reprovision)
    );
    d.advance(1_000);
    assert_eq!(d.t.state(), State::Provisioning);
    assert_eq!(d.t.provision_reason(), ProvisionReason::SessionOver);
}
