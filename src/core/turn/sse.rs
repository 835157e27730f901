//! A streamed chat completion, from network bytes to text deltas (rule T12).
//!
//! Two sans-IO layers, both fed with [`push`](SseParser::push) and drained with a `next_*` call
//! after every push:
//!
//! - [`SseParser`] parses server-sent events as the WHATWG `EventSource` rules say: lines end with
//!   CRLF, LF or CR (also when a CRLF is split between two chunks); a leading byte-order mark is
//!   skipped; lines that start with `:` are comments (keep-alives) and are ignored; `data:`
//!   fields, less one leading space, are joined with `\n`; `event:` sets the event's type; a blank
//!   line dispatches the event, unless it has no `data` field. `id:` and `retry:` are ignored: a
//!   chat completion cannot be resumed, so a broken stream is the turn ladder's business, not a
//!   reconnect's. Bytes are kept until their line is complete and only then decoded, so a UTF-8
//!   character split between chunks decodes right; invalid UTF-8 becomes U+FFFD.
//! - [`ChatStreamDecoder`] reads OpenAI-compatible `chat.completion.chunk` events: the text of
//!   `choices[].delta.content` of the choice with index 0 becomes [`ChatDelta::Text`],
//!   `data: [DONE]` becomes [`ChatDelta::Done`], an in-stream `{"error": {…}}` (or an `error`
//!   event) becomes [`ChatDelta::Error`]. Events that are not JSON or carry no text (the first,
//!   role-only chunk, the `finish_reason` chunk, usage) are counted and skipped.
//!
//! Memory is bounded: an event (its pending line and data together) longer than
//! `max_event_bytes` (1 MiB by default) is dropped and counted, never grown. At the end of the
//! stream, [`SseParser::finish`] discards an event that no blank line completed, as the WHATWG
//! rules do — a well-formed stream ends each event, `[DONE]` included, with a blank line.
//!
//! ```
//! use turnguard::core::turn::sse::{ChatDelta, ChatStreamDecoder};
//!
//! let mut decoder = ChatStreamDecoder::new();
//! decoder.push(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel");
//! assert_eq!(decoder.next_delta(), None); // the event is not complete yet
//! decoder.push(b"lo\"}}]}\n\n: keep-alive\n\ndata: [DONE]\n\n");
//! assert_eq!(decoder.next_delta(), Some(ChatDelta::Text("Hello".into())));
//! assert_eq!(decoder.next_delta(), Some(ChatDelta::Done));
//! assert_eq!(decoder.next_delta(), None);
//! ```

use crate::core::json;
use crate::core::queue::Queue;
use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::mem;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched server-sent event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; empty for the default type, `message`.
    pub event: String,
    /// The `data:` fields, joined with `\n`.
    pub data: String,
}

/// An incremental server-sent-events parser. See the [module documentation](self) for the rules.
#[derive(Clone, Debug)]
pub struct SseParser {
    /// Bytes of the line being received.
    line: Vec<u8>,
    /// Whether the line being received has any byte, kept even while they are discarded.
    line_has_bytes: bool,
    /// The last chunk ended with CR: an LF that starts the next one ends no second line.
    after_cr: bool,
    /// The next line is the stream's first and may start with a byte-order mark.
    first_line: bool,
    /// The event being received outgrew the limit: its lines are ignored up to its blank line.
    discarding: bool,
    /// The event type buffer.
    event: String,
    /// The data buffer: each `data` field's value followed by `\n`.
    data: String,
    ready: Queue<SseEvent>,
    max_event_bytes: usize,
    dropped: u32,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SseParser {
    /// Default limit of one event: 1 MiB.
    pub const DEFAULT_MAX_EVENT_BYTES: usize = 1 << 20;

    /// A parser at the start of a stream, with the default event limit.
    pub fn new() -> Self {
        Self::with_max_event_bytes(Self::DEFAULT_MAX_EVENT_BYTES)
    }

    /// A parser that drops any event whose pending line, data and type exceed `max_event_bytes`.
    pub fn with_max_event_bytes(max_event_bytes: usize) -> Self {
        SseParser {
            line: Vec::new(),
            line_has_bytes: false,
            after_cr: false,
            first_line: true,
            discarding: false,
            event: String::new(),
            data: String::new(),
            ready: Queue::new(),
            max_event_bytes,
            dropped: 0,
        }
    }

    /// Feeds the next bytes of the stream, split anywhere.
    pub fn push(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            rest = rest.strip_prefix(b"\n").unwrap_or(rest);
        }
        while let Some(at) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            let Some((content, line_end)) = rest.split_at_checked(at) else {
                break;
            };
            self.extend_line(content);
            self.end_line();
            rest = match line_end {
                [b'\r', b'\n', after @ ..] => after,
                [b'\r'] => {
                    self.after_cr = true;
                    &[]
                }
                [_, after @ ..] => after,
                [] => &[],
            };
        }
        self.extend_line(rest);
    }

    /// The next complete event, in stream order.
    #[must_use]
    pub fn next_event(&mut self) -> Option<SseEvent> {
        self.ready.pop_front()
    }

    /// Ends the stream. An event not completed by a blank line is discarded (and counted in
    /// [`SseParser::dropped`] if it had data), as the WHATWG rules say. Events already complete
    /// can still be pulled; the parser is then ready for a new stream.
    pub fn finish(&mut self) {
        let pending_field = self.line_has_bytes && self.line.first() != Some(&b':');
        if !self.discarding && (pending_field || !self.data.is_empty()) {
            self.dropped = self.dropped.saturating_add(1);
        }
        self.line.clear();
        self.line_has_bytes = false;
        self.after_cr = false;
        self.first_line = true;
        self.discarding = false;
        self.event.clear();
        self.data.clear();
    }

    /// Events dropped: over the size limit, or cut off by the end of the stream.
    pub fn dropped(&self) -> u32 {
        self.dropped
    }

    /// Bytes held for the event being received; at most `max_event_bytes` between calls.
    /// Complete events waiting for [`SseParser::next_event`] are not counted.
    pub fn buffered_bytes(&self) -> usize {
        self.line.len() + self.data.len() + self.event.len()
    }

    fn extend_line(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.line_has_bytes = true;
        if self.discarding {
            return;
        }
        if self.buffered_bytes().saturating_add(bytes.len()) > self.max_event_bytes {
            self.drop_event();
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn drop_event(&mut self) {
        self.discarding = true;
        self.dropped = self.dropped.saturating_add(1);
        self.line.clear();
        self.event.clear();
        self.data.clear();
    }

    fn end_line(&mut self) {
        let blank = !mem::take(&mut self.line_has_bytes);
        let first_line = mem::take(&mut self.first_line);
        if self.discarding {
            self.discarding = !blank;
            return;
        }
        let line = mem::take(&mut self.line);
        let mut content = line.as_slice();
        if first_line {
            content = content.strip_prefix(BOM).unwrap_or(content);
        }
        if blank || content.is_empty() {
            self.dispatch();
        } else {
            self.field(content);
        }
        // Give the allocation back for the next line.
        self.line = line;
        self.line.clear();
    }

    fn field(&mut self, line: &[u8]) {
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => match line.split_at_checked(colon) {
                Some((name, value)) => {
                    let value = value.get(1..).unwrap_or_default();
                    (name, value.strip_prefix(b" ").unwrap_or(value))
                }
                None => return,
            },
            None => (line, &[][..]),
        };
        match name {
            b"data" => {
                self.data.push_str(&String::from_utf8_lossy(value));
                self.data.push('\n');
                // Invalid bytes grow threefold when replaced: check again.
                if self.buffered_bytes() > self.max_event_bytes {
                    self.drop_event();
                }
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&String::from_utf8_lossy(value));
            }
            // Comments (empty name), `id`, `retry` and unknown fields.
            _ => {}
        }
    }

    fn dispatch(&mut self) {
        if self.data.is_empty() {
            self.event.clear();
            return;
        }
        // The newline after the last data field.
        self.data.pop();
        self.ready.push_back(SseEvent {
            event: mem::take(&mut self.event),
            data: mem::take(&mut self.data),
        });
    }
}

/// What a chat-completion stream said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChatDelta {
    /// The next piece of the answer; never empty.
    Text(String),
    /// `data: [DONE]`: the answer is complete. Nothing follows.
    Done,
    /// The server reported an error in the stream. Nothing follows.
    Error(StreamError),
}

/// An error reported inside a stream. Only identifiers are kept: the server's message may quote
/// the conversation, and no conversation text goes into errors (T14).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamError {
    /// The error's `code` (`"rate_limit_exceeded"`, `"429"`), if it is a short identifier.
    pub code: Option<String>,
    /// The error's `type` (`"server_error"`), if it is a short identifier.
    pub kind: Option<String>,
}

/// Decodes an OpenAI-compatible chat-completion stream. See the [module documentation](self).
#[derive(Clone, Debug, Default)]
pub struct ChatStreamDecoder {
    sse: SseParser,
    /// `Done` or `Error` went out: later events are ignored.
    ended: bool,
    ignored: u32,
}

impl ChatStreamDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next bytes of the response body, split anywhere.
    pub fn push(&mut self, bytes: &[u8]) {
        self.sse.push(bytes);
    }

    /// The next delta, in stream order. Call until `None` after each push.
    #[must_use]
    pub fn next_delta(&mut self) -> Option<ChatDelta> {
        while let Some(event) = self.sse.next_event() {
            let delta = if self.ended {
                None
            } else if event.data.trim() == "[DONE]" {
                Some(ChatDelta::Done)
            } else {
                match read_chunk(&event.data) {
                    Ok(Chunk {
                        error: Some(error), ..
                    }) => Some(ChatDelta::Error(error)),
                    _ if event.event == "error" => Some(ChatDelta::Error(StreamError::default())),
                    Ok(Chunk {
                        text: Some(text), ..
                    }) => Some(ChatDelta::Text(text)),
                    _ => None,
                }
            };
            match delta {
                Some(delta) => {
                    self.ended = !matches!(delta, ChatDelta::Text(_));
                    return Some(delta);
                }
                None => self.ignored = self.ignored.saturating_add(1),
            }
        }
        None
    }

    /// Ends the stream: an unfinished last event is discarded (see [`SseParser::finish`]).
    pub fn finish(&mut self) {
        self.sse.finish();
    }

    /// Whether `Done` or `Error` went out.
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// Events skipped: not JSON, no text, or after the end.
    pub fn ignored(&self) -> u32 {
        self.ignored
    }

    /// Events dropped by the SSE layer (see [`SseParser::dropped`]).
    pub fn dropped(&self) -> u32 {
        self.sse.dropped()
    }
}

/// What one `chat.completion.chunk` holds for us.
#[derive(Default)]
struct Chunk {
    /// Non-empty `delta.content` of choice 0.
    text: Option<String>,
    /// A non-null `error` member.
    error: Option<StreamError>,
}

fn read_chunk(data: &str) -> Result<Chunk, json::Malformed> {
    let mut chunk = Chunk::default();
    let mut reader = json::Reader::new(data);
    reader.object(|reader, key| match key {
        "choices" => reader.array_or_skip(|reader| {
            let mut first_choice = true;
            let mut content = None;
            reader.object_or_skip(|reader, key| match key {
                "index" => {
                    first_choice = reader.number_or_skip()? == Some("0");
                    Ok(())
                }
                "delta" => reader.object_or_skip(|reader, key| match key {
                    "content" => {
                        content = reader.string_or_skip()?;
                        Ok(())
                    }
                    _ => reader.skip(),
                }),
                _ => reader.skip(),
            })?;
            if first_choice && chunk.text.is_none() {
                chunk.text = content.filter(|text| !text.is_empty()).map(Cow::into_owned);
            }
            Ok(())
        }),
        "error" => {
            chunk.error = read_error(reader)?;
            Ok(())
        }
        _ => reader.skip(),
    })?;
    reader.end()?;
    Ok(chunk)
}

/// `null` is no error; an object gives its codes; anything else is an error without codes.
fn read_error(reader: &mut json::Reader<'_>) -> Result<Option<StreamError>, json::Malformed> {
    match reader.peek_value() {
        Some(b'n') => reader.skip().map(|()| None),
        Some(b'{') => {
            let mut error = StreamError::default();
            reader.object(|reader, key| match key {
                "code" => {
                    error.code = read_identifier(reader)?;
                    Ok(())
                }
                "type" => {
                    error.kind = read_identifier(reader)?;
                    Ok(())
                }
                _ => reader.skip(),
            })?;
            Ok(Some(error))
        }
        _ => reader.skip().map(|()| Some(StreamError::default())),
    }
}

/// A string or number value that looks like a code, not like prose.
fn read_identifier(reader: &mut json::Reader<'_>) -> Result<Option<String>, json::Malformed> {
    let value = match reader.peek_value() {
        Some(b'"') => reader.string_or_skip()?,
        _ => reader.number_or_skip()?.map(Cow::Borrowed),
    };
    let is_code = |text: &str| {
        (1..=64).contains(&text.len())
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    };
    Ok(value.filter(|text| is_code(text)).map(Cow::into_owned))
}
