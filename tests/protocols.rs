//! The protocol seam: every protocol is listed under its file's name and has a fixture, and runs
//! one conformance suite (`conformance/`): each scenario over the neutral events, against each
//! protocol's fixture (`protocols/<name>.rs`, the message script of its server), in virtual time.
//! Each fixture module also holds that protocol's own quirks. `build.rs` lists the fixtures into
//! `FIXTURES`, so a new protocol is its core file and its fixture: nothing here names one.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod conformance;
mod transcriber_sim;

use conformance::Fixture;
use turnguard::core::stt::protocol::Watermark;
use turnguard::core::stt::protocols::{self, ALL};

include!(concat!(env!("OUT_DIR"), "/fixtures.rs"));

/// The protocol names the `.rs` files in `folder` stand for (`mod.rs` aside), in name order.
#[cfg(not(target_arch = "wasm32"))]
fn named_by_files(folder: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap_or_else(|error| panic!("{folder}: {error}"))
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".rs")?;
            (stem != "mod").then(|| stem.replace('_', "-"))
        })
        .collect();
    names.sort_unstable();
    names
}

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
        assert_eq!(
            names,
            named_by_files(folder),
            "one profile per file in {folder}"
        );
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
fn every_protocol_has_one_fixture_under_its_file_name() {
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
    #[cfg(not(target_arch = "wasm32"))]
    {
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/protocols");
        assert_eq!(
            named_by_files(folder),
            fixtures,
            "each in the file named after it"
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
                    .find(|c| c.codes.contains(&code) && c.before.is_none());
                assert_eq!(
                    case.map(|c| c.class),
                    Some(rule.class),
                    "{name}: close {code} is a case"
                );
            }
        }
    }
}
