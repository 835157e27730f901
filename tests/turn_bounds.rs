//! Bounded answers and prompts (rules T15, T16), in virtual time.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod sim;

use sim::{ok, routes, Reply, Sim, Spoken, RECOVERY};
use turnguard::core::time::Millis;
use turnguard::core::turn::record::{AttemptResult, Failure, TurnStatus};
use turnguard::core::turn::TurnConfig;

fn sentences(sim: &Sim) -> Vec<&str> {
    sim.sentences
        .iter()
        .map(|(_, text)| text.as_str())
        .collect()
}

/// A stream that never ends: "Sentence 1. Sentence 2. …", one every 10 ms.
fn endless() -> Reply {
    let chunks = (1..=100_000u64)
        .map(|n| (n * 10, format!("Sentence {n}. ")))
        .collect();
    Reply::Stream(chunks, None)
}

#[test]
fn an_endless_stream_is_cut_at_its_last_sentence_within_max_answer_chars_and_aborted() {
    let mut config = Sim::config(5_000, 2_000);
    config.max_answer_chars = 100;
    let mut sim = Sim::new(config, |_| endless());
    sim.start("t1", "talk forever");
    sim.run_until(Millis(1_000));
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(
        record.status,
        TurnStatus::Accepted,
        "the turn does not stay running"
    );
    assert_eq!(record.attempts[0].result, AttemptResult::Accepted);
    assert_eq!(record.attempts[0].error, Some(Failure::AnswerTooLong));
    assert_eq!(
        sim.aborted_attempts,
        ["t1:attempt:1"],
        "the provider is told to stop"
    );
    // "Sentence 1. " … "Sentence 9. " is 108 characters: eight sentences and a bit fit in 100.
    let expected: Vec<String> = (1..=8).map(|n| format!("Sentence {n}.")).collect();
    assert_eq!(sentences(&sim), expected);
    let text = record.accepted_text.clone().unwrap();
    assert_eq!(text, expected.join(" "));
    assert!(text.chars().count() <= 100);
    assert_eq!(sim.spoken, [Spoken::Answer("t1".into(), text)]);
    assert_eq!(
        record.attempts[0].finished_at,
        Some(Millis(100)),
        "cut at the chunk that completed the first sentence beyond the bound"
    );
}

#[test]
fn a_stream_of_exactly_max_answer_chars_is_whole_and_not_aborted() {
    let mut config = Sim::config(5_000, 2_000);
    config.max_answer_chars = "One. Two.".len();
    let mut sim = Sim::new(config, |_| sim::stream(10, &["One.", " Two."]));
    sim.start("t1", "hi");
    sim.drive(100);
    assert_eq!(sentences(&sim), ["One.", "Two."]);
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.attempts[0].error, None);
    assert!(sim.aborted_attempts.is_empty());
}

#[test]
fn a_whole_answer_over_the_bound_is_cut_the_same_way_with_nothing_to_abort() {
    let mut config = Sim::config(5_000, 2_000);
    config.max_answer_chars = 20;
    let mut sim = Sim::new(config, |_| {
        ok(10, "Short first. Then a much longer second sentence.")
    });
    sim.start("t1", "hi");
    sim.drive(100);
    assert_eq!(sentences(&sim), ["Short first."]);
    assert_eq!(
        sim.spoken,
        [Spoken::Answer("t1".into(), "Short first.".into())]
    );
    assert!(sim.aborted_attempts.is_empty(), "a whole answer has ended");
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.attempts[0].error, Some(Failure::AnswerTooLong));
}

#[test]
fn with_no_complete_sentence_in_the_bound_the_answer_ends_at_its_last_whole_word() {
    let mut config = Sim::config(5_000, 2_000);
    config.max_answer_chars = 30;
    let words: Vec<String> = (0..1_000).map(|n| format!("word{n} ")).collect();
    let chunks: Vec<(u64, String)> = words
        .into_iter()
        .enumerate()
        .map(|(i, w)| (i as u64 + 1, w))
        .collect();
    let mut sim = Sim::new(config, move |_| Reply::Stream(chunks.clone(), None));
    sim.start("t1", "hi");
    sim.drive(10_000);
    let expected = "word0 word1 word2 word3 word4";
    assert_eq!(sentences(&sim), [expected]);
    assert_eq!(sim.spoken, [Spoken::Answer("t1".into(), expected.into())]);
    assert_eq!(sim.aborted_attempts, ["t1:attempt:1"]);
}

#[test]
fn a_stream_that_stalls_past_the_bound_keeps_only_what_fits() {
    let mut config = Sim::config(5_000, 2_000);
    config.max_answer_chars = 12;
    config.chunk_idle_timeout_ms = 500;
    let mut sim = Sim::new(config, |_| {
        Reply::Stream(vec![(10, "Hello there. And more".into())], None)
    });
    sim.start("t1", "hi");
    sim.drive(100);
    assert_eq!(sentences(&sim), ["Hello there."]);
    let record = sim.ladder.turn("t1").unwrap();
    assert_eq!(record.accepted_text.as_deref(), Some("Hello there."));
    assert_eq!(record.attempts[0].error, Some(Failure::Stalled));
}

#[test]
fn the_accepted_text_of_a_cut_answer_keeps_the_routes_own_spacing() {
    let mut config = Sim::config(5_000, 2_000);
    config.max_answer_chars = 40;
    let mut sim = Sim::new(config, |_| {
        ok(
            10,
            "Line one.\nLine two.\n\nAnd then far too much more text.",
        )
    });
    sim.start("t1", "hi");
    sim.drive(100);
    assert_eq!(sentences(&sim), ["Line one.", "Line two."]);
    assert_eq!(
        sim.spoken,
        [Spoken::Answer("t1".into(), "Line one.\nLine two.".into())]
    );
}

fn content_chars(history: &[turnguard::core::turn::history::Exchange]) -> usize {
    history
        .iter()
        .map(|e| e.user.chars().count() + e.assistant.chars().count())
        .sum()
}

#[test]
fn history_handed_to_a_route_stays_within_history_max_chars_oldest_first() {
    let mut specs = routes(&["primary"]);
    specs[0].share_history = true;
    let mut config = TurnConfig::new(specs, RECOVERY);
    config.history_max_chars = 100;
    // Each exchange: a 9-character input and a 20-character answer.
    let mut sim = Sim::new(config, |call| {
        ok(10, &format!("Answer {:>12}.", call.turn_id))
    });
    for n in 0..10 {
        sim.start(&format!("t{n}"), &format!("question{n}"));
        sim.drive(100);
    }
    for (n, call) in sim.calls.iter().enumerate() {
        let history = call.history.as_ref().expect("shared");
        assert!(content_chars(history) <= 100, "call {n}: {history:?}");
        let kept: Vec<&str> = history.iter().map(|e| e.turn_id.as_str()).collect();
        let expected: Vec<String> = (n.saturating_sub(3)..n).map(|k| format!("t{k}")).collect();
        assert_eq!(
            kept, expected,
            "call {n}: the newest three of 29 characters"
        );
    }
}

#[test]
fn an_exchange_longer_than_history_max_chars_alone_is_never_sent() {
    let mut specs = routes(&["primary"]);
    specs[0].share_history = true;
    let mut config = TurnConfig::new(specs, RECOVERY);
    config.history_max_chars = 30;
    let mut sim = Sim::new(config, |call| match call.turn_id.as_str() {
        "long" => ok(10, "An answer that is far longer than thirty characters."),
        _ => ok(10, "Short."),
    });
    for turn in ["a", "long", "b", "c"] {
        sim.start(turn, turn);
        sim.drive(100);
    }
    let kept = |n: usize| -> Vec<&str> {
        sim.calls[n]
            .history
            .as_ref()
            .unwrap()
            .iter()
            .map(|e| e.turn_id.as_str())
            .collect()
    };
    assert_eq!(kept(1), ["a"]);
    assert!(kept(2).is_empty(), "the newest alone does not fit: nothing");
    assert_eq!(kept(3), ["b"], "and it never comes back whole");
}

#[test]
fn text_cut_to_answer_read_chars_by_the_shell_ends_the_same_way() {
    let mut config = Sim::config(5_000, 2_000);
    config.max_answer_chars = 100;
    let read = config.answer_read_chars();
    let outcome = |text: String, stream: bool| {
        let mut sim = Sim::new(config.clone(), move |_| match stream {
            true => Reply::Stream(vec![(10, text.clone())], None),
            false => ok(10, &text),
        });
        sim.start("t1", "hi");
        sim.drive(100);
        (sim.spoken, sim.sentences, sim.aborted_attempts)
    };
    let texts = [
        "Word after word. ".repeat(1_000),
        "🙂 Smile. ".repeat(1_000),
        "no sentence end at all ".repeat(1_000),
    ];
    for text in texts {
        let cut: String = text.chars().take(read).collect();
        for stream in [true, false] {
            assert_eq!(
                outcome(text.clone(), stream),
                outcome(cut.clone(), stream),
                "stream: {stream}"
            );
        }
    }
}

/// Without sentences wanted (`emit_sentences: false`, a controller with no `onSentence`), a whole
/// answer is taken unsplit when it fits: the records, the events and the text handed to TTS are
/// the same as when it is split, at the bound, one past it, around white space and multi-byte
/// characters. One that fits emits no sentence; one that does not is split as before.
#[test]
fn an_unsplit_whole_answer_delivers_what_a_split_one_does() {
    let answers = [
        "One. Two.",
        "  One. Two.  ",
        "0123456789",
        "0123456789 ",
        " 0123456789",
        "0123456789A",
        "One two. Three four five six",
        "Ein Ärger. Öl über Überall.",
        "日本語の文。二つ目の文です。",
        "no sentence end at all here",
        "Short.\n\nNext line here is long",
    ];
    for answer in answers {
        let run = |emit_sentences: bool| {
            let mut config = Sim::config(5_000, 2_000);
            config.max_answer_chars = 10;
            config.emit_sentences = emit_sentences;
            let reply = answer.to_owned();
            let mut sim = Sim::new(config, move |_| ok(100, &reply));
            sim.start("t1", "say it");
            sim.run_until(Millis(1_000));
            sim
        };
        let (split, whole) = (run(true), run(false));
        assert_eq!(whole.settled, split.settled, "{answer:?}");
        assert_eq!(whole.events, split.events, "{answer:?}");
        assert_eq!(whole.spoken, split.spoken, "{answer:?}");
        if answer.trim_start().chars().count() <= 10 {
            assert!(whole.emitted_sentences.is_empty(), "{answer:?}");
        } else {
            assert_eq!(
                whole.emitted_sentences, split.emitted_sentences,
                "{answer:?}"
            );
        }
        assert_eq!(
            split.settled.len(),
            1,
            "{answer:?}: the turn settled in both"
        );
    }
}
