//! What the transcriber tells its shell: its state, its errors, its counters and its actions.

use crate::core::stt::protocol::CloseClass;
use crate::core::stt::reconnect::ReconnectAction;
use crate::core::text::decimal;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// Why `provision()` is called (`reason` in its request).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProvisionReason {
    /// The first session.
    Start,
    /// Fresh credentials for a reconnect (R6): the same session as far as R3 is concerned.
    Reconnect,
    /// The last session is over (R2, R5): a new one, counted by R3's window.
    SessionOver,
}

impl ProvisionReason {
    /// The name JS sees.
    pub fn as_str(self) -> &'static str {
        match self {
            ProvisionReason::Start => "start",
            ProvisionReason::Reconnect => "reconnect",
            ProvisionReason::SessionOver => "session_over",
        }
    }
}

/// One close of the socket while the app still wanted it, and what follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloseReport {
    /// The close code (1006 for a socket that failed or never opened).
    pub code: u16,
    /// What the protocol says it means.
    pub class: CloseClass,
    /// What comes next.
    pub next: ReconnectAction,
    /// How long until then; 0 when it stops.
    pub delay_ms: u64,
}

/// Where the transcriber is. `Stopped` and `Failed` are terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Created, not started: audio is buffered.
    Idle,
    /// Waiting for `provision()`.
    Provisioning,
    /// Waiting for the socket to open.
    Connecting,
    /// The socket is open and audio flows (also while a `stop` drains the last transcripts).
    Open,
    /// Waiting out a backoff delay before reconnecting or provisioning again.
    Backoff,
    /// Stopped by the app (R4). Terminal.
    Stopped,
    /// Gave up; the reason went out as a terminal [`TranscriberError`]. Terminal.
    Failed,
}

impl State {
    /// The name JS sees.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Provisioning => "provisioning",
            State::Connecting => "connecting",
            State::Open => "open",
            State::Backoff => "backoff",
            State::Stopped => "stopped",
            State::Failed => "failed",
        }
    }

    /// Whether nothing will happen any more.
    pub fn is_terminal(self) -> bool {
        matches!(self, State::Stopped | State::Failed)
    }
}

/// What went wrong. [`TranscriberError::is_terminal`] says whether the transcriber failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TranscriberError {
    /// Audio waiting for a socket went over the buffer bound; the oldest frames were dropped.
    AudioDropped {
        /// Frames dropped since the last report.
        frames: u64,
        /// Their duration in milliseconds.
        ms: u64,
        /// Frames dropped since the transcriber was created.
        total_frames: u64,
    },
    /// Sessions died more often than `maxReprovisionsPerWindow` allows (R3).
    ReprovisionLimit,
    /// `provision()` failed with an HTTP status that asking again will not fix.
    ProvisionRejected {
        /// The status; 0 never gets here (network errors are retried).
        status: u16,
    },
    /// `provision()` rejected with a `TypeError`, as `fetch` does when the backend cannot be
    /// reached or another origin's CORS refuses the page. Said once, at the first such failure
    /// (and again after a `provision()` succeeded); L7 retries it meanwhile.
    ProvisionUnreachable {
        /// How many failures in a row end the transcriber (`maxProvisionAttempts`).
        attempts: u32,
    },
    /// `provision()` resolved without a `ws://` or `wss://` URL, or the browser refused it.
    InvalidUrl,
    /// Sessions died by R5 (a URL that never opens, `end_session`) more often than
    /// `maxReprovisionsPerWindow` allows.
    DeadSession,
    /// `provision()` failed this many times in a row, each retryable (L7).
    ProvisionExhausted {
        /// The failures in a row: `max_provision_attempts`.
        attempts: u32,
    },
    /// The server closed with a code the protocol classifies as fatal (a configuration or
    /// authorization error): asking again will not help.
    FatalClose {
        /// The close code.
        code: u16,
    },
    /// A socket closed before it opened: its handshake was refused (a wrong or expired
    /// credential, missing subprotocols, a dead URL) or the server did not answer. Reported for
    /// each such connect; terminal when no socket of the transcriber ever opened and two
    /// sessions' URLs in turn failed `attempts` times in a row (R5 re-provisions the first): a
    /// configuration error, not an outage.
    ConnectFailed {
        /// The protocol spoken.
        protocol: &'static str,
        /// Failed connects in a row on this URL.
        attempt: u32,
        /// How many in a row make the URL dead (`maxFailedConnects`).
        attempts: u32,
        /// No socket ever opened: the transcriber failed.
        terminal: bool,
    },
    /// The server sends messages the protocol does not know, and none it knows: most likely
    /// `protocol` does not match the server. Reported once; the transcriber goes on.
    UnexpectedMessages {
        /// The protocol spoken.
        protocol: &'static str,
        /// Such messages on the connection so far.
        count: u32,
        /// The last one's type field, where it had one that reads as a name (never content).
        kind: Option<String>,
    },
}

impl TranscriberError {
    /// The `code` JS sees.
    pub fn code(&self) -> &'static str {
        match self {
            TranscriberError::AudioDropped { .. } => "audio_dropped",
            TranscriberError::ReprovisionLimit => "reprovision_limit",
            TranscriberError::ProvisionRejected { .. } => "provision_rejected",
            TranscriberError::ProvisionUnreachable { .. } => "provision_unreachable",
            TranscriberError::InvalidUrl => "invalid_url",
            TranscriberError::DeadSession => "dead_session",
            TranscriberError::ProvisionExhausted { .. } => "provision_exhausted",
            TranscriberError::FatalClose { .. } => "fatal_close",
            TranscriberError::ConnectFailed { .. } => "connect_failed",
            TranscriberError::UnexpectedMessages { .. } => "unexpected_messages",
        }
    }

    /// Whether the transcriber failed with it.
    pub fn is_terminal(&self) -> bool {
        match self {
            TranscriberError::AudioDropped { .. }
            | TranscriberError::UnexpectedMessages { .. }
            | TranscriberError::ProvisionUnreachable { .. } => false,
            TranscriberError::ConnectFailed { terminal, .. } => *terminal,
            _ => true,
        }
    }
}

impl TranscriberError {
    /// The error's text, as `onError` gets it (built without `core::fmt`: see `core::text`).
    pub fn message(&self) -> String {
        match self {
            TranscriberError::AudioDropped { frames, ms, .. } => [
                &decimal(*frames),
                " audio frames (",
                &decimal(*ms),
                " ms) dropped while disconnected: over bufferMs",
            ]
            .concat(),
            TranscriberError::ReprovisionLimit => {
                "the live session ended too often within the re-provision window; gave up".into()
            }
            TranscriberError::ProvisionRejected { status } => [
                "provision() failed with HTTP ",
                &decimal((*status).into()),
                ": ",
                match status {
                    404 | 405 => {
                        "no such route: check the path provision() posts to (the recipes' \
                         POST /api/stt/<protocol>) and that your backend routes on the path, not \
                         the whole URL with its query"
                    }
                    401 | 403 => {
                        "your backend refused the page, or the provider refused the key your \
                         backend holds"
                    }
                    _ => "asking again will not help; check your backend's provisioning route",
                },
                "; gave up",
            ]
            .concat(),
            TranscriberError::ProvisionUnreachable { attempts } => [
                "provision() could not reach your backend: its fetch failed (no network, the \
                 backend down, or a backend on another origin whose CORS does not allow this \
                 page: the console names which); retrying, ",
                &decimal((*attempts).into()),
                " failures in a row end it",
            ]
            .concat(),
            TranscriberError::InvalidUrl => "provision() gave no usable ws:// or wss:// url".into(),
            TranscriberError::DeadSession => {
                "the live session was dead (its url never opened, or the server ended it) too \
                 often within the re-provision window; gave up"
                    .into()
            }
            TranscriberError::ProvisionExhausted { attempts } => [
                "provision() failed ",
                &decimal((*attempts).into()),
                " times in a row (it threw, the network failed, it timed out, or it answered \
                 408, 429 or 5xx); gave up",
            ]
            .concat(),
            TranscriberError::FatalClose { code } => [
                "the server closed the socket with ",
                &decimal((*code).into()),
                ", a configuration or authorization error for this protocol; gave up",
            ]
            .concat(),
            TranscriberError::ConnectFailed {
                protocol,
                attempt,
                attempts,
                terminal: false,
            } => [
                "the ",
                protocol,
                " socket closed before it opened (connect ",
                &decimal((*attempt).into()),
                " of ",
                &decimal((*attempts).into()),
                " on this url): check the credential and `protocols` that provision() returns, \
                 and the url",
            ]
            .concat(),
            TranscriberError::ConnectFailed {
                protocol, attempts, ..
            } => [
                "no ",
                protocol,
                " socket ever opened: ",
                &decimal((*attempts).into()),
                " connects in a row to each of two fresh urls were refused or not answered; \
                 check the credential and `protocols` that provision() returns, and the url; \
                 gave up",
            ]
            .concat(),
            TranscriberError::UnexpectedMessages {
                protocol,
                count,
                kind,
            } => {
                let mut text = [
                    &decimal((*count).into()),
                    " messages from the server are not ",
                    protocol,
                    " messages",
                ]
                .concat();
                if let Some(kind) = kind {
                    text.push_str(&[" (the last one's type: \"", kind, "\")"].concat());
                }
                text.push_str(
                    &[
                        " and none is: is `protocol` \"",
                        protocol,
                        "\" right for this server?",
                    ]
                    .concat(),
                );
                text
            }
        }
    }
}

impl fmt::Display for TranscriberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

/// Counters since creation, for the `stats` getter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Frames handed to an open socket, resends included.
    pub frames_sent: u64,
    /// Of those, frames sent again because their socket closed before they were confirmed.
    pub frames_resent: u64,
    /// Frames waiting for a socket right now.
    pub frames_buffered: u64,
    /// Frames dropped over the buffer bound before they were ever sent.
    pub frames_dropped: u64,
    /// Frames still waiting when the transcriber stopped or failed: never sent.
    pub frames_discarded: u64,
    /// Sockets created.
    pub connections: u64,
    /// `provision()` calls.
    pub provisions: u64,
    /// Server messages that were not JSON objects with a `type`, incomplete transcripts, or
    /// text over `max_message_bytes`.
    pub malformed_messages: u64,
    /// Server messages of an unknown `type`.
    pub unknown_messages: u64,
}

/// What the shell must do next, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Call `provision()`; answer with `on_provisioned` or `on_provision_failed`.
    Provision,
    /// Abort the pending `provision()` (fire its signal) and ignore how it settles (L7).
    CancelProvision,
    /// Close any socket and open one to this URL; answer with `on_open`/`on_close`.
    Connect(String),
    /// Send this binary frame on the open socket (audio, where the protocol frames it so).
    SendBinary(Vec<u8>),
    /// Send this text frame on the open socket (a protocol's start, keepalive, audio or finish
    /// message), as it is.
    SendText(String),
    /// Close the socket (code 1000) and report nothing more from it.
    Close,
    /// The state changed.
    StateChanged(State),
    /// A partial transcript, for captions only (T1), of utterance number `utterance`.
    Partial { text: String, utterance: u64 },
    /// A final transcript; `utterance` counts finals from 1.
    Final { text: String, utterance: u64 },
    /// The user started talking: utterance number `utterance` begins (barge-in).
    SpeechStart { utterance: u64 },
    /// The provider guesses utterance `utterance` ended with `text`: its final will say the
    /// same unless a [`Action::Resumed`] comes first. Never a final (T1).
    EagerFinal { text: String, utterance: u64 },
    /// The guess for utterance `utterance` is withdrawn: the user went on.
    Resumed { utterance: u64 },
    /// Report an error; a terminal one comes right before `StateChanged(Failed)`.
    Error(TranscriberError),
}
