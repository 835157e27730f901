//! ElevenLabs Scribe realtime (`/v1/speech-to-text/realtime`), as PROVIDERS.md describes it.
//!
//! - **Auth (R6):** a single-use token (the app's backend: `POST
//!   /v1/single-use-token/realtime_scribe`) in the URL's query, consumed by its first connect: every
//!   connect gets a fresh one.
//! - **Audio:** base64 JSON chunks (`input_audio_chunk`, `commit: false`, the frames' rate); the
//!   first chunk after a reconnect carries `previous_text`, the last final's text, as context.
//! - **One final per commit (L8):** `committed_transcript` and `committed_transcript_with_timestamps`
//!   may both come for one commit: whichever comes first is the final, the other its twin (the same
//!   text right after it). `final_transcript*`, `committed_transcript_entities` and
//!   `edited_transcript` are never finals. `partial_transcript` is the caption.
//! - **Watermark (L4):** the largest word `end` (seconds) of `committed_transcript_with_timestamps`
//!   (ask for `include_timestamps=true`; without it nothing counts as finalized and a drop resends
//!   everything still buffered).
//! - **Finish:** a manual commit (an empty chunk with `commit: true`); the next committed transcript
//!   finishes the stream.
//! - **Errors:** a message whose `message_type` names the error comes before the close, and
//!   classifies it: `auth_error`, `quota_exceeded`, `unaccepted_terms` (or
//!   `unaccepted_terms_error`), `input_error`, `chunk_size_exceeded`, `invalid_request` fatal;
//!   `rate_limited`, `queue_overflow`, `resource_exhausted`, `commit_throttled` throttled;
//!   `session_time_limit_exceeded` the session is over; anything else retried.

use crate::core::json::read_view;
use crate::core::stt::protocol::{
    CloseClass, Codec, Credentials, Event, Framing, Pacing, Profile, Watermark, DEFAULT_SAMPLE_RATE,
};
use crate::core::text::decimal;
use alloc::borrow::Cow;
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// ElevenLabs Scribe realtime.
pub const PROFILE: Profile = Profile {
    name: "elevenlabs",
    framing: Framing::Base64Json,
    sample_rate: None,
    keepalive: None,
    credentials: Credentials::PerConnection,
    watermark: Watermark::FinalizedTime,
    pacing: Pacing::UNPACED,
    receipt_window_ms: 0,
    audio_after_start: false,
    eager_end_of_turn: false,
    // The error message before a close says what it means.
    closes: &[],
    codec: || Box::<ElevenLabs>::default(),
};

/// The ElevenLabs Scribe realtime protocol and its last commit.
#[derive(Debug, Default)]
pub struct ElevenLabs {
    /// The last final's text, and (once a reconnect happened) the context for the next chunk.
    last_final: String,
    previous_text: Option<String>,
    /// The kind (`true`: with timestamps) and text of the last final, to spot its twin.
    last_kind: Option<bool>,
    /// The class of the error message that came before the close.
    error_class: Option<CloseClass>,
    /// `stop()` committed: the next committed transcript finishes the stream.
    finishing: bool,
    /// The rate of the frames, for the finish's commit.
    sample_rate: u32,
    connected_before: bool,
}

#[derive(Debug, Default)]
struct View<'a> {
    kind: Option<Cow<'a, str>>,
    text: Option<Cow<'a, str>>,
    /// Largest `words[].end`, in ms.
    end_ms: Option<u64>,
}

fn read(text: &str) -> Option<View<'_>> {
    read_view(text, |view: &mut View<'_>, reader, key| match key {
        "message_type" => reader.string_into(&mut view.kind),
        "text" => reader.string_into(&mut view.text),
        "words" => reader.array_or_skip(|reader| {
            reader.object_or_skip(|reader, key| match key {
                "end" => {
                    let end = reader.seconds_as_ms_or_skip()?;
                    view.end_ms = view.end_ms.max(end);
                    Ok(())
                }
                _ => reader.skip(),
            })
        }),
        _ => reader.skip(),
    })
}

/// What an error message type says about the close that follows.
fn error_class(kind: &str) -> Option<CloseClass> {
    Some(match kind {
        "auth_error"
        | "quota_exceeded"
        | "unaccepted_terms"
        | "unaccepted_terms_error"
        | "input_error"
        | "chunk_size_exceeded"
        | "invalid_request" => CloseClass::Fatal,
        "rate_limited" | "queue_overflow" | "resource_exhausted" | "commit_throttled" => {
            CloseClass::Throttled
        }
        "session_time_limit_exceeded" => CloseClass::SessionOver,
        "error" | "transcriber_error" | "insufficient_audio_activity" => CloseClass::Retry,
        _ => return None,
    })
}

/// JSON string contents for `text`: quotes, backslashes and control characters escaped.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                out.push_str("\\u00");
                let code = u32::from(c);
                out.extend(
                    [code >> 4, code & 0xf]
                        .into_iter()
                        .filter_map(|d| char::from_digit(d, 16)),
                );
            }
            c => out.push(c),
        }
    }
    out
}

impl ElevenLabs {
    fn committed(&mut self, with_timestamps: bool, view: View<'_>, events: &mut Vec<Event>) {
        if let Some(end) = view.end_ms {
            events.push(Event::FinalizedUntilMs(end));
        }
        let text = view.text.as_deref().unwrap_or("").trim().to_owned();
        let twin = self.last_kind == Some(!with_timestamps) && text == self.last_final;
        if twin {
            // The other form of the commit just delivered: never a second final.
            self.last_kind = None;
            return events.push(Event::Ignored);
        }
        self.last_kind = Some(with_timestamps);
        if !text.is_empty() {
            self.last_final.clone_from(&text);
            events.push(Event::Final(text));
        }
        if core::mem::take(&mut self.finishing) {
            events.push(Event::Finished);
        }
    }
}

impl Codec for ElevenLabs {
    fn on_connect(&mut self, _url: &str) {
        self.error_class = None;
        self.last_kind = None;
        let context =
            (self.connected_before && !self.last_final.is_empty()).then(|| self.last_final.clone());
        self.previous_text = context;
        self.connected_before = true;
    }

    fn decode(&mut self, text: &str, events: &mut Vec<Event>) {
        let Some(view) = read(text) else {
            return events.push(Event::Malformed);
        };
        let Some(kind) = view.kind.clone() else {
            return events.push(Event::Malformed);
        };
        match kind.as_ref() {
            "partial_transcript" => match view.text {
                Some(text) => events.push(Event::Partial(text.trim().to_owned())),
                None => events.push(Event::Malformed),
            },
            "committed_transcript" => self.committed(false, view, events),
            "committed_transcript_with_timestamps" => self.committed(true, view, events),
            "session_started"
            | "final_transcript"
            | "final_transcript_with_timestamps"
            | "committed_transcript_entities"
            | "edited_transcript" => events.push(Event::Ignored),
            other => match error_class(other) {
                Some(class) => {
                    self.error_class = Some(class);
                    events.push(Event::Ignored);
                }
                None => events.push(Event::Unknown),
            },
        }
    }

    fn finish_messages(&mut self, _frames_sent: u64) -> Vec<String> {
        self.finishing = true;
        let rate = match self.sample_rate {
            0 => DEFAULT_SAMPLE_RATE,
            rate => rate,
        };
        vec![[r#"{"message_type":"input_audio_chunk","audio_base_64":"","commit":true,"sample_rate":"#, &decimal(rate.into()), r#"}"#].concat()]
    }

    fn close_class(&mut self, _code: u16) -> Option<CloseClass> {
        self.error_class.take()
    }

    fn audio_message(&mut self, base64: &str, sample_rate: u32) -> String {
        self.sample_rate = sample_rate;
        let context = self
            .previous_text
            .take()
            .map(|text| [r#","previous_text":""#, &escaped(&text), r#"""#].concat())
            .unwrap_or_default();
        [
            r#"{"message_type":"input_audio_chunk","audio_base_64":""#,
            base64,
            r#"","commit":false,"sample_rate":"#,
            &decimal(sample_rate.into()),
            &context,
            r#"}"#,
        ]
        .concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::stt::protocol::classify_close;

    #[test]
    fn previous_text_is_escaped_for_json() {
        assert_eq!(
            escaped("a\u{1}\"b\\\n\u{1f}é"),
            r#"a\u0001\"b\\\u000a\u001fé"#
        );
    }

    fn decode(p: &mut ElevenLabs, text: &str) -> Vec<Event> {
        let mut events = Vec::new();
        p.decode(text, &mut events);
        events
    }

    #[test]
    fn one_final_per_commit_whichever_form_comes_first() {
        let mut p = ElevenLabs::default();
        p.on_connect("wss://x");
        assert_eq!(
            decode(
                &mut p,
                r#"{"message_type":"partial_transcript","text":"what"}"#
            ),
            [Event::Partial("what".into())]
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"message_type":"committed_transcript","text":"What is it?"}"#
            ),
            [Event::Final("What is it?".into())]
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"message_type":"committed_transcript_with_timestamps","text":"What is it?","words":[{"text":"What","start":0.1,"end":0.4,"type":"word"},{"text":"it?","start":0.5,"end":0.9,"type":"word"}]}"#
            ),
            [Event::FinalizedUntilMs(900), Event::Ignored],
            "the twin: its timestamps, no second final"
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"message_type":"committed_transcript_with_timestamps","text":"Next.","words":[{"text":"Next.","start":1.0,"end":1.4}]}"#
            ),
            [Event::FinalizedUntilMs(1_400), Event::Final("Next.".into())]
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"message_type":"final_transcript","text":"Next."}"#
            ),
            [Event::Ignored]
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"message_type":"committed_transcript","text":"Next."}"#
            ),
            [Event::Ignored]
        );
    }

    #[test]
    fn previous_text_rides_the_first_chunk_after_a_reconnect() {
        let mut p = ElevenLabs::default();
        p.on_connect("wss://x");
        let first = p.audio_message("AQA=", 16_000);
        assert_eq!(
            first,
            r#"{"message_type":"input_audio_chunk","audio_base_64":"AQA=","commit":false,"sample_rate":16000}"#
        );
        decode(
            &mut p,
            r#"{"message_type":"committed_transcript","text":"Say \"hi\""}"#,
        );
        p.on_connect("wss://x");
        let after = p.audio_message("AQA=", 16_000);
        assert!(
            after.ends_with(r#","previous_text":"Say \"hi\""}"#),
            "{after}"
        );
        let next = p.audio_message("AQA=", 16_000);
        assert!(!next.contains("previous_text"), "the first chunk only");
    }

    #[test]
    fn errors_classify_the_close() {
        let mut p = ElevenLabs::default();
        for (kind, class) in [
            ("auth_error", CloseClass::Fatal),
            ("unaccepted_terms", CloseClass::Fatal),
            ("unaccepted_terms_error", CloseClass::Fatal),
            ("quota_exceeded", CloseClass::Fatal),
            ("rate_limited", CloseClass::Throttled),
            ("resource_exhausted", CloseClass::Throttled),
            ("session_time_limit_exceeded", CloseClass::SessionOver),
            ("transcriber_error", CloseClass::Retry),
        ] {
            assert_eq!(
                decode(
                    &mut p,
                    &format!(r#"{{"message_type":"{kind}","error":"m"}}"#)
                ),
                [Event::Ignored]
            );
            assert_eq!(classify_close(&PROFILE, &mut p, 1008), class, "{kind}");
        }
        assert_eq!(classify_close(&PROFILE, &mut p, 1006), CloseClass::Retry);
        assert_eq!(
            decode(&mut p, r#"{"message_type":"new_thing"}"#),
            [Event::Unknown]
        );
        assert_eq!(decode(&mut p, r#"{"text":"x"}"#), [Event::Malformed]);
    }

    #[test]
    fn the_finish_commits_and_the_next_commit_finishes() {
        let mut p = ElevenLabs::default();
        p.on_connect("wss://x");
        p.audio_message("AAA=", 16_000);
        assert_eq!(
            p.finish_messages(1),
            [
                r#"{"message_type":"input_audio_chunk","audio_base_64":"","commit":true,"sample_rate":16000}"#
            ]
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"message_type":"committed_transcript","text":"bye"}"#
            ),
            [Event::Final("bye".into()), Event::Finished]
        );
    }
}
