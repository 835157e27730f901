//! Soniox real-time (`/transcribe-websocket`), as PROVIDERS.md describes it.
//!
//! - **Auth (R6):** the app's backend mints a temporary key (`POST /v1/auth/temporary-api-key`,
//!   `usage_type: "transcribe_websocket"`) and `provision()` returns it in `config`
//!   (`{ api_key }`), which goes into the configuration message; every connect gets a fresh one
//!   (a key may be single-use).
//! - **Start:** the configuration first (`model`, `audio_format: "pcm_s16le"`, the capture rate,
//!   one channel, endpoint detection on; `config`'s members replace these), then binary audio.
//! - **One final per utterance (L8):** final tokens (sub-words, their own spaces included) are
//!   joined until the `<end>` token; non-final tokens make the partial. Final tokens survive a
//!   reconnect, so an utterance cut by a drop ends with the words from both connections.
//! - **Watermark (L4):** `final_audio_proc_ms`.
//! - **Keepalive (L9):** `{"type":"keepalive"}` after 10 s without a frame (the server wants one
//!   within 20 s).
//! - **Finish:** `{"type":"finalize"}` (the `<fin>` token answers it: words still joining are the
//!   last final), then an empty text frame (end of audio): the server answers `finished: true`.
//! - **Pacing:** about real time (bursts may disconnect): a backlog is resent at real time.
//! - **Errors:** `{ error_code, error_message }` comes before the close, whose code is not
//!   documented: the close is classified by the error — 400, 401, 402 and 403 fatal; 429
//!   throttled; 408, 500 and 503 (start again at once) and a close without an error retried.

use crate::core::json::read_view;
use crate::core::stt::protocol::{
    merged_object, CloseClass, Codec, Credentials, Event, Framing, Keepalive, Pacing, Profile,
    Watermark,
};
use crate::core::text::decimal;
use alloc::borrow::Cow;
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// `{"type":"keepalive"}`.
pub const KEEPALIVE: &str = r#"{"type":"keepalive"}"#;
/// `{"type":"finalize"}`: finalize every token so far.
pub const FINALIZE: &str = r#"{"type":"finalize"}"#;
/// The model asked for unless `config` names one.
pub const DEFAULT_MODEL: &str = "stt-rt-v3";

/// The Soniox real-time protocol and the utterance it is joining.
#[derive(Debug, Default)]
pub struct Soniox {
    /// Final tokens of the utterance under way, as sent (their own spaces included).
    finals: String,
    /// The `error_code` of the error that came before the close, if any.
    error_code: Option<u16>,
}

/// Soniox real-time.
pub const PROFILE: Profile = Profile {
    name: "soniox",
    framing: Framing::Binary,
    sample_rate: None,
    keepalive: Some(Keepalive {
        message: KEEPALIVE,
        idle_ms: 10_000,
    }),
    credentials: Credentials::PerConnection,
    watermark: Watermark::FinalizedTime,
    pacing: Pacing {
        rate_percent: 100,
        allowance_ms: 500,
        min_frame_ms: 0,
        max_frame_ms: 0,
    },
    receipt_window_ms: 0,
    audio_after_start: false,
    eager_end_of_turn: false,
    // The close's code is not documented: the error before it says what it means.
    closes: &[],
    codec: || Box::<Soniox>::default(),
};

#[derive(Debug, Default)]
struct View<'a> {
    /// Token texts with `is_final`, in order.
    tokens: Vec<(Cow<'a, str>, bool)>,
    has_tokens: bool,
    final_audio_proc_ms: Option<u64>,
    finished: bool,
    error_code: Option<u16>,
}

fn read(text: &str) -> Option<View<'_>> {
    read_view(text, |view: &mut View<'_>, reader, key| match key {
        "tokens" => {
            view.has_tokens = true;
            reader.array_or_skip(|reader| {
                let (mut text, mut is_final) = (None, false);
                reader.object_or_skip(|reader, key| match key {
                    "text" => reader.string_into(&mut text),
                    "is_final" => reader.flag_into(&mut is_final),
                    _ => reader.skip(),
                })?;
                if let Some(text) = text {
                    view.tokens.push((text, is_final));
                }
                Ok(())
            })
        }
        "final_audio_proc_ms" => reader.whole_into(&mut view.final_audio_proc_ms),
        "finished" => reader.flag_into(&mut view.finished),
        "error_code" => reader.whole_into(&mut view.error_code),
        _ => reader.skip(),
    })
}

impl Soniox {
    fn finish_utterance(&mut self, events: &mut Vec<Event>) {
        let text = core::mem::take(&mut self.finals);
        let text = text.trim();
        if !text.is_empty() {
            events.push(Event::Final(text.to_owned()));
        }
    }
}

impl Codec for Soniox {
    fn on_connect(&mut self, _url: &str) {
        self.error_code = None;
        // A new session's first token has no leading space: keep the carried words apart.
        if !self.finals.is_empty() && !self.finals.ends_with(char::is_whitespace) {
            self.finals.push(' ');
        }
    }

    fn decode(&mut self, text: &str, events: &mut Vec<Event>) {
        let Some(view) = read(text) else {
            return events.push(Event::Malformed);
        };
        if let Some(code) = view.error_code {
            // The close that follows is classified by it.
            self.error_code = Some(code);
            return events.push(Event::Ignored);
        }
        if !view.has_tokens && !view.finished {
            return events.push(Event::Unknown);
        }
        let before = events.len();
        if let Some(ms) = view.final_audio_proc_ms {
            events.push(Event::FinalizedUntilMs(ms));
        }
        let mut pending = String::new();
        for (token, is_final) in &view.tokens {
            match (token.as_ref(), is_final) {
                // An endpoint ends the utterance; a finished finalize ends what is joining.
                ("<end>" | "<fin>", _) => {
                    self.finish_utterance(events);
                    pending.clear();
                }
                (text, true) => self.finals.push_str(text),
                (text, false) => pending.push_str(text),
            }
        }
        let partial = [self.finals.as_str(), &pending].concat();
        if !partial.trim().is_empty() {
            events.push(Event::Partial(partial.trim().to_owned()));
        }
        if view.finished {
            self.finish_utterance(events);
            events.push(Event::Finished);
        }
        if events.len() == before {
            events.push(Event::Ignored);
        }
    }

    fn start_message(&self, config: Option<&str>, sample_rate: u32) -> Option<String> {
        let base = [
            r#"{"model":""#,
            DEFAULT_MODEL,
            r#"","audio_format":"pcm_s16le","sample_rate":"#,
            &decimal(sample_rate.into()),
            r#","num_channels":1,"enable_endpoint_detection":true}"#,
        ]
        .concat();
        Some(merged_object(&base, config))
    }

    fn finish_messages(&mut self, _frames_sent: u64) -> Vec<String> {
        // An empty text frame is the end of the audio.
        vec![FINALIZE.to_owned(), String::new()]
    }

    fn close_class(&mut self, _code: u16) -> Option<CloseClass> {
        match self.error_code.take() {
            Some(400..=403) => Some(CloseClass::Fatal),
            Some(429) => Some(CloseClass::Throttled),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::stt::protocol::classify_close;

    fn decode(p: &mut Soniox, text: &str) -> Vec<Event> {
        let mut events = Vec::new();
        p.decode(text, &mut events);
        events
    }

    #[test]
    fn final_tokens_join_until_end() {
        let mut p = Soniox::default();
        assert_eq!(
            decode(
                &mut p,
                r#"{"tokens":[{"text":"Hel","start_ms":0,"end_ms":100,"confidence":0.9,"is_final":true},{"text":"lo","is_final":true},{"text":" wor","is_final":false}],"final_audio_proc_ms":300,"total_audio_proc_ms":500}"#
            ),
            [
                Event::FinalizedUntilMs(300),
                Event::Partial("Hello wor".into())
            ]
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"tokens":[{"text":" world","is_final":true},{"text":"<end>","is_final":true}],"final_audio_proc_ms":900,"total_audio_proc_ms":900}"#
            ),
            [
                Event::FinalizedUntilMs(900),
                Event::Final("Hello world".into())
            ]
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"tokens":[{"text":"<end>","is_final":true}],"final_audio_proc_ms":900}"#
            ),
            [Event::FinalizedUntilMs(900)],
            "a second <end> makes no final"
        );
    }

    #[test]
    fn fin_and_finished_end_the_stream() {
        let mut p = Soniox::default();
        decode(&mut p, r#"{"tokens":[{"text":"bye","is_final":true}]}"#);
        assert_eq!(
            decode(&mut p, r#"{"tokens":[{"text":"<fin>","is_final":true}]}"#),
            [Event::Final("bye".into())]
        );
        assert_eq!(
            decode(
                &mut p,
                r#"{"tokens":[],"final_audio_proc_ms":1000,"total_audio_proc_ms":1000,"finished":true}"#
            ),
            [Event::FinalizedUntilMs(1000), Event::Finished]
        );
    }

    #[test]
    fn closes_follow_the_error_before_them() {
        let mut p = Soniox::default();
        assert_eq!(classify_close(&PROFILE, &mut p, 1000), CloseClass::Retry);
        for (code, class) in [
            (400, CloseClass::Fatal),
            (401, CloseClass::Fatal),
            (402, CloseClass::Fatal),
            (429, CloseClass::Throttled),
            (408, CloseClass::Retry),
            (503, CloseClass::Retry),
        ] {
            assert_eq!(
                decode(
                    &mut p,
                    &format!(r#"{{"error_code":{code},"error_message":"m"}}"#)
                ),
                [Event::Ignored]
            );
            assert_eq!(classify_close(&PROFILE, &mut p, 1000), class, "{code}");
        }
        assert_eq!(decode(&mut p, r#"{"other":1}"#), [Event::Unknown]);
        assert_eq!(decode(&mut p, "x"), [Event::Malformed]);
    }

    #[test]
    fn the_config_carries_the_key() {
        let mut p = Soniox::default();
        let start = p
            .start_message(Some(r#"{"api_key":"tmp"}"#), 16_000)
            .unwrap_or_default();
        assert_eq!(
            start,
            r#"{"model":"stt-rt-v3","audio_format":"pcm_s16le","sample_rate":16000,"num_channels":1,"enable_endpoint_detection":true,"api_key":"tmp"}"#
        );
        assert_eq!(p.finish_messages(3), [FINALIZE, ""]);
    }
}
