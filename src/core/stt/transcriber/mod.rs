//! The live transcriber: one speech-to-text session that never loops and loses nothing (L1–L6).
//!
//! [`Transcriber`] is sans-IO like the turn ladder. The shell reports what `provision()` and the
//! socket did, hands over audio, with the current time, and then performs every
//! [`Transcriber::poll_action`] in order and calls [`Transcriber::handle_timeout`] at
//! [`Transcriber::poll_timeout`]. It owns the [`ReconnectPolicy`], the audio buffer and the wire
//! protocol (`config.protocol`: its [`Profile`] and a [`Codec`]), and speaks to the first two only
//! in the protocol's neutral terms: events, close classes, the watermark. What it hands the shell
//! to send is on the wire already: [`Action::SendBinary`] and [`Action::SendText`] frames.
//!
//! What it keeps, whatever order the inputs come in:
//! - **L1/L3** the URL comes only from `provision()`; a close is answered as the policy says
//!   (R1–R4) on the protocol's close class: the same URL after a backoff, a new session after a
//!   *session over* close (never the old URL), a terminal error after a *fatal* one or once
//!   re-provisions pass the window limit; transient provisioning failures back off, other
//!   statuses fail;
//! - **R6** where the protocol's credentials serve one connection, every reconnect calls
//!   `provision()` first ([`ProvisionReason::Reconnect`]), outside R3's window;
//! - **L9** a protocol with a keepalive gets it whenever the socket went that long without a frame;
//! - **R4** after [`Transcriber::stop`] or [`Transcriber::dispose`] nothing connects or provisions;
//! - **L4** audio handed over while no socket is open is kept, in order, up to `buffer_ms` of
//!   audio, and sent as soon as one opens, whichever session it belongs to; audio handed to a
//!   socket is kept until the server confirms it and sent again if the socket closes first; over
//!   the bound the oldest frames go, and those never sent are counted and reported with
//!   [`TranscriberError::AudioDropped`]. The rules live in `transcriber/audio.rs`.
//! - **L2** malformed and unknown messages are counted in [`Stats`] and skipped; so are text
//!   messages over `max_message_bytes` (the shell checks their length before copying them);
//! - **R5** `max_failed_connects` sockets in a row that close before they open, or an
//!   `end_session` while the session is in use, end the session: a new one is provisioned within
//!   R3's window, else the transcriber fails with [`TranscriberError::DeadSession`];
//! - **errors that name the mistake:** a socket that closes before it opens is reported at once
//!   ([`TranscriberError::ConnectFailed`]), and fails the transcriber when no socket ever opened
//!   and the first session's URL is dead by R5 (a configuration error: `start()` settles within
//!   `max_failed_connects` connects); a server whose messages the protocol does not know, and
//!   none it knows, is reported once ([`TranscriberError::UnexpectedMessages`]);
//! - **L7** a `provision()` not settled after `provision_timeout_ms` is cancelled
//!   ([`Action::CancelProvision`]) and counts as a failure without a status; after
//!   `max_provision_attempts` of those in a row the transcriber fails with
//!   [`TranscriberError::ProvisionExhausted`].
//!
//! ```
//! use turnguard::core::stt::protocols::gladia;
//! use turnguard::core::time::Millis;
//! use turnguard::core::stt::transcriber::{Action, State, Transcriber, TranscriberConfig};
//!
//! let mut t = Transcriber::new(TranscriberConfig::new(&gladia::PROFILE));
//! t.send_audio(vec![1, 0, 2, 0], Millis(0)); // buffered: nothing is connected yet
//! t.start(Millis(0));
//! assert_eq!(t.poll_action(), Some(Action::StateChanged(State::Provisioning)));
//! assert_eq!(t.poll_action(), Some(Action::Provision));
//! t.on_provisioned("wss://stt.example/v2/live?token=1", Millis(40));
//! t.on_open(Millis(90));
//! let actions: Vec<Action> = core::iter::from_fn(|| t.poll_action()).collect();
//! assert!(actions.contains(&Action::SendBinary(vec![1, 0, 2, 0])), "the buffer is flushed on open");
//! assert_eq!(t.state(), State::Open);
//! ```

use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
mod audio;
mod config;
mod output;
mod recovery;
mod timers;

pub use audio::UNACKED_CONFIRM_MS;
pub use config::TranscriberConfig;
pub use output::{Action, CloseReport, ProvisionReason, State, Stats, TranscriberError};

use crate::core::queue::Queue;
use crate::core::stt::protocol::{base64, Codec, Event, Framing, Profile};
use crate::core::stt::reconnect::{ReconnectAction, ReconnectPolicy};
use crate::core::stt::resample::resample_pcm16;
use crate::core::time::Millis;
use audio::AudioBuffer;
use core::fmt;
use timers::Timers;

/// Messages the protocol does not know, with none it knows, that say the server speaks another
/// protocol; or one arriving this long after the socket opened.
const UNEXPECTED_MESSAGES: u32 = 3;
const UNEXPECTED_AFTER_MS: u64 = 3_000;

/// One live transcription. See the module documentation.
pub struct Transcriber {
    config: TranscriberConfig,
    /// The wire protocol's facts, and its codec.
    profile: &'static Profile,
    codec: Box<dyn Codec>,
    policy: ReconnectPolicy,
    state: State,
    /// The current session's URL; `None` before provisioning and once the session is dead.
    url: Option<String>,
    /// What the `Retry` timer does.
    after_backoff: ReconnectAction,
    /// `stop` asked for the last transcripts (or waits for the audio to go out first).
    stopping: bool,
    /// `stop` waits for the audio buffer to drain before the finish messages go out.
    finish_pending: bool,
    /// Audio may flow on the open socket (the protocol's start was answered, where it must be).
    audio_flowing: bool,
    /// Why the next or current `provision()` is called.
    provision_reason: ProvisionReason,
    /// `provision()` calls for that reason since it was decided: 1 for the first, more for
    /// retries of a call that failed or was cancelled.
    provision_attempt: u32,
    /// When the current socket opened and when a text frame last went out on it (L9).
    opened_at: Option<Millis>,
    last_text_at: Option<Millis>,
    /// The last close the policy answered, for the shell to report.
    last_close: Option<CloseReport>,
    /// Events decoded from one message, reused.
    events: Vec<Event>,
    /// A socket opened at least once: a dead URL is an outage from then on, not a mistake.
    ever_opened: bool,
    /// `ProvisionUnreachable` was said since the last `provision()` that succeeded.
    unreachable_reported: bool,
    /// URLs found dead (R5) while no socket had opened yet.
    dead_urls_before_open: u32,
    /// The browser reported the network down (W): nothing connects or provisions until it is up.
    offline: bool,
    /// The page is in the back-forward cache: the same, until it is shown again.
    parked: bool,
    /// What the current connection's messages were: one the protocol knows, and how many it
    /// does not know (for [`TranscriberError::UnexpectedMessages`], reported once).
    known_messages: bool,
    unexpected_messages: u32,
    unexpected_reported: bool,
    /// `config` of the last `provision()`, as JSON, for the protocol's start message.
    start_config: Option<String>,
    timers: Timers,
    /// The status of the last failed `provision()`, for the terminal error.
    last_provision_status: u16,
    /// Audio waiting for a socket or for confirmation (L4).
    audio: AudioBuffer,
    finals: u64,
    stats: Stats,
    actions: Queue<Action>,
}

// By hand: a derived `Debug` would need `Codec: Debug`, and through the codec's vtable that
// keeps every protocol's formatting code in the wasm.
impl fmt::Debug for Transcriber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transcriber")
            .field("protocol", &self.profile.name)
            .field("state", &self.state)
            .field("url", &self.url.is_some())
            .finish_non_exhaustive()
    }
}

impl Transcriber {
    /// A transcriber in `Idle`: it buffers audio until [`Transcriber::start`].
    pub fn new(config: TranscriberConfig) -> Self {
        let profile = config.protocol;
        let mut policy = ReconnectPolicy::new(config.reconnect.clone());
        policy.set_throttled_delay_ms(config.throttled_delay_ms);
        Transcriber {
            audio: AudioBuffer::new(
                config.buffer_bytes(),
                config.sample_rate,
                profile.watermark,
                profile.pacing,
                profile.receipt_window_ms,
            ),
            codec: (profile.codec)(),
            profile,
            policy,
            config,
            state: State::Idle,
            url: None,
            after_backoff: ReconnectAction::Reprovision,
            stopping: false,
            finish_pending: false,
            audio_flowing: false,
            provision_reason: ProvisionReason::Start,
            provision_attempt: 0,
            opened_at: None,
            last_text_at: None,
            last_close: None,
            events: Vec::new(),
            ever_opened: false,
            dead_urls_before_open: 0,
            offline: false,
            parked: false,
            unreachable_reported: false,
            known_messages: false,
            unexpected_messages: 0,
            unexpected_reported: false,
            start_config: None,
            timers: Timers::default(),
            last_provision_status: 0,
            finals: 0,
            stats: Stats::default(),
            actions: Queue::new(),
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &TranscriberConfig {
        &self.config
    }

    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// Whether `stop` is waiting for the last transcripts.
    pub fn is_stopping(&self) -> bool {
        self.stopping
    }

    /// The wire protocol.
    pub fn protocol(&self) -> &'static Profile {
        self.profile
    }

    /// Why the pending [`Action::Provision`] calls `provision()`.
    pub fn provision_reason(&self) -> ProvisionReason {
        self.provision_reason
    }

    /// Which call for that reason the pending [`Action::Provision`] is: 1 for the first, more
    /// for a retry after a failure, a timeout or a call cancelled by the page going away. Only
    /// the first of a [`ProvisionReason::SessionOver`] is a new session for R3's window.
    pub fn provision_attempt(&self) -> u32 {
        self.provision_attempt
    }

    /// The last close answered while the app wanted the socket, once: the shell reports it.
    pub fn take_close_report(&mut self) -> Option<CloseReport> {
        self.last_close.take()
    }

    /// Counters since creation.
    pub fn stats(&self) -> Stats {
        let audio = self.audio.counts;
        Stats {
            frames_sent: audio.sent,
            frames_resent: audio.resent,
            frames_buffered: self.audio.waiting(),
            frames_dropped: audio.dropped,
            frames_discarded: audio.discarded,
            ..self.stats
        }
    }

    /// Bytes of audio retained (waiting or not yet confirmed); never above the buffer bound.
    pub fn retained_bytes(&self) -> u64 {
        self.audio.bytes()
    }

    /// Starts the session: provisions, then connects. Only from `Idle`; otherwise nothing.
    pub fn start(&mut self, now: Millis) {
        if self.state != State::Idle {
            return;
        }
        if self.held() {
            // Provisioned once the network is back (W).
            self.after_backoff = ReconnectAction::Reprovision;
            return self.set_state(State::Backoff);
        }
        self.provision(now);
    }

    /// `provision()` gave this `config` (a JSON object) with the URL that follows: its fields go
    /// into the protocol's start message. Call before [`Transcriber::on_provisioned`].
    pub fn set_start_config(&mut self, config: Option<String>) {
        self.start_config = config;
    }

    /// The browser refused to create a socket for the URL (`new WebSocket` threw).
    pub fn on_connect_error(&mut self, _now: Millis) {
        if self.state == State::Connecting {
            self.timers.connect = None;
            self.fail(TranscriberError::InvalidUrl);
        }
    }

    /// The socket opened: everything waiting goes out, in order.
    pub fn on_open(&mut self, now: Millis) {
        if self.state != State::Connecting {
            return;
        }
        self.timers.connect = None;
        self.policy.on_open(now);
        if let Some(url) = &self.url {
            self.codec.on_connect(url);
        }
        self.opened_at = Some(now);
        self.ever_opened = true;
        self.known_messages = false;
        self.unexpected_messages = 0;
        self.last_text_at = None;
        self.set_state(State::Open);
        let rate = self.wire_sample_rate();
        if let Some(start) = self.codec.start_message(self.start_config.as_deref(), rate) {
            self.send_text(start, now);
        }
        self.audio_flowing = !self.profile.audio_after_start;
        if self.audio_flowing {
            self.audio.on_open(now, &mut self.actions);
        }
    }

    /// The socket closed with `code` (1006 when it never opened or was cut).
    pub fn on_close(&mut self, code: u16, now: Millis) {
        if self.stopping {
            self.finish_stop(false);
        } else if matches!(self.state, State::Connecting | State::Open) {
            self.socket_lost(code, now);
        }
    }

    /// A text message arrived on the socket. Over `max_message_bytes` it is malformed, unread.
    pub fn on_text(&mut self, text: &str, now: Millis) {
        if u64::try_from(text.len()).map_or(true, |len| len > self.config.max_message_bytes) {
            return self.on_oversize_message(now);
        }
        if self.state != State::Open {
            return;
        }
        let mut events = core::mem::take(&mut self.events);
        self.codec.decode(text, &mut events);
        let unknown = events
            .iter()
            .all(|event| matches!(event, Event::Unknown | Event::Malformed));
        if unknown {
            self.on_unexpected_message(crate::core::json::message_kind(text), now);
        } else {
            self.known_messages = true;
        }
        for event in events.drain(..) {
            self.on_event(event, now);
        }
        self.events = events;
    }

    /// A text message over `max_message_bytes` arrived; the shell measured it and did not copy it.
    pub fn on_oversize_message(&mut self, _now: Millis) {
        if self.state == State::Open {
            self.stats.malformed_messages += 1;
        }
    }

    /// One neutral event of the protocol, as [`Codec::decode`] gives it.
    pub fn on_event(&mut self, event: Event, now: Millis) {
        if self.state != State::Open {
            return;
        }
        match event {
            // A blank transcript is noise: it must not reach captions or start a turn.
            Event::Partial(text) | Event::Final(text) if text.trim().is_empty() => {}
            Event::Final(text) => {
                self.finals += 1;
                self.actions.push_back(Action::Final {
                    text,
                    utterance: self.finals,
                });
            }
            Event::Partial(text) => self.actions.push_back(Action::Partial {
                text,
                utterance: self.finals + 1,
            }),
            Event::SpeechStart => self.actions.push_back(Action::SpeechStart {
                utterance: self.finals + 1,
            }),
            Event::EagerFinal(text) => self.actions.push_back(Action::EagerFinal {
                text,
                utterance: self.finals + 1,
            }),
            Event::Resumed => self.actions.push_back(Action::Resumed {
                utterance: self.finals + 1,
            }),
            Event::Finished | Event::SessionOver if self.stopping => self.finish_stop(true),
            Event::SessionOver => self.session_ended(now),
            Event::AckBytes(bytes) => self.audio.on_acknowledged(bytes, now),
            Event::Started if !self.audio_flowing => {
                self.audio_flowing = true;
                self.audio.on_open(now, &mut self.actions);
                if self.stopping {
                    self.audio.flush(now, &mut self.actions);
                    self.finish_when_drained();
                }
            }
            Event::Received(frames) => {
                self.audio.on_received(frames, now, &mut self.actions);
                self.finish_when_drained();
            }
            Event::FinalizedUntilMs(ms) => self.audio.on_finalized(ms),
            Event::Malformed => self.stats.malformed_messages += 1,
            Event::Unknown => self.stats.unknown_messages += 1,
            Event::SpeechEnd | Event::Finished | Event::Started | Event::Ignored => {}
        }
    }

    /// A binary message arrived: the protocol has none, so it counts as malformed.
    pub fn on_binary_message(&mut self, now: Millis) {
        if self.state == State::Open {
            self.stats.malformed_messages += 1;
            self.on_unexpected_message(Some("binary".to_owned()), now);
        }
    }

    /// A message the protocol does not know arrived (`kind`: its type field). Three of them, or
    /// one after 3 s of the connection, with none the protocol knows: the server speaks another
    /// protocol (or the URL is wrong): say so once, with what arrived.
    fn on_unexpected_message(&mut self, kind: Option<String>, now: Millis) {
        self.unexpected_messages = self.unexpected_messages.saturating_add(1);
        let open_ms = self.opened_at.map_or(0, |at| now.since(at));
        let telling =
            self.unexpected_messages >= UNEXPECTED_MESSAGES || open_ms >= UNEXPECTED_AFTER_MS;
        if self.known_messages || self.unexpected_reported || !telling {
            return;
        }
        self.unexpected_reported = true;
        self.actions
            .push_back(Action::Error(TranscriberError::UnexpectedMessages {
                protocol: self.profile.name,
                count: self.unexpected_messages,
                kind,
            }));
    }

    /// One frame of PCM16 little-endian mono audio. Sent at once when a socket is open, kept
    /// otherwise (L4). Returns false when it was refused because the transcriber is stopping or
    /// over; empty frames are accepted and ignored.
    pub fn send_audio(&mut self, bytes: Vec<u8>, now: Millis) -> bool {
        if self.state.is_terminal() || self.stopping {
            return false;
        }
        if bytes.is_empty() {
            return true;
        }
        let open = self.state == State::Open && self.audio_flowing;
        self.audio.push(bytes, now, open, &mut self.actions);
        true
    }

    /// The app is done (R4): nothing connects or provisions from now on. With a socket open,
    /// `stop_recording` goes out and the socket stays until `end_recording`, the server's close
    /// or `stop_timeout_ms`, so the last finals arrive; otherwise it stops at once.
    pub fn stop(&mut self, now: Millis) {
        if self.state.is_terminal() || self.stopping {
            return;
        }
        self.policy.on_client_detach();
        if self.state == State::Open {
            self.stopping = true;
            self.timers = Timers {
                stop: Some(now.after(self.config.stop_timeout_ms)),
                ..Timers::default()
            };
            // Paced audio still waiting goes out first, so the last words reach the server.
            if self.audio_flowing {
                self.audio.flush(now, &mut self.actions);
            }
            self.finish_pending = true;
            self.finish_when_drained();
        } else {
            self.finish_stop(self.state == State::Connecting);
        }
    }

    /// The app went away (dispose, page leaving): like [`Transcriber::stop`] without waiting.
    pub fn dispose(&mut self, _now: Millis) {
        if self.state.is_terminal() {
            return;
        }
        self.policy.on_client_detach();
        if self.state == State::Open && !self.stopping {
            self.send_finish();
        }
        self.finish_stop(matches!(self.state, State::Open | State::Connecting));
    }

    /// The next thing the shell must do, in order.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        match self.actions.pop_front()? {
            Action::SendBinary(pcm) if self.profile.framing == Framing::Base64Json => {
                Some(Action::SendText(self.audio_message(&pcm)))
            }
            action => Some(action),
        }
    }

    /// The sample rate of the audio on the wire: the protocol's, else the capture's.
    fn wire_sample_rate(&self) -> u32 {
        self.profile.sample_rate.unwrap_or(self.config.sample_rate)
    }

    /// One frame of captured audio as the protocol's text message, at its rate. Encoded as it is
    /// handed out, so the buffer keeps raw PCM for resending.
    fn audio_message(&mut self, pcm: &[u8]) -> String {
        let rate = self.wire_sample_rate();
        let encoded = if rate == self.config.sample_rate {
            base64(pcm)
        } else {
            base64(&resample_pcm16(pcm, self.config.sample_rate, rate))
        };
        self.codec.audio_message(&encoded, rate)
    }

    /// The protocol's finish messages, in order.
    fn send_finish(&mut self) {
        let messages = self.codec.finish_messages(self.audio.connection_frames);
        self.actions
            .extend(messages.into_iter().map(Action::SendText));
    }

    fn set_state(&mut self, state: State) {
        if self.state != state {
            self.state = state;
            self.actions.push_back(Action::StateChanged(state));
        }
    }

    fn send_text(&mut self, text: String, now: Millis) {
        self.last_text_at = Some(now);
        self.actions.push_back(Action::SendText(text));
    }

    /// `stop`: the finish messages go out once every frame has.
    fn finish_when_drained(&mut self) {
        if self.finish_pending && self.audio_flowing && self.audio.drained() {
            self.finish_pending = false;
            self.send_finish();
        }
    }
}
