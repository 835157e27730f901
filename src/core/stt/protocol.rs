//! The seam between the transcriber and one provider's wire protocol (L2).
//!
//! A [`Protocol`] turns server text messages into neutral [`Event`]s, says how audio is framed
//! and paced, which text messages start, keep alive and finish a stream, what each close code
//! means ([`CloseClass`]), whether credentials serve one connection only (R6), and what the
//! server will never need again ([`Watermark`]). The transcriber machine, its audio buffer and the
//! reconnect policy know nothing else about the provider.

use std::fmt;

/// Sample rate the microphone and the protocols use unless told otherwise.
pub const DEFAULT_SAMPLE_RATE: u32 = 16_000;

/// Bytes per PCM16 sample.
pub const BYTES_PER_SAMPLE: u64 = 2;

/// Bytes of PCM16 mono audio that last `ms` milliseconds at `sample_rate`, saturating.
pub fn pcm_bytes_for_ms(ms: u64, sample_rate: u32) -> u64 {
    let samples = u128::from(ms) * u128::from(sample_rate) / 1_000;
    u64::try_from(samples * u128::from(BYTES_PER_SAMPLE)).unwrap_or(u64::MAX)
}

/// Milliseconds that `bytes` of PCM16 mono audio last at `sample_rate`, rounded down.
pub fn pcm_ms_for_bytes(bytes: u64, sample_rate: u32) -> u64 {
    let per_second = u128::from(sample_rate) * u128::from(BYTES_PER_SAMPLE);
    u64::try_from(u128::from(bytes) * 1_000 / per_second.max(1)).unwrap_or(u64::MAX)
}

/// What one close of the socket means to the reconnect policy (R2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CloseClass {
    /// Reconnect after a backoff (to the same session where it survives).
    Retry,
    /// The session is over: provision a new one, counted by R3's window.
    SessionOver,
    /// Retry, but wait at least the throttled delay (`throttledDelayMs`).
    Throttled,
    /// A configuration or authorization error: fail at once with a terminal error naming the code.
    Fatal,
}

impl CloseClass {
    /// The name JS sees.
    pub fn as_str(self) -> &'static str {
        match self {
            CloseClass::Retry => "retry",
            CloseClass::SessionOver => "session_over",
            CloseClass::Throttled => "throttled",
            CloseClass::Fatal => "fatal",
        }
    }
}

/// What the server will never need again (L4), and so what is not resent after a drop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watermark {
    /// The session survives a reconnect and acknowledges the bytes it received
    /// ([`Event::AckBytes`]); until its first acknowledgement, audio that stayed on an open
    /// socket for a moment counts as received.
    AcknowledgedBytes,
    /// Every connection is a new session: only audio the server *finalized*
    /// ([`Event::FinalizedUntilMs`]) is done with; the rest is resent on the next connection.
    FinalizedTime,
}

/// How audio goes out, and how fast it may be resent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacing {
    /// Most audio sent per unit of time on one connection, in percent of real time (125 for
    /// 1.25×); 0 for no limit.
    pub rate_percent: u32,
    /// Audio a connection may be ahead of that rate, in milliseconds.
    pub allowance_ms: u64,
    /// Smallest frame the server accepts, in milliseconds (smaller frames are joined); 0 for any.
    pub min_frame_ms: u64,
    /// Largest frame the server accepts, in milliseconds (larger ones are split); 0 for any.
    pub max_frame_ms: u64,
}

impl Pacing {
    /// No limit at all (Gladia).
    pub const UNPACED: Pacing = Pacing {
        rate_percent: 0,
        allowance_ms: 0,
        min_frame_ms: 0,
        max_frame_ms: 0,
    };
}

/// A keepalive text message and how long the socket may go without any frame before it is due
/// (L9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keepalive {
    /// The text frame.
    pub message: &'static str,
    /// Idle time after which it is sent.
    pub idle_ms: u64,
}

/// What one server message means, whatever the protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Text of the utterance under way, for captions only (T1).
    Partial(String),
    /// The one final of an utterance (L8): the protocol has already joined its pieces.
    Final(String),
    /// The user started talking (barge-in).
    SpeechStart,
    /// The user stopped talking.
    SpeechEnd,
    /// The session received this many more bytes ([`Watermark::AcknowledgedBytes`]).
    AckBytes(u64),
    /// The server finalized this connection's audio up to this many milliseconds
    /// ([`Watermark::FinalizedTime`]).
    FinalizedUntilMs(u64),
    /// The server accepted the start message: audio may flow ([`Protocol::audio_after_start`]).
    Started,
    /// The server received this many frames of this connection ([`Protocol::receipt_window_ms`]).
    Received(u64),
    /// The server ended the session (Gladia's `end_session`): over, unless we are stopping.
    SessionOver,
    /// The server has sent everything after the finish message.
    Finished,
    /// Known and of no use here.
    Ignored,
    /// A type this protocol version does not know: counted and skipped (L2).
    Unknown,
    /// Not a message of the protocol: counted and skipped (L2).
    Malformed,
}

/// One wire protocol. See the module documentation; one file per provider implements it.
pub trait Protocol: fmt::Debug {
    /// The name apps use (`protocol: "deepgram"`).
    fn name(&self) -> &'static str;

    /// A new connection to `url` opened: forget what belonged to the last one.
    fn on_connect(&mut self, _url: &str) {}

    /// Decodes one server text message into zero or more events, in order.
    fn decode(&mut self, text: &str, events: &mut Vec<Event>);

    /// A text message to send first on every connection, if the protocol has one. `config` is the
    /// JSON object `provision()` gave as `config`, whose fields go into it ([`merged_object`]);
    /// `sample_rate` is the audio's.
    fn start_message(&self, _config: Option<&str>, _sample_rate: u32) -> Option<String> {
        None
    }

    /// Whether audio must wait for the server's answer to the start message
    /// ([`Event::Started`]); otherwise it flows as soon as the socket opens.
    fn audio_after_start(&self) -> bool {
        false
    }

    /// Most audio, in milliseconds, that may be on a connection ahead of the server's receipts
    /// ([`Event::Received`]): flow control, and liveness (a socket that owes receipts for
    /// `ackTimeoutMs` is half-open). 0: the protocol sends no receipts.
    fn receipt_window_ms(&self) -> u64 {
        0
    }

    /// The keepalive, if the protocol needs one while no audio flows (L9).
    fn keepalive(&self) -> Option<Keepalive> {
        None
    }

    /// The text messages that finish the stream on `stop()`, in order, once `frames_sent` frames
    /// went out on this connection: the server then sends what is left and [`Event::Finished`] or
    /// closes.
    fn finish_messages(&self, frames_sent: u64) -> Vec<String>;

    /// The finish messages went out (`stop()`): a protocol whose server sends no end-of-stream
    /// message of its own can now tell when it has sent everything ([`Event::Finished`]).
    fn on_finish(&mut self) {}

    /// What a close with `code` means (R2). May depend on what this protocol saw before.
    fn classify_close(&mut self, code: u16) -> CloseClass;

    /// Whether every connection needs fresh credentials from `provision()` (R6).
    fn single_use_credentials(&self) -> bool {
        false
    }

    /// What the server acknowledges (L4).
    fn watermark(&self) -> Watermark;

    /// Frame sizes and resend rate (L4).
    fn pacing(&self) -> Pacing {
        Pacing::UNPACED
    }

    /// The sample rate the protocol requires, if it accepts only one.
    fn sample_rate(&self) -> Option<u32> {
        None
    }

    /// One frame of PCM16 audio at `sample_rate` as a text message, for protocols that take
    /// base64 in JSON (and may resample it to [`Protocol::sample_rate`]); `None` sends it as a
    /// binary frame.
    fn audio_text(&self, _pcm: &[u8], _sample_rate: u32) -> Option<String> {
        None
    }
}

/// The JSON object `base` with the members of the JSON object `extra` after its own (a reader
/// that keeps the last of a repeated key, as `JSON.parse` does, sees `extra`'s values). `extra`
/// must be an object as `JSON.stringify` writes it; anything else leaves `base` as it is.
pub fn merged_object(base: &str, extra: Option<&str>) -> String {
    let members = extra
        .and_then(|extra| extra.trim().strip_prefix('{')?.strip_suffix('}'))
        .map(str::trim)
        .filter(|members| !members.is_empty());
    match (members, base.trim_end().strip_suffix('}')) {
        (Some(members), Some(open)) if open.trim_end().ends_with('{') => {
            format!("{open}{members}}}")
        }
        (Some(members), Some(open)) => format!("{open},{members}}}"),
        _ => base.to_owned(),
    }
}

/// Standard base64 with padding, for [`Protocol::audio_text`].
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let symbol = |index: u32| {
        ALPHABET
            .get((index & 63) as usize)
            .map_or('=', |&byte| char::from(byte))
    };
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let [a, b, c] = [0, 1, 2].map(|i| chunk.get(i).copied().map_or(0, u32::from));
        let triple = a << 16 | b << 8 | c;
        out.push(symbol(triple >> 18));
        out.push(symbol(triple >> 12));
        out.push(if chunk.len() > 1 {
            symbol(triple >> 6)
        } else {
            '='
        });
        out.push(if chunk.len() > 2 { symbol(triple) } else { '=' });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{base64, merged_object};

    #[test]
    fn merges_objects() {
        assert_eq!(
            merged_object(r#"{"a":1}"#, Some(r#"{"b":2}"#)),
            r#"{"a":1,"b":2}"#
        );
        assert_eq!(merged_object("{}", Some(r#"{"b":2}"#)), r#"{"b":2}"#);
        assert_eq!(merged_object(r#"{"a":1}"#, Some("{}")), r#"{"a":1}"#);
        assert_eq!(merged_object(r#"{"a":1}"#, Some("[1]")), r#"{"a":1}"#);
        assert_eq!(merged_object(r#"{"a":1}"#, None), r#"{"a":1}"#);
    }

    #[test]
    fn base64_pads() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(&[255, 254, 253, 0]), "//79AA==");
    }
}
