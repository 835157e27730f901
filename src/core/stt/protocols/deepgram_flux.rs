//! Deepgram Flux (`/v2/listen?model=flux-general-en&encoding=linear16&sample_rate=16000`), the
//! conversational model, as PROVIDERS.md describes it.
//!
//! - **Auth (R6):** as listen v1: a temporary JWT from the app's backend (`POST /v1/auth/grant`)
//!   in the subprotocols (`["bearer", jwt]`), checked only at the handshake, so every connect gets
//!   a fresh one. The end-of-turn thresholds (`eot_threshold`, `eager_eot_threshold`,
//!   `eot_timeout_ms`) go in the URL the backend builds; a `config` from `provision()` is sent
//!   first as a `Configure` message (`{ thresholds: { … } }`, the SDK's shape).
//! - **Audio:** binary PCM16 frames, resent at most 1.25× real time (as v1).
//! - **One final per utterance (L8):** the `EndOfTurn` transcript, once per `turn_index` of the
//!   connection. `StartOfTurn` is the speech start; `Update`, `StartOfTurn` and `TurnResumed`
//!   transcripts are the partial. `EagerEndOfTurn` is [`Event::EagerFinal`] and `TurnResumed`
//!   [`Event::Resumed`]: hints, never finals.
//! - **Watermark (L4):** an `EndOfTurn`'s `audio_window_end`; between turns, an `Update` with no
//!   words finalizes its window but its last half second (speech the model has not announced with
//!   `StartOfTurn` yet may begin there). A turn cut by a drop is transcribed again, whole, from
//!   the resent audio on the next connection (each connection is a new session).
//! - **Keepalive:** none: v2 has no `KeepAlive` (a message outside its schema is an error), and
//!   an idle socket is kept by audio. Without audio the server may close it after its idle time;
//!   that close is retried.
//! - **Finish:** `ForceEndTurn` (the open turn ends at once: its `EndOfTurn` is the last final;
//!   `CloseStream` alone would drop it), then `CloseStream`; the server closes.
//! - **Closes:** 1008 (`DATA-0000`, undecodable audio) is a client bug: fatal. An `Error` message
//!   comes before a close, which says what it means; everything else is retried, and a refused
//!   handshake (an expired token) is a socket that never opened, which R5 handles.

use super::deepgram;
use crate::core::json::read_view;
use crate::core::stt::protocol::{
    merged_object, Codec, Credentials, Event, Framing, Profile, Watermark,
};
use alloc::borrow::Cow;
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// `{"type":"ForceEndTurn"}`: end the open turn now.
pub const FORCE_END_TURN: &str = r#"{"type":"ForceEndTurn"}"#;
/// `{"type":"CloseStream"}`: no more audio; the server closes.
pub const CLOSE_STREAM: &str = r#"{"type":"CloseStream"}"#;
/// How much of a silent window stays unfinalized: speech may start there unannounced.
const SILENCE_MARGIN_MS: u64 = 500;

/// Deepgram Flux.
pub const PROFILE: Profile = Profile {
    name: "deepgram-flux",
    framing: Framing::Binary,
    sample_rate: None,
    keepalive: None,
    credentials: Credentials::PerConnection,
    watermark: Watermark::FinalizedTime,
    pacing: deepgram::PACING,
    receipt_window_ms: 0,
    audio_after_start: false,
    eager_end_of_turn: true,
    closes: deepgram::CLOSES,
    codec: || Box::<DeepgramFlux>::default(),
};

/// Flux's codec: the turn under way on this connection.
#[derive(Debug, Default)]
pub struct DeepgramFlux {
    /// A turn began (`StartOfTurn`) and has not ended.
    in_turn: bool,
    /// The `turn_index` whose final went out on this connection, so a repeated `EndOfTurn`
    /// makes none.
    last_final: Option<u64>,
}

/// The fields of one server message that matter here.
#[derive(Debug, Default)]
struct View<'a> {
    kind: Option<Cow<'a, str>>,
    event: Option<Cow<'a, str>>,
    turn_index: Option<u64>,
    transcript: Option<Cow<'a, str>>,
    window_end_ms: Option<u64>,
}

fn read(text: &str) -> Option<View<'_>> {
    read_view(text, |view: &mut View<'_>, reader, key| match key {
        "type" => reader.string_into(&mut view.kind),
        "event" => reader.string_into(&mut view.event),
        "turn_index" => reader.whole_into(&mut view.turn_index),
        "transcript" => reader.string_into(&mut view.transcript),
        "audio_window_end" => reader.seconds_as_ms_into(&mut view.window_end_ms),
        _ => reader.skip(),
    })
}

impl DeepgramFlux {
    fn turn_info(&mut self, view: View<'_>, events: &mut Vec<Event>) {
        let (Some(event), Some(transcript)) = (view.event, view.transcript) else {
            return events.push(Event::Malformed);
        };
        let transcript = transcript.trim();
        let partial = |events: &mut Vec<Event>| {
            if !transcript.is_empty() {
                events.push(Event::Partial(transcript.to_owned()));
            }
        };
        let before = events.len();
        match event.as_ref() {
            "StartOfTurn" => {
                self.in_turn = true;
                events.push(Event::SpeechStart);
                partial(events);
            }
            "Update" if !self.in_turn && transcript.is_empty() => {
                let silent_until = view
                    .window_end_ms
                    .map(|end| end.saturating_sub(SILENCE_MARGIN_MS));
                if let Some(ms) = silent_until.filter(|&ms| ms > 0) {
                    events.push(Event::FinalizedUntilMs(ms));
                }
            }
            "Update" => partial(events),
            "EagerEndOfTurn" if !transcript.is_empty() => {
                events.push(Event::EagerFinal(transcript.to_owned()));
            }
            "TurnResumed" => {
                events.push(Event::Resumed);
                partial(events);
            }
            "EndOfTurn" => {
                self.in_turn = false;
                if let Some(end) = view.window_end_ms {
                    events.push(Event::FinalizedUntilMs(end));
                }
                let repeated = view.turn_index.is_some() && view.turn_index == self.last_final;
                if !repeated && !transcript.is_empty() {
                    self.last_final = view.turn_index;
                    events.push(Event::Final(transcript.to_owned()));
                }
            }
            "EagerEndOfTurn" => {}
            _ => events.push(Event::Unknown),
        }
        if events.len() == before {
            events.push(Event::Ignored);
        }
    }
}

impl Codec for DeepgramFlux {
    fn on_connect(&mut self, _url: &str) {
        // A new connection is a new session: turn numbers start again at 0.
        *self = DeepgramFlux::default();
    }

    fn decode(&mut self, text: &str, events: &mut Vec<Event>) {
        let Some(view) = read(text) else {
            return events.push(Event::Malformed);
        };
        match view.kind.as_deref() {
            Some("TurnInfo") => self.turn_info(view, events),
            // The close that follows an `Error` says what it means.
            Some("Connected" | "ConfigureSuccess" | "ConfigureFailure" | "Error") => {
                events.push(Event::Ignored)
            }
            Some(_) => events.push(Event::Unknown),
            None => events.push(Event::Malformed),
        }
    }

    fn start_message(&self, config: Option<&str>, _sample_rate: u32) -> Option<String> {
        config.map(|config| merged_object(r#"{"type":"Configure"}"#, Some(config)))
    }

    fn finish_messages(&mut self, _frames_sent: u64) -> Vec<String> {
        vec![FORCE_END_TURN.to_owned(), CLOSE_STREAM.to_owned()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::stt::protocol::CloseClass;

    fn decode(p: &mut DeepgramFlux, text: &str) -> Vec<Event> {
        let mut events = Vec::new();
        p.decode(text, &mut events);
        events
    }

    fn turn(event: &str, index: u64, transcript: &str, end: &str) -> String {
        format!(
            r#"{{"type":"TurnInfo","request_id":"r","sequence_id":3,"event":"{event}","turn_index":{index},"audio_window_start":0.0,"audio_window_end":{end},"transcript":"{transcript}","words":[],"end_of_turn_confidence":0.4}}"#
        )
    }

    #[test]
    fn a_turn_is_a_speech_start_partials_and_one_final() {
        let mut p = DeepgramFlux::default();
        assert_eq!(
            decode(
                &mut p,
                r#"{"type":"Connected","request_id":"r","sequence_id":0}"#
            ),
            [Event::Ignored]
        );
        assert_eq!(
            decode(&mut p, &turn("StartOfTurn", 0, "what", "0.5")),
            [Event::SpeechStart, Event::Partial("what".into())]
        );
        assert_eq!(
            decode(&mut p, &turn("Update", 0, "what is", "0.75")),
            [Event::Partial("what is".into())]
        );
        assert_eq!(
            decode(&mut p, &turn("EagerEndOfTurn", 0, "what is it", "1.0")),
            [Event::EagerFinal("what is it".into())]
        );
        assert_eq!(
            decode(&mut p, &turn("TurnResumed", 0, "what is it", "1.25")),
            [Event::Resumed, Event::Partial("what is it".into())]
        );
        assert_eq!(
            decode(&mut p, &turn("EndOfTurn", 0, "what is it like", "1.5")),
            [
                Event::FinalizedUntilMs(1_500),
                Event::Final("what is it like".into())
            ]
        );
        assert_eq!(
            decode(&mut p, &turn("EndOfTurn", 0, "what is it like", "1.5")),
            [Event::FinalizedUntilMs(1_500)],
            "one final per turn_index"
        );
        assert_eq!(
            decode(&mut p, &turn("StartOfTurn", 1, "", "2.0")),
            [Event::SpeechStart]
        );
    }

    #[test]
    fn silence_between_turns_is_finalized_but_its_last_half_second() {
        let mut p = DeepgramFlux::default();
        assert_eq!(
            decode(&mut p, &turn("Update", 0, "", "2.0")),
            [Event::FinalizedUntilMs(1_500)]
        );
        assert_eq!(
            decode(&mut p, &turn("Update", 0, "", "0.25")),
            [Event::Ignored]
        );
        decode(&mut p, &turn("StartOfTurn", 0, "", "2.25"));
        assert_eq!(
            decode(&mut p, &turn("Update", 0, "", "2.5")),
            [Event::Ignored],
            "inside a turn"
        );
    }

    #[test]
    fn a_new_connection_starts_turn_numbers_again() {
        let mut p = DeepgramFlux::default();
        decode(&mut p, &turn("EndOfTurn", 0, "hello", "1.0"));
        p.on_connect("wss://x");
        assert_eq!(
            decode(&mut p, &turn("EndOfTurn", 0, "again", "1.0")),
            [Event::FinalizedUntilMs(1_000), Event::Final("again".into())]
        );
    }

    #[test]
    fn other_messages_and_the_client_side() {
        let mut p = DeepgramFlux::default();
        assert_eq!(
            decode(
                &mut p,
                r#"{"type":"Error","sequence_id":1,"code":"UNPARSABLE_CLIENT_MESSAGE","description":"x"}"#
            ),
            [Event::Ignored]
        );
        assert_eq!(decode(&mut p, r#"{"type":"Brand_New"}"#), [Event::Unknown]);
        assert_eq!(
            decode(&mut p, &turn("Sideways", 0, "x", "1.0")),
            [Event::Unknown]
        );
        assert_eq!(
            decode(&mut p, r#"{"type":"TurnInfo","event":"Update"}"#),
            [Event::Malformed]
        );
        assert_eq!(decode(&mut p, "not json"), [Event::Malformed]);
        assert_eq!(
            decode(&mut p, r#"{"event":"EndOfTurn"}"#),
            [Event::Malformed]
        );
        assert_eq!(p.start_message(None, 16_000), None);
        assert_eq!(
            p.start_message(
                Some(r#"{"thresholds":{"eager_eot_threshold":0.5}}"#),
                16_000
            )
            .as_deref(),
            Some(r#"{"type":"Configure","thresholds":{"eager_eot_threshold":0.5}}"#)
        );
        assert_eq!(p.finish_messages(10), [FORCE_END_TURN, CLOSE_STREAM]);
        assert_eq!(PROFILE.close_class(1008), CloseClass::Fatal);
        assert_eq!(PROFILE.close_class(1011), CloseClass::Retry);
        assert_eq!(PROFILE.close_class(1005), CloseClass::Retry);
    }
}
