//! Invariants of the turn ladder over random schedules: whole and streamed answers (chunks at
//! random times, blank chunks, stalls before and after the commit, errors mid-stream, answers
//! over `max_answer_chars`), failures, timeouts, interrupts during generation and delivery,
//! deadlines, budgets and history caps (rules T2–T16), and preemptive attempts started before
//! the final, confirmed, changed or withdrawn (T17).
//!
//! `PROPTEST_CASES` sets the number of schedules (`npm run properties` runs 100 000 in release).

mod sim;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use proptest::prelude::*;
use sim::{routes, Reply, Sim, Spoken, RECOVERY};
use std::collections::HashMap;
use std::rc::Rc;
use turnguard::core::time::Millis;
use turnguard::core::turn::record::{AttemptResult, Failure, TurnStatus};
use turnguard::core::turn::{Event, TurnConfig};

/// Schedules per run: `PROPTEST_CASES` when set (natively), else a CI-sized default.
fn cases() -> u32 {
    let default = if cfg!(target_arch = "wasm32") {
        300
    } else {
        3_000
    };
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default)
}

/// Pieces streamed answers are made of: sentence ends, decimals, abbreviations, CJK, blanks,
/// line ends and a sentence that never ends.
const PIECES: [&str; 14] = [
    "Hello there. ",
    "How are",
    " you? ",
    "",
    "   ",
    "\n",
    "It costs 3.",
    "50 dollars. ",
    "Mr. Smith agrees. ",
    "日本語です。",
    "word ",
    "wait... what? ",
    "Ça va! ",
    "and it goes on and on without a stop ",
];

fn failure() -> impl Strategy<Value = Failure> {
    prop_oneof![
        Just(Failure::Network),
        Just(Failure::NoText),
        Just(Failure::Timeout),
        (400u16..600).prop_map(Failure::Http),
        any::<bool>().prop_map(|retryable| Failure::Threw { retryable }),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(0..PIECES.len(), 0..12)
        .prop_map(|pieces| pieces.into_iter().map(|i| PIECES[i]).collect())
}

/// A stream: chunks after random gaps (a long gap is a stall), then an end, a failure, or
/// nothing (it stalls for ever).
fn stream() -> impl Strategy<Value = Reply> {
    let chunk = (0u64..150, 0..PIECES.len());
    let end = prop_oneof![
        (0u64..150).prop_map(|gap| Some((gap, Ok(())))),
        (0u64..150, failure()).prop_map(|(gap, f)| Some((gap, Err(f)))),
        Just(None),
    ];
    (prop::collection::vec(chunk, 0..16), end).prop_map(|(chunks, end)| {
        let mut at = 0;
        let chunks: Vec<(u64, String)> = chunks
            .into_iter()
            .map(|(gap, piece)| {
                at += gap;
                (at, PIECES[piece].to_owned())
            })
            .collect();
        Reply::Stream(chunks, end.map(|(gap, outcome)| (at + gap, outcome)))
    })
}

fn reply() -> impl Strategy<Value = Reply> {
    prop_oneof![
        3 => (0u64..400, text()).prop_map(|(ms, text)| Reply::After(ms, Ok(text))),
        3 => (0u64..400, failure()).prop_map(|(ms, f)| Reply::After(ms, Err(f))),
        5 => stream(),
        1 => Just(Reply::Never),
    ]
}

#[derive(Clone, Debug)]
struct TurnPlan {
    start_at: u64,
    replies: Vec<Reply>,
    interrupt_at: Option<u64>,
    eager: Option<Eager>,
}

/// An eager end of turn before the final: how long before it, whether its text is the final's,
/// and whether it is withdrawn (and a second guess made) some time after.
#[derive(Clone, Debug)]
struct Eager {
    lead: u64,
    same_text: bool,
    withdraw_after: Option<u64>,
}

fn eager() -> impl Strategy<Value = Eager> {
    (0u64..500, any::<bool>(), prop::option::of(0u64..400)).prop_map(
        |(lead, same_text, withdraw_after)| Eager {
            lead,
            same_text,
            withdraw_after,
        },
    )
}

fn turn_plan() -> impl Strategy<Value = TurnPlan> {
    (
        0u64..600,
        prop::collection::vec(reply(), 5),
        prop::option::of(0u64..700),
        prop::option::of(eager()),
    )
        .prop_map(|(start_at, replies, interrupt_at, eager)| TurnPlan {
            start_at: start_at + 500,
            replies,
            interrupt_at,
            eager,
        })
}

/// What happens to a turn at one instant, in the order of the enum when at the same time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Input {
    Eager(bool),
    Withdraw,
    Final,
    Interrupt,
}

#[derive(Clone, Debug)]
struct Schedule {
    config: TurnConfig,
    turns: Vec<TurnPlan>,
}

fn config() -> impl Strategy<Value = TurnConfig> {
    let timing = (1u64..600, 1u64..400, 1u64..400, 1u64..300);
    let limits = (1u32..4, 1usize..6, prop::option::of(1u32..12));
    let bounds = (5usize..200, 1usize..150, any::<[bool; 2]>());
    (timing, limits, bounds).prop_map(
        |(
            (deadline, attempt, first_chunk, idle),
            (per_turn, kept, cap),
            (answer, history, share),
        )| {
            let mut specs = routes(&["a", "b"]);
            for (spec, share) in specs.iter_mut().zip(share) {
                spec.share_history = share;
            }
            let mut config = TurnConfig::new(specs, RECOVERY);
            config.turn_deadline_ms = deadline;
            config.attempt_timeout_ms = attempt;
            config.first_chunk_timeout_ms = first_chunk;
            config.chunk_idle_timeout_ms = idle;
            config.max_attempts_per_turn = per_turn;
            config.history_limit = kept;
            config.max_attempts_per_session = cap;
            config.max_answer_chars = answer;
            config.history_max_chars = history;
            config
        },
    )
}

fn schedule() -> impl Strategy<Value = Schedule> {
    (config(), prop::collection::vec(turn_plan(), 1..8))
        .prop_map(|(config, turns)| Schedule { config, turns })
}

/// What playing a schedule left, beside the simulation.
struct Played {
    sim: Sim,
    /// When each interrupted turn was interrupted.
    interrupted_at: HashMap<String, Millis>,
    /// How many sentences had been emitted when each turn was interrupted.
    sentences_at_interrupt: HashMap<String, usize>,
}

/// Plays a schedule: turns start and are interrupted at their times, routes reply by plan.
fn play(schedule: &Schedule) -> Played {
    let plans: Rc<Vec<TurnPlan>> = Rc::new(schedule.turns.clone());
    let script_plans = Rc::clone(&plans);
    let sim = Sim::new(schedule.config.clone(), move |call| {
        let turn: usize = call.turn_id[1..].parse().unwrap();
        script_plans[turn].replies[call.request_id.index()].clone()
    });
    // Inputs at their times, in time order; the ladder's own events in between.
    let mut inputs: Vec<(u64, usize, Input)> = Vec::new();
    for (index, plan) in plans.iter().enumerate() {
        inputs.push((plan.start_at, index, Input::Final));
        if let Some(after) = plan.interrupt_at {
            inputs.push((plan.start_at + after, index, Input::Interrupt));
        }
        if let Some(eager) = &plan.eager {
            let at = plan.start_at - eager.lead;
            inputs.push((at, index, Input::Eager(eager.same_text)));
            if let Some(after) = eager
                .withdraw_after
                .filter(|after| at + after + 1 < plan.start_at)
            {
                inputs.push((at + after, index, Input::Withdraw));
                inputs.push((at + after + 1, index, Input::Eager(true)));
            }
        }
    }
    inputs.sort();
    let mut played = Played {
        sim,
        interrupted_at: HashMap::new(),
        sentences_at_interrupt: HashMap::new(),
    };
    for (at, index, input) in inputs {
        played.sim.run_until(Millis(at));
        let turn_id = format!("t{index}");
        match input {
            Input::Interrupt => {
                let emitted = played.sim.emitted_sentences.len();
                if played.sim.interrupt(&turn_id) {
                    played
                        .interrupted_at
                        .insert(turn_id.clone(), played.sim.now);
                    played.sentences_at_interrupt.insert(turn_id, emitted);
                }
            }
            Input::Final => played.sim.start(&turn_id, "input"),
            Input::Eager(same) => {
                played
                    .sim
                    .preempt(&turn_id, if same { "Input." } else { "input more" });
            }
            Input::Withdraw => {
                played.sim.discard(&turn_id);
            }
        }
    }
    played.sim.drive(100_000);
    played
}

fn without_white_space(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn every_turn_ends_once_within_its_bounds(schedule in schedule()) {
        let config = &schedule.config;
        let Played { sim, interrupted_at, sentences_at_interrupt } = play(&schedule);
        prop_assert!(sim.ladder.retained_turns() <= config.history_limit);
        prop_assert_eq!(sim.ladder.running_turns(), 0, "every turn settles");
        // T17: no request id is ever sent twice.
        let mut ids: Vec<&str> = sim.calls.iter().map(|c| c.request_id.as_str()).collect();
        ids.sort_unstable();
        let sent = ids.len();
        ids.dedup();
        prop_assert_eq!(ids.len(), sent, "a request id was sent twice");
        if let Some(cap) = config.max_attempts_per_session {
            prop_assert!(sim.calls.len() <= cap as usize);
        }
        // T16: what a route is handed stays within historyMaxChars.
        for call in &sim.calls {
            prop_assert_eq!(call.history.is_some(), config.routes[call.route].share_history);
            let chars: usize = call.history.iter().flatten().map(|e| e.content_chars()).sum();
            prop_assert!(chars <= config.history_max_chars, "{}: history of {} chars", call.request_id, chars);
        }
        for (index, plan) in schedule.turns.iter().enumerate() {
            let turn_id = format!("t{index}");
            let settled: Vec<_> = sim.settled.iter().filter(|r| r.turn_id == turn_id).collect();
            prop_assert_eq!(settled.len(), 1, "{} settles exactly once", turn_id);
            let record = settled[0];
            let spoken = sim.spoken_for(&turn_id);
            let sentences: Vec<&str> = sim.emitted_sentences.iter()
                .filter(|(id, _)| *id == turn_id).map(|(_, s)| s.as_str()).collect();
            // T3 and T17: the ladder's rungs within their bound, at most two guesses beside them.
            let ladder_calls = sim.calls.iter()
                .filter(|c| c.turn_id == turn_id && c.request_id.contains(":attempt:")).count();
            prop_assert!(ladder_calls <= config.max_attempts_per_turn as usize);
            prop_assert!(sim.calls_for(&turn_id) - ladder_calls <= 2);

            // T12: at most one commit; nothing starts after it; it happened before the deadline.
            let mut committed_at = None;
            for event in &sim.events {
                match event {
                    Event::Committed { turn_id: id, request_id, at, .. } if *id == turn_id => {
                        prop_assert!(committed_at.is_none(), "{} commits twice", turn_id);
                        prop_assert_eq!(Some(request_id), record.accepted_request_id.as_ref());
                        prop_assert!(*at < record.deadline_at, "{} commits before the deadline", turn_id);
                        committed_at = Some(*at);
                    }
                    Event::AttemptStarted { turn_id: id, request_id, .. } if *id == turn_id => {
                        prop_assert!(committed_at.is_none(), "{} starts after the commit", request_id);
                    }
                    _ => {}
                }
            }
            prop_assert_eq!(committed_at.is_some(), record.accepted_request_id.is_some());
            // T17: nothing of a turn goes out before its final, and never a discarded answer.
            if let Some(at) = committed_at {
                prop_assert!(at >= Millis(plan.start_at), "{} committed before its final", turn_id);
            }
            for attempt in &record.attempts {
                if attempt.result == AttemptResult::Discarded {
                    prop_assert!(attempt.preemptive);
                    prop_assert_ne!(Some(&attempt.request_id), record.accepted_request_id.as_ref());
                }
            }

            match record.status {
                TurnStatus::Accepted => {
                    // onAcceptedText once, with exactly the text of the sentences delivered.
                    let text = record.accepted_text.clone().unwrap();
                    let expected = Spoken::Answer(turn_id.clone(), text.clone());
                    prop_assert_eq!(spoken, vec![&expected]);
                    prop_assert!(!sentences.is_empty(), "{} said something", turn_id);
                    prop_assert_eq!(without_white_space(&sentences.concat()), without_white_space(&text));
                    prop_assert_eq!(sim.sentences.iter().filter(|(id, _)| *id == turn_id).count(), sentences.len());
                    // T15: never more than maxAnswerChars, and a stream still open when its turn
                    // was accepted (cut at the bound, stalled) is aborted: the provider stops.
                    prop_assert!(text.chars().count() <= config.max_answer_chars, "{}: {} chars", turn_id, text.chars().count());
                    let accepted = record.attempts.iter()
                        .find(|a| Some(&a.request_id) == record.accepted_request_id.as_ref()).unwrap();
                    let call = sim.calls.iter().find(|c| c.request_id == accepted.request_id).unwrap();
                    let finished_at = accepted.finished_at.unwrap();
                    if let Reply::Stream(_, end) = &plan.replies[accepted.request_id.index()] {
                        let aborted = sim.aborted_attempts.contains(&accepted.request_id);
                        // (An end at the very millisecond of the cut may come before or after it.)
                        match end.as_ref().map(|(ms, _)| call.at.after(*ms)) {
                            Some(end_at) if end_at < finished_at => prop_assert!(!aborted, "{} had ended", accepted.request_id),
                            Some(end_at) if end_at == finished_at => {}
                            _ => prop_assert!(aborted, "{} still open: aborted", accepted.request_id),
                        }
                    }
                }
                TurnStatus::Exhausted => {
                    let expected = Spoken::Recovery(turn_id.clone(), RECOVERY.into());
                    prop_assert_eq!(spoken, vec![&expected]);
                    prop_assert!(record.recovery_reason.is_some());
                    prop_assert!(sentences.is_empty(), "{} never committed: no sentence", turn_id);
                }
                TurnStatus::Cancelled => {
                    prop_assert!(spoken.is_empty(), "{} is silent", turn_id);
                    // Not one sentence after the interrupt.
                    let before = sentences_at_interrupt[&turn_id];
                    prop_assert!(
                        !sim.emitted_sentences[before..].iter().any(|(id, _)| *id == turn_id),
                        "{} spoke after its interrupt", turn_id
                    );
                }
                TurnStatus::Running => prop_assert!(false, "{} still running", turn_id),
            }
            for call in sim.calls.iter().filter(|call| call.turn_id == turn_id) {
                prop_assert!(call.at < record.deadline_at, "{} starts before the deadline", call.request_id);
                if let Some(at) = interrupted_at.get(&turn_id) {
                    prop_assert!(call.at <= *at, "{} starts before the interrupt", call.request_id);
                }
            }
        }
    }
}
