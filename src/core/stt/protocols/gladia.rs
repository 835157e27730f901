//! Gladia live v2 (`POST /v2/live`, then the socket URL it returns).
//!
//! - **Auth:** the app's backend creates the session with its key and gives the page the
//!   session's URL; a reconnect reuses it.
//! - **Audio:** binary PCM16 frames, unpaced.
//! - **One final per utterance (L8):** a `transcript` with `data.is_final: true`; partials have
//!   `is_final: false`.
//! - **Watermark (L4):** the session survives a reconnect and acknowledges the byte ranges it
//!   received (`audio_chunk` with `acknowledged: true`).
//! - **Finish:** `stop_recording`; the server answers `end_recording` once the rest is
//!   transcribed. `end_session` while in use: the session is over (R5).
//! - **Closes:** every code from 4000 to 4999 means the session is over (R2); any other, retry.

use crate::core::json::read_view;
use crate::core::stt::protocol::{
    CloseClass, CloseRule, Codec, Credentials, Event, Framing, Pacing, Profile, Watermark,
};
use alloc::borrow::Cow;
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// `{"type":"stop_recording"}`: the end of the audio.
pub const STOP_RECORDING: &str = r#"{"type":"stop_recording"}"#;

/// Gladia live v2.
pub const PROFILE: Profile = Profile {
    name: "gladia",
    framing: Framing::Binary,
    sample_rate: None,
    keepalive: None,
    credentials: Credentials::Session,
    watermark: Watermark::AcknowledgedBytes,
    pacing: Pacing::UNPACED,
    receipt_window_ms: 0,
    audio_after_start: false,
    eager_end_of_turn: false,
    closes: &[CloseRule::range(4000, 4999, CloseClass::SessionOver)],
    codec: || Box::new(Gladia),
};

/// Gladia's codec: it keeps nothing between messages.
#[derive(Debug, Default)]
pub struct Gladia;

/// The fields of one server message that matter here.
#[derive(Debug, Default)]
struct View<'a> {
    kind: Option<Cow<'a, str>>,
    /// `data.is_final`.
    is_final: Option<bool>,
    /// `data.utterance.text`.
    text: Option<Cow<'a, str>>,
    /// `acknowledged`.
    acknowledged: bool,
    /// `data.byte_range`.
    range: [Option<u64>; 2],
}

fn read(text: &str) -> Option<View<'_>> {
    read_view(text, |view: &mut View<'_>, reader, key| match key {
        "type" => reader.string_into(&mut view.kind),
        "acknowledged" => reader.flag_into(&mut view.acknowledged),
        "data" => reader.object_or_skip(|reader, key| match key {
            "is_final" => reader.bool_into(&mut view.is_final),
            "utterance" => reader.object_or_skip(|reader, key| match key {
                "text" => reader.string_into(&mut view.text),
                _ => reader.skip(),
            }),
            "byte_range" => {
                let mut index = 0;
                reader.array_or_skip(|reader| {
                    let bound = reader.number_or_skip()?.and_then(|n| n.parse::<u64>().ok());
                    if let Some(slot) = view.range.get_mut(index) {
                        *slot = bound;
                    }
                    index += 1;
                    Ok(())
                })
            }
            _ => reader.skip(),
        }),
        _ => reader.skip(),
    })
}

impl Codec for Gladia {
    fn decode(&mut self, text: &str, events: &mut Vec<Event>) {
        let Some(view) = read(text) else {
            return events.push(Event::Malformed);
        };
        let Some(kind) = view.kind else {
            return events.push(Event::Malformed);
        };
        events.push(match kind.as_ref() {
            "transcript" => match (view.is_final, view.text) {
                (Some(true), Some(text)) => Event::Final(text.into_owned()),
                (Some(false), Some(text)) => Event::Partial(text.into_owned()),
                _ => Event::Malformed,
            },
            "speech_start" => Event::SpeechStart,
            "speech_end" => Event::SpeechEnd,
            "end_recording" => Event::Finished,
            "end_session" => Event::SessionOver,
            "audio_chunk" => match view.range {
                [Some(start), Some(end)] if view.acknowledged && start <= end => {
                    Event::AckBytes(end - start)
                }
                _ => Event::Ignored,
            },
            "start_session"
            | "start_recording"
            | "stop_recording"
            | "translation"
            | "named_entity_recognition"
            | "sentiment_analysis"
            | "post_transcript"
            | "post_final_transcript"
            | "post_chapterization"
            | "post_summarization" => Event::Ignored,
            _ => Event::Unknown,
        });
    }

    fn finish_messages(&mut self, _frames_sent: u64) -> Vec<String> {
        vec![STOP_RECORDING.to_owned()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(text: &str) -> Event {
        let mut events = Vec::new();
        Gladia.decode(text, &mut events);
        assert_eq!(events.len(), 1, "{text}");
        events.remove(0)
    }

    #[test]
    fn transcripts_need_both_fields() {
        let transcript = |data: &str| decode(&format!(r#"{{"type":"transcript","data":{data}}}"#));
        assert_eq!(
            transcript(r#"{"is_final":true,"utterance":{"text":"hello"}}"#),
            Event::Final("hello".into())
        );
        assert_eq!(
            transcript(r#"{"utterance":{"text":"hello"}}"#),
            Event::Malformed
        );
        assert_eq!(transcript(r#"{"is_final":false}"#), Event::Malformed);
    }

    #[test]
    fn every_kind_is_read() {
        let kind = |k: &str| decode(&format!(r#"{{"type":"{k}"}}"#));
        assert_eq!(kind("speech_start"), Event::SpeechStart);
        assert_eq!(kind("speech_end"), Event::SpeechEnd);
        assert_eq!(kind("end_recording"), Event::Finished);
        assert_eq!(kind("end_session"), Event::SessionOver);
        assert_eq!(kind("audio_chunk"), Event::Ignored);
        assert_eq!(kind("stop_recording"), Event::Ignored);
        assert_eq!(kind("post_summarization"), Event::Ignored);
        assert_eq!(kind("something_new"), Event::Unknown);
    }

    #[test]
    fn reads_gladia_messages() {
        let final_transcript = r#"{"session_id":"s","created_at":"2025-09-19T12:34:10Z","type":"transcript",
            "data":{"id":"00-00000011","is_final":true,"utterance":{"start":0,"end":0.48,"confidence":0.91,
            "channel":0,"words":[{"word":"Hello","start":0,"end":0.35,"confidence":0.91}],
            "text":"Hello \"world\". \u00e9","language":"en"}}}"#;
        assert_eq!(
            decode(final_transcript),
            Event::Final("Hello \"world\". é".into())
        );
        let ack = r#"{"type":"audio_chunk","acknowledged":true,"error":null,
            "data":{"byte_range":[640,1920],"time_range":[0.02,0.06]}}"#;
        assert_eq!(decode(ack), Event::AckBytes(1_280));
        let refused =
            r#"{"type":"audio_chunk","acknowledged":false,"data":{"byte_range":[0,640]}}"#;
        assert_eq!(decode(refused), Event::Ignored);
        let fields_first =
            r#"{"data":{"is_final":false,"utterance":{"text":"hel"}},"type":"transcript"}"#;
        assert_eq!(decode(fields_first), Event::Partial("hel".into()));
        assert_eq!(
            decode(r#"{"type":"speech_start","data":{"time":1.24,"channel":0}}"#),
            Event::SpeechStart
        );
    }

    #[test]
    fn malformed_text_is_malformed_never_a_panic() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        for text in [
            "",
            "not json",
            "[]",
            "null",
            r#"{"type":7}"#,
            r#"{"data":{}}"#,
            r#"{"type":"transcript"#,
            r#"{"type":"transcript"} trailing"#,
            r#"{"type":"transcript","data":{"is_final":"yes","utterance":{"text":"x"}}}"#,
            r#"{"type":"transcript","data":{"is_final":true,"utterance":{"text":null}}}"#,
            r#"{"type":"transcript","data":[1,2]}"#,
            deep.as_str(),
        ] {
            assert_eq!(decode(text), Event::Malformed, "{text:.40}");
        }
        assert_eq!(decode(r#"{"type":"brand_new"}"#), Event::Unknown);
        let odd_range = r#"{"type":"audio_chunk","acknowledged":true,"data":{"byte_range":[9,3]}}"#;
        assert_eq!(decode(odd_range), Event::Ignored);
    }

    #[test]
    fn closes() {
        assert_eq!(PROFILE.close_class(4403), CloseClass::SessionOver);
        assert_eq!(PROFILE.close_class(4000), CloseClass::SessionOver);
        assert_eq!(PROFILE.close_class(4999), CloseClass::SessionOver);
        assert_eq!(PROFILE.close_class(1006), CloseClass::Retry);
        assert_eq!(PROFILE.close_class(5000), CloseClass::Retry);
    }
}
