//! Deepgram Flux: one final per turn (`EndOfTurn`, once per `turn_index`), `StartOfTurn` the
//! speech start, `EagerEndOfTurn`/`TurnResumed` neutral hints, a fresh JWT per connect, 1.25×
//! pacing, no keepalive, `ForceEndTurn` + `CloseStream` answered by the server's close, 1008 fatal.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use crate::conformance::{CloseCase, Conversation, Fixture, Said, Start};
use crate::transcriber_sim::*;
use turnguard::core::stt::protocol::CloseClass;
use turnguard::core::stt::protocols::deepgram_flux::{CLOSE_STREAM, FORCE_END_TURN, PROFILE};
use turnguard::core::stt::transcriber::{Action, State};

pub const FIXTURE: Fixture = Fixture {
    profile: &PROFILE,
    url: "wss://dg.example/v2/listen?model=flux-general-en&encoding=linear16&sample_rate=16000",
    start: Some(Start {
        prefix: r#"{"type":"Configure""#,
        config: r#"{"thresholds":{"eager_eot_threshold":0.5}}"#,
    }),
    started: None,
    utterance,
    partial: |said| turn_info("Update", said.turn, said.text, said.end_ms),
    piece: None,
    speech_start: Some(|said| turn_info("StartOfTurn", said.turn, "", said.start_ms)),
    ack: None,
    receipt: None,
    session_over: None,
    finish: |_| vec![FORCE_END_TURN.into(), CLOSE_STREAM.into()],
    end: &[],
    closes: &[
        CloseCase::codes(&[1011, 1005, 1000], CloseClass::Retry),
        CloseCase::codes(&[1008], CloseClass::Fatal),
    ],
    ignored: &[
        r#"{"type":"Connected","request_id":"r","sequence_id":0}"#,
        r#"{"type":"ConfigureSuccess","request_id":"r","thresholds":{},"keyterms":[],"sequence_id":1}"#,
        r#"{"type":"Error","sequence_id":2,"code":"INTERNAL_SERVER_ERROR","description":"d"}"#,
    ],
    unknown: &[
        r#"{"type":"Brand_New"}"#,
        r#"{"type":"TurnInfo","event":"Sideways","turn_index":0,"transcript":"x"}"#,
    ],
    malformed: &[
        r#"{"type":"TurnInfo","event":"Update"}"#,
        r#"{"event":"EndOfTurn"}"#,
    ],
};

/// A turn as Flux sends it with eager mode on: its start, an update, an eager end the user talks
/// past (`TurnResumed`), a second eager end, the end of turn with the same transcript, and the
/// same end again, which must not make a second final.
fn utterance(said: &Said) -> Vec<String> {
    let middle = (said.start_ms + said.end_ms) / 2;
    let turn = said.turn;
    vec![
        turn_info("StartOfTurn", turn, said.first_word(), middle),
        turn_info("Update", turn, said.first_word(), middle),
        turn_info("EagerEndOfTurn", turn, said.first_word(), middle),
        turn_info("TurnResumed", turn, said.first_word(), middle),
        turn_info("EagerEndOfTurn", turn, said.text, said.end_ms),
        turn_info("EndOfTurn", turn, said.text, said.end_ms),
        turn_info("EndOfTurn", turn, said.text, said.end_ms),
    ]
}

/// A `TurnInfo` message whose audio window ends at `end_ms` of this connection's audio.
fn turn_info(event: &str, turn: u64, transcript: &str, end_ms: u64) -> String {
    format!(
        r#"{{"type":"TurnInfo","request_id":"r","sequence_id":4,"event":"{event}","turn_index":{turn},"audio_window_start":0.0,"audio_window_end":{}.{:03},"transcript":"{transcript}","words":[],"end_of_turn_confidence":0.5}}"#,
        end_ms / 1000,
        end_ms % 1000
    )
}

#[test]
fn eager_ends_and_resumes_are_hints_before_the_one_final() {
    let mut c = Conversation::opened(&FIXTURE);
    let actions = c.say("what is the weather");
    let hints: Vec<&Action> = actions
        .iter()
        .filter(|a| matches!(a, Action::EagerFinal { .. } | Action::Resumed { .. }))
        .collect();
    assert_eq!(
        hints,
        [
            &Action::EagerFinal {
                text: "what".into(),
                utterance: 1
            },
            &Action::Resumed { utterance: 1 },
            &Action::EagerFinal {
                text: "what is the weather".into(),
                utterance: 1
            },
        ]
    );
    let final_at = actions
        .iter()
        .position(|a| matches!(a, Action::Final { .. }))
        .expect("a final");
    let last_hint = actions
        .iter()
        .rposition(|a| matches!(a, Action::EagerFinal { .. }))
        .expect("a hint");
    assert!(last_hint < final_at, "hints come before the final");
    assert_eq!(finals(&actions), ["what is the weather"]);
}

#[test]
fn silence_between_turns_is_not_resent_but_its_last_half_second() {
    let mut c = Conversation::opened(&FIXTURE);
    c.speak(100); // 2 s of silence
    c.hear(&turn_info("Update", 0, "", 2_000));
    c.d.close(1011);
    let mut resent = c.reconnect();
    resent.extend(c.d.advance(2_000)); // paced at 1.25× real time
    let frames = sent(&resent);
    // 1.5 s is done with: frames 76 on (each 20 ms, numbered from 1) go again.
    assert_eq!(frames, (76..=100).collect::<Vec<_>>());
}

#[test]
fn stop_ends_the_open_turn_and_its_final_comes_before_the_close() {
    let mut c = Conversation::opened(&FIXTURE);
    c.speak(10);
    c.hear(&turn_info("StartOfTurn", 0, "", 100));
    c.hear(&turn_info("Update", 0, "last words", 200));
    c.d.t.stop(c.d.now);
    assert_eq!(messages(&c.d.take()), [FORCE_END_TURN, CLOSE_STREAM]);
    let last = c.hear(&turn_info("EndOfTurn", 0, "last words", 200));
    assert_eq!(finals(&last), ["last words"]);
    assert_eq!(c.d.t.state(), State::Open, "until the server closes");
    c.d.close(1005);
    assert_eq!(c.d.t.state(), State::Stopped);
}
