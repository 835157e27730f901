//! The transcriber's clock: the deadlines it arms (backoff, connect, stop, provision), the ones
//! it derives (paced resend, keepalive, half-open), and what each does when it comes due.

use super::{Action, ProvisionReason, State, Transcriber};
use crate::core::stt::protocol::Credentials;
use crate::core::stt::reconnect::ReconnectAction;
use crate::core::time::Millis;
use alloc::borrow::ToOwned;

/// One deadline per timer kind; the next wake-up is the earliest.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Timers {
    /// The backoff delay is over: reconnect or provision.
    pub(super) retry: Option<Millis>,
    /// The socket took too long to open.
    pub(super) connect: Option<Millis>,
    /// `stop` waited long enough for the last transcripts.
    pub(super) stop: Option<Millis>,
    /// `provision()` took too long (L7).
    pub(super) provision: Option<Millis>,
}

impl Timers {
    fn earliest(self) -> Option<Millis> {
        [self.retry, self.connect, self.stop, self.provision]
            .into_iter()
            .flatten()
            .min()
    }
}

/// Clears `slot` and says true when it was due at `now`.
fn take_due(slot: &mut Option<Millis>, now: Millis) -> bool {
    if slot.is_some_and(|at| at <= now) {
        *slot = None;
        true
    } else {
        false
    }
}

impl Transcriber {
    /// Fires every timer that is due at `now`. Early or repeated calls are harmless.
    pub fn handle_timeout(&mut self, now: Millis) {
        if take_due(&mut self.timers.stop, now) && self.stopping {
            self.finish_stop(true);
        }
        if self.half_open_at().is_some_and(|at| at <= now) {
            // L4: acknowledgments stopped while audio went out: the socket is half-open.
            self.actions.push_back(Action::Close);
            return self.socket_lost(1006, now);
        }
        if self.state == State::Open {
            let flowing = self.audio_flowing;
            if flowing && self.audio.next_send_at().is_some_and(|at| at <= now) {
                self.audio.on_pace(now, &mut self.actions);
                self.finish_when_drained();
            }
            if self.keepalive_at().is_some_and(|at| at <= now) {
                if let Some(keepalive) = self.profile.keepalive {
                    self.send_text(keepalive.message.to_owned(), now);
                }
            }
        }
        if take_due(&mut self.timers.connect, now) && self.state == State::Connecting {
            self.actions.push_back(Action::Close);
            self.socket_lost(1006, now);
        }
        if take_due(&mut self.timers.provision, now) && self.state == State::Provisioning {
            self.actions.push_back(Action::CancelProvision);
            self.on_provision_failed(0, now);
        }
        if self.held() && self.state == State::Backoff {
            // Waits for `online` (W) or `pageshow`: `set_online` or `unpark` goes on from here.
            take_due(&mut self.timers.retry, now);
        }
        if take_due(&mut self.timers.retry, now) && self.state == State::Backoff {
            let fresh = self.profile.credentials == Credentials::PerConnection;
            match (self.after_backoff, &self.url) {
                (ReconnectAction::ReconnectSameUrl, Some(_)) if !fresh => self.connect(now),
                (ReconnectAction::ReconnectSameUrl, _) => {
                    // R6: fresh credentials for the same session, after a drop or the cache
                    // alike; not a new session for R3, whatever the last call was for.
                    self.provision_reason = ProvisionReason::Reconnect;
                    self.provision_attempt = 0;
                    self.provision(now);
                }
                _ => self.provision(now),
            }
        }
    }

    /// When `handle_timeout` must be called next, if any timer is armed.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Millis> {
        let open = (self.state == State::Open && self.audio_flowing).then_some(());
        let pace = open.and_then(|()| self.audio.next_send_at());
        [
            self.timers.earliest(),
            pace,
            self.keepalive_at(),
            self.half_open_at(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// When an open socket that owes acknowledgments counts as half-open (L4).
    fn half_open_at(&self) -> Option<Millis> {
        if self.state != State::Open || self.stopping || self.config.ack_timeout_ms == 0 {
            return None;
        }
        let since = [self.audio.owed_ack_since(), self.audio.owed_receipt_since()]
            .into_iter()
            .flatten()
            .min()?;
        Some(since.after(self.config.ack_timeout_ms))
    }

    /// When the keepalive is due: the protocol's idle time after the last frame (L9).
    fn keepalive_at(&self) -> Option<Millis> {
        let keepalive = self.profile.keepalive?;
        if self.state != State::Open || self.stopping {
            return None;
        }
        let last = [self.opened_at, self.last_text_at, self.audio.last_sent_at]
            .into_iter()
            .flatten()
            .max()?;
        Some(last.after(keepalive.idle_ms))
    }
}
