//! Backchannels (V6): "okay", "uh huh" while the agent speaks never cut it, and a final of them
//! alone starts no turn; anything else still barges in.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use turnguard::core::time::Millis;
use turnguard::core::voice::backchannel::Backchannels;
use turnguard::core::voice::{VoiceAction, VoiceConfig, VoiceCore, VoiceEvent, VoiceState};

const RECOVERY: &str = "Sorry, could you say that again?";

fn drain(core: &mut VoiceCore) -> Vec<VoiceAction> {
    std::iter::from_fn(|| core.poll_action()).collect()
}

/// A core speaking turn-1's answer, with `backchannels`.
fn speaking(backchannels: Backchannels) -> VoiceCore {
    let mut core = VoiceCore::new(VoiceConfig {
        min_partial_chars: 1,
        echo_guard_ms: 0,
        backchannels,
        ..VoiceConfig::new(RECOVERY)
    });
    core.start();
    core.on_final("tell me about the weather", Millis(0));
    core.on_sentence("turn-1", "It is sunny all day.", Millis(10));
    core.on_playback_started("turn-1", Millis(50));
    drain(&mut core);
    assert_eq!(core.state(), VoiceState::Speaking);
    core
}

fn cut_or_started(actions: &[VoiceAction]) -> bool {
    actions.iter().any(|action| {
        matches!(
            action,
            VoiceAction::StartTurn { .. }
                | VoiceAction::InterruptTurn { .. }
                | VoiceAction::StopPlayback { .. }
        )
    })
}

#[test]
fn okay_while_the_agent_speaks_goes_by_and_is_reported() {
    let mut core = speaking(Backchannels::default());
    core.on_partial("okay", Millis(100));
    core.on_final("Okay.", Millis(300));
    core.on_partial("uh huh", Millis(400));
    core.on_final("Uh huh, got it", Millis(600));
    let actions = drain(&mut core);
    assert!(!cut_or_started(&actions), "{actions:?}");
    assert_eq!(core.state(), VoiceState::Speaking);
    let reported = actions
        .iter()
        .filter(|action| {
            matches!(action, VoiceAction::Event(VoiceEvent::Backchannel { turn_id }) if turn_id == "turn-1")
        })
        .count();
    assert_eq!(reported, 2, "each backchannel final is an event");
    assert!(actions.contains(&VoiceAction::Caption {
        text: "Okay.".into(),
        is_final: true
    }));
}

#[test]
fn anything_more_than_backchannels_still_barges_in() {
    let mut core = speaking(Backchannels::default());
    core.on_partial("okay stop", Millis(100));
    assert!(
        cut_or_started(&drain(&mut core)),
        "a partial with another word cuts"
    );
    let mut core = speaking(Backchannels::default());
    core.on_final("yes please book it", Millis(100));
    let actions = drain(&mut core);
    assert!(actions.contains(&VoiceAction::StartTurn {
        turn_id: "turn-2".into(),
        input: "yes please book it".into()
    }));
}

#[test]
fn an_empty_list_turns_it_off_and_listening_finals_are_turns() {
    let mut core = speaking(Backchannels::new(Vec::<String>::new()));
    core.on_final("okay", Millis(100));
    assert!(cut_or_started(&drain(&mut core)), "[] turns the filter off");
    // While listening, "yes" is the user's answer: a turn.
    let mut core = VoiceCore::new(VoiceConfig::new(RECOVERY));
    core.start();
    core.on_final("yes", Millis(0));
    assert!(drain(&mut core)
        .iter()
        .any(|action| matches!(action, VoiceAction::StartTurn { input, .. } if input == "yes")));
}
