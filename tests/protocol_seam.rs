//! The protocol seam itself: the list of protocols is made from their folder and every entry
//! agrees with its file; an unknown name is not a protocol; on Gladia `provision()` hears why it
//! is called and every close is reported with its class.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod transcriber_sim;

use transcriber_sim::*;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocols::{self, gladia, ALL};
use turnguard::core::stt::reconnect::ReconnectAction;
use turnguard::core::stt::transcriber::{Action, ProvisionReason, State};

#[test]
fn every_protocol_is_listed_once_in_name_order_under_its_file_name() {
    let names: Vec<&str> = ALL.iter().map(|profile| profile.name).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(names, sorted, "name order, no name twice");
    assert!(!names.is_empty());
    // No file system on wasm32: the folder is read natively.
    #[cfg(not(target_arch = "wasm32"))]
    {
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/src/core/stt/protocols");
        let mut files: Vec<String> = std::fs::read_dir(folder)
            .expect("the protocols folder")
            .filter_map(|entry| {
                let name = entry.ok()?.file_name().into_string().ok()?;
                let stem = name.strip_suffix(".rs")?;
                (stem != "mod").then(|| stem.replace('_', "-"))
            })
            .collect();
        files.sort_unstable();
        assert_eq!(names, files, "one profile per file in {folder}");
    }
    for name in &names {
        assert_eq!(protocols::named(name).map(|p| p.name), Some(*name));
        assert!(
            protocols::names().contains(&format!("\"{name}\"")),
            "{name} in the error message's list"
        );
    }
    assert!(protocols::named("whisper").is_none());
    assert!(protocols::named("").is_none());
}

#[test]
fn gladia_provisions_with_reason_start_then_session_over_and_never_asks_for_reconnects() {
    let mut d = Drive::opened(config_for(&gladia::PROFILE), URL);
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
