//! Speechmatics real-time (`/v2`), as PROVIDERS.md describes it.
//!
//! - **Auth (R6):** the app's backend mints a temporary key (`POST /v1/api_keys?type=rt`) that goes
//!   in the URL's query (`?jwt=`); it serves any number of sessions until it expires, and every
//!   connect gets a fresh one so a reconnect never meets an expired key.
//! - **Start:** `StartRecognition` first, the `config` from `provision()` merged into it (its
//!   top-level members replace the defaults'); audio only after `RecognitionStarted`.
//! - **Audio:** binary PCM16 frames. Each is receipted by `AudioAdded { seq_no }`: flow control (no
//!   more than 5 s of audio ahead of the receipts) and liveness, **not** the watermark — audio the
//!   server received but had not transcribed dies with its session (L4).
//! - **One final per utterance (L8):** `AddTranscript` pieces joined until `EndOfUtterance`;
//!   `AddPartialTranscript` is the caption. Pieces survive a reconnect, so an utterance cut by a
//!   drop ends with the words from both connections.
//! - **Watermark (L4):** the `end_time` of each `AddTranscript`.
//! - **Finish:** `EndOfStream` with `last_seq_no`, the number of frames sent on this connection
//!   (the last one *sent*: the official SDK's last *receipted* one drops trailing audio when receipts
//!   lag), then `EndOfTranscript` ends the stream; words still joining make the last final.
//! - **Closes:** 1003, 4001, 4003, 4004 and 4006 are fatal (protocol, authorization, model, quota);
//!   1011, 4005 (concurrency quota) and 4013 (job error) are throttled; 1008 (idle or session
//!   timeout) ends the session; other closes are retried.

use crate::core::json::read_view;
use crate::core::stt::protocol::{
    merged_object, CloseClass, CloseRule, Codec, Credentials, Event, Framing, Pacing, Profile,
    Watermark,
};
use crate::core::text::decimal;
use alloc::borrow::Cow;
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// How far audio may run ahead of the server's `AudioAdded` receipts.
pub const RECEIPT_WINDOW_MS: u64 = 5_000;

/// The Speechmatics real-time protocol and the utterance it is joining.
#[derive(Debug, Default)]
pub struct Speechmatics {
    /// `AddTranscript` pieces of the utterance under way.
    pieces: String,
}

/// Speechmatics real-time.
pub const PROFILE: Profile = Profile {
    name: "speechmatics",
    framing: Framing::Binary,
    sample_rate: None,
    keepalive: None,
    credentials: Credentials::PerConnection,
    watermark: Watermark::FinalizedTime,
    pacing: Pacing::UNPACED,
    receipt_window_ms: RECEIPT_WINDOW_MS,
    audio_after_start: true,
    eager_end_of_turn: false,
    closes: &[
        CloseRule::code(1003, CloseClass::Fatal),
        CloseRule::code(4001, CloseClass::Fatal),
        CloseRule::range(4003, 4004, CloseClass::Fatal),
        CloseRule::code(4006, CloseClass::Fatal),
        CloseRule::code(1011, CloseClass::Throttled),
        CloseRule::code(4005, CloseClass::Throttled),
        CloseRule::code(4013, CloseClass::Throttled),
        CloseRule::code(1008, CloseClass::SessionOver),
    ],
    codec: || Box::<Speechmatics>::default(),
};

#[derive(Debug, Default)]
struct View<'a> {
    message: Option<Cow<'a, str>>,
    seq_no: Option<u64>,
    /// `metadata.transcript` and `metadata.end_time`.
    transcript: Option<Cow<'a, str>>,
    end_ms: Option<u64>,
}

fn read(text: &str) -> Option<View<'_>> {
    read_view(text, |view: &mut View<'_>, reader, key| match key {
        "message" => reader.string_into(&mut view.message),
        "seq_no" => reader.whole_into(&mut view.seq_no),
        "metadata" => reader.object_or_skip(|reader, key| match key {
            "transcript" => reader.string_into(&mut view.transcript),
            "end_time" => reader.seconds_as_ms_into(&mut view.end_ms),
            _ => reader.skip(),
        }),
        _ => reader.skip(),
    })
}

/// `a` and `b`, joined by a space when both have words.
fn joined(a: &str, b: &str) -> String {
    match (a.trim(), b.trim()) {
        ("", b) => b.to_owned(),
        (a, "") => a.to_owned(),
        (a, b) => [a, " ", b].concat(),
    }
}

/// Speechmatics attaches punctuation as its own result: no space before it.
fn appended(pieces: &str, piece: &str) -> String {
    let piece = piece.trim();
    if piece.starts_with(['.', ',', '?', '!', ';', ':']) {
        [pieces.trim_end(), piece].concat()
    } else {
        joined(pieces, piece)
    }
}

impl Speechmatics {
    fn finish_utterance(&mut self, events: &mut Vec<Event>) {
        let text = core::mem::take(&mut self.pieces);
        events.push(if text.trim().is_empty() {
            Event::Ignored
        } else {
            Event::Final(text)
        });
    }
}

impl Codec for Speechmatics {
    fn decode(&mut self, text: &str, events: &mut Vec<Event>) {
        let Some(view) = read(text) else {
            return events.push(Event::Malformed);
        };
        match view.message.as_deref() {
            Some("RecognitionStarted") => events.push(Event::Started),
            Some("AudioAdded") => match view.seq_no {
                Some(seq_no) => events.push(Event::Received(seq_no)),
                None => events.push(Event::Malformed),
            },
            Some("AddPartialTranscript") => match view.transcript {
                Some(partial) => events.push(Event::Partial(appended(&self.pieces, &partial))),
                None => events.push(Event::Malformed),
            },
            Some("AddTranscript") => {
                let Some(transcript) = view.transcript else {
                    return events.push(Event::Malformed);
                };
                if let Some(end) = view.end_ms {
                    events.push(Event::FinalizedUntilMs(end));
                }
                self.pieces = appended(&self.pieces, &transcript);
                if !self.pieces.is_empty() {
                    events.push(Event::Partial(self.pieces.clone()));
                }
            }
            Some("EndOfUtterance") => self.finish_utterance(events),
            Some("EndOfTranscript") => {
                if !self.pieces.trim().is_empty() {
                    self.finish_utterance(events);
                }
                events.push(Event::Finished);
            }
            // The close that follows an `Error` says what it means; `Info`/`Warning` are notes.
            Some("Info" | "Warning" | "Error") => events.push(Event::Ignored),
            Some(_) => events.push(Event::Unknown),
            None => events.push(Event::Malformed),
        }
    }

    fn start_message(&self, config: Option<&str>, sample_rate: u32) -> Option<String> {
        let base = [r#"{"message":"StartRecognition","audio_format":{"type":"raw","encoding":"pcm_s16le","sample_rate":"#, &decimal(sample_rate.into()), r#"},"transcription_config":{"language":"en","enable_partials":true,"max_delay":1.0,"conversation_config":{"end_of_utterance_silence_trigger":0.5}}}"#].concat();
        Some(merged_object(&base, config))
    }

    fn finish_messages(&mut self, frames_sent: u64) -> Vec<String> {
        vec![[
            r#"{"message":"EndOfStream","last_seq_no":"#,
            &decimal(frames_sent),
            r#"}"#,
        ]
        .concat()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(p: &mut Speechmatics, text: &str) -> Vec<Event> {
        let mut events = Vec::new();
        p.decode(text, &mut events);
        events
    }

    #[test]
    fn pieces_join_until_end_of_utterance_with_punctuation_attached() {
        let mut p = Speechmatics::default();
        decode(
            &mut p,
            r#"{"message":"AddTranscript","metadata":{"transcript":"what is ","start_time":0.1,"end_time":0.6},"results":[]}"#,
        );
        decode(
            &mut p,
            r#"{"message":"AddTranscript","metadata":{"transcript":"it","start_time":0.6,"end_time":0.9},"results":[]}"#,
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"message":"AddTranscript","metadata":{"transcript":"?","start_time":0.9,"end_time":0.9},"results":[]}"#
            ),
            [
                Event::FinalizedUntilMs(900),
                Event::Partial("what is it?".into())
            ]
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"message":"EndOfUtterance","metadata":{"start_time":0.9,"end_time":0.9}}"#
            ),
            [Event::Final("what is it?".into())]
        );
        assert_eq!(
            decode(&mut p, r#"{"message":"EndOfUtterance","metadata":{}}"#),
            [Event::Ignored],
            "a second EndOfUtterance makes no final"
        );
    }

    #[test]
    fn start_message_merges_the_config() {
        let mut p = Speechmatics::default();
        let start = p
            .start_message(
                Some(r#"{"transcription_config":{"language":"de"}}"#),
                16_000,
            )
            .unwrap_or_default();
        assert!(start.starts_with(r#"{"message":"StartRecognition","audio_format":{"type":"raw","encoding":"pcm_s16le","sample_rate":16000}"#));
        assert!(
            start.ends_with(r#","transcription_config":{"language":"de"}}"#),
            "{start}"
        );
        assert_eq!(
            p.finish_messages(42),
            [r#"{"message":"EndOfStream","last_seq_no":42}"#]
        );
    }

    #[test]
    fn closes() {
        for code in [1003, 4001, 4003, 4004, 4006] {
            assert_eq!(PROFILE.close_class(code), CloseClass::Fatal, "{code}");
        }
        for code in [1011, 4005, 4013] {
            assert_eq!(PROFILE.close_class(code), CloseClass::Throttled, "{code}");
        }
        assert_eq!(PROFILE.close_class(1008), CloseClass::SessionOver);
        assert_eq!(PROFILE.close_class(1006), CloseClass::Retry);
        assert_eq!(PROFILE.close_class(4002), CloseClass::Retry);
    }

    #[test]
    fn other_messages() {
        let mut p = Speechmatics::default();
        assert_eq!(
            decode(&mut p, r#"{"message":"RecognitionStarted","id":"x"}"#),
            [Event::Started]
        );
        assert_eq!(
            decode(&mut p, r#"{"message":"AudioAdded","seq_no":3}"#),
            [Event::Received(3)]
        );
        assert_eq!(
            decode(&mut p, r#"{"message":"Warning","type":"idle_timeout"}"#),
            [Event::Ignored]
        );
        assert_eq!(
            decode(&mut p, r#"{"message":"EndOfTranscript"}"#),
            [Event::Finished]
        );
        assert_eq!(decode(&mut p, r#"{"message":"New"}"#), [Event::Unknown]);
        assert_eq!(
            decode(&mut p, r#"{"message":"AudioAdded"}"#),
            [Event::Malformed]
        );
        assert_eq!(decode(&mut p, "[]"), [Event::Malformed]);
    }
}
