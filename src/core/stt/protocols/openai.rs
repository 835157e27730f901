//! OpenAI Realtime transcription sessions (`/v1/realtime?intent=transcription`), as PROVIDERS.md
//! describes them.
//!
//! - **Auth (R6):** the app's backend mints a client secret (`POST /v1/realtime/client_secrets`,
//!   `ek_…`) and `provision()` returns `{ url, protocols: ["realtime",
//!   "openai-insecure-api-key." + ek] }`. A secret is reusable until it expires, but it expires
//!   (10 s–2 h), so every connect gets a fresh one rather than meet a refused handshake.
//! - **Audio:** 24 kHz PCM16 as base64 JSON (`input_audio_buffer.append`): the 16 kHz capture is
//!   resampled frame by frame by the transcriber (`resample.rs`; docs/maintainers/performance.md
//!   has the cost).
//! - **One final per item (L8):** `…transcription.delta` accumulates an item's partial;
//!   `…transcription.completed` is its final, delivered in the order of the items'
//!   `input_audio_buffer.committed` even when completions come out of order; a repeated
//!   completion or a failed item makes none.
//! - **Watermark (L4):** the `audio_end_ms` (`speech_stopped`) of items whose final was delivered,
//!   in commit order: a drop loses the items still transcribing, and their audio is resent.
//! - **Finish:** `input_audio_buffer.commit`; once every item committed before and by it has
//!   completed (or the commit found an empty buffer) the stream is finished.
//! - **Closes and errors:** an `error` with `code: "session_expired"` ends the session (a new one
//!   is provisioned); close 4000 (`beta_api_shape_disabled`) is fatal; other closes are retried.

use crate::core::json::read_view;
use crate::core::queue::Queue;
use crate::core::stt::protocol::{
    CloseClass, CloseRule, Codec, Credentials, Event, Framing, Pacing, Profile, Watermark,
};
use alloc::borrow::Cow;
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// The sample rate the server takes.
pub const SAMPLE_RATE: u32 = 24_000;
/// `{"type":"input_audio_buffer.commit"}`: end the utterance under way now.
pub const COMMIT: &str = r#"{"type":"input_audio_buffer.commit"}"#;
/// Items kept waiting for an earlier one's completion; past it the oldest is given up.
const MAX_ITEMS: usize = 64;

/// OpenAI Realtime transcription.
pub const PROFILE: Profile = Profile {
    name: "openai",
    framing: Framing::Base64Json,
    sample_rate: Some(SAMPLE_RATE),
    keepalive: None,
    credentials: Credentials::PerConnection,
    watermark: Watermark::FinalizedTime,
    pacing: Pacing::UNPACED,
    receipt_window_ms: 0,
    audio_after_start: false,
    eager_end_of_turn: false,
    closes: &[CloseRule::code(4000, CloseClass::Fatal)],
    codec: || Box::<OpenAi>::default(),
};

/// One committed item on its way to its final.
#[derive(Debug, Default)]
struct Item {
    id: String,
    /// Deltas so far.
    partial: String,
    /// The completed transcript (`Some("")` for a failed item).
    done: Option<String>,
    audio_end_ms: Option<u64>,
}

/// The OpenAI Realtime transcription protocol and the items in flight on this connection.
#[derive(Debug, Default)]
pub struct OpenAi {
    /// Items in commit order, waiting for their finals.
    items: Queue<Item>,
    /// Items heard of (deltas, `speech_stopped`) before their `committed`.
    early: Vec<Item>,
    /// Ids whose final went out, newest last (a repeated completion makes none).
    delivered: Queue<String>,
    /// Where `stop()`'s commit is.
    finish: Finish,
}

/// `stop()`'s commit: the stream is finished once the server answered it and every item
/// committed by then completed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Finish {
    #[default]
    No,
    /// Sent; the server's `committed` (or empty-buffer error) is still to come.
    Sent,
    /// Answered: waiting for the items.
    Answered,
}

#[derive(Debug, Default)]
struct View<'a> {
    kind: Option<Cow<'a, str>>,
    item_id: Option<Cow<'a, str>>,
    delta: Option<Cow<'a, str>>,
    transcript: Option<Cow<'a, str>>,
    audio_end_ms: Option<u64>,
    /// `error.code`.
    code: Option<Cow<'a, str>>,
}

fn read(text: &str) -> Option<View<'_>> {
    read_view(text, |view: &mut View<'_>, reader, key| match key {
        "type" => reader.string_into(&mut view.kind),
        "item_id" => reader.string_into(&mut view.item_id),
        "delta" => reader.string_into(&mut view.delta),
        "transcript" => reader.string_into(&mut view.transcript),
        "audio_end_ms" => reader.whole_into(&mut view.audio_end_ms),
        "error" => reader.object_or_skip(|reader, key| match key {
            "code" => reader.string_into(&mut view.code),
            _ => reader.skip(),
        }),
        _ => reader.skip(),
    })
}

impl OpenAi {
    /// The item `id`, committed or not yet (then kept aside until its `committed`).
    fn item(&mut self, id: &str) -> Option<&mut Item> {
        if let Some(item) = self.items.iter_mut().find(|item| item.id == id) {
            return Some(item);
        }
        if !self.early.iter().any(|item| item.id == id) {
            if self.early.len() >= MAX_ITEMS {
                self.early.remove(0);
            }
            self.early.push(Item {
                id: id.to_owned(),
                ..Item::default()
            });
        }
        self.early.iter_mut().find(|item| item.id == id)
    }

    fn delivered(&self, id: &str) -> bool {
        self.delivered.iter().any(|done| done == id)
    }

    fn committed(&mut self, id: &str) {
        if self.delivered(id) || self.items.iter().any(|item| item.id == id) {
            return;
        }
        let item = match self.early.iter().position(|item| item.id == id) {
            Some(index) => self.early.remove(index),
            None => Item {
                id: id.to_owned(),
                ..Item::default()
            },
        };
        if self.items.len() >= MAX_ITEMS {
            self.items.pop_front();
        }
        self.items.push_back(item);
    }

    /// Finals of the completed items at the front, in commit order.
    fn release(&mut self, events: &mut Vec<Event>) {
        while self.items.front().is_some_and(|item| item.done.is_some()) {
            let Some(item) = self.items.pop_front() else {
                break;
            };
            if let Some(end) = item.audio_end_ms {
                events.push(Event::FinalizedUntilMs(end));
            }
            events.push(Event::Final(item.done.unwrap_or_default()));
            if self.delivered.len() >= MAX_ITEMS {
                self.delivered.pop_front();
            }
            self.delivered.push_back(item.id);
        }
        self.check_finished(events);
    }

    /// The server answered `stop()`'s commit: an item committed without `speech_stopped`, or
    /// the empty-buffer error.
    fn answered(&mut self) {
        if self.finish == Finish::Sent {
            self.finish = Finish::Answered;
        }
    }

    fn check_finished(&mut self, events: &mut Vec<Event>) {
        if self.finish == Finish::Answered && self.items.is_empty() {
            self.finish = Finish::No;
            events.push(Event::Finished);
        }
    }

    fn completed(&mut self, id: &str, transcript: &str, events: &mut Vec<Event>) {
        if self.delivered(id) {
            // A repeated completion: never a second final.
            return events.push(Event::Ignored);
        }
        if !self.items.iter().any(|item| item.id == id) {
            // Completed before its `committed` arrived: it is committed by now.
            self.committed(id);
        }
        if let Some(item) = self.item(id) {
            item.done = Some(transcript.to_owned());
        }
        let before = events.len();
        self.release(events);
        if events.len() == before {
            events.push(Event::Ignored);
        }
    }
}

impl Codec for OpenAi {
    fn on_connect(&mut self, _url: &str) {
        // A new connection is a new session: items still transcribing are lost with the old one,
        // and their audio, past the watermark, is resent.
        self.items.clear();
        self.early.clear();
        self.finish = Finish::No;
    }

    fn decode(&mut self, text: &str, events: &mut Vec<Event>) {
        let Some(view) = read(text) else {
            return events.push(Event::Malformed);
        };
        let id = view.item_id.as_deref();
        match (view.kind.as_deref(), id) {
            (Some("input_audio_buffer.speech_started"), _) => events.push(Event::SpeechStart),
            (Some("input_audio_buffer.speech_stopped"), Some(id)) => {
                if let Some(item) = self.item(id) {
                    item.audio_end_ms = view.audio_end_ms;
                }
                events.push(Event::SpeechEnd);
            }
            (Some("input_audio_buffer.committed"), Some(id)) => {
                self.committed(id);
                // A VAD commit follows its item's `speech_stopped`; the finish's commit has none.
                if self
                    .item(id)
                    .is_some_and(|item| item.audio_end_ms.is_none())
                {
                    self.answered();
                }
                events.push(Event::Ignored);
            }
            (Some("conversation.item.input_audio_transcription.delta"), Some(id)) => {
                if self.delivered(id) {
                    return events.push(Event::Ignored);
                }
                match self.item(id) {
                    Some(item) => {
                        item.partial.push_str(view.delta.as_deref().unwrap_or(""));
                        events.push(Event::Partial(item.partial.trim().to_owned()));
                    }
                    None => events.push(Event::Ignored),
                }
            }
            (Some("conversation.item.input_audio_transcription.completed"), Some(id)) => {
                let transcript = view.transcript.unwrap_or_default();
                self.completed(id, transcript.trim(), events);
            }
            (Some("conversation.item.input_audio_transcription.failed"), Some(id)) => {
                // No text, but the items after it must not wait for it.
                self.completed(id, "", events);
            }
            (Some("error"), _) => match view.code.as_deref() {
                Some("session_expired") => events.push(Event::SessionOver),
                Some("input_audio_buffer_commit_empty") => {
                    // The finish's commit found nothing new: done once the items are.
                    self.answered();
                    self.check_finished(events);
                    events.push(Event::Ignored);
                }
                // The close that may follow says what it means.
                _ => events.push(Event::Ignored),
            },
            (
                Some(
                    "input_audio_buffer.speech_stopped"
                    | "input_audio_buffer.committed"
                    | "conversation.item.input_audio_transcription.delta"
                    | "conversation.item.input_audio_transcription.completed"
                    | "conversation.item.input_audio_transcription.failed",
                ),
                None,
            ) => events.push(Event::Malformed),
            (
                Some(
                    "session.created"
                    | "session.updated"
                    | "transcription_session.created"
                    | "transcription_session.updated"
                    | "input_audio_buffer.cleared"
                    | "conversation.item.created"
                    | "conversation.item.added"
                    | "conversation.item.done",
                ),
                _,
            ) => events.push(Event::Ignored),
            (Some(_), _) => events.push(Event::Unknown),
            (None, _) => events.push(Event::Malformed),
        }
    }

    fn finish_messages(&mut self, _frames_sent: u64) -> Vec<String> {
        self.finish = Finish::Sent;
        vec![COMMIT.to_owned()]
    }

    fn audio_message(&mut self, base64: &str, _sample_rate: u32) -> String {
        [
            r#"{"type":"input_audio_buffer.append","audio":""#,
            base64,
            r#""}"#,
        ]
        .concat()
    }
}
