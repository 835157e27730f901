//! The seam between the transcriber and one provider's wire protocol (L2).
//!
//! A protocol is a [`Profile`], the facts that are constants (framing, sample rate, keepalive,
//! credentials, watermark, pacing, close classes), and a [`Codec`] for what varies: server text
//! messages become neutral [`Event`]s, and the start, audio and finish messages are written. The
//! transcriber machine, its audio buffer and the reconnect policy know nothing else about the
//! provider, and never ask which one it is.

/// Sample rate the microphone and the protocols use unless told otherwise.
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
pub const DEFAULT_SAMPLE_RATE: u32 = 16_000;

/// Bytes per PCM16 sample.
pub const BYTES_PER_SAMPLE: u64 = 2;

/// Bytes of PCM16 mono audio that last `ms` milliseconds at `sample_rate`, saturating. Whole
/// seconds and the rest apart, so the arithmetic stays in `u64` and exact (a `u128` division
/// brings in a kilobyte of 128-bit division code).
pub fn pcm_bytes_for_ms(ms: u64, sample_rate: u32) -> u64 {
    let rate = u64::from(sample_rate);
    let samples = (ms / 1_000)
        .saturating_mul(rate)
        .saturating_add(ms % 1_000 * rate / 1_000);
    samples.saturating_mul(BYTES_PER_SAMPLE)
}

/// Milliseconds that `bytes` of PCM16 mono audio last at `sample_rate`, rounded down, saturating.
pub fn pcm_ms_for_bytes(bytes: u64, sample_rate: u32) -> u64 {
    let per_second = (u64::from(sample_rate) * BYTES_PER_SAMPLE).max(1);
    (bytes / per_second)
        .saturating_mul(1_000)
        .saturating_add(bytes % per_second * 1_000 / per_second)
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
    /// The provider guesses the utterance under way ended with this text (Deepgram Flux's
    /// `EagerEndOfTurn`): its final follows with the same text, unless [`Event::Resumed`] comes
    /// first. A hint for starting an answer early, never a final.
    EagerFinal(String),
    /// The last [`Event::EagerFinal`] was wrong: the user went on (Flux's `TurnResumed`).
    Resumed,
    /// The session received this many more bytes ([`Watermark::AcknowledgedBytes`]).
    AckBytes(u64),
    /// The server finalized this connection's audio up to this many milliseconds
    /// ([`Watermark::FinalizedTime`]).
    FinalizedUntilMs(u64),
    /// The server accepted the start message: audio may flow ([`Profile::audio_after_start`]).
    Started,
    /// The server received this many frames of this connection ([`Profile::receipt_window_ms`]).
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

/// Whether the credentials `provision()` gives serve a whole session or one connection (R6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Credentials {
    /// A reconnect reuses the session's URL and credentials.
    Session,
    /// Single-use or short-lived: every connect calls `provision()` first
    /// (`reason: "reconnect"`), outside R3's window.
    PerConnection,
}

/// How audio frames go on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Binary frames of PCM16 little-endian mono.
    Binary,
    /// Text frames: base64 PCM16 in a JSON message the codec writes ([`Codec::audio_message`]).
    Base64Json,
}

/// Close codes from `first` to `last` mean `class` (R2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloseRule {
    pub first: u16,
    pub last: u16,
    pub class: CloseClass,
}

impl CloseRule {
    /// One code.
    pub const fn code(code: u16, class: CloseClass) -> CloseRule {
        CloseRule {
            first: code,
            last: code,
            class,
        }
    }

    /// Every code from `first` to `last`.
    pub const fn range(first: u16, last: u16, class: CloseClass) -> CloseRule {
        CloseRule { first, last, class }
    }
}

/// One wire protocol: what is constant about it, and a codec for the rest. One file under
/// `protocols/` holds each as `pub const PROFILE: Profile`; the list is made from that folder.
#[derive(Clone, Copy, Debug)]
pub struct Profile {
    /// The name apps give as `protocol` (the file's name, with `-` for `_`).
    pub name: &'static str,
    /// How audio frames go out.
    pub framing: Framing,
    /// The sample rate the server takes, if it takes only one: audio is resampled to it.
    pub sample_rate: Option<u32>,
    /// Sent when the socket went this long without a frame while no audio flows (L9).
    pub keepalive: Option<Keepalive>,
    /// R6.
    pub credentials: Credentials,
    /// What the server will never need again (L4).
    pub watermark: Watermark,
    /// Frame sizes and resend rate (L4).
    pub pacing: Pacing,
    /// Most audio, in milliseconds, that may be on a connection ahead of the server's receipts
    /// ([`Event::Received`]): flow control, and liveness (a socket that owes receipts for
    /// `ackTimeoutMs` is half-open). 0: the protocol sends no receipts.
    pub receipt_window_ms: u64,
    /// Audio waits for the server's answer to the start message ([`Event::Started`]);
    /// otherwise it flows as soon as the socket opens.
    pub audio_after_start: bool,
    /// The provider guesses the end of each turn before its final (Deepgram Flux's
    /// `EagerEndOfTurn`): a session's preemptive attempts follow its guesses and make none of
    /// their own from still partials (T17).
    pub eager_end_of_turn: bool,
    /// What close codes mean, first match first; any other code is [`CloseClass::Retry`].
    pub closes: &'static [CloseRule],
    /// A fresh codec, for one transcriber.
    pub codec: fn() -> Box<dyn Codec>,
}

impl Profile {
    /// What a close with `code` means by the table alone.
    pub fn close_class(&self, code: u16) -> CloseClass {
        self.closes
            .iter()
            .find(|rule| (rule.first..=rule.last).contains(&code))
            .map_or(CloseClass::Retry, |rule| rule.class)
    }
}

/// What a close with `code` means: what `codec` saw before it, else the profile's table (R2).
pub fn classify_close(profile: &Profile, codec: &mut dyn Codec, code: u16) -> CloseClass {
    codec
        .close_class(code)
        .unwrap_or_else(|| profile.close_class(code))
}

/// What varies in a protocol: reading the server's messages and writing the client's. One
/// codec serves one transcriber across its connections.
pub trait Codec {
    /// A new connection to `url` opened: forget what belonged to the last one.
    fn on_connect(&mut self, _url: &str) {}

    /// Decodes one server text message into zero or more events, in order.
    fn decode(&mut self, text: &str, events: &mut Vec<Event>);

    /// A text message to send first on every connection, if the protocol has one. `config` is the
    /// JSON object `provision()` gave as `config`, whose fields go into it ([`merged_object`]);
    /// `sample_rate` is the audio's on the wire.
    fn start_message(&self, _config: Option<&str>, _sample_rate: u32) -> Option<String> {
        None
    }

    /// One frame of audio, `base64` PCM16 at `sample_rate`, as the protocol's text message
    /// ([`Framing::Base64Json`] only).
    fn audio_message(&mut self, _base64: &str, _sample_rate: u32) -> String {
        String::new()
    }

    /// The text messages that finish the stream on `stop()`, in order, once `frames_sent` frames
    /// went out on this connection: the server then sends what is left and [`Event::Finished`] or
    /// closes. Called once, when they go out.
    fn finish_messages(&mut self, frames_sent: u64) -> Vec<String>;

    /// What a close with `code` means when it depends on what this codec saw (an error message
    /// before the close); `None` leaves it to [`Profile::closes`].
    fn close_class(&mut self, _code: u16) -> Option<CloseClass> {
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
            [open, members, "}"].concat()
        }
        (Some(members), Some(open)) => [open, ",", members, "}"].concat(),
        _ => base.to_owned(),
    }
}

/// Standard base64 with padding, for [`Framing::Base64Json`].
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
    use super::{base64, merged_object, pcm_bytes_for_ms, pcm_ms_for_bytes};

    /// The conversions in `u64` agree with the exact ones in `u128`, saturation included.
    #[test]
    fn pcm_conversions_are_exact_and_saturate() {
        let exact_bytes = |ms: u64, rate: u32| {
            let bytes = u128::from(ms) * u128::from(rate) / 1_000 * 2;
            u64::try_from(bytes).unwrap_or(u64::MAX)
        };
        let exact_ms = |bytes: u64, rate: u32| {
            let ms = u128::from(bytes) * 1_000 / (u128::from(rate) * 2).max(1);
            u64::try_from(ms).unwrap_or(u64::MAX)
        };
        let values = [
            0,
            1,
            7,
            999,
            1_000,
            1_001,
            20_123,
            86_400_000,
            1 << 40,
            u64::MAX / 3,
        ];
        let rates = [
            0,
            1,
            8_000,
            16_000,
            22_050,
            24_000,
            44_100,
            48_000,
            u32::MAX,
        ];
        for &value in values.iter().chain([u64::MAX - 1, u64::MAX].iter()) {
            for &rate in &rates {
                assert_eq!(
                    pcm_bytes_for_ms(value, rate),
                    exact_bytes(value, rate),
                    "{value} ms at {rate}"
                );
                assert_eq!(
                    pcm_ms_for_bytes(value, rate),
                    exact_ms(value, rate),
                    "{value} B at {rate}"
                );
            }
        }
    }

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
