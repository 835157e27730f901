//! A leak of the agent's echo that pauses it (V7, V8): a working canceller lets the agent's voice
//! through for a moment, the detector takes it for the user's and pauses the agent, and the
//! provider writes a word of it, the agent's word at that moment. A short final made only of the
//! agent's words about the place it paused at confirms nothing: the agent resumes. Any other
//! word cuts, the agent's words from elsewhere in its answer included.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use turnguard::core::time::Millis;
use turnguard::core::voice::playback::ChunkHeard;
use turnguard::core::voice::{
    BargeInCause, PauseCause, VoiceAction, VoiceConfig, VoiceCore, VoiceEvent, VoiceState,
};

const RECOVERY: &str = "Sorry, could you say that again?";
/// 4 words.
const FIRST: &str = "My name is Ava.";
/// 13 words.
const SECOND: &str = "No problem, the weather today is sunny and warm with a light breeze.";

fn drain(core: &mut VoiceCore) -> Vec<VoiceAction> {
    std::iter::from_fn(|| core.poll_action()).collect()
}

fn run_until(core: &mut VoiceCore, until: u64) {
    while let Some(due) = core.poll_timeout().filter(|due| due.0 <= until) {
        core.handle_timeout(due);
    }
}

/// A core speaking turn-1's two sentences from 1000 ms, both synthesized and handed to the
/// player, and their jobs.
fn speaking() -> (VoiceCore, [u64; 2]) {
    let mut core = VoiceCore::new(VoiceConfig::new(RECOVERY));
    core.start();
    core.on_final("what is your name", Millis(0));
    core.on_sentence("turn-1", FIRST, Millis(10));
    core.on_sentence("turn-1", SECOND, Millis(11));
    core.on_accepted("turn-1", Millis(12));
    let mut played = Vec::new();
    loop {
        let actions = drain(&mut core);
        if actions.is_empty() {
            break;
        }
        for action in actions {
            match action {
                VoiceAction::Synthesize { job, .. } => core.on_synthesized(job, true, Millis(20)),
                VoiceAction::Play { job, .. } => played.push(job),
                _ => {}
            }
        }
    }
    core.on_playback_started("turn-1", Millis(1000));
    drain(&mut core);
    assert_eq!(core.state(), VoiceState::Speaking);
    let jobs: [u64; 2] = played
        .try_into()
        .expect("both sentences went to the player");
    (core, jobs)
}

/// Voice at `at` pauses the agent; the player says it had played `played` (job, duration,
/// played ms) by then.
fn pause_at(core: &mut VoiceCore, at: u64, played: &[(u64, f64, f64)]) {
    core.on_voice(true, Millis(at), 0);
    run_until(core, at + 100);
    let actions = drain(core);
    assert!(
        actions.iter().any(|action| matches!(
            action,
            VoiceAction::Event(VoiceEvent::Paused {
                cause: PauseCause::Voice,
                ..
            })
        )),
        "{actions:?}"
    );
    let chunks: Vec<(u64, ChunkHeard)> = played
        .iter()
        .enumerate()
        .map(|(seq, &(job, duration_ms, played_ms))| {
            let seq = seq as u64;
            (
                job,
                ChunkHeard {
                    seq,
                    duration_ms,
                    played_ms,
                },
            )
        })
        .collect();
    core.on_playback_paused("turn-1", &chunks);
    // The leak was short: the voice ends before the provider's final.
    core.on_voice(false, Millis(at + 150), 150);
}

/// The final `text` while paused: whether it cut (else the agent resumed by the deadline).
fn final_cuts(core: &mut VoiceCore, text: &str, at: u64) -> bool {
    core.on_spoken_final(text, Millis(at));
    run_until(core, at + 3000);
    let actions = drain(core);
    let cut = actions.iter().any(|action| {
        matches!(
            action,
            VoiceAction::Event(VoiceEvent::BargeIn {
                cause: BargeInCause::Final,
                ..
            })
        )
    });
    let resumed = actions
        .iter()
        .any(|action| matches!(action, VoiceAction::Event(VoiceEvent::Resumed { .. })));
    assert_ne!(cut, resumed, "{text:?}: a cut or a resume, {actions:?}");
    assert!(!core.is_paused());
    cut
}

/// Each `(final, cuts)` on a fresh answer paused at `at` with `played_ms` of sentence `index`
/// (`duration_ms` long) played, the sentences before it played in full; the final 500 ms later.
fn finals_at(index: usize, duration_ms: f64, played_ms: f64, at: u64, cases: &[(&str, bool)]) {
    for &(text, cuts) in cases {
        let (mut core, jobs) = speaking();
        for &job in &jobs[..index] {
            core.on_chunk_ended(job, Millis(2300));
        }
        pause_at(&mut core, at, &[(jobs[index], duration_ms, played_ms)]);
        assert_eq!(final_cuts(&mut core, text, at + 500), cuts, "{text:?}");
    }
}

/// A short voice at `at` pauses the agent, and the player never says where.
fn pause_unplaced(core: &mut VoiceCore, at: u64) {
    core.on_voice(true, Millis(at), 0);
    run_until(core, at + 100);
    core.on_voice(false, Millis(at + 150), 150);
    drain(core);
    assert!(core.is_paused());
}

#[test]
fn the_agents_word_where_it_paused_resumes_and_the_users_word_cuts() {
    // 300 ms of "My name is Ava." (1300 ms) played: no whole word yet, "My" sounding.
    finals_at(
        0,
        1300.0,
        300.0,
        1300,
        &[
            ("my", false),
            ("My.", false),
            ("name", false),
            ("my name", false),
            // Not said about there: the user's.
            ("stop", true),
            ("Ava", true),
            ("what", true),
            ("my stop", true),
        ],
    );
}

#[test]
fn the_agents_word_from_elsewhere_in_its_answer_is_the_users() {
    // "No problem, the weather today is sunny and warm" heard (9 of 13 words at 70 %), "with"
    // sounding: "No" was said two seconds before, the user's "no" now is theirs.
    finals_at(
        1,
        4000.0,
        2800.0,
        5000,
        &[
            ("no", true),
            ("problem", true),
            ("is", true),
            ("sunny", false),
            ("warm", false),
            ("with", false),
            ("a", false),
            ("sunny and warm", false),
            ("light", true),
            ("breeze", true),
        ],
    );
}

#[test]
fn about_a_sentence_start_the_words_run_across_the_sentences() {
    // "My name is Ava." played in full, 5 % of the second: "name is Ava" before, "No problem"
    // next.
    finals_at(
        1,
        4000.0,
        200.0,
        2400,
        &[
            ("ava", false),
            ("no", false),
            ("name", false),
            ("my", true),
            ("the", true),
        ],
    );
}

#[test]
fn a_final_as_long_as_a_cutting_partial_is_the_users_whatever_its_words() {
    // 16 characters cut as a partial would; a leak is a word or two.
    finals_at(1, 4000.0, 2800.0, 5000, &[("is sunny and warm", true)]);
}

#[test]
fn without_the_players_word_on_the_place_every_word_cuts_as_before() {
    let (mut core, _) = speaking();
    pause_unplaced(&mut core, 1300);
    assert!(final_cuts(&mut core, "my", 1800));
}

#[test]
fn each_pause_has_its_own_place() {
    let (mut core, [first, second]) = speaking();
    pause_at(&mut core, 1300, &[(first, 1300.0, 300.0)]);
    assert!(!final_cuts(&mut core, "my", 1800), "a leak at the start");
    core.on_chunk_ended(first, Millis(5000));
    // Later, in the second sentence: "my" is not about this place.
    pause_at(&mut core, 7000, &[(second, 4000.0, 2800.0)]);
    assert!(final_cuts(&mut core, "my", 7500));
}

#[test]
fn a_pause_the_player_never_placed_keeps_no_earlier_place() {
    let (mut core, [first, _]) = speaking();
    pause_at(&mut core, 1300, &[(first, 1300.0, 300.0)]);
    assert!(!final_cuts(&mut core, "my", 1800));
    pause_unplaced(&mut core, 6000);
    assert!(final_cuts(&mut core, "my", 6500));
}

#[test]
fn before_anything_sounded_no_word_is_a_leak() {
    // Both sentences with the player, the first scheduled but not yet sounding: a pause there
    // (a thinking turn's, or one just before the audio) heard nothing of the agent.
    finals_at(0, 1300.0, 0.0, 1010, &[("my", true)]);
}
