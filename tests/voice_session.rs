//! The voice session as one machine (V1, V5): transcriber → voice core → ladder → sentences →
//! speech wired inside `SessionCore`, one queue and one timer. A scripted shell feeds it and each
//! test checks what comes out for the shell to perform.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use turnguard::core::stt::protocols::gladia::PROFILE as GLADIA;
use turnguard::core::stt::transcriber::{self, State as SttState, Transcriber, TranscriberConfig};
use turnguard::core::time::Millis;
use turnguard::core::turn::record::TurnStatus;
use turnguard::core::turn::{self as ladder, AttemptId, RouteSpec, TurnConfig, TurnLadder};
use turnguard::core::voice::session::{SessionAction, SessionCore};
use turnguard::core::voice::{VoiceAction, VoiceConfig, VoiceCore, VoiceState};

const RECOVERY: &str = "Sorry, could you say that again?";

fn session(with_transcriber: bool) -> SessionCore {
    let mut turns = TurnConfig::new(vec![RouteSpec::named("primary")], RECOVERY);
    turns.emit_events = true;
    turns.max_input_chars = 40;
    turns.max_attempts_per_turn = 1;
    let voice = VoiceConfig {
        min_partial_chars: 1,
        echo_guard_ms: 0,
        session_id: Some("s".into()),
        ..VoiceConfig::new(RECOVERY)
    };
    let stt = with_transcriber.then(|| Transcriber::new(TranscriberConfig::new(&GLADIA)));
    SessionCore::new(TurnLadder::new(turns), VoiceCore::new(voice), stt)
}

fn drain(session: &mut SessionCore) -> Vec<SessionAction> {
    std::iter::from_fn(|| session.poll_action()).collect()
}

fn route_calls(actions: &[SessionAction]) -> Vec<AttemptId> {
    actions
        .iter()
        .filter_map(|action| match action {
            SessionAction::Turn(ladder::Action::StartAttempt { request_id, .. }) => {
                Some(request_id.clone())
            }
            _ => None,
        })
        .collect()
}

fn synthesized(actions: &[SessionAction]) -> Vec<(String, String)> {
    actions
        .iter()
        .filter_map(|action| match action {
            SessionAction::Voice(VoiceAction::Synthesize { turn_id, text, .. }) => {
                Some((turn_id.clone(), text.clone()))
            }
            _ => None,
        })
        .collect()
}

fn started(session: &mut SessionCore, now: Millis) {
    session.start(now);
    drain(session);
}

#[test]
fn a_typed_final_calls_the_route_and_its_sentences_reach_tts() {
    let mut s = session(false);
    started(&mut s, Millis(0));
    s.voice_at(Millis(10))
        .on_final("what is the weather", Millis(10));
    let actions = drain(&mut s);
    let calls = route_calls(&actions);
    assert_eq!(calls.len(), 1, "one route call");
    assert_eq!(calls[0].as_str(), "s:turn-1:attempt:1");
    assert_eq!(s.voice().state(), VoiceState::Thinking);
    s.ladder_at(Millis(50)).on_attempt_result(
        &calls[0],
        Ok("It is sunny. Take a hat.".into()),
        Millis(50),
    );
    let actions = drain(&mut s);
    assert_eq!(
        synthesized(&actions),
        [("s:turn-1".to_owned(), "It is sunny.".to_owned())],
        "the first sentence goes to TTS (one sentence of look-ahead)"
    );
    let settled = actions.iter().any(|action| {
        matches!(action, SessionAction::Turn(ladder::Action::Settled(record)) if record.status == TurnStatus::Accepted)
    });
    assert!(settled, "the settled record comes out for onTurn");
    let position = |wanted: fn(&SessionAction) -> bool| actions.iter().position(wanted);
    let settled_at = position(|a| matches!(a, SessionAction::Turn(ladder::Action::Settled(_))));
    let spoken_at = position(|a| matches!(a, SessionAction::Voice(VoiceAction::Synthesize { .. })));
    assert!(
        settled_at < spoken_at,
        "what the ladder reports of the answer comes before the speech it leads to"
    );
    assert!(
        !actions.iter().any(|action| matches!(
            action,
            SessionAction::Turn(
                ladder::Action::Sentence { .. }
                    | ladder::Action::Deliver { .. }
                    | ladder::Action::Recover { .. }
            )
        )),
        "sentences and the answer stay inside"
    );
}

/// The ladder's route call comes right after the voice core's turn start, before the voice
/// core's next step, as if the ladder had been called inline.
#[test]
fn the_ladder_drains_first() {
    let mut s = session(false);
    started(&mut s, Millis(0));
    s.voice_at(Millis(10)).on_final("hello", Millis(10));
    let kinds: Vec<&str> = drain(&mut s)
        .iter()
        .map(|action| match action {
            SessionAction::Voice(VoiceAction::Caption { .. }) => "caption",
            SessionAction::Voice(VoiceAction::StateChanged(_)) => "state",
            SessionAction::Turn(ladder::Action::Event(ladder::Event::TurnStarted { .. })) => {
                "turn_started"
            }
            SessionAction::Turn(ladder::Action::StartAttempt { .. }) => "route call",
            SessionAction::Turn(ladder::Action::Event(_)) => "event",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        ["caption", "turn_started", "route call", "event", "state"]
    );
}

/// V5: a stop fed while the turn's start still waits in the queue (from `onCaption`) leaves no
/// route call, no turn in the ladder and no speech behind.
#[test]
fn a_stop_before_the_turn_start_is_performed_leaves_nothing_behind() {
    let mut s = session(false);
    started(&mut s, Millis(0));
    s.voice_at(Millis(10)).on_final("hello", Millis(10));
    let first = s.poll_action();
    assert!(matches!(
        first,
        Some(SessionAction::Voice(VoiceAction::Caption { .. }))
    ));
    s.stop(Millis(11));
    let rest = drain(&mut s);
    assert!(route_calls(&rest).is_empty(), "no route call");
    assert!(
        s.ladder().turn("s:turn-1").is_none(),
        "the ladder never saw it"
    );
    assert!(rest
        .iter()
        .any(|action| matches!(action, SessionAction::Voice(VoiceAction::Detach))));
    assert_eq!(s.voice().state(), VoiceState::Stopped);
}

/// V5: a stop fed from an event of the ladder (its `turn_started`) cancels the turn in the ladder
/// at once: the route call queued behind the event is not for a running attempt any more.
#[test]
fn a_stop_after_the_turn_started_cancels_it_in_the_ladder_at_once() {
    let mut s = session(false);
    started(&mut s, Millis(0));
    s.voice_at(Millis(10)).on_final("hello", Millis(10));
    loop {
        match s.poll_action() {
            Some(SessionAction::Turn(ladder::Action::Event(ladder::Event::TurnStarted {
                ..
            }))) => break,
            Some(_) => {}
            None => panic!("no turn_started"),
        }
    }
    s.stop(Millis(11));
    assert_eq!(
        s.ladder().turn("s:turn-1").map(|record| record.status),
        Some(TurnStatus::Cancelled)
    );
    let rest = drain(&mut s);
    // The queued `StartAttempt` still comes out; the shell re-checks it against the ladder.
    for id in route_calls(&rest) {
        let attempt = &s.ladder().turn(id.turn_id()).unwrap().attempts[id.index()];
        assert_ne!(
            attempt.result,
            turnguard::core::turn::record::AttemptResult::Running
        );
    }
    assert!(synthesized(&rest).is_empty());
}

/// A sentence of a turn that was cut never reaches TTS, even when the route's answer arrives
/// after the cut (T6, V2).
#[test]
fn an_answer_after_a_barge_in_is_never_spoken() {
    let mut s = session(false);
    started(&mut s, Millis(0));
    s.voice_at(Millis(10)).on_final("hello", Millis(10));
    let call = route_calls(&drain(&mut s)).remove(0);
    s.interrupt(Millis(20));
    drain(&mut s);
    s.ladder_at(Millis(30))
        .on_attempt_result(&call, Ok("Too late.".into()), Millis(30));
    let actions = drain(&mut s);
    assert!(synthesized(&actions).is_empty());
    assert_eq!(
        s.ladder().turn("s:turn-1").unwrap().status,
        TurnStatus::Cancelled
    );
}

#[test]
fn a_spoken_final_from_the_transcriber_starts_a_turn() {
    let mut s = session(true);
    started(&mut s, Millis(0));
    s.transcriber_at(Millis(0)).unwrap().start(Millis(0));
    let actions = drain(&mut s);
    assert!(actions
        .iter()
        .any(|action| matches!(action, SessionAction::Stt(transcriber::Action::Provision))));
    let stt = s.transcriber_at(Millis(5)).unwrap();
    stt.on_provisioned("wss://stt.example/v2/live?token=one", Millis(5));
    drain(&mut s);
    s.transcriber_at(Millis(6)).unwrap().on_open(Millis(6));
    drain(&mut s);
    let partial =
        r#"{"type":"transcript","data":{"is_final":false,"utterance":{"text":"what is"}}}"#;
    let finished = r#"{"type":"transcript","data":{"is_final":true,"utterance":{"text":"what is the weather"}}}"#;
    s.transcriber_at(Millis(100))
        .unwrap()
        .on_text(partial, Millis(100));
    s.transcriber_at(Millis(200))
        .unwrap()
        .on_text(finished, Millis(200));
    let actions = drain(&mut s);
    let captions: Vec<(String, bool)> = actions
        .iter()
        .filter_map(|action| match action {
            SessionAction::Voice(VoiceAction::Caption { text, is_final }) => {
                Some((text.clone(), *is_final))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        captions,
        [
            ("what is".to_owned(), false),
            ("what is the weather".to_owned(), true)
        ]
    );
    assert_eq!(route_calls(&actions).len(), 1, "the final is a turn (T1)");
    assert_eq!(
        s.ladder().turn("s:turn-1").unwrap().input,
        "what is the weather"
    );
    assert!(
        !actions.iter().any(|action| matches!(
            action,
            SessionAction::Stt(
                transcriber::Action::Final { .. } | transcriber::Action::Partial { .. }
            )
        )),
        "transcripts stay inside"
    );
}

/// R4: stop detaches the transcriber; a failed transcriber fails the session.
#[test]
fn stop_detaches_the_transcriber_and_its_failure_fails_the_session() {
    let mut s = session(true);
    started(&mut s, Millis(0));
    s.transcriber_at(Millis(0)).unwrap().start(Millis(0));
    drain(&mut s);
    s.stop(Millis(10));
    drain(&mut s);
    assert_eq!(s.transcriber().unwrap().state(), SttState::Stopped);

    let mut s = session(true);
    started(&mut s, Millis(0));
    s.transcriber_at(Millis(0)).unwrap().start(Millis(0));
    drain(&mut s);
    s.transcriber_at(Millis(5))
        .unwrap()
        .on_provision_failed(401, Millis(5));
    let actions = drain(&mut s);
    assert!(actions.iter().any(|action| matches!(
        action,
        SessionAction::Stt(transcriber::Action::Error(error)) if error.is_terminal()
    )));
    assert_eq!(s.voice().state(), VoiceState::Failed);
}

#[test]
fn a_refused_input_is_reported_and_the_session_listens_again() {
    let mut s = session(false);
    started(&mut s, Millis(0));
    s.voice_at(Millis(10))
        .on_final(&"a very long question ".repeat(4), Millis(10));
    let actions = drain(&mut s);
    assert!(actions
        .iter()
        .any(|action| matches!(action, SessionAction::TurnRefused { turn_id, .. } if turn_id == "s:turn-1")));
    assert!(route_calls(&actions).is_empty());
    assert_eq!(s.voice().state(), VoiceState::Listening);
}

/// One timer: the earliest deadline of the three parts, and a timeout reaches each.
#[test]
fn one_timer_for_the_three_parts() {
    let mut s = session(false);
    started(&mut s, Millis(0));
    s.voice_at(Millis(0)).on_final("hello", Millis(0));
    drain(&mut s);
    let config = TurnConfig::new(vec![RouteSpec::named("primary")], RECOVERY);
    assert_eq!(
        s.poll_timeout(),
        Some(Millis(config.attempt_timeout_ms)),
        "the attempt's timeout"
    );
    s.handle_timeout(Millis(config.attempt_timeout_ms));
    let actions = drain(&mut s);
    assert!(actions.iter().any(|action| matches!(
        action,
        SessionAction::Voice(VoiceAction::Synthesize { text, recovery: true, .. }) if text == RECOVERY
    )));
    // The TTS timer is next.
    let tts = VoiceConfig::new(RECOVERY).tts_timeout_ms;
    assert_eq!(
        s.poll_timeout(),
        Some(Millis(config.attempt_timeout_ms + tts))
    );
}

/// `listening` means the transcriber's socket opened: not while it provisions and connects, nor
/// when every handshake is refused.
#[test]
fn a_session_with_a_transcriber_listens_once_its_socket_opened() {
    let mut s = session(true);
    started(&mut s, Millis(0));
    s.transcriber_at(Millis(0)).unwrap().start(Millis(0));
    drain(&mut s);
    assert_eq!(s.voice().state(), VoiceState::Idle, "provisioning");
    s.transcriber_at(Millis(5))
        .unwrap()
        .on_provisioned("wss://stt.example/v2/live?token=one", Millis(5));
    drain(&mut s);
    assert_eq!(s.voice().state(), VoiceState::Idle, "connecting");
    s.transcriber_at(Millis(6)).unwrap().on_open(Millis(6));
    let actions = drain(&mut s);
    assert_eq!(s.voice().state(), VoiceState::Listening, "open");
    let listening = SessionAction::Voice(VoiceAction::StateChanged(VoiceState::Listening));
    assert!(actions.contains(&listening));
    s.transcriber_at(Millis(9_000))
        .unwrap()
        .on_close(1006, Millis(9_000));
    drain(&mut s);
    assert_eq!(
        s.voice().state(),
        VoiceState::Listening,
        "an outage later is the transcriber's state, not the session's"
    );

    let mut typed = session(false);
    started(&mut typed, Millis(0));
    assert_eq!(
        typed.voice().state(),
        VoiceState::Listening,
        "typed input only: at once"
    );
}

#[test]
fn a_session_whose_socket_never_opens_fails_without_listening() {
    let mut s = session(true);
    started(&mut s, Millis(0));
    s.transcriber_at(Millis(0)).unwrap().start(Millis(0));
    drain(&mut s);
    let mut now = 1;
    let mut states = Vec::new();
    for url in [
        "wss://stt.example/v2/live?token=one",
        "wss://stt.example/v2/live?token=two",
    ] {
        s.transcriber_at(Millis(now))
            .unwrap()
            .on_provisioned(url, Millis(now));
        for _ in 0..3 {
            now += 1;
            s.transcriber_at(Millis(now))
                .unwrap()
                .on_close(1006, Millis(now));
            now += 30_000;
            s.handle_timeout(Millis(now));
            states.extend(drain(&mut s).into_iter().filter_map(|action| match action {
                SessionAction::Voice(VoiceAction::StateChanged(state)) => Some(state),
                _ => None,
            }));
        }
    }
    assert_eq!(states, [VoiceState::Failed], "never listening, then failed");
    assert_eq!(s.transcriber().unwrap().state(), SttState::Failed);
}
