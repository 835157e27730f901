//! Issue 15 on the sans-IO voice core: heard text from the audio clock in every gap (P3), no
//! stale work after a re-entrant stop or interrupt (V5), and the echo guard at every playback
//! start, for partials too (V4). A scripted shell performs the actions one by one, as the
//! browser shell does, so a `stop()` from a callback lands while earlier actions still wait.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use turnguard::core::time::Millis;
use turnguard::core::voice::playback::ChunkHeard;
use turnguard::core::voice::{VoiceAction, VoiceConfig, VoiceCore, VoiceEvent};

const RECOVERY: &str = "Sorry, could you say that again?";
const ONE: &str = "It is sunny today.";
const TWO: &str = "Take one two three four.";

fn t(ms: u64) -> Millis {
    Millis(ms)
}

/// No echo guard (the barge-ins here come at any time); the guard has its own tests below.
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

fn chunk(duration_ms: f64, played_ms: f64) -> ChunkHeard {
    ChunkHeard {
        seq: 0,
        duration_ms,
        played_ms,
    }
}

/// Drains the core as the shell does: a `StopPlayback` is answered at once with what the audio
/// clock says of `measured` (job, duration, played); returns the heard text set.
fn heard_after(core: &mut VoiceCore, measured: &[(u64, ChunkHeard)]) -> Option<String> {
    let mut heard = None;
    while let Some(action) = core.poll_action() {
        match action {
            VoiceAction::StopPlayback { turn_id } => core.on_playback_stopped(&turn_id, measured),
            VoiceAction::SetHeard { text, .. } => heard = Some(text),
            _ => {}
        }
    }
    heard
}

/// A turn with two accepted sentences; the first is synthesized and playing.
fn speaking_first_of_two(core: &mut VoiceCore) {
    core.on_final("tell me", t(0));
    core.on_sentence("turn-1", ONE, t(1));
    core.on_sentence("turn-1", TWO, t(1));
    core.on_accepted("turn-1", t(1));
    core.on_synthesized(1, true, t(2));
    core.on_playback_started("turn-1", t(3));
    drain(core);
}

#[test]
fn barge_in_while_the_next_sentence_is_synthesized_counts_only_what_played() {
    let mut core = core();
    speaking_first_of_two(&mut core);
    // Job 2 (the second sentence) is still being synthesized; the first played to its end.
    core.on_chunk_ended(1, t(1200));
    drain(&mut core);
    core.on_speech_start(t(1300));
    core.on_partial("wait", t(1300)); // confirms the pause (V7)
    assert_eq!(heard_after(&mut core, &[]).as_deref(), Some(ONE));
}

#[test]
fn barge_in_during_the_decode_of_the_next_sentence_counts_only_what_played() {
    let mut core = core();
    speaking_first_of_two(&mut core);
    core.on_synthesized(2, true, t(500));
    drain(&mut core); // Play of job 2: its audio decodes, not yet scheduled
    core.on_speech_start(t(700));
    core.on_partial("wait", t(700)); // confirms the pause (V7)
                                     // The first chunk is measured at 50 %; the second has no start on the audio clock.
    let heard = heard_after(&mut core, &[(1, chunk(1000.0, 500.0))]);
    assert_eq!(heard.as_deref(), Some("It is"));
}

#[test]
fn barge_in_after_the_first_chunk_ended_while_the_second_decodes_counts_the_first_only() {
    let mut core = core();
    speaking_first_of_two(&mut core);
    core.on_synthesized(2, true, t(500));
    core.on_chunk_ended(1, t(1000));
    drain(&mut core);
    core.on_speech_start(t(1100));
    core.on_partial("wait", t(1100)); // confirms the pause (V7)
                                      // The ended chunk is no longer measured by the player: it played in full all the same.
    assert_eq!(heard_after(&mut core, &[]).as_deref(), Some(ONE));
}

#[test]
fn barge_in_while_the_context_is_suspended_counts_nothing() {
    let mut core = core();
    core.on_final("tell me", t(0));
    core.on_sentence("turn-1", ONE, t(1));
    core.on_accepted("turn-1", t(1));
    core.on_synthesized(1, true, t(2));
    drain(&mut core); // enqueued, waiting for a gesture: never scheduled
    core.interrupt(t(5000));
    assert_eq!(heard_after(&mut core, &[]).as_deref(), Some(""));
}

#[test]
fn barge_in_between_the_accepted_text_and_the_first_audio_counts_nothing() {
    let mut core = core();
    core.on_final("tell me", t(0));
    core.on_sentence("turn-1", ONE, t(1));
    core.on_accepted("turn-1", t(1));
    drain(&mut core);
    core.on_speech_start(t(100));
    core.on_partial("wait", t(100)); // confirms the pause (V7)
    assert_eq!(heard_after(&mut core, &[]).as_deref(), Some(""));
}

#[test]
fn barge_in_right_after_the_last_chunk_ended_counts_every_sentence_and_no_more() {
    let mut core = core();
    core.on_final("tell me", t(0));
    core.on_sentence("turn-1", ONE, t(1));
    core.on_synthesized(1, true, t(2));
    core.on_playback_started("turn-1", t(3));
    core.on_chunk_ended(1, t(1000));
    // The answer goes on streaming: its next sentence arrives and is being synthesized.
    core.on_sentence("turn-1", TWO, t(1001));
    drain(&mut core);
    core.on_speech_start(t(1002));
    core.on_partial("wait", t(1002)); // confirms the pause (V7)
    assert_eq!(heard_after(&mut core, &[]).as_deref(), Some(ONE));
}

#[test]
fn a_skipped_sentence_is_left_out_and_heard_text_stays_a_prefix_of_what_was_spoken() {
    let mut core = core();
    core.on_final("tell me", t(0));
    for sentence in ["A one.", "B two.", "C three four."] {
        core.on_sentence("turn-1", sentence, t(1));
    }
    core.on_accepted("turn-1", t(1));
    core.on_synthesized(1, true, t(2));
    core.on_synthesized(2, false, t(3)); // B fails: skipped, never spoken
    core.on_playback_started("turn-1", t(4));
    core.on_chunk_ended(1, t(500));
    core.on_synthesized(3, true, t(501));
    drain(&mut core);
    core.on_speech_start(t(700));
    core.on_partial("wait", t(700)); // confirms the pause (V7)
    let heard = heard_after(&mut core, &[(3, chunk(1000.0, 700.0))]);
    assert_eq!(heard.as_deref(), Some("A one. C three"));
}

/// Performs actions one at a time; `on` may feed the core (a callback of the app) after an
/// action is performed. Returns every action performed.
fn perform_with(
    core: &mut VoiceCore,
    mut on: impl FnMut(&mut VoiceCore, &VoiceAction) -> bool,
) -> Vec<VoiceAction> {
    let mut done = Vec::new();
    let mut fired = false;
    while let Some(action) = core.poll_action() {
        if !fired {
            fired = on(core, &action);
        }
        done.push(action);
    }
    done
}

fn count(actions: &[VoiceAction], kind: fn(&VoiceAction) -> bool) -> usize {
    actions.iter().filter(|action| kind(action)).count()
}

fn is_start(action: &VoiceAction) -> bool {
    matches!(action, VoiceAction::StartTurn { .. })
}

fn is_synthesize(action: &VoiceAction) -> bool {
    matches!(action, VoiceAction::Synthesize { .. })
}

#[test]
fn stop_or_interrupt_from_the_final_caption_starts_no_turn() {
    for stop in [true, false] {
        let mut core = core();
        core.on_final("what is the weather", t(0));
        let performed = perform_with(&mut core, |core, action| {
            let caption = matches!(action, VoiceAction::Caption { is_final: true, .. });
            if caption {
                if stop {
                    core.stop(t(1));
                } else {
                    core.interrupt(t(1));
                }
            }
            caption
        });
        assert_eq!(count(&performed, is_start), 0, "stop {stop}: {performed:?}");
        assert!(
            !performed
                .iter()
                .any(|a| matches!(a, VoiceAction::InterruptTurn { .. })),
            "a turn the controller never saw needs no interrupt"
        );
        assert_eq!(core.current_turn(), None);
    }
}

#[test]
fn stop_from_on_speech_or_tts_started_calls_no_synthesize() {
    for at in ["sentence_queued", "tts_started"] {
        let mut core = core();
        core.on_final("q", t(0));
        drain(&mut core);
        core.on_sentence("turn-1", ONE, t(1));
        let performed = perform_with(&mut core, |core, action| {
            let hit = match action {
                VoiceAction::Event(VoiceEvent::SentenceQueued { .. }) => at == "sentence_queued",
                VoiceAction::Event(VoiceEvent::TtsStarted { .. }) => at == "tts_started",
                _ => false,
            };
            if hit {
                core.stop(t(2));
            }
            hit
        });
        assert_eq!(count(&performed, is_synthesize), 0, "{at}: {performed:?}");
        assert!(performed.contains(&VoiceAction::Detach));
    }
}

#[test]
fn stop_from_tts_finished_plays_nothing_and_releases_the_audio() {
    let mut core = core();
    core.on_final("q", t(0));
    core.on_sentence("turn-1", ONE, t(1));
    core.on_sentence("turn-1", TWO, t(1));
    drain(&mut core);
    core.on_synthesized(1, true, t(2));
    let performed = perform_with(&mut core, |core, action| {
        let hit = matches!(action, VoiceAction::Event(VoiceEvent::TtsFinished { .. }));
        if hit {
            core.stop(t(3));
        }
        hit
    });
    assert!(
        !performed
            .iter()
            .any(|a| matches!(a, VoiceAction::Play { .. }) || is_synthesize(a)),
        "{performed:?}"
    );
    assert!(performed.contains(&VoiceAction::AbortSynthesis { job: 1 }));
}

#[test]
fn the_echo_guard_covers_partials_and_every_start_after_silence() {
    let mut core = VoiceCore::new(VoiceConfig {
        min_partial_chars: 3,
        echo_guard_ms: 300,
        ..VoiceConfig::new(RECOVERY)
    });
    core.start();
    speaking_first_of_two(&mut core);
    // t(3): playback started. An echoed partial inside the guard is no barge-in.
    core.on_partial("it is", t(100));
    assert!(!drain(&mut core)
        .iter()
        .any(|a| matches!(a, VoiceAction::StopPlayback { .. })));
    // The line ran dry (slow synthesis), then the agent sounds again at t(2000).
    core.on_chunk_ended(1, t(1500));
    core.on_synthesized(2, true, t(1990));
    core.on_playback_started("turn-1", t(2000));
    drain(&mut core);
    core.on_speech_start(t(2100));
    core.on_partial("wait", t(2100)); // confirms the pause (V7)
    core.on_partial("take one", t(2200));
    assert!(!drain(&mut core)
        .iter()
        .any(|a| matches!(a, VoiceAction::StopPlayback { .. })));
    // After the guard, a partial is a barge-in.
    core.on_partial("take one two", t(2400));
    assert!(drain(&mut core).contains(&VoiceAction::StopPlayback {
        turn_id: "turn-1".into()
    }));
}

#[test]
fn a_short_spoken_final_inside_the_echo_guard_is_echo_but_typed_text_is_not() {
    let mut core = VoiceCore::new(VoiceConfig {
        min_partial_chars: 12,
        echo_guard_ms: 1000,
        ..VoiceConfig::new(RECOVERY)
    });
    core.start();
    speaking_first_of_two(&mut core);
    // t(3): playback started. The echo of the first syllables comes back as a short final.
    core.on_spoken_final("and it", t(800));
    let actions = drain(&mut core);
    assert_eq!(
        actions,
        [VoiceAction::Caption {
            text: "and it".into(),
            is_final: true
        }],
        "a caption, no barge-in, no turn"
    );
    // A long enough final inside the guard is the user.
    core.on_spoken_final("wait a moment please", t(900));
    assert!(drain(&mut core)
        .iter()
        .any(|a| matches!(a, VoiceAction::StartTurn { .. })));
    // Typed text is never echo.
    speaking_again(&mut core);
    core.on_final("no", t(3100));
    assert!(drain(&mut core)
        .iter()
        .any(|a| matches!(a, VoiceAction::StartTurn { .. })));
}

/// turn-2 (started by the final above) speaks from t(3000).
fn speaking_again(core: &mut VoiceCore) {
    core.on_sentence("turn-2", ONE, t(2900));
    core.on_synthesized(3, true, t(2950));
    core.on_playback_started("turn-2", t(3000));
    drain(core);
}

/// V4: the defaults come from the echo measurement (docs/maintainers/performance.md).
#[test]
fn the_barge_in_defaults_are_the_measured_ones() {
    let config = VoiceConfig::new(RECOVERY);
    assert_eq!((config.min_partial_chars, config.echo_guard_ms), (16, 1500));
    // The agent's first syllable echoed back: a speech start, a one-word partial and a two-word
    // final within the first second of its playback cut nothing under the defaults.
    let mut core = VoiceCore::new(config);
    core.start();
    speaking_first_of_two(&mut core);
    core.on_speech_start(t(400));
    core.on_partial("wait", t(400)); // would confirm a pause (V7): there is none
    core.on_partial("and", t(700));
    core.on_spoken_final("and it", t(900));
    let actions = drain(&mut core);
    assert!(
        !actions.iter().any(|a| matches!(
            a,
            VoiceAction::StopPlayback { .. } | VoiceAction::StartTurn { .. }
        )),
        "{actions:?}"
    );
    // The user, after the guard: a speech start cuts it.
    core.on_speech_start(t(1600));
    core.on_partial("wait", t(1600));
    core.on_spoken_final("wait", t(1700)); // confirms the pause (V7)
    assert!(drain(&mut core).contains(&VoiceAction::StopPlayback {
        turn_id: "turn-1".into()
    }));
}
