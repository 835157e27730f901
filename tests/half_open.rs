//! L4, half-open sockets: where the session acknowledges audio (Gladia), a socket that
//! acknowledged nothing for `ack_timeout_ms` while audio waited for it is closed and reconnected,
//! and what it never acknowledged goes out again.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod transcriber_sim;

use transcriber_sim::*;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::transcriber::{Action, State, TranscriberConfig};

#[test]
fn acknowledgments_that_stop_while_audio_flows_make_the_socket_half_open() {
    let mut d = Drive::opened(config(), URL);
    d.audio(1);
    d.text(&ack(640)); // the session acknowledges audio
    let mut actions = Vec::new();
    for n in 2..=600 {
        actions.extend(d.audio(n)); // 12 s of audio, never acknowledged
        actions.extend(d.advance(20));
        if d.t.state() != State::Open {
            break;
        }
    }
    assert_eq!(d.t.state(), State::Backoff, "closed as half-open");
    assert!(actions.contains(&Action::Close));
    let report = d.t.take_close_report().expect("reported");
    assert_eq!((report.code, report.class), (1006, CloseClass::Retry));
    // 10 s after frame 2 went out unacknowledged (at 0 ms): frames 2..=501 are owed.
    assert_eq!(d.now.0, 10_000);
    d.step();
    let resent = sent(&d.open());
    assert_eq!(
        resent.first(),
        Some(&2),
        "everything unacknowledged goes out again"
    );
    assert_eq!(d.connects().len(), 2, "the same URL again");
}

#[test]
fn a_socket_that_keeps_acknowledging_stays_open() {
    let mut d = Drive::opened(config(), URL);
    for n in 1..=1_000 {
        d.audio(n);
        d.text(&ack(640));
        d.advance(20);
    }
    assert_eq!(d.t.state(), State::Open);
    assert_eq!(d.connects().len(), 1);
}

#[test]
fn a_session_without_acknowledgments_is_never_half_open_and_zero_turns_it_off() {
    let mut d = Drive::opened(config(), URL);
    for n in 1..=1_000 {
        d.audio(n);
        d.advance(20);
    }
    assert_eq!(
        d.t.state(),
        State::Open,
        "confirmed by time, not acknowledgments"
    );
    let mut off = Drive::opened(
        TranscriberConfig {
            ack_timeout_ms: 0,
            ..config()
        },
        URL,
    );
    off.audio(1);
    off.text(&ack(640));
    off.audio(2);
    off.advance(60_000);
    assert_eq!(off.t.state(), State::Open);
}
