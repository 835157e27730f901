//! AssemblyAI Universal-Streaming v3 (`/v3/ws`), as PROVIDERS.md describes it.
//!
//! - **Auth (R6):** each token (`GET /v3/token` on the app's backend) works for one session, so
//!   every connect gets a fresh one; it goes in the URL's query (`&token=`).
//! - **Audio:** binary PCM16 frames of 50–1000 ms (others close 3007): smaller frames are joined,
//!   larger ones split, and the last one is padded with silence on stop. Never faster than real
//!   time (3007), a resent backlog included.
//! - **One final per turn (L8):** with `format_turns=true` in the URL the server sends a turn's
//!   `end_of_turn` result twice, unformatted then formatted: the final is the formatted one, once
//!   per `turn_order`. Without it, the unformatted one is the final.
//! - **Watermark (L4):** the `end` (ms of this connection's audio) of words with
//!   `word_is_final`. Final words of a turn cut by a drop are kept and start the next final.
//! - **Finish:** `ForceEndpoint` (the turn under way ends) then `Terminate`; the server answers
//!   `Termination` and closes.
//! - **Keepalive:** `KeepAlive` after 5 s without a frame (needed only with `inactivity_timeout`).
//! - **Closes:** 1008 (bad, reused or expired token) gets one fresh token, and is fatal if it
//!   comes again before a session began; 3005 retry; 3006 and 3007 (client bugs) fatal; 3008
//!   (session expired) the session is over; 3009 (too many sessions) throttled.

use crate::core::json::read_view;
use crate::core::stt::protocol::{
    CloseClass, CloseRule, Codec, Credentials, Event, Framing, Keepalive, Pacing, Profile,
    Watermark,
};
use crate::core::text;
use alloc::borrow::Cow;
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// `{"type":"ForceEndpoint"}`: end the turn under way.
pub const FORCE_ENDPOINT: &str = r#"{"type":"ForceEndpoint"}"#;
/// `{"type":"Terminate"}`: end the session.
pub const TERMINATE: &str = r#"{"type":"Terminate"}"#;
/// `{"type":"KeepAlive"}`.
pub const KEEPALIVE: &str = r#"{"type":"KeepAlive"}"#;

/// The AssemblyAI v3 protocol and the turn it is following.
#[derive(Debug, Default)]
pub struct AssemblyAi {
    /// The URL asks for formatted turns: wait for the formatted `end_of_turn`.
    formatted: bool,
    /// The last `turn_order` that had its final on this connection.
    last_final: Option<u64>,
    /// Final words of the turn under way on this connection.
    final_words: String,
    /// Final words of a turn a drop cut, carried into the next final.
    carried: String,
    /// A 1008 came and no session began since.
    refused: bool,
}

/// AssemblyAI Universal-Streaming v3.
pub const PROFILE: Profile = Profile {
    name: "assemblyai",
    framing: Framing::Binary,
    sample_rate: None,
    keepalive: Some(Keepalive {
        message: KEEPALIVE,
        idle_ms: 5_000,
    }),
    credentials: Credentials::PerConnection,
    watermark: Watermark::FinalizedTime,
    pacing: Pacing {
        rate_percent: 100,
        allowance_ms: 100,
        min_frame_ms: 50,
        max_frame_ms: 1_000,
    },
    receipt_window_ms: 0,
    audio_after_start: false,
    eager_end_of_turn: false,
    closes: &[
        CloseRule::range(3006, 3007, CloseClass::Fatal),
        CloseRule::code(3008, CloseClass::SessionOver),
        CloseRule::code(3009, CloseClass::Throttled),
    ],
    codec: || Box::<AssemblyAi>::default(),
};

#[derive(Debug, Default)]
struct View<'a> {
    kind: Option<Cow<'a, str>>,
    turn_order: Option<u64>,
    formatted: bool,
    end_of_turn: bool,
    transcript: Option<Cow<'a, str>>,
    /// Texts of all words, and of the final ones.
    words: Vec<Cow<'a, str>>,
    final_words: Vec<Cow<'a, str>>,
    /// Largest `end` of a final word.
    final_end: Option<u64>,
}

fn read(text: &str) -> Option<View<'_>> {
    read_view(text, |view: &mut View<'_>, reader, key| match key {
        "type" => reader.string_into(&mut view.kind),
        "turn_order" => reader.whole_into(&mut view.turn_order),
        "turn_is_formatted" => reader.flag_into(&mut view.formatted),
        "end_of_turn" => reader.flag_into(&mut view.end_of_turn),
        "transcript" => reader.string_into(&mut view.transcript),
        "words" => reader.array_or_skip(|reader| {
            let (mut text, mut end, mut is_final) = (None, None, false);
            reader.object_or_skip(|reader, key| match key {
                "text" => reader.string_into(&mut text),
                "end" => {
                    end = reader.number_or_skip()?.and_then(|n| n.parse::<u64>().ok());
                    Ok(())
                }
                "word_is_final" => reader.flag_into(&mut is_final),
                _ => reader.skip(),
            })?;
            if let Some(text) = text {
                if is_final {
                    view.final_words.push(text.clone());
                    view.final_end = view.final_end.max(end);
                }
                view.words.push(text);
            }
            Ok(())
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

impl AssemblyAi {
    fn on_turn(&mut self, view: View<'_>, events: &mut Vec<Event>) {
        let (Some(order), Some(transcript)) = (view.turn_order, view.transcript) else {
            return events.push(Event::Malformed);
        };
        if let Some(end) = view.final_end {
            events.push(Event::FinalizedUntilMs(end));
        }
        if self.last_final.is_some_and(|last| order <= last) {
            // The formatted repeat of a turn already final, or a stale one: never a second final.
            return events.push(Event::Ignored);
        }
        if view.end_of_turn && (view.formatted || !self.formatted) {
            self.last_final = Some(order);
            self.final_words.clear();
            let text = joined(&core::mem::take(&mut self.carried), &transcript);
            return events.push(Event::Final(text));
        }
        if view.end_of_turn {
            // The unformatted end of turn: the formatted one follows.
            return events.push(Event::Ignored);
        }
        self.final_words = view.final_words.join(" ");
        let words = view.words.join(" ");
        events.push(Event::Partial(joined(&self.carried, &words)));
    }
}

impl Codec for AssemblyAi {
    fn on_connect(&mut self, url: &str) {
        self.formatted = text::contains(url, "format_turns=true");
        // A new connection is a new session: turn numbers start again, and the final words of
        // a turn the drop cut begin the next final.
        self.last_final = None;
        let cut = core::mem::take(&mut self.final_words);
        self.carried = joined(&self.carried, &cut);
    }

    fn decode(&mut self, text: &str, events: &mut Vec<Event>) {
        let Some(view) = read(text) else {
            return events.push(Event::Malformed);
        };
        match view.kind.as_deref() {
            Some("Turn") => self.on_turn(view, events),
            Some("Begin") => {
                self.refused = false;
                events.push(Event::Ignored);
            }
            Some("SpeechStarted") => events.push(Event::SpeechStart),
            Some("Termination") => events.push(Event::Finished),
            // The close that follows says what it means.
            Some("Error") => events.push(Event::Ignored),
            Some(_) => events.push(Event::Unknown),
            None => events.push(Event::Malformed),
        }
    }

    fn finish_messages(&mut self, _frames_sent: u64) -> Vec<String> {
        vec![FORCE_ENDPOINT.to_owned(), TERMINATE.to_owned()]
    }

    fn close_class(&mut self, code: u16) -> Option<CloseClass> {
        // One 1008 gets a fresh token; a second before a session began is fatal.
        (code == 1008).then(|| {
            if core::mem::replace(&mut self.refused, true) {
                CloseClass::Fatal
            } else {
                CloseClass::Retry
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::stt::protocol::classify_close;

    fn decode(p: &mut AssemblyAi, text: &str) -> Vec<Event> {
        let mut events = Vec::new();
        p.decode(text, &mut events);
        events
    }

    fn turn(
        order: u64,
        end_of_turn: bool,
        formatted: bool,
        transcript: &str,
        words: &[(&str, u64, bool)],
    ) -> String {
        let words: Vec<String> = words
            .iter()
            .map(|(text, end, is_final)| {
                format!(r#"{{"text":"{text}","start":0,"end":{end},"confidence":0.9,"word_is_final":{is_final}}}"#)
            })
            .collect();
        format!(
            r#"{{"type":"Turn","turn_order":{order},"turn_is_formatted":{formatted},"end_of_turn":{end_of_turn},"transcript":"{transcript}","end_of_turn_confidence":0.9,"words":[{}]}}"#,
            words.join(",")
        )
    }

    #[test]
    fn the_formatted_end_of_turn_is_the_one_final() {
        let mut p = AssemblyAi::default();
        p.on_connect("wss://x/v3/ws?sample_rate=16000&format_turns=true&token=t");
        assert_eq!(
            decode(
                &mut p,
                &turn(
                    0,
                    false,
                    false,
                    "what",
                    &[("what", 300, true), ("is", 500, false)]
                )
            ),
            [
                Event::FinalizedUntilMs(300),
                Event::Partial("what is".into())
            ]
        );
        assert_eq!(
            decode(
                &mut p,
                &turn(
                    0,
                    true,
                    false,
                    "what is",
                    &[("what", 300, true), ("is", 500, true)]
                )
            ),
            [Event::FinalizedUntilMs(500), Event::Ignored]
        );
        assert_eq!(
            decode(
                &mut p,
                &turn(
                    0,
                    true,
                    true,
                    "What is?",
                    &[("What", 300, true), ("is?", 500, true)]
                )
            ),
            [
                Event::FinalizedUntilMs(500),
                Event::Final("What is?".into())
            ]
        );
        assert_eq!(
            decode(&mut p, &turn(0, true, true, "What is?", &[])),
            [Event::Ignored],
            "a repeat makes no second final"
        );
        assert_eq!(
            decode(
                &mut p,
                &turn(1, true, true, "Next.", &[("Next.", 900, true)])
            ),
            [Event::FinalizedUntilMs(900), Event::Final("Next.".into())]
        );
    }

    #[test]
    fn without_format_turns_the_unformatted_end_of_turn_is_final() {
        let mut p = AssemblyAi::default();
        p.on_connect("wss://x/v3/ws?sample_rate=16000&token=t");
        assert_eq!(
            decode(&mut p, &turn(0, true, false, "hello", &[])),
            [Event::Final("hello".into())]
        );
    }

    #[test]
    fn final_words_of_a_cut_turn_start_the_next_final() {
        let mut p = AssemblyAi::default();
        p.on_connect("wss://x/v3/ws?format_turns=true&token=a");
        decode(
            &mut p,
            &turn(
                0,
                false,
                false,
                "what is",
                &[("what", 300, true), ("is", 500, true), ("the", 600, false)],
            ),
        );
        p.on_connect("wss://x/v3/ws?format_turns=true&token=b");
        assert_eq!(
            decode(&mut p, &turn(0, false, false, "", &[("the", 200, false)])),
            [Event::Partial("what is the".into())]
        );
        assert_eq!(
            decode(
                &mut p,
                &turn(
                    0,
                    true,
                    true,
                    "the weather.",
                    &[("the", 200, true), ("weather.", 600, true)]
                )
            ),
            [
                Event::FinalizedUntilMs(600),
                Event::Final("what is the weather.".into())
            ]
        );
    }

    #[test]
    fn closes_and_other_messages() {
        let mut p = AssemblyAi::default();
        assert_eq!(
            classify_close(&PROFILE, &mut p, 1008),
            CloseClass::Retry,
            "a fresh token once"
        );
        assert_eq!(
            classify_close(&PROFILE, &mut p, 1008),
            CloseClass::Fatal,
            "then terminal"
        );
        decode(&mut p, r#"{"type":"Begin","id":"s","expires_at":1}"#);
        assert_eq!(
            classify_close(&PROFILE, &mut p, 1008),
            CloseClass::Retry,
            "a session began in between"
        );
        assert_eq!(classify_close(&PROFILE, &mut p, 3005), CloseClass::Retry);
        assert_eq!(classify_close(&PROFILE, &mut p, 3006), CloseClass::Fatal);
        assert_eq!(classify_close(&PROFILE, &mut p, 3007), CloseClass::Fatal);
        assert_eq!(
            classify_close(&PROFILE, &mut p, 3008),
            CloseClass::SessionOver
        );
        assert_eq!(
            classify_close(&PROFILE, &mut p, 3009),
            CloseClass::Throttled
        );
        assert_eq!(classify_close(&PROFILE, &mut p, 1006), CloseClass::Retry);
        assert_eq!(
            decode(&mut p, r#"{"type":"SpeechStarted","timestamp":120}"#),
            [Event::SpeechStart]
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"type":"Termination","audio_duration_seconds":3,"session_duration_seconds":4}"#
            ),
            [Event::Finished]
        );
        assert_eq!(
            decode(&mut p, r#"{"type":"Warning","warning_code":1}"#),
            [Event::Unknown]
        );
        assert_eq!(decode(&mut p, r#"{"type":"Turn"}"#), [Event::Malformed]);
        assert_eq!(decode(&mut p, "{"), [Event::Malformed]);
    }
}
