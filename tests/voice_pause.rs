//! Pause, then cut or resume (V7): the user's voice pauses the agent; a word that is not a
//! backchannel, a final or long voice cuts it; nothing, or only backchannels, resumes it.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use turnguard::core::time::Millis;
use turnguard::core::voice::{
    BargeInCause, PauseCause, VoiceAction, VoiceConfig, VoiceCore, VoiceEvent, VoiceState,
};

const RECOVERY: &str = "Sorry, could you say that again?";

fn drain(core: &mut VoiceCore) -> Vec<VoiceAction> {
    std::iter::from_fn(|| core.poll_action()).collect()
}

/// A core thinking about turn-1 since 0 ms (its actions not drained).
fn thinking(config: VoiceConfig) -> VoiceCore {
    let mut core = VoiceCore::new(config);
    core.start();
    core.on_final("tell me about the weather", Millis(0));
    core
}

/// A core speaking turn-1's answer since 1000 ms, with the defaults (80 / 800 / 1500 ms).
fn speaking() -> VoiceCore {
    speaking_with(VoiceConfig {
        echo_guard_ms: 500,
        ..VoiceConfig::new(RECOVERY)
    })
}

fn speaking_with(config: VoiceConfig) -> VoiceCore {
    let mut core = thinking(config);
    core.on_sentence("turn-1", "It is sunny all day.", Millis(10));
    core.on_playback_started("turn-1", Millis(1000));
    drain(&mut core);
    assert_eq!(core.state(), VoiceState::Speaking);
    core
}

/// Runs the core's timer up to `until`, as the shell does.
fn run_until(core: &mut VoiceCore, until: u64) {
    while let Some(due) = core.poll_timeout().filter(|due| due.0 <= until) {
        core.handle_timeout(due);
    }
}

fn paused(actions: &[VoiceAction]) -> Option<PauseCause> {
    actions.iter().find_map(|action| match action {
        VoiceAction::Event(VoiceEvent::Paused { cause, .. }) => Some(*cause),
        _ => None,
    })
}

fn cut(actions: &[VoiceAction]) -> Option<BargeInCause> {
    actions.iter().find_map(|action| match action {
        VoiceAction::Event(VoiceEvent::BargeIn { cause, .. }) => Some(*cause),
        _ => None,
    })
}

fn resumed(actions: &[VoiceAction]) -> bool {
    actions.iter().any(
        |action| matches!(action, VoiceAction::ResumePlayback { turn_id } if turn_id == "turn-1"),
    )
}

#[test]
fn voice_for_min_speech_ms_pauses_and_a_word_cuts() {
    let mut core = speaking();
    // Inside the echo guard: the detector is not the provider, it pauses all the same.
    core.on_voice(true, Millis(1100), 0);
    run_until(&mut core, 1179);
    assert_eq!(
        paused(&drain(&mut core)),
        None,
        "79 ms of voice is not enough"
    );
    run_until(&mut core, 1180);
    let actions = drain(&mut core);
    assert_eq!(paused(&actions), Some(PauseCause::Voice));
    assert!(actions.contains(&VoiceAction::PausePlayback {
        turn_id: "turn-1".into()
    }));
    assert!(core.is_paused());
    assert_eq!(core.state(), VoiceState::Speaking, "the turn goes on");
    // "stop", inside the echo guard: paused, a short word waits for its final, which cuts.
    core.on_partial("stop", Millis(1400));
    assert_eq!(cut(&drain(&mut core)), None, "a first guess");
    assert!(
        // Still inside the guard: paused, the agent is silent, so the final is the user's.
        !core.on_spoken_final("stop", Millis(1450)),
        "the user's, not the echo"
    );
    let actions = drain(&mut core);
    assert_eq!(cut(&actions), Some(BargeInCause::Final));
    assert!(actions.contains(&VoiceAction::InterruptTurn {
        turn_id: "turn-1".into()
    }));
    assert_eq!(core.state(), VoiceState::Thinking, "the user's turn");
    assert!(!core.is_paused());
}

#[test]
fn paused_a_short_words_final_decides_and_without_one_the_agent_resumes() {
    for (partials, last_final, cuts) in [
        // A recognizer's first guess at "yeah" (measured in the room), then its final.
        (&["you", "yeah"][..], Some("yeah"), false),
        (&["uh"][..], Some("uh huh"), false),
        (&["you"][..], Some("stop"), true),
        // No final by the deadline: a guess the recognizer dropped; the agent resumes.
        (&["you"][..], None, false),
        // A backchannel's partial and no final: the pause resumes as for silence.
        (&["yeah"][..], None, false),
    ] {
        let mut core = speaking();
        core.on_voice(true, Millis(2000), 0);
        run_until(&mut core, 2100);
        assert_eq!(paused(&drain(&mut core)), Some(PauseCause::Voice));
        for (at, partial) in (2300..).step_by(100).zip(partials) {
            core.on_partial(partial, Millis(at));
        }
        core.on_voice(false, Millis(2500), 500);
        assert_eq!(
            cut(&drain(&mut core)),
            None,
            "{partials:?}: no cut before the final"
        );
        if let Some(text) = last_final {
            core.on_spoken_final(text, Millis(2700));
        }
        run_until(&mut core, 4000);
        let actions = drain(&mut core);
        assert_eq!(
            cut(&actions).is_some(),
            cuts,
            "{partials:?} {last_final:?}: {actions:?}"
        );
        // (A cut lets the player run again too: the event tells a resume.)
        let resumed = actions
            .iter()
            .any(|action| matches!(action, VoiceAction::Event(VoiceEvent::Resumed { .. })));
        assert_eq!(resumed, !cuts, "{partials:?} {last_final:?}: {actions:?}");
        assert!(!core.is_paused());
    }
}

#[test]
fn short_voice_never_pauses() {
    let mut core = speaking();
    core.on_voice(true, Millis(2000), 0);
    core.on_voice(false, Millis(2060), 60);
    run_until(&mut core, 5000);
    let actions = drain(&mut core);
    assert_eq!(paused(&actions), None, "{actions:?}");
    assert_eq!(core.state(), VoiceState::Speaking);
}

#[test]
fn nothing_confirms_and_the_agent_resumes_after_false_interruption_ms() {
    let mut core = speaking();
    core.on_voice(true, Millis(2000), 0);
    run_until(&mut core, 2200);
    assert_eq!(paused(&drain(&mut core)), Some(PauseCause::Voice));
    core.on_voice(false, Millis(2400), 400); // a cough
    run_until(&mut core, 3899);
    assert!(!resumed(&drain(&mut core)), "not before 1500 ms of quiet");
    run_until(&mut core, 3900);
    let actions = drain(&mut core);
    assert!(resumed(&actions), "{actions:?}");
    assert!(actions.contains(&VoiceAction::Event(VoiceEvent::Resumed {
        turn_id: "turn-1".into(),
        paused_ms: 1820
    })));
    assert_eq!(cut(&actions), None);
    assert_eq!(core.state(), VoiceState::Speaking);
    assert!(!core.is_paused());
}

#[test]
fn voice_that_lasts_confirm_ms_cuts_without_a_word() {
    let mut core = speaking();
    core.on_voice(true, Millis(2000), 0);
    run_until(&mut core, 2799);
    let actions = drain(&mut core);
    assert_eq!(paused(&actions), Some(PauseCause::Voice));
    assert_eq!(cut(&actions), None);
    run_until(&mut core, 2800);
    assert_eq!(cut(&drain(&mut core)), Some(BargeInCause::Voice));
    assert_eq!(core.state(), VoiceState::Listening);
}

#[test]
fn a_backchannel_resumes_at_once_and_starts_no_turn() {
    let mut core = speaking();
    core.on_voice(true, Millis(2000), 0);
    run_until(&mut core, 2200);
    core.on_partial("uh huh", Millis(2300));
    core.on_voice(false, Millis(2450), 450);
    let actions = drain(&mut core);
    assert_eq!(
        cut(&actions),
        None,
        "a backchannel partial does not confirm"
    );
    core.on_final("Uh huh.", Millis(2600));
    let actions = drain(&mut core);
    assert!(resumed(&actions), "{actions:?}");
    assert!(!actions
        .iter()
        .any(|action| matches!(action, VoiceAction::StartTurn { .. })));
    assert_eq!(core.state(), VoiceState::Speaking);
}

#[test]
fn a_provider_speech_start_is_a_hint_outside_the_echo_guard() {
    let mut core = speaking();
    core.on_speech_start(Millis(1200)); // inside the 500 ms guard: echo
    assert_eq!(paused(&drain(&mut core)), None);
    core.on_speech_start(Millis(2000));
    let actions = drain(&mut core);
    assert_eq!(paused(&actions), Some(PauseCause::SpeechStart));
    assert_eq!(cut(&actions), None, "a speech start no longer cuts");
    // The detector heard nothing: the pause resumes 1500 ms later.
    run_until(&mut core, 3500);
    assert!(resumed(&drain(&mut core)));
}

#[test]
fn a_final_cuts_a_pause_and_starts_the_next_turn() {
    let mut core = speaking();
    core.on_speech_start(Millis(2000));
    core.on_final("what about tomorrow", Millis(2500));
    let actions = drain(&mut core);
    assert_eq!(cut(&actions), Some(BargeInCause::Final));
    assert!(actions.contains(&VoiceAction::StartTurn {
        turn_id: "turn-2".into(),
        input: "what about tomorrow".into()
    }));
    assert!(!core.is_paused(), "the new turn is not paused");
}

#[test]
fn a_thinking_turn_pauses_too_and_goes_on() {
    let mut core = thinking(VoiceConfig::new(RECOVERY));
    drain(&mut core);
    assert_eq!(core.state(), VoiceState::Thinking);
    core.on_voice(true, Millis(100), 0);
    run_until(&mut core, 300);
    let actions = drain(&mut core);
    assert_eq!(paused(&actions), Some(PauseCause::Voice));
    assert!(!actions
        .iter()
        .any(|action| matches!(action, VoiceAction::InterruptTurn { .. })));
    core.on_voice(false, Millis(350), 350);
    run_until(&mut core, 1850);
    assert!(resumed(&drain(&mut core)));
    assert_eq!(core.state(), VoiceState::Thinking);
}

#[test]
fn voice_across_the_final_counts_for_the_new_turn_from_its_start() {
    let mut core = VoiceCore::new(VoiceConfig::new(RECOVERY));
    core.start();
    core.on_voice(true, Millis(0), 0);
    core.on_final("tell me about the weather", Millis(1000));
    drain(&mut core);
    run_until(&mut core, 1079);
    assert_eq!(paused(&drain(&mut core)), None, "not at once");
    run_until(&mut core, 1080);
    let actions = drain(&mut core);
    assert_eq!(paused(&actions), Some(PauseCause::Voice));
    assert_eq!(
        cut(&actions),
        None,
        "not cut for voice before the turn began"
    );
}

#[test]
fn min_speech_ms_zero_turns_pausing_by_voice_off_and_interrupt_still_cuts() {
    let mut core = speaking_with(VoiceConfig {
        min_speech_ms: 0,
        ..VoiceConfig::new(RECOVERY)
    });
    core.on_voice(true, Millis(1200), 0);
    run_until(&mut core, 5000);
    assert_eq!(paused(&drain(&mut core)), None);
    core.interrupt(Millis(5000));
    assert_eq!(cut(&drain(&mut core)), Some(BargeInCause::Button));
}

#[test]
fn a_turn_that_ends_with_a_skipped_sentence_keeps_only_what_was_spoken() {
    let mut core = thinking(VoiceConfig::new(RECOVERY));
    core.on_sentence("turn-1", "First.", Millis(10));
    core.on_sentence("turn-1", "Second.", Millis(11));
    core.on_sentence("turn-1", "Third.", Millis(12));
    core.on_accepted("turn-1", Millis(13));
    // Synthesis of the second sentence fails; the others play to their end.
    let mut seen = Vec::new();
    let mut now = 20;
    loop {
        let actions = drain(&mut core);
        if actions.is_empty() {
            break;
        }
        for action in actions {
            now += 10;
            match &action {
                VoiceAction::Synthesize { job, text, .. } => {
                    core.on_synthesized(*job, text != "Second.", Millis(now));
                }
                VoiceAction::Play { job, .. } => core.on_chunk_ended(*job, Millis(now)),
                _ => {}
            }
            seen.push(action);
        }
    }
    let actions = seen;
    assert!(
        actions.contains(&VoiceAction::SetHeard {
            turn_id: "turn-1".into(),
            text: "First. Third.".into()
        }),
        "{actions:?}"
    );
    assert_eq!(core.state(), VoiceState::Listening);
}

#[test]
fn a_paused_turn_cut_before_any_audio_lets_the_player_run_again() {
    let mut core = thinking(VoiceConfig::new(RECOVERY));
    core.on_speech_start(Millis(100));
    drain(&mut core);
    assert!(core.is_paused());
    core.on_final("no, about the news", Millis(900));
    let actions = drain(&mut core);
    assert!(actions.contains(&VoiceAction::ResumePlayback {
        turn_id: "turn-1".into()
    }));
    assert!(actions.contains(&VoiceAction::StartTurn {
        turn_id: "turn-2".into(),
        input: "no, about the news".into()
    }));
    assert!(!core.is_paused());
}

#[test]
fn voice_that_came_in_a_burst_still_pauses_or_cuts_by_what_it_lasted() {
    // Audio faster than real time (a burst after a stall): the detector reports start and end
    // within the same millisecond, before any timer saw the voice. What it lasted in the audio
    // (its third argument) still counts.
    let mut core = speaking();
    core.on_voice(true, Millis(2000), 10_000);
    core.on_voice(false, Millis(2000), 10_250);
    let actions = drain(&mut core);
    assert_eq!(paused(&actions), Some(PauseCause::Voice));
    run_until(&mut core, 3499);
    assert!(!resumed(&drain(&mut core)));
    run_until(&mut core, 3500);
    assert!(resumed(&drain(&mut core)), "1500 ms after the voice ended");
    // 900 ms of voice in a burst: a pause and its cut.
    core.on_voice(true, Millis(4000), 20_000);
    core.on_voice(false, Millis(4001), 20_900);
    assert_eq!(cut(&drain(&mut core)), Some(BargeInCause::Voice));
    // 60 ms: nothing.
    let mut core = speaking();
    core.on_voice(true, Millis(2000), 10_000);
    core.on_voice(false, Millis(2000), 10_060);
    assert_eq!(paused(&drain(&mut core)), None);
}

#[test]
fn recognizers_spellings_of_a_backchannel_resume_too() {
    for heard in ["Yea.", "OK", "yep", "Mhm."] {
        let mut core = speaking();
        core.on_speech_start(Millis(2000));
        drain(&mut core);
        core.on_partial(heard, Millis(2100));
        core.on_final(heard, Millis(2300));
        let actions = drain(&mut core);
        assert!(resumed(&actions), "{heard}: {actions:?}");
        assert_eq!(cut(&actions), None, "{heard}");
    }
}
