//! Invariants of the voice core over arbitrary schedules of words, voice, answers, synthesis and
//! playback (V2, V3, V6, V7, P3): one turn speaks at a time, nothing plays or starts after `stop`
//! or a failure, every pause ends once, a backchannel while the agent speaks starts no turn, and
//! heard text is what played to its end.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use proptest::prelude::*;
use std::collections::{HashMap, HashSet};
use turnguard::core::time::Millis;
use turnguard::core::voice::{VoiceAction, VoiceConfig, VoiceCore, VoiceEvent, VoiceState};

const SAID: [&str; 6] = [
    "tell me about the weather",
    "okay",
    "uh huh",
    "stop",
    "yeah, okay",
    "what time is it where you are",
];
const SENTENCES: [&str; 3] = ["It is sunny all day.", "Then rain comes.", "Bring a coat."];

#[derive(Clone, Debug)]
enum Input {
    Final(usize),
    SpokenFinal(usize),
    Partial(usize),
    Voice(bool),
    SpeechStart,
    Interrupt,
    OutputClosed,
    Sentence(usize),
    Accepted,
    Recovery,
    Settled,
    PlaybackStarted,
    /// The `n`-th synthesis still in flight (modulo their number) ends, or fails.
    Synthesized(usize, bool),
    /// The job playing first ends.
    ChunkEnded,
    /// The job playing first fails to decode or play: its sentence is skipped.
    PlayFailed,
    TranscriberFailed,
    PlaybackStopped,
    Advance(u64),
    Stop,
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        3 => (0..SAID.len()).prop_map(Input::Final),
        3 => (0..SAID.len()).prop_map(Input::SpokenFinal),
        3 => (0..SAID.len()).prop_map(Input::Partial),
        4 => any::<bool>().prop_map(Input::Voice),
        1 => Just(Input::SpeechStart),
        1 => Just(Input::Interrupt),
        1 => Just(Input::OutputClosed),
        4 => (0..SENTENCES.len()).prop_map(Input::Sentence),
        2 => Just(Input::Accepted),
        1 => Just(Input::Recovery),
        2 => Just(Input::Settled),
        3 => Just(Input::PlaybackStarted),
        4 => (any::<usize>(), prop::bool::weighted(0.85)).prop_map(|(n, ok)| Input::Synthesized(n, ok)),
        3 => Just(Input::ChunkEnded),
        1 => Just(Input::PlayFailed),
        1 => Just(Input::TranscriberFailed),
        2 => Just(Input::PlaybackStopped),
        6 => prop_oneof![0u64..=100, 100u64..=3_000].prop_map(Input::Advance),
        1 => Just(Input::Stop),
    ]
}

/// What the shell saw, and what it is still asked to do.
#[derive(Default)]
struct Shell {
    /// The turn of the last `StartTurn`.
    latest_turn: Option<String>,
    /// Turns that were replaced, interrupted or stopped: nothing of theirs may play again.
    ended_turns: HashSet<String>,
    /// Syntheses asked for and not aborted, not yet reported.
    synthesizing: Vec<u64>,
    /// Jobs whose synthesis succeeded and were not aborted.
    synthesized: HashSet<u64>,
    /// Each synthesis's text.
    texts: HashMap<u64, String>,
    /// Jobs playing, in the player's order: (job, turn, recovery).
    playing: Vec<(u64, String, bool)>,
    /// What of the answer played to its end, per turn, in order (P3): not the recovery text.
    played: HashMap<String, Vec<String>>,
    /// Turns whose playback the core asked to stop, until the player reports.
    stopping: Vec<String>,
    /// Turns whose player is paused now.
    paused: HashSet<String>,
    /// Turns with a `Paused` event not yet ended by a `Resumed`.
    pause_events: HashSet<String>,
    /// Turns the controller gave a sentence, and turns it will give nothing more.
    answered: HashSet<String>,
    complete: HashSet<String>,
    detached: bool,
}

impl Shell {
    /// V2: only the latest turn, and never one that ended, is synthesized or played.
    fn check_sounding(&self, turn_id: &String, what: &str) -> Result<(), TestCaseError> {
        prop_assert_eq!(
            Some(turn_id),
            self.latest_turn.as_ref(),
            "{} of another turn",
            what
        );
        prop_assert!(
            !self.ended_turns.contains(turn_id),
            "{} of an ended turn",
            what
        );
        Ok(())
    }

    fn take(&mut self, core: &mut VoiceCore) -> Result<Vec<VoiceAction>, TestCaseError> {
        let actions: Vec<VoiceAction> = std::iter::from_fn(|| core.poll_action()).collect();
        for action in &actions {
            if self.detached {
                prop_assert!(
                    !matches!(
                        action,
                        VoiceAction::StartTurn { .. }
                            | VoiceAction::Synthesize { .. }
                            | VoiceAction::Play { .. }
                            | VoiceAction::PausePlayback { .. }
                            | VoiceAction::ResumePlayback { .. }
                    ),
                    "after stop or failure: {:?}",
                    action
                );
            }
            match action {
                VoiceAction::StartTurn { turn_id, .. } => {
                    if let Some(old) = self.latest_turn.replace(turn_id.clone()) {
                        self.ended_turns.insert(old);
                    }
                    prop_assert!(!self.ended_turns.contains(turn_id), "a turn id again");
                }
                VoiceAction::InterruptTurn { turn_id } => {
                    self.ended_turns.insert(turn_id.clone());
                }
                VoiceAction::Synthesize {
                    job, turn_id, text, ..
                } => {
                    self.check_sounding(turn_id, "synthesis")?;
                    prop_assert!(!text.trim().is_empty());
                    self.synthesizing.push(*job);
                    self.texts.insert(*job, text.clone());
                }
                VoiceAction::AbortSynthesis { job } => {
                    self.synthesizing.retain(|pending| pending != job);
                    self.synthesized.remove(job);
                }
                VoiceAction::Play {
                    job,
                    turn_id,
                    recovery,
                } => {
                    self.check_sounding(turn_id, "audio")?;
                    prop_assert!(
                        *recovery || self.synthesized.contains(job),
                        "played before its synthesis succeeded: job {}",
                        job
                    );
                    self.playing.push((*job, turn_id.clone(), *recovery));
                }
                VoiceAction::PausePlayback { turn_id } => {
                    prop_assert!(
                        self.paused.insert(turn_id.clone()),
                        "paused twice: {}",
                        turn_id
                    );
                }
                VoiceAction::ResumePlayback { turn_id } => {
                    prop_assert!(self.paused.remove(turn_id), "resumed unpaused: {}", turn_id);
                }
                VoiceAction::StopPlayback { turn_id } => {
                    self.ended_turns.insert(turn_id.clone());
                    self.paused.remove(turn_id);
                    self.playing.retain(|(_, playing, _)| playing != turn_id);
                    self.stopping.push(turn_id.clone());
                }
                VoiceAction::Event(VoiceEvent::Paused { turn_id, .. }) => {
                    prop_assert!(
                        self.pause_events.insert(turn_id.clone()),
                        "a second pause: {}",
                        turn_id
                    );
                }
                VoiceAction::Event(VoiceEvent::Resumed { turn_id, .. }) => {
                    prop_assert!(
                        self.pause_events.remove(turn_id),
                        "a resume without a pause: {}",
                        turn_id
                    );
                }
                VoiceAction::Event(VoiceEvent::BargeIn { turn_id, .. }) => {
                    // A cut ends the turn's pause too.
                    self.pause_events.remove(turn_id);
                }
                VoiceAction::SetHeard { turn_id, text } => {
                    // P3: the sentences whose audio played to its end, nothing else (the player
                    // reports no partly played chunk here).
                    let played = self
                        .played
                        .get(turn_id)
                        .map_or(String::new(), |texts| texts.join(" "));
                    prop_assert_eq!(text, &played, "heard text of {}", turn_id);
                }
                VoiceAction::Detach => self.detached = true,
                _ => {}
            }
        }
        Ok(actions)
    }
}

fn run(inputs: Vec<Input>) -> Result<(), TestCaseError> {
    let config = VoiceConfig {
        echo_guard_ms: 300,
        ..VoiceConfig::new("Sorry, could you say that again?")
    };
    let backchannels = config.backchannels.clone();
    let mut core = VoiceCore::new(config);
    let mut shell = Shell::default();
    let mut now = Millis(0);
    core.start();
    shell.take(&mut core)?;
    for input in inputs {
        let current = core.current_turn().map(str::to_owned);
        let backchannel_while_speaking = match input {
            Input::Final(i) | Input::SpokenFinal(i) => {
                core.state() == VoiceState::Speaking && backchannels.only(SAID[i])
            }
            _ => false,
        };
        match input {
            Input::Final(i) => core.on_final(SAID[i], now),
            Input::SpokenFinal(i) => {
                core.on_spoken_final(SAID[i], now);
            }
            Input::Partial(i) => core.on_partial(SAID[i], now),
            Input::Voice(speaking) => core.on_voice(speaking, now, now.0),
            Input::SpeechStart => core.on_speech_start(now),
            Input::Interrupt => core.interrupt(now),
            Input::OutputClosed => core.on_output_closed(now),
            // The controller's side: sentences, then the answer complete or, for a turn with
            // none, the recovery text (T8); settled at any time.
            Input::Sentence(i) => {
                if let Some(turn) = current.filter(|turn| !shell.complete.contains(turn)) {
                    shell.answered.insert(turn.clone());
                    core.on_sentence(&turn, SENTENCES[i], now);
                }
            }
            Input::Accepted => {
                if let Some(turn) = current.filter(|turn| shell.answered.contains(turn)) {
                    shell.complete.insert(turn.clone());
                    core.on_accepted(&turn, now);
                }
            }
            Input::Recovery => {
                if let Some(turn) = current
                    .filter(|turn| !shell.answered.contains(turn) && !shell.complete.contains(turn))
                {
                    shell.complete.insert(turn.clone());
                    core.on_recovery(&turn, now);
                }
            }
            Input::Settled => {
                if let Some(turn) = current {
                    shell.complete.insert(turn.clone());
                    core.on_turn_settled(&turn, now);
                }
            }
            Input::PlaybackStarted => {
                if let Some((_, turn, _)) = shell.playing.first() {
                    core.on_playback_started(turn, now);
                }
            }
            Input::Synthesized(n, ok) => {
                if !shell.synthesizing.is_empty() {
                    let job = shell.synthesizing.remove(n % shell.synthesizing.len());
                    if ok {
                        shell.synthesized.insert(job);
                    }
                    core.on_synthesized(job, ok, now);
                }
            }
            Input::ChunkEnded => {
                if !shell.playing.is_empty() {
                    // The player ends its chunks in order.
                    let (job, turn, recovery) = shell.playing.remove(0);
                    if !recovery {
                        let text = shell.texts.get(&job).cloned().unwrap_or_default();
                        shell
                            .played
                            .entry(turn)
                            .or_default()
                            .push(text.trim().to_owned());
                    }
                    core.on_chunk_ended(job, now);
                }
            }
            Input::PlayFailed => {
                if !shell.playing.is_empty() {
                    let (job, _, _) = shell.playing.remove(0);
                    core.on_play_failed(job, now);
                }
            }
            Input::TranscriberFailed => core.on_transcriber_failed(now),
            Input::PlaybackStopped => {
                if !shell.stopping.is_empty() {
                    let turn = shell.stopping.remove(0);
                    core.on_playback_stopped(&turn, &[]);
                }
            }
            Input::Advance(ms) => {
                now = now.after(ms);
                core.handle_timeout(now);
            }
            Input::Stop => core.stop(now),
        }
        let actions = shell.take(&mut core)?;
        if backchannel_while_speaking {
            // V6: "okay" while the agent speaks: no barge-in, no new turn.
            prop_assert!(
                !actions.iter().any(|a| matches!(
                    a,
                    VoiceAction::StartTurn { .. }
                        | VoiceAction::InterruptTurn { .. }
                        | VoiceAction::StopPlayback { .. }
                )),
                "{:?}",
                actions
            );
        }
        // Stopped or failed, the session does nothing more (V3).
        shell.detached |= core.state().is_terminal();
        if core.state() == VoiceState::Speaking {
            prop_assert!(core.current_turn().is_some(), "speaking without a turn");
        }
    }
    core.stop(now);
    shell.take(&mut core)?;
    prop_assert!(core.state().is_terminal());
    prop_assert!(core.poll_timeout().is_none(), "a stopped core has no timer");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn one_turn_speaks_pauses_end_once_and_backchannels_start_nothing(
        inputs in prop::collection::vec(input(), 0..250),
    ) {
        run(inputs)?;
    }
}
