//! Voice session scenarios on the sans-IO core (V1–V4, P2, P3): a scripted shell reports what the
//! controller, TTS and player did, and each test checks the actions that come out.

use turnguard::core::time::Millis;
use turnguard::core::voice::playback::ChunkHeard;
use turnguard::core::voice::{VoiceAction, VoiceConfig, VoiceCore, VoiceState};

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

fn synth_jobs(actions: &[VoiceAction]) -> Vec<(u64, String)> {
    actions
        .iter()
        .filter_map(|action| match action {
            VoiceAction::Synthesize { job, text, .. } => Some((*job, text.clone())),
            _ => None,
        })
        .collect()
}

fn states(actions: &[VoiceAction]) -> Vec<VoiceState> {
    actions
        .iter()
        .filter_map(|action| match action {
            VoiceAction::StateChanged(state) => Some(*state),
            _ => None,
        })
        .collect()
}

fn t(ms: u64) -> Millis {
    Millis(ms)
}

#[test]
fn a_final_starts_a_turn_and_its_sentences_are_spoken_with_a_look_ahead_of_one() {
    let mut core = core();
    core.on_final("what is the weather", t(0));
    let actions = drain(&mut core);
    assert!(actions.contains(&VoiceAction::StartTurn {
        turn_id: "turn-1".into(),
        input: "what is the weather".into()
    }));
    assert_eq!(states(&actions), [VoiceState::Thinking]);

    for sentence in ["One.", "Two.", "Three."] {
        core.on_sentence("turn-1", sentence, t(10));
    }
    core.on_accepted("turn-1", t(10));
    let jobs = synth_jobs(&drain(&mut core));
    assert_eq!(jobs, [(1, "One.".to_owned())], "one request at a time");

    core.on_synthesized(1, true, t(20));
    let actions = drain(&mut core);
    assert!(actions.contains(&VoiceAction::Play {
        job: 1,
        turn_id: "turn-1".into(),
        recovery: false
    }));
    assert_eq!(
        synth_jobs(&actions),
        [(2, "Two.".to_owned())],
        "the look-ahead"
    );
    core.on_playback_started("turn-1", t(25));
    assert_eq!(states(&drain(&mut core)), [VoiceState::Speaking]);

    core.on_synthesized(2, true, t(30));
    let actions = drain(&mut core);
    assert!(
        synth_jobs(&actions).is_empty(),
        "two sentences wait or play: no more"
    );
    core.on_chunk_ended(1, t(500));
    assert_eq!(synth_jobs(&drain(&mut core)), [(3, "Three.".to_owned())]);
    core.on_synthesized(3, true, t(510));
    core.on_chunk_ended(2, t(900));
    core.on_chunk_ended(3, t(1300));
    assert_eq!(states(&drain(&mut core)), [VoiceState::Listening]);
    assert_eq!(core.current_turn(), None);
}

#[test]
fn speech_start_while_speaking_cuts_the_answer_and_keeps_what_was_heard() {
    let mut core = core();
    core.on_final("tell me", t(0));
    core.on_sentence("turn-1", "It is sunny today.", t(1));
    core.on_sentence("turn-1", "Take one two three four.", t(1));
    core.on_accepted("turn-1", t(1));
    core.on_synthesized(1, true, t(2));
    core.on_synthesized(2, true, t(3));
    core.on_playback_started("turn-1", t(4));
    drain(&mut core);

    core.on_speech_start(t(1500));

    core.on_partial("wait", t(1500)); // confirms the pause (V7)
    let actions = drain(&mut core);
    assert!(
        !actions
            .iter()
            .any(|a| matches!(a, VoiceAction::InterruptTurn { .. })),
        "an accepted turn has nothing to interrupt in the controller"
    );
    assert!(actions.contains(&VoiceAction::StopPlayback {
        turn_id: "turn-1".into()
    }));
    assert_eq!(states(&actions), [VoiceState::Listening]);

    let chunk = |seq, duration_ms, played_ms| ChunkHeard {
        seq,
        duration_ms,
        played_ms,
    };
    core.on_playback_stopped(
        "turn-1",
        &[(1, chunk(0, 1000.0, 1000.0)), (2, chunk(1, 1000.0, 450.0))],
    );
    assert_eq!(
        drain(&mut core),
        [VoiceAction::SetHeard {
            turn_id: "turn-1".into(),
            text: "It is sunny today. Take one".into()
        }]
    );
    // Audio of the cut turn that resolves later never plays.
    core.on_synthesized(2, true, t(1600));
    assert!(drain(&mut core).is_empty());
}

#[test]
fn a_final_while_thinking_interrupts_the_old_turn_before_the_new_one_starts() {
    let mut core = core();
    core.on_final("first", t(0));
    drain(&mut core);
    core.on_final("second", t(100));
    let actions = drain(&mut core);
    let interrupt = actions.iter().position(|a| {
        a == &VoiceAction::InterruptTurn {
            turn_id: "turn-1".into(),
        }
    });
    let start = actions.iter().position(|a| {
        a == &VoiceAction::StartTurn {
            turn_id: "turn-2".into(),
            input: "second".into(),
        }
    });
    assert!(
        interrupt.is_some() && start.is_some() && interrupt < start,
        "{actions:?}"
    );
    // The old turn's late sentence goes nowhere.
    core.on_sentence("turn-1", "Stale.", t(200));
    assert!(synth_jobs(&drain(&mut core)).is_empty());
}

#[test]
fn the_heard_text_comes_before_a_turn_started_by_the_same_final() {
    let mut core = core();
    core.on_final("first", t(0));
    core.on_sentence("turn-1", "Hello there.", t(1));
    core.on_synthesized(1, true, t(2));
    core.on_playback_started("turn-1", t(3));
    drain(&mut core);
    core.on_final("second", t(400));
    let mut actions = Vec::new();
    while let Some(action) = core.poll_action() {
        if let VoiceAction::StopPlayback { turn_id } = &action {
            let played = ChunkHeard {
                seq: 0,
                duration_ms: 800.0,
                played_ms: 400.0,
            };
            core.on_playback_stopped(&turn_id.clone(), &[(1, played)]);
        }
        actions.push(action);
    }
    let heard = actions
        .iter()
        .position(|a| matches!(a, VoiceAction::SetHeard { text, .. } if text == "Hello"));
    let start = actions
        .iter()
        .position(|a| matches!(a, VoiceAction::StartTurn { .. }));
    assert!(heard.is_some() && heard < start, "{actions:?}");
}

#[test]
fn short_partials_and_guarded_speech_starts_are_not_barge_ins() {
    let mut core = VoiceCore::new(VoiceConfig {
        min_partial_chars: 5,
        echo_guard_ms: 300,
        ..VoiceConfig::new(RECOVERY)
    });
    core.start();
    core.on_final("hi", t(0));
    core.on_sentence("turn-1", "Hello.", t(1));
    core.on_synthesized(1, true, t(2));
    core.on_playback_started("turn-1", t(1000));
    drain(&mut core);
    core.on_partial("uh", t(1100));
    core.on_speech_start(t(1200));
    let actions = drain(&mut core);
    assert_eq!(
        actions,
        [VoiceAction::Caption {
            text: "uh".into(),
            is_final: false
        }]
    );
    core.on_speech_start(t(1300));
    core.on_partial("wait", t(1300)); // a short word: its final confirms the pause (V7)
    assert!(!drain(&mut core).contains(&VoiceAction::StopPlayback {
        turn_id: "turn-1".into()
    }));
    core.on_spoken_final("wait", t(1400));
    assert!(drain(&mut core).contains(&VoiceAction::StopPlayback {
        turn_id: "turn-1".into()
    }));
}

#[test]
fn a_failed_sentence_is_skipped_and_a_timed_out_one_too() {
    let mut core = core();
    core.on_final("q", t(0));
    for sentence in ["A.", "B.", "C."] {
        core.on_sentence("turn-1", sentence, t(0));
    }
    core.on_accepted("turn-1", t(0));
    drain(&mut core);
    core.on_synthesized(1, false, t(10));
    let actions = drain(&mut core);
    assert!(actions
        .iter()
        .any(|a| matches!(a, VoiceAction::Error(e) if e.code() == "tts_failed")));
    assert_eq!(synth_jobs(&actions), [(2, "B.".to_owned())]);
    assert_eq!(core.poll_timeout(), Some(t(8010)));
    core.handle_timeout(t(8009));
    assert!(drain(&mut core).is_empty(), "an early timeout is a no-op");
    core.handle_timeout(t(8010));
    let actions = drain(&mut core);
    assert!(actions.contains(&VoiceAction::AbortSynthesis { job: 2 }));
    assert!(actions
        .iter()
        .any(|a| matches!(a, VoiceAction::Error(e) if e.code() == "tts_timeout")));
    assert_eq!(synth_jobs(&actions), [(3, "C.".to_owned())]);
    core.on_synthesized(2, true, t(8020));
    assert!(drain(&mut core).is_empty(), "a late result is dropped");
}

#[test]
fn a_turn_whose_every_sentence_failed_speaks_the_recovery_text_synthesized_once() {
    let mut core = core();
    for (n, turn) in ["turn-1", "turn-2"].iter().enumerate() {
        let at = t(n as u64 * 10_000);
        core.on_final("q", at);
        core.on_sentence(turn, "Only.", at);
        core.on_accepted(turn, at);
        let job = synth_jobs(&drain(&mut core))[0].0;
        core.on_synthesized(job, false, at);
        let actions = drain(&mut core);
        if n == 0 {
            let recovery = synth_jobs(&actions);
            assert_eq!(recovery.len(), 1);
            assert_eq!(recovery[0].1, RECOVERY);
            core.on_synthesized(recovery[0].0, true, at);
            assert!(drain(&mut core)
                .iter()
                .any(|a| matches!(a, VoiceAction::Play { recovery: true, .. })));
        } else {
            assert!(synth_jobs(&actions).is_empty(), "cached: {actions:?}");
            assert!(actions
                .iter()
                .any(|a| matches!(a, VoiceAction::Play { recovery: true, .. })));
        }
    }
}

#[test]
fn an_exhausted_turn_speaks_the_recovery_text() {
    let mut core = core();
    core.on_final("q", t(0));
    core.on_recovery("turn-1", t(5));
    let jobs = synth_jobs(&drain(&mut core));
    assert_eq!(jobs, [(1, RECOVERY.to_owned())]);
}

#[test]
fn stop_is_idempotent_and_detaches_once() {
    let mut core = core();
    core.on_final("q", t(0));
    core.on_sentence("turn-1", "A.", t(0));
    drain(&mut core);
    core.stop(t(5));
    let actions = drain(&mut core);
    assert!(actions.contains(&VoiceAction::AbortSynthesis { job: 1 }));
    assert!(actions.contains(&VoiceAction::InterruptTurn {
        turn_id: "turn-1".into()
    }));
    assert_eq!(
        actions
            .iter()
            .filter(|a| **a == VoiceAction::Detach)
            .count(),
        1
    );
    assert_eq!(states(&actions).last(), Some(&VoiceState::Stopped));
    core.stop(t(6));
    core.on_final("after", t(7));
    core.on_speech_start(t(8));
    core.on_partial("wait", t(8)); // confirms the pause (V7)
    assert!(drain(&mut core).is_empty());
}

#[test]
fn a_failed_first_sentence_is_no_recovery_while_the_next_one_may_still_play() {
    let mut core = core();
    core.on_final("q", t(0));
    core.on_sentence("turn-1", "Slow one.", t(0));
    core.on_sentence("turn-1", "Quick two.", t(0));
    core.on_accepted("turn-1", t(0));
    drain(&mut core);
    core.handle_timeout(t(8000));
    let actions = drain(&mut core);
    assert_eq!(
        synth_jobs(&actions),
        [(2, "Quick two.".to_owned())],
        "{actions:?}"
    );
    core.on_synthesized(2, true, t(8100));
    core.on_chunk_ended(2, t(9000));
    let actions = drain(&mut core);
    assert!(synth_jobs(&actions).is_empty(), "no recovery: {actions:?}");
    assert_eq!(states(&actions), [VoiceState::Listening]);
}

#[test]
fn a_failed_transcriber_silences_the_answer_and_fails_the_session() {
    let mut core = core();
    core.on_final("q", t(0));
    core.on_sentence("turn-1", "Hello there.", t(0));
    core.on_synthesized(1, true, t(1));
    core.on_playback_started("turn-1", t(2));
    drain(&mut core);
    core.on_transcriber_failed(t(100));
    let actions = drain(&mut core);
    assert!(actions.contains(&VoiceAction::StopPlayback {
        turn_id: "turn-1".into()
    }));
    assert_eq!(states(&actions), [VoiceState::Failed]);
    core.stop(t(200));
    let actions = drain(&mut core);
    assert!(
        actions.contains(&VoiceAction::Detach),
        "stop still releases everything"
    );
    assert_eq!(states(&actions), [VoiceState::Stopped]);
}

#[test]
fn barge_ins_with_nothing_current_change_nothing() {
    let mut core = core();
    core.interrupt(t(0));
    core.on_speech_start(t(1));
    assert!(drain(&mut core).is_empty());
    assert_eq!(core.state(), VoiceState::Listening);
    core.on_partial("hello", t(2));
    assert_eq!(
        drain(&mut core),
        [VoiceAction::Caption {
            text: "hello".into(),
            is_final: false
        }],
        "a partial is only a caption (T1)"
    );
}

#[test]
fn a_session_id_names_every_turn_so_two_sessions_never_share_a_turn_id() {
    let turn_ids = |session: &str| {
        let mut config = VoiceConfig::new(RECOVERY);
        config.session_id = Some(session.to_owned());
        let mut core = VoiceCore::new(config);
        core.start();
        let mut ids = Vec::new();
        for (i, text) in ["one", "two"].into_iter().enumerate() {
            core.on_final(text, t(i as u64 * 10));
            ids.extend(
                drain(&mut core)
                    .into_iter()
                    .filter_map(|action| match action {
                        VoiceAction::StartTurn { turn_id, .. } => Some(turn_id),
                        _ => None,
                    }),
            );
        }
        ids
    };
    assert_eq!(turn_ids("a1"), ["a1:turn-1", "a1:turn-2"]);
    assert_eq!(turn_ids("b2"), ["b2:turn-1", "b2:turn-2"]);
}

#[test]
fn a_closed_output_cuts_the_turn_with_what_played_and_the_next_one_speaks() {
    use turnguard::core::voice::{BargeInCause, VoiceEvent};
    let mut core = core();
    core.on_final("tell me", t(0));
    core.on_sentence("turn-1", "It is sunny today.", t(1));
    core.on_sentence("turn-1", "Take one two three four.", t(1));
    core.on_accepted("turn-1", t(1));
    core.on_synthesized(1, true, t(2));
    core.on_synthesized(2, true, t(3));
    core.on_playback_started("turn-1", t(4));
    drain(&mut core);

    core.on_output_closed(t(1500));
    let actions = drain(&mut core);
    assert!(actions.contains(&VoiceAction::Event(VoiceEvent::BargeIn {
        turn_id: "turn-1".into(),
        cause: BargeInCause::OutputClosed,
    })));
    assert!(actions.contains(&VoiceAction::StopPlayback {
        turn_id: "turn-1".into()
    }));
    assert_eq!(states(&actions), [VoiceState::Listening]);
    let chunk = |seq, duration_ms, played_ms| ChunkHeard {
        seq,
        duration_ms,
        played_ms,
    };
    core.on_playback_stopped(
        "turn-1",
        &[(1, chunk(0, 1000.0, 1000.0)), (2, chunk(1, 1000.0, 450.0))],
    );
    assert_eq!(
        drain(&mut core),
        [VoiceAction::SetHeard {
            turn_id: "turn-1".into(),
            text: "It is sunny today. Take one".into()
        }]
    );

    // Nothing current: nothing to cut, and the next final is a turn like any other.
    core.on_output_closed(t(1600));
    assert!(drain(&mut core).is_empty());
    core.on_final("are you there", t(1700));
    let actions = drain(&mut core);
    assert!(actions.contains(&VoiceAction::StartTurn {
        turn_id: "turn-2".into(),
        input: "are you there".into()
    }));
}
