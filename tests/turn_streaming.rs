//! Streaming answers, sentence delivery, fallback policies and history in the turn ladder
//! (rules T11, T12), in virtual time.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod sim;

use sim::{fail, ok, routes, stream, Reply, Sim, Spoken, RECOVERY};
use turnguard::core::time::Millis;
use turnguard::core::turn::record::{AttemptResult, Failure, RecoveryReason, TurnStatus};
use turnguard::core::turn::{Event, FallbackPolicy, RouteSpec, TurnConfig};

fn sentences(sim: &Sim) -> Vec<&str> {
    sim.sentences
        .iter()
        .map(|(_, text)| text.as_str())
        .collect()
}

#[test]
fn stream_commits_at_its_first_chunk_and_delivers_sentences_in_order() {
    let mut sim = Sim::new(Sim::config(5_000, 2_000), |_| {
        stream(100, &["Hello there. ", "How are", " you? I am", " fine."])
    });
    sim.start("t1", "hi");
    sim.run_until(Millis(100));
    assert_eq!(
        sentences(&sim),
        Vec::<&str>::new(),
        "no complete sentence yet"
    );
    assert_eq!(sim.ladder.turn("t1").unwrap().status, TurnStatus::Running);
    assert_eq!(
        sim.ladder
            .turn("t1")
            .unwrap()
            .accepted_request_id
            .as_deref(),
        Some("t1:attempt:1"),
        "committed at the first chunk"
    );
    sim.run_until(Millis(200));
    assert_eq!(sentences(&sim), ["Hello there."]);
    sim.drive(100);
    assert_eq!(
        sentences(&sim),
        ["Hello there.", "How are you?", "I am fine."]
    );
    assert_eq!(
        sim.spoken,
        [Spoken::Answer(
            "t1".into(),
            "Hello there. How are you? I am fine.".into()
        )]
    );
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.status, TurnStatus::Accepted);
    assert_eq!(record.attempts[0].result, AttemptResult::Accepted);
    let kinds: Vec<&str> = sim
        .events
        .iter()
        .map(|event| match event {
            Event::TurnStarted { .. } => "turn_started",
            Event::AttemptStarted { .. } => "attempt_started",
            Event::AttemptFinished { .. } => "attempt_finished",
            Event::Committed { .. } => "committed",
            Event::Accepted { .. } => "accepted",
            Event::Recovered { .. } => "recovered",
            Event::Cancelled { .. } => "cancelled",
            Event::PreemptiveEnded { .. } => "preemptive",
            Event::Forgotten { .. } => "forgotten",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "turn_started",
            "attempt_started",
            "committed",
            "attempt_finished",
            "accepted"
        ]
    );
}

#[test]
fn a_whole_answer_is_delivered_as_sentences_too() {
    let mut sim = Sim::new(Sim::config(5_000, 2_000), |_| ok(10, "One. Two! Three?"));
    sim.start("t1", "hi");
    sim.drive(100);
    assert_eq!(sentences(&sim), ["One.", "Two!", "Three?"]);
    assert_eq!(
        sim.spoken,
        [Spoken::Answer("t1".into(), "One. Two! Three?".into())]
    );
}

#[test]
fn no_first_chunk_times_out_and_the_fallback_answers() {
    let mut config = Sim::config(5_000, 3_000);
    config.first_chunk_timeout_ms = 500;
    let mut sim = Sim::new(config, |call| match call.route {
        0 => Reply::Stream(Vec::new(), None),
        _ => stream(50, &["Fallback here."]),
    });
    sim.start("t1", "hi");
    sim.drive(100);
    assert_eq!(
        sim.calls[1].at,
        Millis(500),
        "the first-chunk timeout, not the attempt timeout"
    );
    assert_eq!(sentences(&sim), ["Fallback here."]);
    assert_eq!(sim.aborted_attempts, ["t1:attempt:1"]);
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.attempts[0].error, Some(Failure::Timeout));
    assert_eq!(record.accepted_request_id.as_deref(), Some("t1:attempt:2"));
}

#[test]
fn a_stall_after_the_commit_ends_the_turn_with_what_was_delivered_and_no_fallback() {
    let mut config = Sim::config(5_000, 3_000);
    config.chunk_idle_timeout_ms = 1_000;
    let mut sim = Sim::new(config, |_| {
        Reply::Stream(vec![(100, "Part one. Part".into())], None)
    });
    sim.start("t1", "hi");
    sim.drive(100);
    assert_eq!(sim.now, Millis(1_100));
    assert_eq!(sim.calls.len(), 1, "no fallback after the commit");
    assert_eq!(
        sentences(&sim),
        ["Part one."],
        "the unfinished tail is not spoken"
    );
    assert_eq!(
        sim.spoken,
        [Spoken::Answer("t1".into(), "Part one.".into())]
    );
    assert_eq!(
        sim.aborted_attempts,
        ["t1:attempt:1"],
        "the stalled stream is aborted"
    );
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.status, TurnStatus::Accepted);
    assert_eq!(record.attempts[0].error, Some(Failure::Stalled));
}

#[test]
fn a_stream_cut_before_any_sentence_end_still_says_what_it_has() {
    let mut config = Sim::config(5_000, 3_000);
    config.chunk_idle_timeout_ms = 500;
    let mut sim = Sim::new(config, |_| {
        Reply::Stream(vec![(100, "Just a fragment".into())], None)
    });
    sim.start("t1", "hi");
    sim.drive(100);
    assert_eq!(sentences(&sim), ["Just a fragment"]);
    assert_eq!(
        sim.spoken,
        [Spoken::Answer("t1".into(), "Just a fragment".into())]
    );
}

#[test]
fn the_turn_deadline_no_longer_applies_after_the_commit() {
    let mut sim = Sim::new(Sim::config(1_000, 800), |_| {
        stream(
            400,
            &["One. ", "Two. ", "Three. ", "Four. ", "Five. ", "Six."],
        )
    });
    sim.start("t1", "hi");
    sim.drive(100);
    assert_eq!(sim.now, Millis(2_800));
    assert_eq!(
        sentences(&sim),
        ["One.", "Two.", "Three.", "Four.", "Five.", "Six."]
    );
    assert_eq!(sim.ladder.turn("t1").unwrap().status, TurnStatus::Accepted);
}

#[test]
fn interrupt_mid_stream_sends_not_one_more_sentence() {
    let mut sim = Sim::new(Sim::config(5_000, 2_000), |_| {
        stream(100, &["First. ", "Second. ", "Third. "])
    });
    sim.start("t1", "hi");
    sim.run_until(Millis(250));
    assert_eq!(sentences(&sim), ["First."]);
    assert!(sim.interrupt("t1"));
    sim.drive(100);
    assert_eq!(sentences(&sim), ["First."], "nothing after the interrupt");
    assert!(sim.spoken.is_empty(), "no onAcceptedText, no recovery");
    assert_eq!(sim.aborted_turns, ["t1"]);
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.status, TurnStatus::Cancelled);
    assert_eq!(record.accepted_request_id.as_deref(), Some("t1:attempt:1"));
    assert_eq!(record.attempts[0].result, AttemptResult::Cancelled);
}

#[test]
fn a_stream_that_breaks_after_the_commit_is_accepted_with_what_was_delivered() {
    let mut sim = Sim::new(Sim::config(5_000, 2_000), |_| {
        Reply::Stream(
            vec![(100, "Good start. And".into())],
            Some((200, Err(Failure::Network))),
        )
    });
    sim.start("t1", "hi");
    sim.drive(100);
    assert_eq!(sim.calls.len(), 1);
    assert_eq!(
        sim.spoken,
        [Spoken::Answer("t1".into(), "Good start.".into())]
    );
    assert_eq!(
        sim.ladder.turn("t1").unwrap().attempts[0].error,
        Some(Failure::Network)
    );
}

#[test]
fn a_stream_that_ends_without_text_falls_back() {
    let mut sim = Sim::new(Sim::config(5_000, 2_000), |call| match call.route {
        0 => Reply::Stream(vec![(10, "  ".into())], Some((20, Ok(())))),
        _ => ok(10, "Fallback."),
    });
    sim.start("t1", "hi");
    sim.drive(100);
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.attempts[0].error, Some(Failure::NoText));
    assert_eq!(
        sim.spoken,
        [Spoken::Answer("t1".into(), "Fallback.".into())]
    );
}

#[test]
fn chunks_of_a_timed_out_stream_are_late_and_never_spoken() {
    let mut sim = Sim::new(Sim::config(5_000, 300), |call| match call.route {
        0 => stream(400, &["Too late. "]),
        _ => ok(200, "Fallback."),
    });
    sim.start("t1", "hi");
    sim.drive(100);
    assert_eq!(sentences(&sim), ["Fallback."]);
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.attempts[0].result, AttemptResult::Late);
}

fn persona_routes(first: Option<&str>, second: Option<&str>) -> Vec<RouteSpec> {
    let mut routes = routes(&["primary", "fallback"]);
    routes[0].persona = first.map(Into::into);
    routes[1].persona = second.map(Into::into);
    routes
}

fn run_with_policy(policy: FallbackPolicy, routes: Vec<RouteSpec>) -> Sim {
    let mut config = TurnConfig::new(routes, RECOVERY);
    config.fallback_policy = policy;
    let mut sim = Sim::new(config, |call| match call.route {
        0 => fail(10, Failure::Http(503)),
        _ => ok(10, "Fallback."),
    });
    sim.start("t1", "hi");
    sim.drive(100);
    sim
}

#[test]
fn fallback_policies_follow_the_persona() {
    let any = run_with_policy(
        FallbackPolicy::Any,
        persona_routes(Some("ava"), Some("max")),
    );
    assert_eq!(any.calls.len(), 2);
    assert_eq!(any.ladder.turn("t1").unwrap().status, TurnStatus::Accepted);

    let other = run_with_policy(
        FallbackPolicy::SamePersona,
        persona_routes(Some("ava"), Some("max")),
    );
    assert_eq!(other.calls.len(), 1);
    let record = other.ladder.turn("t1").unwrap();
    assert_eq!(record.recovery_reason, Some(RecoveryReason::Persona));

    let same = run_with_policy(
        FallbackPolicy::SamePersona,
        persona_routes(Some("ava"), Some("ava")),
    );
    assert_eq!(same.calls.len(), 2);

    let none = run_with_policy(
        FallbackPolicy::None,
        persona_routes(Some("ava"), Some("ava")),
    );
    assert_eq!(none.calls.len(), 1, "no automatic fallback at all");
    let record = none.ladder.turn("t1").unwrap();
    assert_eq!(record.recovery_reason, Some(RecoveryReason::Exhausted));
}

#[test]
fn history_goes_only_to_routes_that_share_it_and_keeps_what_was_heard() {
    let mut specs = routes(&["primary", "fallback"]);
    specs[1].share_history = true;
    let mut config = TurnConfig::new(specs, RECOVERY);
    config.history_limit = 2;
    let mut sim = Sim::new(config, |call| match (call.turn_id.as_str(), call.route) {
        ("t4", 0) => fail(10, Failure::Http(500)),
        (turn, 0) => ok(10, &format!("Answer to {turn}.")),
        _ => ok(10, "From the fallback."),
    });
    for turn in ["t1", "t2", "t3"] {
        sim.start(turn, &format!("question {turn}"));
        sim.drive(100);
    }
    assert!(sim.ladder.set_heard_text("t3", "Answer"));
    assert!(
        !sim.ladder.set_heard_text("t1", "gone"),
        "t1 left the history (limit 2)"
    );
    sim.start("t4", "question t4");
    sim.drive(100);
    assert_eq!(
        sim.calls[3].history, None,
        "the primary does not share history"
    );
    let shared = sim.calls[4]
        .history
        .as_ref()
        .expect("the fallback shares history");
    let pairs: Vec<(&str, &str)> = shared
        .iter()
        .map(|e| (e.user.as_str(), e.assistant.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [("question t2", "Answer to t2."), ("question t3", "Answer")]
    );
}

#[test]
fn an_interrupted_delivery_stays_in_history_until_trimmed_to_what_was_heard() {
    let mut sim = Sim::new(Sim::config(5_000, 2_000), |_| {
        stream(100, &["First part. ", "Second", " part. "])
    });
    sim.start("t1", "hi");
    sim.run_until(Millis(250));
    sim.interrupt("t1");
    let delivered: Vec<_> = sim.ladder.history().map(|e| e.assistant.clone()).collect();
    assert_eq!(
        delivered,
        ["First part."],
        "the sentences that went out, not the raw stream"
    );
    sim.ladder.set_heard_text("t1", "First");
    let heard: Vec<_> = sim.ladder.history().map(|e| e.assistant.clone()).collect();
    assert_eq!(heard, ["First"]);
}
