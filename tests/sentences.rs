//! The sentence splitter: one named case per rule, and chunking that changes nothing.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use proptest::prelude::*;
use turnguard::core::turn::sentences::SentenceSplitter;

/// Sentences of `chunks` pushed one by one, draining after each push, then the tail.
fn split_chunks<S: AsRef<str>>(chunks: &[S]) -> Vec<String> {
    let mut splitter = SentenceSplitter::new();
    let mut sentences = Vec::new();
    for chunk in chunks {
        splitter.push(chunk.as_ref());
        sentences.extend(std::iter::from_fn(|| splitter.next_sentence()));
    }
    sentences.extend(splitter.finish());
    sentences
}

fn split(text: &str) -> Vec<String> {
    split_chunks(&[text])
}

#[test]
fn period_then_space_ends_a_sentence() {
    assert_eq!(
        split("Hello there. How are you? I am fine! Thanks."),
        ["Hello there.", "How are you?", "I am fine!", "Thanks."]
    );
}

#[test]
fn a_terminator_at_the_end_of_the_buffer_waits() {
    let mut splitter = SentenceSplitter::new();
    splitter.push("Pi is 3.");
    assert_eq!(splitter.next_sentence(), None);
    splitter.push("14159. Next");
    assert_eq!(splitter.next_sentence().as_deref(), Some("Pi is 3.14159."));
    assert_eq!(splitter.next_sentence(), None);
    splitter.push(" one!");
    assert_eq!(splitter.next_sentence(), None);
    splitter.push(" ");
    assert_eq!(splitter.next_sentence().as_deref(), Some("Next one!"));
    assert_eq!(splitter.finish(), None);
}

#[test]
fn runs_of_terminators_stay_together() {
    assert_eq!(
        split("Really?! Yes!!! Done?.. Ok"),
        ["Really?!", "Yes!!!", "Done?..", "Ok"]
    );
}

#[test]
fn decimals_and_dotted_words_are_not_boundaries() {
    assert_eq!(
        split("It costs $3.50 or 2.5 euros. Version 1.2.3 of example.com is out."),
        [
            "It costs $3.50 or 2.5 euros.",
            "Version 1.2.3 of example.com is out."
        ]
    );
}

#[test]
fn titles_are_never_boundaries() {
    assert_eq!(
        split(
            "Mr. Smith met Mrs. Jones, Ms. Lee and Dr. Who on St. James Street. Then Prof. X left."
        ),
        [
            "Mr. Smith met Mrs. Jones, Ms. Lee and Dr. Who on St. James Street.",
            "Then Prof. X left."
        ]
    );
}

#[test]
fn eg_ie_and_vs_are_never_boundaries() {
    assert_eq!(
        split("Fruit, e.g. Apples, i.e. Red ones. Cats vs. Dogs is old. E.g. This."),
        [
            "Fruit, e.g. Apples, i.e. Red ones.",
            "Cats vs. Dogs is old.",
            "E.g. This."
        ]
    );
}

#[test]
fn etc_continues_before_lowercase_and_ends_before_a_capital() {
    assert_eq!(
        split("Bring pens, paper, etc. and a bag. Bring food, water, etc. Then go."),
        [
            "Bring pens, paper, etc. and a bag.",
            "Bring food, water, etc.",
            "Then go."
        ]
    );
}

#[test]
fn am_and_pm_continue_before_lowercase() {
    assert_eq!(
        split("We open at 9 a.m. and close at 5 p.m. on Fridays. See you at 8 p.m. Bring snacks."),
        [
            "We open at 9 a.m. and close at 5 p.m. on Fridays.",
            "See you at 8 p.m.",
            "Bring snacks."
        ]
    );
}

#[test]
fn single_letter_initials_are_not_boundaries() {
    assert_eq!(
        split("J. R. R. Tolkien wrote it. John F. Kennedy spoke. I agree."),
        [
            "J. R. R. Tolkien wrote it.",
            "John F. Kennedy spoke.",
            "I agree."
        ]
    );
}

#[test]
fn ellipsis_before_lowercase_continues() {
    assert_eq!(
        split("Well... maybe not. Wait… what? Hmm... Fine."),
        ["Well... maybe not.", "Wait… what?", "Hmm...", "Fine."]
    );
}

#[test]
fn a_lowercase_word_after_a_period_continues_the_sentence() {
    assert_eq!(
        split("Approx. five km. Done."),
        ["Approx. five km.", "Done."]
    );
}

#[test]
fn closing_quotes_and_brackets_stay_with_their_sentence() {
    assert_eq!(
        split("He said \"Stop.\" She left. (Really?) Yes. ‘Fine.’ «Oui.» Ok."),
        [
            "He said \"Stop.\"",
            "She left.",
            "(Really?)",
            "Yes.",
            "‘Fine.’",
            "«Oui.»",
            "Ok."
        ]
    );
    assert_eq!(split("\"Hi.\"she said."), ["\"Hi.\"she said."]);
}

#[test]
fn cjk_terminators_need_no_space() {
    assert_eq!(
        split("今日は晴れです。明日は雨？そうですね！「はい。」と言った。"),
        [
            "今日は晴れです。",
            "明日は雨？",
            "そうですね！",
            "「はい。」",
            "と言った。"
        ]
    );
    let mut splitter = SentenceSplitter::new();
    splitter.push("一。二");
    assert_eq!(splitter.next_sentence().as_deref(), Some("一。"));
    // At the very end a closing bracket may still follow.
    splitter.push("。");
    assert_eq!(splitter.next_sentence(), None);
    splitter.push("」");
    assert_eq!(splitter.next_sentence(), None);
    assert_eq!(splitter.finish().as_deref(), Some("二。」"));
}

#[test]
fn a_newline_ends_a_sentence() {
    assert_eq!(
        split("First line\nSecond line\r\nThird: Mr.\nFourth etc.\nfifth"),
        [
            "First line",
            "Second line",
            "Third: Mr.",
            "Fourth etc.",
            "fifth"
        ]
    );
    let mut splitter = SentenceSplitter::new();
    splitter.push("A list:\n");
    assert_eq!(splitter.next_sentence().as_deref(), Some("A list:"));
}

#[test]
fn blank_lines_give_no_empty_sentences() {
    assert_eq!(
        split("\n\n  One.\n\n\n \t \nTwo\r\n\r\n   \n"),
        ["One.", "Two"]
    );
    assert!(split("").is_empty());
    assert!(split(" \n\t\r\n ").is_empty());
}

#[test]
fn finish_returns_the_trimmed_tail_and_resets() {
    let mut splitter = SentenceSplitter::new();
    splitter.push("  Done. And the rest  ");
    assert_eq!(splitter.next_sentence().as_deref(), Some("Done."));
    assert_eq!(splitter.finish().as_deref(), Some("And the rest"));
    assert_eq!(splitter.finish(), None);
    splitter.push("Again.");
    assert_eq!(splitter.finish().as_deref(), Some("Again."));
}

#[test]
fn llm_tokens_give_the_same_sentences_as_the_whole_text() {
    let tokens = [
        "Sure", "!", " The", " meeting", " is", " at", " 3", ".", "30", " p", ".m", ".", " with",
        " Dr", ".", " Lee", ".", " Bring", " notes", "…", " and", " coffee", ".\n\n", "Thanks",
    ];
    let expected = [
        "Sure!",
        "The meeting is at 3.30 p.m. with Dr. Lee.",
        "Bring notes… and coffee.",
        "Thanks",
    ];
    assert_eq!(split_chunks(&tokens), expected);
    assert_eq!(split(&tokens.concat()), expected);
}

fn non_whitespace(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Text built from pieces that exercise every rule, plus arbitrary characters.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => prop::sample::select(vec![
            "Hello", "world", "the", "Then", "a", "J", "Mr", "Dr", "e.g", "i.e", "etc", "p.m",
            "3", "5", "日本", "é", "🙂", "Über",
        ])
        .prop_map(str::to_owned),
        4 => prop::sample::select(vec![
            " ", " ", "  ", "\n", "\r\n", "\n\n", "\t", "\u{2028}", "\u{a0}",
        ])
        .prop_map(str::to_owned),
        3 => prop::sample::select(vec![
            ".", ". ", "!", "?", "?!", "...", "…", "。", "！", "？", "\"", "'", ")", "」", "”", "(",
            ",",
        ])
        .prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

/// `text` cut at the character boundaries that `cuts` picks.
fn chunks(text: &str, cuts: &[prop::sample::Index]) -> Vec<String> {
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(at, _)| at)
        .chain([text.len()])
        .collect();
    let mut points: Vec<usize> = cuts.iter().map(|cut| *cut.get(&boundaries)).collect();
    points.sort_unstable();
    let mut pieces = Vec::new();
    let mut start = 0;
    for point in points {
        pieces.push(text[start..point].to_owned());
        start = point;
    }
    pieces.push(text[start..].to_owned());
    pieces
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn chunking_changes_nothing_and_nothing_is_lost(
        text in text(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..16),
    ) {
        let whole = split(&text);
        let chunked = split_chunks(&chunks(&text, &cuts));
        prop_assert_eq!(&chunked, &whole);
        for sentence in &whole {
            prop_assert!(!sentence.is_empty());
            prop_assert_eq!(sentence.trim(), sentence.as_str());
        }
        prop_assert_eq!(non_whitespace(&whole.concat()), non_whitespace(&text));
    }

    #[test]
    fn byte_per_character_streaming_matches(text in text()) {
        let chars: Vec<String> = text.chars().map(String::from).collect();
        prop_assert_eq!(split_chunks(&chars), split(&text));
    }
}
