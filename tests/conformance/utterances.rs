//! What the server says becomes one final per utterance (L8), captions, speech starts; what it
//! says that is not the protocol is counted and skipped (L2).

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::{all, every, Conversation};
use crate::transcriber_sim::*;
use turnguard::core::stt::transcriber::{Action, State, TranscriberError};

/// The actions of one utterance: its one final, numbered `utterance`, and every caption, speech
/// start and eager final before it numbered the same.
#[track_caller]
fn assert_one_final(name: &str, actions: &[Action], text: &str, utterance: u64) {
    assert_eq!(finals(actions), [text], "{name}: one final");
    let at = actions
        .iter()
        .position(|a| matches!(a, Action::Final { .. }))
        .unwrap_or(actions.len());
    assert_eq!(
        actions.get(at),
        Some(&Action::Final {
            text: text.into(),
            utterance
        }),
        "{name}"
    );
    for (index, action) in actions.iter().enumerate() {
        let number = match action {
            Action::Partial { utterance, .. }
            | Action::SpeechStart { utterance }
            | Action::EagerFinal { utterance, .. }
            | Action::Resumed { utterance } => *utterance,
            _ => continue,
        };
        assert_eq!(
            number, utterance,
            "{name}: {action:?} belongs to the utterance"
        );
        assert!(index < at, "{name}: {action:?} after the final");
    }
}

#[test]
fn one_final_per_utterance_whatever_the_server_repeats() {
    all(|f| {
        let mut c = Conversation::opened(f);
        let said = ["what is it", "the weather today", "thanks"];
        for (n, text) in (1..).zip(said) {
            let actions = c.say(text);
            assert_one_final(f.name(), &actions, text, n);
        }
        // A new connection (a new session for most): turn numbers start again, finals go on.
        c.d.close(1006);
        c.reconnect();
        let actions = c.say("one more");
        assert_one_final(f.name(), &actions, "one more", 4);
        assert_eq!(c.d.t.stats().unknown_messages, 0, "{}", f.name());
        assert_eq!(c.d.t.stats().malformed_messages, 0, "{}", f.name());
    });
}

#[test]
fn partials_are_captions_of_the_utterance_under_way_never_finals() {
    all(|f| {
        let mut c = Conversation::opened(f);
        let blank = c.next("  ", 0, 900);
        assert_eq!(c.hear(&(f.partial)(&blank)), [], "{}: noise", f.name());
        let said = c.next("what is the weather", 0, 900);
        let caption = c.hear(&(f.partial)(&said));
        assert_eq!(
            caption,
            [Action::Partial {
                text: "what is the weather".into(),
                utterance: 1
            }],
            "{}",
            f.name()
        );
        assert_eq!(
            c.d.advance(1_000).iter().filter(|a| !is_audio(a)).count(),
            0
        );
        assert_eq!(
            finals(&c.say("what is the weather")),
            ["what is the weather"]
        );
        let next = c.next("and", 0, 200);
        let caption = c.hear(&(f.partial)(&next));
        assert_eq!(
            caption,
            [Action::Partial {
                text: "and".into(),
                utterance: 2
            }],
            "{}: the next utterance's",
            f.name()
        );
    });
}

#[test]
fn speech_start_begins_the_next_utterance() {
    every(
        |f| f.speech_start.is_some(),
        |f| {
            let speech_start = f.speech_start.expect("applies");
            let mut c = Conversation::opened(f);
            let first = c.next("hello", 0, 400);
            assert_eq!(
                c.hear(&speech_start(&first)),
                [Action::SpeechStart { utterance: 1 }],
                "{}",
                f.name()
            );
            c.say("hello");
            let second = c.next("again", 0, 400);
            assert_eq!(
                c.hear(&speech_start(&second)),
                [Action::SpeechStart { utterance: 2 }],
                "{}",
                f.name()
            );
        },
    );
}

#[test]
fn malformed_and_unknown_messages_are_counted_and_skipped_known_ones_of_no_use_just_skipped() {
    all(|f| {
        let mut c = Conversation::opened(f);
        let name = f.name();
        for message in f.ignored.iter().chain(f.unknown).chain(f.malformed) {
            assert_eq!(c.hear(message), [], "{name}: {message}");
        }
        assert_eq!(c.hear("<html>502 Bad Gateway</html>"), [], "{name}");
        c.d.t.on_binary_message(c.d.now);
        assert_eq!(c.d.take(), [], "{name}");
        let stats = c.d.t.stats();
        assert_eq!(stats.unknown_messages, f.unknown.len() as u64, "{name}");
        assert_eq!(
            stats.malformed_messages,
            f.malformed.len() as u64 + 2,
            "{name}"
        );
        assert_eq!(c.d.t.state(), State::Open, "{name}: never fatal");
        assert_eq!(finals(&c.say("still here")), ["still here"], "{name}");
    });
}

#[test]
fn a_server_whose_messages_the_protocol_does_not_know_is_named_once() {
    all(|f| {
        let name = f.name();
        let strange = f.unknown.iter().chain(f.malformed).cycle();
        // Open, and nothing heard yet (not even the answer to a start).
        let mut c = Conversation::new(f);
        c.d.start();
        c.provisioned();
        c.d.open();
        let mut actions = Vec::new();
        for message in strange.clone().take(5) {
            actions.extend(c.hear(message));
        }
        let errors: Vec<&TranscriberError> = actions
            .iter()
            .filter_map(|a| match a {
                Action::Error(error) => Some(error),
                _ => None,
            })
            .collect();
        assert_eq!(errors.len(), 1, "{name}: once: {errors:?}");
        let TranscriberError::UnexpectedMessages {
            protocol, count, ..
        } = errors[0]
        else {
            panic!("{name}: {errors:?}");
        };
        assert_eq!((*protocol, *count), (name, 3), "{name}");
        assert!(!errors[0].is_terminal(), "{name}");
        assert!(
            errors[0].to_string().contains(name),
            "{name}: names the protocol"
        );
        assert_eq!(c.d.t.state(), State::Open, "{name}: goes on");
        // A server that said one thing the protocol knows is this protocol's, whatever follows.
        let mut c = Conversation::opened(f);
        c.say("hello");
        let later: Vec<Action> = strange.take(5).flat_map(|m| c.hear(m)).collect();
        assert_eq!(later, [], "{name}");
    });
}
