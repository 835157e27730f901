//! Invariants of the turn ladder over random schedules of route outcomes, delays, interrupts
//! and deadlines.
#![cfg(not(target_arch = "wasm32"))]

mod sim;

use proptest::prelude::*;
use sim::{routes, Reply, Sim, Spoken, RECOVERY};
use std::collections::HashMap;
use std::rc::Rc;
use turnguard::core::record::{Failure, TurnStatus};
use turnguard::core::time::Millis;
use turnguard::core::turn::TurnConfig;

fn failure() -> impl Strategy<Value = Failure> {
    prop_oneof![
        Just(Failure::Network),
        Just(Failure::NoText),
        Just(Failure::Timeout),
        (400u16..600).prop_map(Failure::Http),
        any::<bool>().prop_map(|retryable| Failure::Threw { retryable }),
    ]
}

fn reply() -> impl Strategy<Value = Reply> {
    prop_oneof![
        3 => (0u64..400).prop_map(|ms| Reply::After(ms, Ok(format!("answer after {ms}")))),
        1 => (0u64..400).prop_map(|ms| Reply::After(ms, Ok(String::new()))),
        3 => (0u64..400, failure()).prop_map(|(ms, f)| Reply::After(ms, Err(f))),
        1 => Just(Reply::Never),
    ]
}

#[derive(Clone, Debug)]
struct TurnPlan {
    start_at: u64,
    replies: Vec<Reply>,
    interrupt_at: Option<u64>,
}

fn turn_plan() -> impl Strategy<Value = TurnPlan> {
    (
        0u64..600,
        prop::collection::vec(reply(), 3),
        prop::option::of(0u64..500),
    )
        .prop_map(|(start_at, replies, interrupt_at)| TurnPlan {
            start_at,
            replies,
            interrupt_at,
        })
}

#[derive(Clone, Debug)]
struct Schedule {
    deadline_ms: u64,
    attempt_ms: u64,
    max_attempts: u32,
    history_limit: usize,
    session_cap: Option<u32>,
    turns: Vec<TurnPlan>,
}

fn schedule() -> impl Strategy<Value = Schedule> {
    (
        1u64..600,
        1u64..400,
        1u32..4,
        1usize..6,
        prop::option::of(1u32..12),
        prop::collection::vec(turn_plan(), 1..8),
    )
        .prop_map(
            |(deadline_ms, attempt_ms, max_attempts, history_limit, session_cap, turns)| Schedule {
                deadline_ms,
                attempt_ms,
                max_attempts,
                history_limit,
                session_cap,
                turns,
            },
        )
}

/// Plays a schedule: turns start and are interrupted at their times, routes reply by plan.
fn play(schedule: &Schedule) -> (Sim, HashMap<String, Millis>) {
    let mut config = TurnConfig::new(routes(&["a", "b"]), RECOVERY);
    config.turn_deadline_ms = schedule.deadline_ms;
    config.attempt_timeout_ms = schedule.attempt_ms;
    config.max_attempts_per_turn = schedule.max_attempts;
    config.history_limit = schedule.history_limit;
    config.max_attempts_per_session = schedule.session_cap;
    let plans: Rc<Vec<TurnPlan>> = Rc::new(schedule.turns.clone());
    let script_plans = Rc::clone(&plans);
    let mut sim = Sim::new(config, move |call| {
        let turn: usize = call.turn_id[1..].parse().unwrap();
        let attempt: usize = call.request_id.rsplit(':').next().unwrap().parse().unwrap();
        script_plans[turn].replies[attempt - 1].clone()
    });
    // Inputs at their times, in time order; the ladder's own events in between.
    let mut inputs: Vec<(u64, usize, bool)> = Vec::new();
    for (index, plan) in plans.iter().enumerate() {
        inputs.push((plan.start_at, index, false));
        if let Some(after) = plan.interrupt_at {
            inputs.push((plan.start_at + after, index, true));
        }
    }
    inputs.sort();
    let mut interrupted_at = HashMap::new();
    for (at, index, is_interrupt) in inputs {
        sim.run_until(Millis(at));
        let turn_id = format!("t{index}");
        if is_interrupt {
            if sim.interrupt(&turn_id) {
                interrupted_at.insert(turn_id, sim.now);
            }
        } else {
            sim.start(&turn_id, "input");
        }
    }
    sim.drive(10_000);
    (sim, interrupted_at)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn every_turn_ends_once_within_its_bounds(schedule in schedule()) {
        let (sim, interrupted_at) = play(&schedule);
        prop_assert!(sim.ladder.retained_turns() <= schedule.history_limit);
        prop_assert_eq!(sim.ladder.running_turns(), 0);
        if let Some(cap) = schedule.session_cap {
            prop_assert!(sim.calls.len() <= cap as usize);
        }
        for index in 0..schedule.turns.len() {
            let turn_id = format!("t{index}");
            let settled: Vec<_> = sim.settled.iter().filter(|r| r.turn_id == turn_id).collect();
            prop_assert_eq!(settled.len(), 1, "{} settles exactly once", turn_id);
            let record = settled[0];
            let spoken = sim.spoken_for(&turn_id);
            prop_assert!(sim.calls_for(&turn_id) <= schedule.max_attempts as usize);
            match record.status {
                TurnStatus::Accepted => {
                    let expected = Spoken::Answer(turn_id.clone(), record.accepted_text.clone().unwrap());
                    prop_assert_eq!(spoken, vec![&expected]);
                }
                TurnStatus::Exhausted => {
                    let expected = Spoken::Recovery(turn_id.clone(), RECOVERY.into());
                    prop_assert_eq!(spoken, vec![&expected]);
                    prop_assert!(record.recovery_reason.is_some());
                }
                TurnStatus::Cancelled => prop_assert!(spoken.is_empty(), "{} is silent", turn_id),
                TurnStatus::Running => prop_assert!(false, "{} still running", turn_id),
            }
            for call in sim.calls.iter().filter(|call| call.turn_id == turn_id) {
                prop_assert!(call.at < record.deadline_at, "{} starts before the deadline", call.request_id);
                if let Some(at) = interrupted_at.get(&turn_id) {
                    prop_assert!(call.at <= *at, "{} starts before the interrupt", call.request_id);
                }
            }
            if let Some(accepted) = &record.accepted_request_id {
                let attempt = record.attempts.iter().find(|a| &a.request_id == accepted).unwrap();
                prop_assert!(attempt.finished_at.unwrap() < record.deadline_at, "accepted before the deadline");
            }
        }
    }
}
