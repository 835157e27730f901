//! L4, half-open sockets, on the example protocol (Gladia): before its first acknowledgment a
//! session is confirmed by time and never half-open, and `ack_timeout_ms: 0` turns the check off.
//! That a socket which stops confirming audio is half-open, on every protocol that confirms it, is
//! in the conformance suite (`tests/protocols.rs`).

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod transcriber_sim;

use transcriber_sim::*;
use turnguard::core::stt::transcriber::{State, TranscriberConfig};

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
