//! The voice core's observable events (`VoiceSession.onEvent`): sentence indexes, TTS steps, and
//! each barge-in's cause, reported before the actions they explain.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use turnguard::core::time::Millis;
use turnguard::core::voice::{BargeInCause, VoiceAction, VoiceConfig, VoiceCore, VoiceEvent};

const RECOVERY: &str = "Sorry, could you say that again?";

/// No echo guard: these scenarios are about what a barge-in does, not when speech is echo.
fn core() -> VoiceCore {
    let mut core = VoiceCore::new(VoiceConfig {
        min_partial_chars: 1,
        echo_guard_ms: 0,
        ..VoiceConfig::new(RECOVERY)
    });
    core.start();
    drain(&mut core);
    core
}

fn drain(core: &mut VoiceCore) -> Vec<VoiceAction> {
    std::iter::from_fn(|| core.poll_action()).collect()
}

fn events(actions: &[VoiceAction]) -> Vec<VoiceEvent> {
    actions
        .iter()
        .filter_map(|action| match action {
            VoiceAction::Event(event) => Some(event.clone()),
            _ => None,
        })
        .collect()
}

fn t(ms: u64) -> Millis {
    Millis(ms)
}

fn turn(id: &str) -> String {
    id.to_owned()
}

#[test]
fn sentences_are_queued_synthesized_and_finished_by_index() {
    let mut core = core();
    core.on_final("what is the weather", t(0));
    core.on_sentence("turn-1", "One.", t(1));
    core.on_sentence("turn-1", "Two.", t(1));
    core.on_accepted("turn-1", t(1));
    let first = drain(&mut core);
    assert_eq!(
        events(&first),
        [
            VoiceEvent::SentenceQueued {
                turn_id: turn("turn-1"),
                index: 0,
                recovery: false,
                text: "One.".into()
            },
            VoiceEvent::TtsStarted {
                turn_id: turn("turn-1"),
                index: 0,
                recovery: false
            },
            VoiceEvent::SentenceQueued {
                turn_id: turn("turn-1"),
                index: 1,
                recovery: false,
                text: "Two.".into()
            },
        ]
    );
    core.on_synthesized(1, false, t(5));
    let failed = drain(&mut core);
    assert_eq!(
        events(&failed),
        [
            VoiceEvent::TtsFailed {
                turn_id: turn("turn-1"),
                index: 0,
                code: "tts_failed"
            },
            VoiceEvent::TtsStarted {
                turn_id: turn("turn-1"),
                index: 1,
                recovery: false
            },
        ]
    );
    core.on_synthesized(2, true, t(6));
    let played = drain(&mut core);
    assert_eq!(
        events(&played),
        [VoiceEvent::TtsFinished {
            turn_id: turn("turn-1"),
            index: 1
        }]
    );
    let finished_at = played
        .iter()
        .position(|a| matches!(a, VoiceAction::Event(_)));
    let play_at = played
        .iter()
        .position(|a| matches!(a, VoiceAction::Play { .. }));
    assert!(finished_at < play_at, "tts_finished before its audio plays");
}

#[test]
fn the_recovery_text_is_queued_after_the_answer_with_recovery_true() {
    let mut core = core();
    core.on_final("hello", t(0));
    core.on_recovery("turn-1", t(10));
    let actions = drain(&mut core);
    assert_eq!(
        events(&actions),
        [
            VoiceEvent::SentenceQueued {
                turn_id: turn("turn-1"),
                index: 0,
                recovery: true,
                text: RECOVERY.into()
            },
            VoiceEvent::TtsStarted {
                turn_id: turn("turn-1"),
                index: 0,
                recovery: true
            },
        ]
    );
}

#[test]
fn each_barge_in_names_its_cause_and_comes_before_the_stop() {
    type BargeIn = fn(&mut VoiceCore);
    let cases: [(BargeInCause, BargeIn); 4] = [
        // Voice that lasts `confirm_ms` (800) turns its pause into a cut (V7).
        (BargeInCause::Voice, |core| {
            core.on_voice(true, t(50), 0);
            core.handle_timeout(t(250));
            while core.poll_action().is_some() {}
            core.handle_timeout(t(850));
        }),
        (BargeInCause::Partial, |core| core.on_partial("wait", t(50))),
        (BargeInCause::Final, |core| core.on_final("no, stop", t(50))),
        (BargeInCause::Button, |core| core.interrupt(t(50))),
    ];
    for (cause, barge_in) in cases {
        let mut core = core();
        core.on_final("tell me", t(0));
        core.on_sentence("turn-1", "It is sunny.", t(1));
        core.on_synthesized(1, true, t(2));
        core.on_playback_started("turn-1", t(3));
        drain(&mut core);
        barge_in(&mut core);
        let actions = drain(&mut core);
        let cut = VoiceEvent::BargeIn {
            turn_id: turn("turn-1"),
            cause,
        };
        assert_eq!(
            events(&actions).first(),
            Some(&cut),
            "{cause:?} is reported first"
        );
        let stop = actions
            .iter()
            .position(|a| matches!(a, VoiceAction::StopPlayback { .. }));
        assert!(stop.is_some(), "{cause:?} stops the player");
    }
    let names = [
        BargeInCause::Voice,
        BargeInCause::Partial,
        BargeInCause::Final,
        BargeInCause::Button,
    ]
    .map(BargeInCause::as_str);
    assert_eq!(names, ["voice", "partial", "final", "button"]);
}

#[test]
fn no_barge_in_without_a_turn_nor_on_stop() {
    let mut core = core();
    core.on_speech_start(t(1));
    core.on_partial("wait", t(1)); // confirms the pause (V7)
    core.interrupt(t(2));
    assert!(events(&drain(&mut core)).is_empty(), "nothing to cut");
    core.on_final("tell me", t(3));
    drain(&mut core);
    core.stop(t(4));
    let stopped = events(&drain(&mut core));
    assert!(
        !stopped
            .iter()
            .any(|e| matches!(e, VoiceEvent::BargeIn { .. })),
        "stop() ends the turn without a barge-in: {stopped:?}"
    );
}
