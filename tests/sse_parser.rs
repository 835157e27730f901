//! The SSE parser and the chat-stream decoder over named streams, every split of them, random
//! streams of random text, and random bytes.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use proptest::prelude::*;
use turnguard::core::turn::sse::{ChatDelta, ChatStreamDecoder, SseEvent, SseParser, StreamError};

/// Decodes `chunks` pushed one by one, draining after each push, then ends the stream.
fn decode(chunks: &[&[u8]]) -> Vec<ChatDelta> {
    let mut decoder = ChatStreamDecoder::new();
    let mut deltas = Vec::new();
    for chunk in chunks {
        decoder.push(chunk);
        deltas.extend(std::iter::from_fn(|| decoder.next_delta()));
    }
    decoder.finish();
    deltas.extend(std::iter::from_fn(|| decoder.next_delta()));
    deltas
}

fn events(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    for chunk in chunks {
        parser.push(chunk);
        events.extend(std::iter::from_fn(|| parser.next_event()));
    }
    parser.finish();
    events.extend(std::iter::from_fn(|| parser.next_event()));
    events
}

fn data(text: &str) -> SseEvent {
    SseEvent {
        event: String::new(),
        data: text.to_owned(),
    }
}

fn text(delta: &str) -> ChatDelta {
    ChatDelta::Text(delta.to_owned())
}

/// A JSON string literal: escapes what JSON requires, and with `ascii` every non-ASCII character
/// too (as `\uXXXX`, surrogate pairs above the BMP).
fn json_string(text: &str, ascii: bool) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (ascii && !c.is_ascii()) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn content_chunk(content: &str, ascii: bool) -> String {
    format!(
        r#"{{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{{"content":{}}},"logprobs":null,"finish_reason":null}}]}}"#,
        json_string(content, ascii)
    )
}

const ROLE_CHUNK: &str = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#;
const FINISH_CHUNK: &str = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#;

/// A well-formed stream with LF line ends: role chunk, one chunk per delta, finish, `[DONE]`.
fn openai_stream(deltas: &[&str]) -> String {
    let mut stream = format!("data: {ROLE_CHUNK}\n\n");
    for delta in deltas {
        stream += &format!("data: {}\n\n", content_chunk(delta, false));
    }
    stream += &format!("data: {FINISH_CHUNK}\n\ndata: [DONE]\n\n");
    stream
}

#[test]
fn basic_stream_yields_text_deltas_in_order() {
    let stream = openai_stream(&["Hello", ", world", "!"]);
    assert_eq!(
        decode(&[stream.as_bytes()]),
        [text("Hello"), text(", world"), text("!"), ChatDelta::Done]
    );
}

#[test]
fn done_ends_the_stream_and_later_events_are_ignored() {
    let mut decoder = ChatStreamDecoder::new();
    let late = content_chunk("late", false);
    decoder.push(format!("data: [DONE]\n\ndata: {late}\n\ndata: [DONE]\n\n").as_bytes());
    assert_eq!(decoder.next_delta(), Some(ChatDelta::Done));
    assert_eq!(decoder.next_delta(), None);
    assert!(decoder.is_ended());
    assert_eq!(decoder.ignored(), 2);
}

#[test]
fn comments_and_keep_alives_are_ignored() {
    let hi = content_chunk("hi", false);
    let stream = format!(": OPENROUTER PROCESSING\n\n:\n\ndata: {hi}\n: ping\n\n:keep-alive\n\n");
    assert_eq!(decode(&[stream.as_bytes()]), [text("hi")]);
    assert_eq!(
        events(&[b": only a comment\n\n\n\ndata: x\n:between\ndata: y\n\n"]),
        [data("x\ny")]
    );
}

#[test]
fn crlf_and_lone_cr_end_lines() {
    assert_eq!(
        events(&[b"data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\ndata: e\r\r\n"]),
        [data("a"), data("b"), data("c"), data("d\ne")]
    );
}

#[test]
fn crlf_split_between_chunks_is_one_line_end() {
    // Were the LF taken for a second line end, "a" would be dispatched alone.
    assert_eq!(
        events(&[b"data: a\r", b"\ndata: b\r", b"", b"\n\r", b"\n"]),
        [data("a\nb")]
    );
    // A CR at a chunk's end followed by anything else ended its line by itself.
    assert_eq!(events(&[b"data: a\r", b"\r"]), [data("a")]);
}

#[test]
fn multi_line_data_is_joined_with_newlines() {
    assert_eq!(
        events(&[b"data: first\ndata:second\ndata:  third\ndata\ndata:\n\n"]),
        [data("first\nsecond\n third\n\n")]
    );
}

#[test]
fn event_types_and_ignored_fields() {
    let parsed = events(&[
        b"event: delta\nid: 7\nretry: 1000\nunknown: x\ndata: one\n\nevent: lonely\n\ndata\n\n",
    ]);
    assert_eq!(
        parsed,
        [
            SseEvent {
                event: "delta".into(),
                data: "one".into()
            },
            // The type of an event without data does not leak into the next one.
            data(""),
        ]
    );
}

#[test]
fn every_split_of_a_stream_gives_the_same_deltas() {
    let deltas = ["é", "日本", "語 🙂", "\"quoted\"\n", "a\\b"];
    let mut stream = openai_stream(&deltas).replace("\n\n", "\r\n\r\n");
    stream.insert_str(0, ": keep-alive\r\n\r\n");
    let bytes = stream.as_bytes();
    let mut expected: Vec<ChatDelta> = deltas.iter().map(|delta| text(delta)).collect();
    expected.push(ChatDelta::Done);

    for at in 0..=bytes.len() {
        let (head, tail) = bytes.split_at(at);
        assert_eq!(decode(&[head, tail]), expected, "split at {at}");
    }
    for first in (0..=bytes.len()).step_by(7) {
        for second in first..=bytes.len() {
            let (head, rest) = bytes.split_at(first);
            let (middle, tail) = rest.split_at(second - first);
            assert_eq!(
                decode(&[head, middle, tail]),
                expected,
                "split at {first}, {second}"
            );
        }
    }
    let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(decode(&bytewise), expected);
}

#[test]
fn multibyte_characters_split_inside_survive() {
    for word in ["é", "日本", "🙂"] {
        let stream = format!("data: {word}\n\n");
        let bytes = stream.as_bytes();
        for at in 0..=bytes.len() {
            let (head, tail) = bytes.split_at(at);
            assert_eq!(events(&[head, tail]), [data(word)], "{word} split at {at}");
        }
    }
}

#[test]
fn a_leading_bom_is_skipped_even_when_split() {
    let stream = b"\xEF\xBB\xBFdata: x\n\n";
    for at in 0..=stream.len() {
        let (head, tail) = stream.split_at(at);
        assert_eq!(events(&[head, tail]), [data("x")], "split at {at}");
    }
    // Only at the start of the stream: later it is part of a field name.
    assert_eq!(
        events(&[b"data: x\n\n\xEF\xBB\xBFdata: y\n\n"]),
        [data("x")]
    );
    // And only once.
    assert!(events(&[b"\xEF\xBB\xBF\xEF\xBB\xBFdata: y\n\n"]).is_empty());
}

#[test]
fn role_only_and_finish_reason_chunks_are_ignored() {
    let mut decoder = ChatStreamDecoder::new();
    let usage =
        r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#;
    let null_content = r#"{"choices":[{"index":0,"delta":{"content":null,"tool_calls":[]}}]}"#;
    decoder.push(
        format!("data: {ROLE_CHUNK}\n\ndata: {null_content}\n\ndata: {FINISH_CHUNK}\n\ndata: {usage}\n\n")
            .as_bytes(),
    );
    assert_eq!(decoder.next_delta(), None);
    assert_eq!(decoder.ignored(), 4);
    assert!(!decoder.is_ended());
}

#[test]
fn only_the_choice_with_index_zero_is_read() {
    let chunk =
        r#"{"choices":[{"delta":{"content":"B"},"index":1},{"index":0,"delta":{"content":"A"}}]}"#;
    let no_index = r#"{"choices":[{"delta":{"content":"C"}}]}"#;
    let stream = format!("data: {chunk}\n\ndata: {no_index}\n\n");
    assert_eq!(decode(&[stream.as_bytes()]), [text("A"), text("C")]);
}

#[test]
fn json_escapes_are_decoded() {
    let chunk = r#"{"choices":[{"index":0,"delta":{"content":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude42 \ud800!"}}]}"#;
    assert_eq!(
        decode(&[format!("data: {chunk}\n\n").as_bytes()]),
        [text("\"\\/\u{8}\u{c}\n\r\té🙂 \u{FFFD}!")]
    );
}

#[test]
fn in_stream_error_keeps_codes_only() {
    let error = r#"{"error":{"message":"The user said: my secret","type":"server_error","param":null,"code":"rate_limit_exceeded"}}"#;
    let hi = content_chunk("hi", false);
    let stream = format!("data: {hi}\n\ndata: {error}\n\ndata: {hi}\n\ndata: [DONE]\n\n");
    let deltas = decode(&[stream.as_bytes()]);
    assert_eq!(
        deltas,
        [
            text("hi"),
            ChatDelta::Error(StreamError {
                code: Some("rate_limit_exceeded".into()),
                kind: Some("server_error".into()),
            }),
        ]
    );
    assert!(!format!("{deltas:?}").contains("secret"));
}

#[test]
fn error_codes_that_look_like_prose_are_dropped() {
    let prose = r#"{"error":{"code":"the user said hello","type":429}}"#;
    let text_error = r#"{"error":"something went wrong"}"#;
    let expected = |code: Option<&str>, kind: Option<&str>| {
        ChatDelta::Error(StreamError {
            code: code.map(Into::into),
            kind: kind.map(Into::into),
        })
    };
    assert_eq!(
        decode(&[format!("data: {prose}\n\n").as_bytes()]),
        [expected(None, Some("429"))]
    );
    assert_eq!(
        decode(&[format!("data: {text_error}\n\n").as_bytes()]),
        [expected(None, None)]
    );
    assert_eq!(
        decode(&[b"event: error\ndata: {\"message\":\"overloaded\"}\n\n"]),
        [expected(None, None)]
    );
}

#[test]
fn error_null_is_not_an_error() {
    let chunk = r#"{"error":null,"choices":[{"index":0,"delta":{"content":"ok"}}]}"#;
    assert_eq!(
        decode(&[format!("data: {chunk}\n\n").as_bytes()]),
        [text("ok")]
    );
}

#[test]
fn garbage_yields_no_text() {
    let stream = concat!(
        "data: not json\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"cut\"}}]\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]} trailing\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"raw\tcontrol\"}}]}\n\n",
        "data: [1,2,3]\n\n",
        "data: \"string\"\n\n",
        "data: {}\n\n",
        "data: [DONE\n\n",
        "hello world\n\n",
        "data: {\"a\":1}\x00\n\n",
    );
    let mut decoder = ChatStreamDecoder::new();
    decoder.push(stream.as_bytes());
    assert_eq!(decoder.next_delta(), None);
    assert_eq!(decoder.ignored(), 9);

    let deep = format!(
        "data: {{\"x\":{}{},\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"deep\"}}}}]}}\n\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert!(decode(&[deep.as_bytes()]).is_empty());
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    assert_eq!(
        events(&[b"data: a\xFFb\xE6\x97c\n\n"]),
        [data("a\u{FFFD}b\u{FFFD}c")]
    );
    let chunk = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\xC3\"}}]}\n\n";
    assert_eq!(decode(&[chunk]), [text("x\u{FFFD}")]);
}

#[test]
fn an_event_without_its_blank_line_is_discarded_at_the_end() {
    let mut parser = SseParser::new();
    parser.push(b"data: complete\n\ndata: [DONE]\n");
    parser.finish();
    assert_eq!(parser.next_event(), Some(data("complete")));
    assert_eq!(parser.next_event(), None);
    assert_eq!(parser.dropped(), 1);
    // The parser starts over: a new stream, BOM and all.
    parser.push(b"\xEF\xBB\xBFdata: again\n\n");
    assert_eq!(parser.next_event(), Some(data("again")));

    // A trailing comment or a blank end is no loss.
    let mut parser = SseParser::new();
    parser.push(b"data: x\n\n: ping");
    parser.finish();
    assert_eq!(parser.dropped(), 0);
}

#[test]
fn an_oversized_event_is_dropped_and_counted() {
    let mut parser = SseParser::with_max_event_bytes(32);
    parser.push(b"data: small\n\ndata: ");
    parser.push(&[b'x'; 20]);
    parser.push(b"\ndata: ");
    assert!(parser.buffered_bytes() <= 32);
    parser.push(&[b'y'; 1000]);
    assert!(parser.buffered_bytes() <= 32);
    parser.push(b"\ndata: still the same event\n\ndata: next\n\n");
    assert_eq!(parser.next_event(), Some(data("small")));
    assert_eq!(parser.next_event(), Some(data("next")));
    assert_eq!(parser.next_event(), None);
    assert_eq!(parser.dropped(), 1);

    // Invalid bytes that grow when replaced count against the limit too.
    let mut parser = SseParser::with_max_event_bytes(32);
    parser.push(&[b"data: ".as_slice(), &[0xFF; 20], b"\n"].concat());
    assert!(parser.buffered_bytes() <= 32);
    assert_eq!(parser.dropped(), 1);
}

#[test]
fn a_huge_line_never_grows_past_the_default_limit() {
    let mut decoder = ChatStreamDecoder::new();
    let block = vec![b'a'; 64 * 1024];
    decoder.push(b"data: ");
    for _ in 0..40 {
        decoder.push(&block);
    }
    decoder.push(b"\n\n");
    decoder.push(format!("data: {}\n\n", content_chunk("after", false)).as_bytes());
    assert_eq!(decoder.next_delta(), Some(text("after")));
    assert_eq!(decoder.dropped(), 1);
}

/// One text delta and how its chunk is written.
#[derive(Clone, Debug)]
struct Delta {
    text: String,
    ascii: bool,
}

fn delta_text() -> impl Strategy<Value = String> {
    let special = prop_oneof![
        Just('"'),
        Just('\\'),
        Just('/'),
        Just('\n'),
        Just('\r'),
        Just('\t'),
        Just('\u{0}'),
        Just('\u{1f}'),
        Just('\u{7f}'),
        Just('é'),
        Just('日'),
        Just('🙂'),
        Just('\u{2028}'),
        Just('\u{FEFF}'),
        Just(':'),
    ];
    prop::collection::vec(prop_oneof![2 => any::<char>(), 1 => special], 0..12)
        .prop_map(|chars| chars.into_iter().collect())
}

fn delta() -> impl Strategy<Value = Delta> {
    (delta_text(), any::<bool>()).prop_map(|(text, ascii)| Delta { text, ascii })
}

/// Writes an OpenAI stream of `deltas`, with the line ends and keep-alives that `style` picks.
fn encode(deltas: &[Delta], style: u8, bom: bool) -> Vec<u8> {
    let line_end = match style % 3 {
        0 => "\n",
        1 => "\r\n",
        _ => "\r",
    };
    let mut stream = String::new();
    if bom {
        stream.push('\u{FEFF}');
    }
    let event = |data: &str, stream: &mut String| {
        if style & 4 != 0 {
            stream.push_str(&format!(": keep-alive{line_end}"));
        }
        stream.push_str(&format!("data: {data}{line_end}{line_end}"));
    };
    event(ROLE_CHUNK, &mut stream);
    for delta in deltas {
        event(&content_chunk(&delta.text, delta.ascii), &mut stream);
    }
    event(FINISH_CHUNK, &mut stream);
    event("[DONE]", &mut stream);
    stream.into_bytes()
}

/// `bytes` cut at the positions `cuts` picks.
fn split<'a>(bytes: &'a [u8], cuts: &[prop::sample::Index]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut pieces = Vec::new();
    let mut start = 0;
    for point in points {
        pieces.push(&bytes[start..point]);
        start = point;
    }
    pieces.push(&bytes[start..]);
    pieces
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn split_stream_yields_exactly_the_text(
        deltas in prop::collection::vec(delta(), 0..8),
        style in any::<u8>(),
        bom in any::<bool>(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let bytes = encode(&deltas, style, bom);
        let decoded = decode(&split(&bytes, &cuts));
        let (last, texts) = decoded.split_last().expect("at least Done");
        prop_assert_eq!(last, &ChatDelta::Done);
        let mut joined = String::new();
        for delta in texts {
            match delta {
                ChatDelta::Text(text) => {
                    prop_assert!(!text.is_empty());
                    joined.push_str(text);
                }
                other => prop_assert!(false, "unexpected {:?}", other),
            }
        }
        let expected: String = deltas.iter().map(|delta| delta.text.as_str()).collect();
        prop_assert_eq!(joined, expected);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_memory_stays_bounded(
        chunks in prop::collection::vec(
            prop::collection::vec(
                prop_oneof![
                    4 => any::<u8>(),
                    1 => prop::sample::select(b"\r\n: {}[]\"\\data".to_vec()),
                ],
                0..64,
            ),
            0..16,
        ),
        max in 1usize..48,
    ) {
        let mut parser = SseParser::with_max_event_bytes(max);
        let mut decoder = ChatStreamDecoder::new();
        for chunk in &chunks {
            parser.push(chunk);
            decoder.push(chunk);
            prop_assert!(parser.buffered_bytes() <= max);
            while let Some(event) = parser.next_event() {
                prop_assert!(event.data.len() + event.event.len() <= max);
            }
            while let Some(delta) = decoder.next_delta() {
                if let ChatDelta::Text(text) = delta {
                    prop_assert!(!text.is_empty());
                }
            }
        }
        parser.finish();
        decoder.finish();
        prop_assert_eq!(parser.buffered_bytes(), 0);
        prop_assert_eq!(parser.next_event(), None);
    }

    #[test]
    fn arbitrary_json_ish_events_never_panic(
        fragments in prop::collection::vec(
            prop::sample::select(vec![
                "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "d83d", "\\ude42", "\"choices\"",
                "\"index\"", "0", "-1.5e3", "\"delta\"", "\"content\"", "\"error\"", "\"code\"",
                "null", "true", " ", "é", "\u{1}", "\n\n", "data: ", "[DONE]",
            ]),
            0..40,
        ),
    ) {
        let mut decoder = ChatStreamDecoder::new();
        decoder.push(b"data: ");
        decoder.push(fragments.concat().as_bytes());
        decoder.push(b"\n\n");
        while decoder.next_delta().is_some() {}
    }
}
