//! Every speech-to-text protocol runs one conformance suite (`conformance/`): each scenario over
//! the neutral events, against each protocol's fixture (`protocols/<name>.rs`, the message
//! script of its server), in virtual time. Each fixture module also holds that protocol's own
//! quirks. `build.rs` lists the fixtures into `FIXTURES`, so a new protocol is its core file and
//! its fixture: nothing here names one.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod conformance;
mod transcriber_sim;

use conformance::Fixture;
use turnguard::core::stt::protocol::Watermark;
use turnguard::core::stt::protocols::ALL;

include!(concat!(env!("OUT_DIR"), "/fixtures.rs"));

#[test]
fn every_protocol_has_one_fixture() {
    let protocols: Vec<&str> = ALL.iter().map(|profile| profile.name).collect();
    let fixtures: Vec<&str> = FIXTURES.iter().map(|fixture| fixture.name()).collect();
    assert_eq!(
        fixtures, protocols,
        "one fixture per protocol, in name order"
    );
    for fixture in FIXTURES {
        let listed = ALL.iter().find(|profile| profile.name == fixture.name());
        assert!(
            listed.is_some_and(|profile| std::ptr::eq(*profile, fixture.profile)),
            "{}: the fixture tests the listed profile",
            fixture.name()
        );
    }
    // No file system on wasm32: the folder is read natively.
    #[cfg(not(target_arch = "wasm32"))]
    {
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/protocols");
        let mut files: Vec<String> = std::fs::read_dir(folder)
            .expect("the fixtures folder")
            .filter_map(|entry| {
                let name = entry.ok()?.file_name().into_string().ok()?;
                Some(name.strip_suffix(".rs")?.replace('_', "-"))
            })
            .collect();
        files.sort_unstable();
        assert_eq!(
            files, fixtures,
            "each fixture is in the file named after its protocol"
        );
    }
}

#[test]
fn every_fixture_gives_what_its_profile_needs() {
    for f in FIXTURES {
        let (name, profile) = (f.name(), f.profile);
        assert_eq!(
            f.ack.is_some(),
            profile.watermark == Watermark::AcknowledgedBytes,
            "{name}: acknowledgments where the watermark is acknowledged bytes"
        );
        assert_eq!(
            f.receipt.is_some(),
            profile.receipt_window_ms > 0,
            "{name}: receipts where there is a receipt window"
        );
        assert_eq!(
            f.started.is_some(),
            profile.audio_after_start,
            "{name}: the start's answer where audio waits for it"
        );
        assert!(f.url.starts_with("wss://"), "{name}");
        // Every rule of the close table, at both ends, is a case of the fixture.
        for rule in profile.closes {
            for code in [rule.first, rule.last] {
                let case = f
                    .closes
                    .iter()
                    .find(|c| c.code == code && c.before.is_none());
                assert_eq!(
                    case.map(|c| c.class),
                    Some(rule.class),
                    "{name}: close {code} is a case"
                );
            }
        }
    }
}
