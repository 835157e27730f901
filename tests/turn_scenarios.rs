//! The turn ladder's named scenarios, in virtual time (rules T2–T10).

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod sim;

use sim::{fail, ok, routes, Reply, Sim, Spoken, RECOVERY};
use turnguard::core::time::Millis;
use turnguard::core::turn::record::{AttemptResult, Failure, RecoveryReason, TurnStatus};
use turnguard::core::turn::{StartError, Started, TurnConfig};

fn answer(turn_id: &str, text: &str) -> Spoken {
    Spoken::Answer(turn_id.to_owned(), text.to_owned())
}

fn recovery(turn_id: &str) -> Spoken {
    Spoken::Recovery(turn_id.to_owned(), RECOVERY.to_owned())
}

#[test]
fn primary_times_out_then_fallback_answers() {
    let mut sim = Sim::new(Sim::config(5_000, 1_000), |call| match call.route {
        0 => ok(3_000, "primary, too slow"),
        _ => ok(200, "fallback answer"),
    });
    sim.start("t1", "hello");
    sim.drive(100);
    assert_eq!(sim.spoken, [answer("t1", "fallback answer")]);
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.status, TurnStatus::Accepted);
    let ids: Vec<_> = record
        .attempts
        .iter()
        .map(|a| a.request_id.as_str())
        .collect();
    assert_eq!(ids, ["t1:attempt:1", "t1:attempt:2"]);
    assert_eq!(
        record.attempts[0].result,
        AttemptResult::Late,
        "the primary answered at 3 s"
    );
    assert_eq!(record.attempts[0].error, Some(Failure::Timeout));
    assert_eq!(
        sim.aborted_attempts,
        ["t1:attempt:1"],
        "only the timed-out attempt is aborted"
    );
    assert!(sim.aborted_turns.is_empty());
    assert_eq!(
        sim.calls[1].at,
        Millis(1_000),
        "the fallback starts at the attempt timeout"
    );
    assert_eq!(record.accepted_request_id.as_deref(), Some("t1:attempt:2"));
}

#[test]
fn interrupt_while_generating_with_a_route_that_ignores_abort_is_silent() {
    let mut sim = Sim::new(Sim::config(5_000, 2_000), |_| ok(800, "stale answer"));
    sim.start("t1", "book a table");
    sim.run_until(Millis(300));
    assert!(sim.interrupt("t1"));
    assert!(
        !sim.interrupt("t1"),
        "a second interrupt finds nothing running"
    );
    sim.drive(100);
    assert!(sim.spoken.is_empty(), "no speech and no recovery");
    assert_eq!(sim.aborted_turns, ["t1"]);
    assert_eq!(sim.calls.len(), 1);
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.status, TurnStatus::Cancelled);
    assert_eq!(record.attempts[0].result, AttemptResult::Late);
    assert_eq!(record.accepted_text, None);
}

#[test]
fn both_routes_fail_exactly_one_recovery_and_no_third_call() {
    let mut config = Sim::config(5_000, 1_000);
    config.routes = routes(&["primary", "fallback", "third"]);
    let mut sim = Sim::new(config, |call| match call.route {
        0 => fail(100, Failure::Http(503)),
        _ => fail(100, Failure::Network),
    });
    sim.start("t1", "hello");
    sim.drive(100);
    assert_eq!(sim.spoken, [recovery("t1")]);
    assert_eq!(sim.calls.len(), 2);
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.status, TurnStatus::Exhausted);
    assert_eq!(record.recovery_reason, Some(RecoveryReason::Exhausted));
}

#[test]
fn duplicate_run_concurrent_and_after_settling_starts_nothing() {
    let mut sim = Sim::new(Sim::config(5_000, 1_000), |_| ok(100, "answer"));
    assert_eq!(sim.ladder.start_turn("t1", "hi", sim.now), Ok(Started::New));
    assert_eq!(
        sim.ladder.start_turn("t1", "hi", sim.now),
        Ok(Started::Existing)
    );
    sim.perform();
    sim.drive(100);
    assert_eq!(
        sim.ladder.start_turn("t1", "something else", sim.now),
        Ok(Started::Existing)
    );
    sim.perform();
    sim.drive(100);
    assert_eq!(sim.calls.len(), 1);
    assert_eq!(sim.spoken, [answer("t1", "answer")]);
    assert_eq!(sim.settled.len(), 1);
}

#[test]
fn answer_after_the_deadline_is_late_and_recovery_comes_at_the_deadline() {
    let mut sim = Sim::new(Sim::config(2_000, 5_000), |_| ok(3_000, "too late"));
    sim.start("t1", "hello");
    sim.run_until(Millis(2_000));
    assert_eq!(
        sim.spoken,
        [recovery("t1")],
        "recovery at the deadline itself"
    );
    assert_eq!(sim.aborted_turns, ["t1"]);
    sim.drive(100);
    assert_eq!(
        sim.spoken,
        [recovery("t1")],
        "the late answer never reaches TTS"
    );
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.recovery_reason, Some(RecoveryReason::Deadline));
    assert_eq!(record.attempts[0].result, AttemptResult::Late);
}

#[test]
fn answer_arriving_exactly_at_the_deadline_is_late() {
    let mut sim = Sim::new(Sim::config(2_000, 5_000), |_| ok(2_000, "just in time?"));
    sim.start("t1", "hello");
    sim.drive(100);
    assert_eq!(sim.spoken, [recovery("t1")]);
}

#[test]
fn deadline_shorter_than_attempt_timeout_recovers_at_the_deadline_with_one_call() {
    let mut sim = Sim::new(Sim::config(1_000, 4_000), |_| Reply::Never);
    sim.start("t1", "hello");
    sim.drive(100);
    assert_eq!(sim.calls.len(), 1);
    assert_eq!(sim.spoken, [recovery("t1")]);
    assert_eq!(sim.now, Millis(1_000));
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.attempts[0].result, AttemptResult::Timeout);
    assert_eq!(record.recovery_reason, Some(RecoveryReason::Deadline));
}

#[test]
fn attempt_timeout_is_capped_by_the_time_left_to_the_deadline() {
    let mut sim = Sim::new(Sim::config(1_500, 1_000), |_| Reply::Never);
    sim.start("t1", "hello");
    sim.drive(100);
    assert_eq!(sim.calls.len(), 2);
    assert_eq!(sim.calls[1].at, Millis(1_000));
    assert_eq!(
        sim.now,
        Millis(1_500),
        "the fallback gets only the 500 ms left"
    );
    assert_eq!(sim.spoken, [recovery("t1")]);
}

#[test]
fn non_retryable_failure_goes_straight_to_recovery() {
    for failure in [
        Failure::Http(400),
        Failure::Http(401),
        Failure::Http(403),
        Failure::Http(404),
        Failure::Http(422),
        Failure::Threw { retryable: false },
    ] {
        let mut sim = Sim::new(Sim::config(5_000, 1_000), move |_| fail(10, failure));
        sim.start("t1", "hello");
        sim.drive(100);
        assert_eq!(sim.calls.len(), 1, "{failure}");
        let record = sim.ladder.turn("t1").unwrap();
        assert_eq!(record.recovery_reason, Some(RecoveryReason::NonRetryable));
    }
    for failure in [
        Failure::Http(408),
        Failure::Http(429),
        Failure::Http(500),
        Failure::Http(599),
        Failure::NoText,
        Failure::Network,
        Failure::Threw { retryable: true },
    ] {
        let mut sim = Sim::new(Sim::config(5_000, 1_000), move |_| fail(10, failure));
        sim.start("t1", "hello");
        sim.drive(100);
        assert_eq!(sim.calls.len(), 2, "{failure} is retryable");
    }
}

#[test]
fn session_budget_stops_llm_calls() {
    let mut config = Sim::config(5_000, 1_000);
    config.max_attempts_per_session = Some(3);
    let mut sim = Sim::new(config, |call| match call.route {
        0 if call.turn_id == "t1" => fail(10, Failure::Http(500)),
        _ => ok(10, "answer"),
    });
    for turn in ["t1", "t2", "t3"] {
        sim.start(turn, "hello");
        sim.drive(100);
    }
    assert_eq!(sim.calls.len(), 3);
    let record = sim.ladder.turn("t3").unwrap();
    assert_eq!(record.recovery_reason, Some(RecoveryReason::SessionBudget));
    assert!(record.attempts.is_empty());
    assert_eq!(sim.spoken.last(), Some(&recovery("t3")));
}

#[test]
fn retry_budget_stops_an_outage_from_doubling_calls() {
    let mut sim = Sim::new(Sim::config(5_000, 1_000), |_| fail(10, Failure::Http(503)));
    for turn in 0..20 {
        sim.start(&format!("t{turn}"), "hello");
        sim.drive(100);
    }
    // Ten tokens: fallbacks while more than five remain, so two turns fall back, then none do.
    assert_eq!(sim.calls.len(), 20 + 2);
    let throttled = sim.ladder.turn("t19").unwrap();
    assert_eq!(throttled.recovery_reason, Some(RecoveryReason::RetryBudget));
}

#[test]
fn history_is_bounded_by_history_limit() {
    let mut config = Sim::config(5_000, 1_000);
    config.history_limit = 3;
    let mut sim = Sim::new(config, |_| ok(1, "answer"));
    for turn in 0..10 {
        sim.start(&format!("t{turn}"), "hello");
        sim.drive(100);
    }
    assert_eq!(sim.ladder.retained_turns(), 3);
    assert!(sim.ladder.turn("t6").is_none());
    assert!(sim.ladder.turn("t7").is_some());
    // A dropped id is a new turn again.
    sim.start("t0", "hello again");
    sim.drive(100);
    assert_eq!(sim.calls.len(), 11);
}

#[test]
fn refused_input_starts_nothing() {
    let mut config = Sim::config(5_000, 1_000);
    config.max_input_chars = 5;
    let mut sim = Sim::new(config, |_| ok(1, "answer"));
    let now = sim.now;
    assert_eq!(
        sim.ladder.start_turn("", "hi", now),
        Err(StartError::EmptyTurnId)
    );
    assert_eq!(
        sim.ladder.start_turn("t1", "  ", now),
        Err(StartError::EmptyInput)
    );
    assert_eq!(
        sim.ladder.start_turn("t1", "héllo!", now),
        Err(StartError::InputTooLong { chars: 6, max: 5 })
    );
    assert_eq!(
        sim.ladder.start_turn("t1", "héllo", now),
        Ok(Started::New),
        "5 chars, 6 bytes"
    );
    sim.perform();
    assert_eq!(sim.calls.len(), 1);
}

#[test]
fn early_and_repeated_timeouts_are_harmless() {
    let mut sim = Sim::new(Sim::config(5_000, 1_000), |_| ok(500, "answer"));
    sim.start("t1", "hello");
    for at in [0, 100, 100, 499] {
        sim.ladder.handle_timeout(Millis(at));
        sim.perform();
    }
    assert_eq!(sim.calls.len(), 1);
    sim.drive(100);
    assert_eq!(sim.spoken, [answer("t1", "answer")]);
}

#[test]
fn single_route_retries_itself_and_routes_past_the_last_stay_on_it() {
    let mut config = TurnConfig::new(routes(&["only"]), RECOVERY);
    config.max_attempts_per_turn = 3;
    let mut sim = Sim::new(config, |call| {
        if call.request_id.ends_with(":3") {
            ok(10, "third time")
        } else {
            fail(10, Failure::Network)
        }
    });
    sim.start("t1", "hello");
    sim.drive(100);
    assert_eq!(
        sim.calls.iter().map(|c| c.route).collect::<Vec<_>>(),
        [0, 0, 0]
    );
    assert_eq!(sim.spoken, [answer("t1", "third time")]);
}

#[test]
fn an_answer_is_delivered_even_when_another_turn_settling_at_once_evicts_its_record() {
    // Both turns end in the same input: t1's stream stalls at the moment t2's route fails.
    let mut config = Sim::config(5_000, 2_000);
    config.history_limit = 1;
    config.max_attempts_per_turn = 1;
    config.chunk_idle_timeout_ms = 100;
    let mut sim = Sim::new(config, |call| match call.turn_id.as_str() {
        "t1" => Reply::Stream(vec![(10, "Hello there.".into())], None),
        _ => fail(110, Failure::Http(500)),
    });
    sim.start("t1", "hi");
    sim.start("t2", "hi");
    sim.drive(100);
    assert_eq!(sim.spoken, [answer("t1", "Hello there."), recovery("t2")]);
    assert_eq!(
        sim.ladder.retained_turns(),
        1,
        "the limit holds once drained"
    );
}

#[test]
fn without_events_the_ladder_does_the_same_and_queues_no_event() {
    let script = |call: &sim::Call| match call.route {
        0 => ok(3_000, "primary, too slow"),
        _ => ok(200, "fallback answer"),
    };
    let mut with_events = Sim::new(Sim::config(5_000, 1_000), script);
    let mut config = Sim::config(5_000, 1_000);
    config.emit_events = false;
    let mut without = Sim::new(config, script);
    for sim in [&mut with_events, &mut without] {
        sim.start("t1", "hello");
        sim.start("t2", "again");
        sim.drive(100);
    }
    assert!(
        with_events.events.len() >= 8,
        "the same turns make events when asked"
    );
    assert!(without.events.is_empty());
    assert_eq!(without.spoken, with_events.spoken);
    assert_eq!(without.settled, with_events.settled);
    assert_eq!(without.aborted_attempts, with_events.aborted_attempts);
}
