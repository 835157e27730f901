//! The Gladia live v2 protocol (rule L2): the seed protocol, and the default.
//!
//! Audio goes to the socket as binary frames of PCM16 little-endian mono; `{"type":"stop_recording"}`
//! ends the recording. Everything the server sends is a JSON object with a `type`. The session
//! survives a reconnect to the same URL, acknowledges audio by byte ranges (`audio_chunk`), and is
//! over after any close with a code from 4000 to 4999.
//!
//! [`read`] takes the four fields the transcriber acts on out of a message's text with the
//! crate's small JSON reader (`core::json`, shared with the SSE parser, so no serde and
//! nothing the wasm does not ship already) into a [`MessageView`]; [`classify`] turns that view into
//! a [`Message`], and [`event`] into the transcriber's neutral [`Event`]. A message it cannot use
//! is [`Message::Malformed`] or [`Message::Unknown`], which the transcriber counts and skips —
//! never fatal. Parsing here rather than with the browser's `JSON.parse` keeps the whole protocol,
//! malformed input included, under native tests.

use crate::core::json::Reader;
use crate::core::stt::protocol::{CloseClass, Event, Protocol, Watermark};
use std::borrow::Cow;

pub use crate::core::stt::protocol::{pcm_bytes_for_ms, BYTES_PER_SAMPLE, DEFAULT_SAMPLE_RATE};

/// The text message that ends a recording.
pub const STOP_RECORDING: &str = r#"{"type":"stop_recording"}"#;

/// The Gladia live v2 protocol.
#[derive(Debug, Default)]
pub struct Gladia;

/// A boxed [`Gladia`], for [`crate::core::stt::PROTOCOLS`].
pub fn protocol() -> Box<dyn Protocol> {
    Box::new(Gladia)
}

impl Protocol for Gladia {
    fn name(&self) -> &'static str {
        "gladia"
    }

    fn decode(&mut self, text: &str, events: &mut Vec<Event>) {
        events.push(event(classify(read(text))));
    }

    fn finish_messages(&self, _frames_sent: u64) -> Vec<String> {
        vec![STOP_RECORDING.to_owned()]
    }

    fn classify_close(&mut self, code: u16) -> CloseClass {
        close_class(code)
    }

    fn watermark(&self) -> Watermark {
        Watermark::AcknowledgedBytes
    }
}

/// R2 for Gladia: every close from 4000 to 4999 means the session is over; any other, retry.
pub fn close_class(code: u16) -> CloseClass {
    if (4000..=4999).contains(&code) {
        CloseClass::SessionOver
    } else {
        CloseClass::Retry
    }
}

/// What a classified message means to the transcriber.
pub fn event(message: Message) -> Event {
    match message {
        Message::Transcript {
            is_final: true,
            text,
        } => Event::Final(text),
        Message::Transcript { text, .. } => Event::Partial(text),
        Message::SpeechStart => Event::SpeechStart,
        Message::SpeechEnd => Event::SpeechEnd,
        Message::Lifecycle(Lifecycle::EndRecording) => Event::Finished,
        Message::Lifecycle(Lifecycle::EndSession) => Event::SessionOver,
        Message::AudioAck(Some(bytes)) => Event::AckBytes(bytes),
        Message::Malformed => Event::Malformed,
        Message::Unknown => Event::Unknown,
        Message::Lifecycle(_)
        | Message::AudioAck(None)
        | Message::StopRecordingAck
        | Message::Ignored => Event::Ignored,
    }
}

/// The fields of one server message that the transcriber acts on, as the shell read them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MessageView {
    /// `type`.
    pub kind: String,
    /// `data.is_final`, when it is a boolean.
    pub is_final: Option<bool>,
    /// `data.utterance.text`, when it is a string.
    pub text: Option<String>,
    /// How many bytes an `audio_chunk` acknowledgment with `acknowledged: true` covers
    /// (`data.byte_range[1] - data.byte_range[0]`), when both are whole numbers.
    pub acknowledged_bytes: Option<u64>,
}

impl MessageView {
    /// A view with only a `type`.
    pub fn of_kind(kind: &str) -> Self {
        MessageView {
            kind: kind.to_owned(),
            ..MessageView::default()
        }
    }
}

/// Session lifecycle messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifecycle {
    /// `start_session`: the socket is attached to the session.
    StartSession,
    /// `start_recording`: the first audio arrived.
    StartRecording,
    /// `end_recording`: the audio after `stop_recording` has been transcribed.
    EndRecording,
    /// `end_session`: post-processing is over; the server closes with 1000 next.
    EndSession,
}

/// What a server message means to the transcriber.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// `transcript`: a partial (caption) or final utterance text.
    Transcript {
        /// `data.is_final`.
        is_final: bool,
        /// `data.utterance.text`.
        text: String,
    },
    /// `speech_start`: the user started talking (barge-in).
    SpeechStart,
    /// `speech_end`.
    SpeechEnd,
    /// A lifecycle message.
    Lifecycle(Lifecycle),
    /// `audio_chunk` acknowledgment; `Some(bytes)` when it says how many bytes it covers.
    AudioAck(Option<u64>),
    /// `stop_recording` acknowledgment.
    StopRecordingAck,
    /// Add-on and post-processing results (translation, summaries, …): known, not used.
    Ignored,
    /// A `type` this protocol version does not know.
    Unknown,
    /// Not a JSON object with a string `type`, or a `transcript` without its fields.
    Malformed,
}

/// The fields of one server message, or `None` when the text is not a JSON object with a string
/// `type` (or nests deeper than the reader allows).
pub fn read(text: &str) -> Option<MessageView> {
    let mut kind = None;
    let mut is_final = None;
    let mut utterance = None;
    let mut acknowledged = false;
    let mut range = [None, None];
    let mut reader = Reader::new(text);
    reader
        .object(|reader, key| match key {
            "type" => {
                kind = reader.string_or_skip()?.map(Cow::into_owned);
                Ok(())
            }
            "acknowledged" => {
                acknowledged = reader.bool_or_skip()? == Some(true);
                Ok(())
            }
            "data" => reader.object_or_skip(|reader, key| match key {
                "is_final" => {
                    is_final = reader.bool_or_skip()?;
                    Ok(())
                }
                "utterance" => reader.object_or_skip(|reader, key| match key {
                    "text" => {
                        utterance = reader.string_or_skip()?.map(Cow::into_owned);
                        Ok(())
                    }
                    _ => reader.skip(),
                }),
                "byte_range" => {
                    let mut index = 0;
                    reader.array_or_skip(|reader| {
                        let bound = reader.number_or_skip()?.and_then(|n| n.parse::<u64>().ok());
                        if let Some(slot) = range.get_mut(index) {
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
        .ok()?;
    reader.end().ok()?;
    let acknowledged_bytes = match range {
        [Some(start), Some(end)] if acknowledged && start <= end => Some(end - start),
        _ => None,
    };
    Some(MessageView {
        kind: kind?,
        is_final,
        text: utterance,
        acknowledged_bytes,
    })
}

/// Reads and classifies one text message.
pub fn parse(text: &str) -> Message {
    classify(read(text))
}

/// Classifies one server message; `None` is text that was not a JSON object with a string `type`.
pub fn classify(view: Option<MessageView>) -> Message {
    let Some(view) = view else {
        return Message::Malformed;
    };
    match view.kind.as_str() {
        "transcript" => match (view.is_final, view.text) {
            (Some(is_final), Some(text)) => Message::Transcript { is_final, text },
            _ => Message::Malformed,
        },
        "speech_start" => Message::SpeechStart,
        "speech_end" => Message::SpeechEnd,
        "start_session" => Message::Lifecycle(Lifecycle::StartSession),
        "start_recording" => Message::Lifecycle(Lifecycle::StartRecording),
        "end_recording" => Message::Lifecycle(Lifecycle::EndRecording),
        "end_session" => Message::Lifecycle(Lifecycle::EndSession),
        "audio_chunk" => Message::AudioAck(view.acknowledged_bytes),
        "stop_recording" => Message::StopRecordingAck,
        "translation"
        | "named_entity_recognition"
        | "sentiment_analysis"
        | "post_transcript"
        | "post_final_transcript"
        | "post_chapterization"
        | "post_summarization" => Message::Ignored,
        _ => Message::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transcript(is_final: Option<bool>, text: Option<&str>) -> MessageView {
        MessageView {
            is_final,
            text: text.map(str::to_owned),
            ..MessageView::of_kind("transcript")
        }
    }

    #[test]
    fn transcripts_need_both_fields() {
        assert_eq!(
            classify(Some(transcript(Some(true), Some("hello")))),
            Message::Transcript {
                is_final: true,
                text: "hello".into()
            }
        );
        assert_eq!(
            classify(Some(transcript(None, Some("hello")))),
            Message::Malformed
        );
        assert_eq!(
            classify(Some(transcript(Some(false), None))),
            Message::Malformed
        );
    }

    #[test]
    fn every_kind_is_classified() {
        let kind = |k: &str| classify(Some(MessageView::of_kind(k)));
        assert_eq!(kind("speech_start"), Message::SpeechStart);
        assert_eq!(kind("speech_end"), Message::SpeechEnd);
        assert_eq!(
            kind("end_recording"),
            Message::Lifecycle(Lifecycle::EndRecording)
        );
        assert_eq!(kind("audio_chunk"), Message::AudioAck(None));
        assert_eq!(kind("stop_recording"), Message::StopRecordingAck);
        assert_eq!(kind("post_summarization"), Message::Ignored);
        assert_eq!(kind("something_new"), Message::Unknown);
        assert_eq!(classify(None), Message::Malformed);
    }

    #[test]
    fn reads_gladia_messages() {
        let final_transcript = r#"{"session_id":"s","created_at":"2025-09-19T12:34:10Z","type":"transcript",
            "data":{"id":"00-00000011","is_final":true,"utterance":{"start":0,"end":0.48,"confidence":0.91,
            "channel":0,"words":[{"word":"Hello","start":0,"end":0.35,"confidence":0.91}],
            "text":"Hello \"world\". \u00e9","language":"en"}}}"#;
        assert_eq!(
            parse(final_transcript),
            Message::Transcript {
                is_final: true,
                text: "Hello \"world\". é".into()
            }
        );
        let ack = r#"{"type":"audio_chunk","acknowledged":true,"error":null,
            "data":{"byte_range":[640,1920],"time_range":[0.02,0.06]}}"#;
        assert_eq!(parse(ack), Message::AudioAck(Some(1_280)));
        let refused =
            r#"{"type":"audio_chunk","acknowledged":false,"data":{"byte_range":[0,640]}}"#;
        assert_eq!(parse(refused), Message::AudioAck(None));
        let fields_first =
            r#"{"data":{"is_final":false,"utterance":{"text":"hel"}},"type":"transcript"}"#;
        assert_eq!(
            parse(fields_first),
            Message::Transcript {
                is_final: false,
                text: "hel".into()
            }
        );
        assert_eq!(
            parse(r#"{"type":"speech_start","data":{"time":1.24,"channel":0}}"#),
            Message::SpeechStart
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
            assert_eq!(parse(text), Message::Malformed, "{text:.40}");
        }
        assert_eq!(parse(r#"{"type":"brand_new"}"#), Message::Unknown);
        let odd_range = r#"{"type":"audio_chunk","acknowledged":true,"data":{"byte_range":[9,3]}}"#;
        assert_eq!(parse(odd_range), Message::AudioAck(None));
    }

    #[test]
    fn pcm_sizes() {
        assert_eq!(pcm_bytes_for_ms(10_000, 16_000), 320_000);
        assert_eq!(pcm_bytes_for_ms(20, 16_000), 640);
        assert_eq!(pcm_bytes_for_ms(u64::MAX, u32::MAX), u64::MAX);
    }
}
