//! Deepgram listen v1 (`/v1/listen`), as PROVIDERS.md describes it.
//!
//! - **Auth (R6):** the app's backend mints a temporary JWT (`POST /v1/auth/grant`, 30 s by
//!   default) that is checked only at the handshake, so every connect gets a fresh one:
//!   `provision()` returns `{ url, protocols: ["bearer", jwt] }` each time.
//! - **Audio:** binary PCM16 frames, never an empty one (that closes the socket); resent at most
//!   1.25× real time.
//! - **One final per utterance (L8):** `is_final` results are finalized *segments*, joined until
//!   the first `speech_final: true` or `UtteranceEnd`, whichever comes first; the other finds
//!   nothing left to finalize. Segments survive a reconnect, so an utterance cut by a drop ends
//!   with the words from both connections. Interim results are partials (segments + interim).
//! - **Watermark (L4):** an `is_final` result covers `[start, start + duration]` s of this
//!   connection's audio; nothing before its end is resent.
//! - **Keepalive (L9):** `{"type":"KeepAlive"}` after 4 s without a frame (the server closes
//!   1011 `NET-0001` after 10 s).
//! - **Finish:** `Finalize` (flush) then `CloseStream`; the server sends what is left, `Metadata`,
//!   and closes. A flushed result (`from_finalize`) or `Metadata` ends an utterance that no
//!   `speech_final` ended.
//! - **Closes:** 1008 (`DATA-0000`, undecodable audio) is a client bug: fatal. Everything else
//!   (1011 `NET-0000`/`NET-0001`, 1000, 1006) is retried; a refused handshake (expired token)
//!   is a socket that never opened, which R5 handles with fresh tokens.

use crate::core::json::read_view;
use crate::core::stt::protocol::{
    CloseClass, CloseRule, Codec, Credentials, Event, Framing, Keepalive, Pacing, Profile,
    Watermark,
};
use alloc::borrow::Cow;
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// `{"type":"KeepAlive"}`.
pub const KEEPALIVE: &str = r#"{"type":"KeepAlive"}"#;
/// `{"type":"Finalize"}`: flush what the server buffered.
pub const FINALIZE: &str = r#"{"type":"Finalize"}"#;
/// `{"type":"CloseStream"}`: flush, send `Metadata`, close.
pub const CLOSE_STREAM: &str = r#"{"type":"CloseStream"}"#;

/// The Deepgram listen v1 protocol and the utterance it is joining.
#[derive(Debug, Default)]
pub struct Deepgram {
    /// Finalized segments of the utterance under way, joined by spaces.
    segments: String,
}

/// Deepgram listen v1.
pub const PROFILE: Profile = Profile {
    name: "deepgram",
    framing: Framing::Binary,
    sample_rate: None,
    keepalive: Some(Keepalive {
        message: KEEPALIVE,
        idle_ms: 4_000,
    }),
    credentials: Credentials::PerConnection,
    watermark: Watermark::FinalizedTime,
    pacing: PACING,
    receipt_window_ms: 0,
    audio_after_start: false,
    eager_end_of_turn: false,
    closes: CLOSES,
    codec: || Box::<Deepgram>::default(),
};

/// How fast Deepgram takes audio (a backlog at most 1.25× real time); Flux's limit too.
pub(super) const PACING: Pacing = Pacing {
    rate_percent: 125,
    allowance_ms: 250,
    min_frame_ms: 0,
    max_frame_ms: 0,
};

/// Deepgram's fatal close (1008: audio it cannot decode); Flux's too.
pub(super) const CLOSES: &[CloseRule] = &[CloseRule::code(1008, CloseClass::Fatal)];

/// The fields of one server message that matter here.
#[derive(Debug, Default)]
struct View<'a> {
    kind: Option<Cow<'a, str>>,
    is_final: bool,
    speech_final: bool,
    from_finalize: bool,
    start_ms: Option<u64>,
    duration_ms: Option<u64>,
    /// `channel.alternatives[0].transcript`.
    transcript: Option<Cow<'a, str>>,
}

fn read(text: &str) -> Option<View<'_>> {
    read_view(text, |view: &mut View<'_>, reader, key| match key {
        "type" => reader.string_into(&mut view.kind),
        "is_final" => reader.flag_into(&mut view.is_final),
        "speech_final" => reader.flag_into(&mut view.speech_final),
        "from_finalize" => reader.flag_into(&mut view.from_finalize),
        "start" => reader.seconds_as_ms_into(&mut view.start_ms),
        "duration" => reader.seconds_as_ms_into(&mut view.duration_ms),
        "channel" => reader.object_or_skip(|reader, key| match key {
            "alternatives" => {
                let mut first = true;
                reader.array_or_skip(|reader| {
                    if !core::mem::take(&mut first) {
                        return reader.skip();
                    }
                    reader.object_or_skip(|reader, key| match key {
                        "transcript" => reader.string_into(&mut view.transcript),
                        _ => reader.skip(),
                    })
                })
            }
            _ => reader.skip(),
        }),
        _ => reader.skip(),
    })
}

impl Deepgram {
    /// `segments` and `more`, joined by a space.
    fn with(&self, more: &str) -> String {
        let more = more.trim();
        match (self.segments.is_empty(), more.is_empty()) {
            (_, true) => self.segments.clone(),
            (true, false) => more.to_owned(),
            (false, false) => [&self.segments, " ", more].concat(),
        }
    }

    /// The utterance is over: its one final, if it has any words.
    fn finish_utterance(&mut self, events: &mut Vec<Event>) {
        let text = core::mem::take(&mut self.segments);
        events.push(if text.is_empty() {
            Event::Ignored
        } else {
            Event::Final(text)
        });
    }
}

impl Codec for Deepgram {
    fn decode(&mut self, text: &str, events: &mut Vec<Event>) {
        let Some(view) = read(text) else {
            return events.push(Event::Malformed);
        };
        match view.kind.as_deref() {
            Some("Results") => {
                let Some(transcript) = view.transcript else {
                    return events.push(Event::Malformed);
                };
                if !view.is_final {
                    return events.push(Event::Partial(self.with(&transcript)));
                }
                if let (Some(start), Some(duration)) = (view.start_ms, view.duration_ms) {
                    events.push(Event::FinalizedUntilMs(start.saturating_add(duration)));
                }
                self.segments = self.with(&transcript);
                // A `Finalize` flush ends the utterance too: no `speech_final` may follow it.
                if view.speech_final || view.from_finalize {
                    self.finish_utterance(events);
                } else if !self.segments.is_empty() {
                    events.push(Event::Partial(self.segments.clone()));
                }
            }
            Some("UtteranceEnd") => self.finish_utterance(events),
            Some("SpeechStarted") => events.push(Event::SpeechStart),
            Some("Metadata") => {
                // The stream is over: words still joining make the last final.
                if !self.segments.is_empty() {
                    self.finish_utterance(events);
                }
                events.push(Event::Finished);
            }
            Some(_) => events.push(Event::Unknown),
            None => events.push(Event::Malformed),
        }
    }

    fn finish_messages(&mut self, _frames_sent: u64) -> Vec<String> {
        vec![FINALIZE.to_owned(), CLOSE_STREAM.to_owned()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(protocol: &mut Deepgram, text: &str) -> Vec<Event> {
        let mut events = Vec::new();
        protocol.decode(text, &mut events);
        events
    }

    fn result(transcript: &str, is_final: bool, speech_final: bool, start: &str) -> String {
        format!(
            r#"{{"type":"Results","channel_index":[0,1],"duration":0.5,"start":{start},"is_final":{is_final},"speech_final":{speech_final},"channel":{{"alternatives":[{{"transcript":"{transcript}","confidence":0.9,"words":[]}},{{"transcript":"other"}}]}},"metadata":{{"request_id":"r"}}}}"#
        )
    }

    #[test]
    fn segments_join_until_speech_final_and_utterance_end_adds_nothing() {
        let mut p = Deepgram::default();
        assert_eq!(
            decode(&mut p, &result("what is", false, false, "0.0")),
            [Event::Partial("what is".into())]
        );
        assert_eq!(
            decode(&mut p, &result("what is the", true, false, "0.0")),
            [
                Event::FinalizedUntilMs(500),
                Event::Partial("what is the".into())
            ]
        );
        assert_eq!(
            decode(&mut p, &result("weather", false, false, "0.5")),
            [Event::Partial("what is the weather".into())]
        );
        assert_eq!(
            decode(&mut p, &result("weather", true, true, "0.5")),
            [
                Event::FinalizedUntilMs(1_000),
                Event::Final("what is the weather".into())
            ]
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"type":"UtteranceEnd","channel":[0,1],"last_word_end":0.9}"#
            ),
            [Event::Ignored]
        );
    }

    #[test]
    fn utterance_end_finishes_when_speech_final_never_came() {
        let mut p = Deepgram::default();
        decode(&mut p, &result("hello", true, false, "0.0"));
        assert_eq!(
            decode(&mut p, r#"{"type":"UtteranceEnd","last_word_end":0.4}"#),
            [Event::Final("hello".into())]
        );
        // A late speech_final with nothing new makes no second final.
        assert_eq!(
            decode(&mut p, &result("", true, true, "0.5")),
            [Event::FinalizedUntilMs(1_000), Event::Ignored]
        );
    }

    #[test]
    fn a_finalize_flush_or_the_metadata_ends_the_utterance() {
        let mut p = Deepgram::default();
        decode(&mut p, &result("last", true, false, "0.0"));
        let flushed = r#"{"type":"Results","start":0.5,"duration":0.2,"is_final":true,"speech_final":false,"from_finalize":true,"channel":{"alternatives":[{"transcript":"words"}]}}"#;
        assert_eq!(
            decode(&mut p, flushed),
            [
                Event::FinalizedUntilMs(700),
                Event::Final("last words".into())
            ]
        );
        decode(&mut p, &result("more", true, false, "0.7"));
        assert_eq!(
            decode(&mut p, r#"{"type":"Metadata","request_id":"r"}"#),
            [Event::Final("more".into()), Event::Finished]
        );
    }

    #[test]
    fn other_messages() {
        let mut p = Deepgram::default();
        assert_eq!(
            decode(
                &mut p,
                r#"{"type":"SpeechStarted","channel":[0],"timestamp":1.2}"#
            ),
            [Event::SpeechStart]
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"type":"Metadata","request_id":"r","duration":3.1}"#
            ),
            [Event::Finished]
        );
        assert_eq!(decode(&mut p, r#"{"type":"Brand_New"}"#), [Event::Unknown]);
        assert_eq!(decode(&mut p, r#"{"type":"Results"}"#), [Event::Malformed]);
        assert_eq!(decode(&mut p, "not json"), [Event::Malformed]);
        assert_eq!(decode(&mut p, r#"{"is_final":true}"#), [Event::Malformed]);
    }

    #[test]
    fn closes() {
        assert_eq!(PROFILE.close_class(1011), CloseClass::Retry);
        assert_eq!(PROFILE.close_class(1008), CloseClass::Fatal);
        assert_eq!(PROFILE.close_class(1006), CloseClass::Retry);
        assert_eq!(PROFILE.close_class(4403), CloseClass::Retry);
    }
}
