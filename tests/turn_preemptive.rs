//! Preemptive attempts (T17) in virtual time: kept, discarded for every reason, bounded, and
//! never heard before the final.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod sim;

use sim::{fail, ok, stream, Reply, Sim, Spoken};
use turnguard::core::time::Millis;
use turnguard::core::turn::preemptive::normalise;
use turnguard::core::turn::record::{AttemptResult, Failure, TurnStatus};
use turnguard::core::turn::{DiscardReason, Event, PreemptRefusal, Preempted, Started};

fn answer(turn_id: &str, text: &str) -> Spoken {
    Spoken::Answer(turn_id.to_owned(), text.to_owned())
}

fn ids(sim: &Sim) -> Vec<String> {
    sim.calls
        .iter()
        .map(|call| call.request_id.as_str().to_owned())
        .collect()
}

fn preemptive_events(sim: &Sim) -> Vec<(bool, Option<DiscardReason>)> {
    sim.events
        .iter()
        .filter_map(|event| match event {
            Event::PreemptiveEnded { kept, reason, .. } => Some((*kept, *reason)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_confirmed_guess_is_kept_and_answers_from_the_final_on() {
    let mut sim = Sim::new(Sim::config(8_000, 3_000), |_| ok(600, "Sure. It is sunny."));
    assert_eq!(sim.preempt("t1", "what's the weather"), Preempted::Started);
    sim.run_until(Millis(250));
    assert!(sim.spoken.is_empty() && sim.sentences.is_empty());
    sim.run_until(Millis(700));
    assert!(
        sim.spoken.is_empty() && sim.emitted_sentences.is_empty(),
        "the answer came at 600 ms but nothing goes out before the final"
    );
    assert_eq!(
        sim.ladder.start_turn("t1", "What's the weather?", sim.now),
        Ok(Started::Committed)
    );
    sim.perform();
    assert_eq!(sim.spoken, [answer("t1", "Sure. It is sunny.")]);
    assert_eq!(sim.calls.len(), 1, "one request for the turn");
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.status, TurnStatus::Accepted);
    assert_eq!(
        record.input, "What's the weather?",
        "the final is the input"
    );
    assert_eq!(
        record.started_at,
        Millis(700),
        "the turn starts at its final"
    );
    assert!(record.attempts[0].preemptive);
    assert_eq!(record.attempts[0].result, AttemptResult::Accepted);
    assert_eq!(ids(&sim), ["t1:preemptive:1"]);
    assert_eq!(preemptive_events(&sim), [(true, None)]);
    assert_eq!(sim.input_changes, ["t1"]);
}

#[test]
fn a_kept_stream_goes_on_streaming_after_the_final() {
    let mut sim = Sim::new(Sim::config(8_000, 3_000), |_| {
        stream(200, &["One. ", "Two. ", "Three."])
    });
    sim.preempt("t1", "count");
    sim.run_until(Millis(450));
    assert!(sim.emitted_sentences.is_empty());
    sim.ladder.start_turn("t1", "count", sim.now).unwrap();
    sim.perform();
    assert_eq!(
        sim.sentences,
        [("t1".to_owned(), "One.".to_owned())],
        "what arrived before the final goes out at the final"
    );
    sim.drive(100);
    assert_eq!(sim.spoken, [answer("t1", "One. Two. Three.")]);
    assert!(
        sim.input_changes.is_empty(),
        "the same text: nothing to refresh"
    );
}

#[test]
fn a_changed_text_discards_the_guess_and_runs_the_ladder_with_fresh_ids() {
    let mut sim = Sim::new(Sim::config(8_000, 3_000), |call| {
        ok(400, &format!("answer to {}", call.request_id.as_str()))
    });
    sim.preempt("t1", "book a table");
    sim.run_until(Millis(500));
    sim.ladder
        .start_turn("t1", "book a table for two", sim.now)
        .unwrap();
    sim.perform();
    sim.drive(100);
    assert_eq!(
        sim.spoken,
        [answer("t1", "answer to t1:attempt:1")],
        "only the final's own attempt is spoken"
    );
    assert_eq!(ids(&sim), ["t1:preemptive:1", "t1:attempt:1"]);
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.attempts[0].result, AttemptResult::Discarded);
    assert_eq!(record.attempts[1].result, AttemptResult::Accepted);
    assert_eq!(sim.aborted_attempts, ["t1:preemptive:1"]);
    assert_eq!(
        preemptive_events(&sim),
        [(false, Some(DiscardReason::TextChanged))]
    );
}

#[test]
fn a_withdrawn_guess_is_aborted_and_a_second_one_may_follow_but_no_third() {
    let mut sim = Sim::new(Sim::config(8_000, 3_000), |_| Reply::Never);
    sim.preempt("t1", "turn the lights");
    assert!(sim.discard("t1"), "TurnResumed");
    assert!(!sim.discard("t1"), "nothing left to discard");
    assert_eq!(sim.preempt("t1", "turn the lights off"), Preempted::Started);
    assert_eq!(
        sim.preempt("t1", "turn the lights off"),
        Preempted::Running,
        "the same guess again starts nothing"
    );
    assert_eq!(
        sim.preempt("t1", "turn the lights off please"),
        Preempted::Refused(PreemptRefusal::Limit)
    );
    assert_eq!(
        ids(&sim),
        ["t1:preemptive:1", "t1:preemptive:2"],
        "each guess has its own id"
    );
    sim.ladder
        .start_turn("t1", "turn the lights off please", sim.now)
        .unwrap();
    sim.perform();
    assert_eq!(
        ids(&sim),
        ["t1:preemptive:1", "t1:preemptive:2", "t1:attempt:1"]
    );
    assert_eq!(sim.aborted_attempts, ["t1:preemptive:1", "t1:preemptive:2"]);
    assert_eq!(
        preemptive_events(&sim),
        [
            (false, Some(DiscardReason::Withdrawn)),
            (false, Some(DiscardReason::TextChanged))
        ]
    );
}

#[test]
fn a_newer_guess_replaces_the_running_one() {
    let mut sim = Sim::new(Sim::config(8_000, 3_000), |_| ok(500, "Answer."));
    sim.preempt("t1", "what time");
    sim.run_until(Millis(100));
    sim.preempt("t1", "what time is it");
    sim.run_until(Millis(700));
    sim.ladder
        .start_turn("t1", "What time is it?", sim.now)
        .unwrap();
    sim.perform();
    assert_eq!(sim.spoken, [answer("t1", "Answer.")]);
    let record = sim.ladder.turn("t1").unwrap();
    let results: Vec<_> = record.attempts.iter().map(|a| a.result).collect();
    assert_eq!(results, [AttemptResult::Discarded, AttemptResult::Accepted]);
    assert_eq!(
        preemptive_events(&sim),
        [(false, Some(DiscardReason::Replaced)), (true, None)]
    );
}

#[test]
fn a_history_changed_since_the_guess_discards_it() {
    let mut sim = Sim::new(Sim::config(8_000, 3_000), |_| ok(300, "Answer."));
    sim.start("t0", "hello");
    sim.run_until(Millis(100));
    // The user talks over t0's answer: the guess for t1 starts while t0 still runs.
    sim.preempt("t1", "stop");
    sim.run_until(Millis(1_000));
    assert_eq!(sim.spoken, [answer("t0", "Answer.")]);
    sim.ladder.set_heard_text("t0", "");
    sim.ladder.start_turn("t1", "stop", sim.now).unwrap();
    sim.perform();
    sim.drive(100);
    assert_eq!(
        preemptive_events(&sim),
        [(false, Some(DiscardReason::HistoryChanged))]
    );
    assert_eq!(
        ids(&sim),
        ["t0:attempt:1", "t1:preemptive:1", "t1:attempt:1"]
    );
    assert_eq!(sim.spoken.len(), 2);
}

#[test]
fn a_failed_guess_is_discarded_and_the_final_starts_the_ladder_afresh() {
    let mut sim = Sim::new(Sim::config(8_000, 1_000), |call| {
        match call.request_id.as_str() {
            "t1:preemptive:1" => fail(100, Failure::Network),
            _ => ok(100, "Answer."),
        }
    });
    sim.preempt("t1", "hi");
    sim.run_until(Millis(2_000));
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.attempts[0].result, AttemptResult::Discarded);
    assert_eq!(record.attempts[0].error, Some(Failure::Network));
    assert_eq!(sim.calls.len(), 1, "no fallback before the final");
    sim.ladder.start_turn("t1", "hi", sim.now).unwrap();
    sim.perform();
    sim.drive(100);
    assert_eq!(sim.spoken, [answer("t1", "Answer.")]);
    assert_eq!(ids(&sim), ["t1:preemptive:1", "t1:attempt:1"]);
}

#[test]
fn a_guess_that_outlives_its_first_text_timeout_is_discarded() {
    let mut sim = Sim::new(Sim::config(8_000, 1_000), |_| Reply::Never);
    sim.preempt("t1", "hi");
    sim.run_until(Millis(1_500));
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.attempts[0].result, AttemptResult::Discarded);
    assert_eq!(record.attempts[0].error, Some(Failure::Timeout));
    assert_eq!(sim.aborted_attempts, ["t1:preemptive:1"]);
}

#[test]
fn a_guess_with_no_final_is_forgotten_at_the_deadline_and_a_late_final_still_answers() {
    let mut sim = Sim::new(Sim::config(4_000, 3_000), |_| ok(100, "Answer."));
    sim.preempt("t1", "hi");
    sim.run_until(Millis(5_000));
    assert_eq!(sim.forgotten, ["t1"]);
    assert!(sim
        .events
        .iter()
        .any(|event| matches!(event, Event::Forgotten { turn_id, at } if turn_id == "t1" && *at == Millis(4_000))));
    assert!(sim.ladder.turn("t1").is_none(), "no record is left");
    assert!(sim.spoken.is_empty() && sim.settled.is_empty());
    assert_eq!(sim.ladder.start_turn("t1", "hi", sim.now), Ok(Started::New));
    sim.perform();
    sim.drive(100);
    assert_eq!(sim.spoken, [answer("t1", "Answer.")]);
    assert_eq!(ids(&sim), ["t1:preemptive:1", "t1:attempt:1"]);
    assert_eq!(
        preemptive_events(&sim),
        [(false, Some(DiscardReason::Expired))]
    );
}

#[test]
fn interrupting_a_pending_turn_cancels_it_and_nothing_is_spoken() {
    let mut sim = Sim::new(Sim::config(8_000, 3_000), |_| ok(100, "Answer."));
    sim.preempt("t1", "hi");
    sim.run_until(Millis(500));
    assert!(sim.interrupt("t1"));
    sim.drive(100);
    assert!(sim.spoken.is_empty());
    assert_eq!(sim.ladder.turn("t1").unwrap().status, TurnStatus::Cancelled);
    assert_eq!(
        sim.ladder.start_preemptive("t1", "hi", sim.now),
        Ok(Preempted::Refused(PreemptRefusal::Started))
    );
}

#[test]
fn guesses_count_toward_the_session_and_retry_budgets() {
    let mut config = Sim::config(8_000, 3_000);
    config.max_attempts_per_session = Some(2);
    let mut sim = Sim::new(config, |_| ok(100, "Answer."));
    sim.preempt("t1", "one");
    sim.discard("t1");
    sim.preempt("t1", "one two");
    assert_eq!(sim.ladder.session_attempts(), 2);
    assert_eq!(
        sim.preempt("t2", "three"),
        Preempted::Refused(PreemptRefusal::SessionBudget)
    );
    let mut config = Sim::config(8_000, 3_000);
    config.retry_max_tokens = 4.0;
    let mut sim = Sim::new(config, |_| Reply::Never);
    let before = sim.ladder.retry_tokens();
    sim.preempt("t1", "one");
    sim.discard("t1");
    assert_eq!(
        sim.ladder.retry_tokens(),
        before - 1.0,
        "a discard drains a token"
    );
    sim.preempt("t1", "one two");
    sim.discard("t1");
    assert_eq!(
        sim.preempt("t2", "three"),
        Preempted::Refused(PreemptRefusal::RetryBudget),
        "an empty half of the bucket allows no extra call"
    );
}

#[test]
fn a_kept_guess_is_the_first_rung_so_one_fallback_remains() {
    let mut sim = Sim::new(Sim::config(8_000, 1_000), |call| match call.route {
        0 => Reply::Never,
        _ => ok(100, "Fallback."),
    });
    sim.preempt("t1", "hi");
    sim.run_until(Millis(200));
    sim.ladder.start_turn("t1", "hi", sim.now).unwrap();
    sim.perform();
    sim.drive(100);
    assert_eq!(sim.spoken, [answer("t1", "Fallback.")]);
    assert_eq!(ids(&sim), ["t1:preemptive:1", "t1:attempt:2"]);
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.attempts[0].result, AttemptResult::Timeout);
    assert_eq!(
        record.attempts[0].finished_at,
        Some(Millis(1_200)),
        "its first-text time counts from the final"
    );
}

#[test]
fn the_final_of_a_turn_that_already_started_is_idempotent() {
    let mut sim = Sim::new(Sim::config(8_000, 3_000), |_| ok(100, "Answer."));
    sim.start("t1", "hi");
    assert_eq!(
        sim.preempt("t1", "hi"),
        Preempted::Refused(PreemptRefusal::Started)
    );
    sim.drive(100);
    assert_eq!(sim.calls.len(), 1);
}

#[test]
fn normalised_text_ignores_case_punctuation_and_spaces_only() {
    assert_eq!(normalise("  What's  the WEATHER?! "), "what's the weather");
    assert_eq!(normalise("Book, a table."), normalise("book a table"));
    assert_ne!(normalise("book a table"), normalise("book a tablet"));
    assert_eq!(normalise("¿Qué hora es?"), "qué hora es");
    assert_eq!(normalise("..."), "");
}
