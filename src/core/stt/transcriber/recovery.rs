//! How the transcriber follows its reconnect policy: provisioning and connecting, a socket lost
//! or a session ended (R1–R6, L7), and the two ways it ends (stopped, failed).

use super::timers::Timers;
use super::{Action, CloseReport, ProvisionReason, State, Transcriber, TranscriberError};
use crate::core::stt::protocol::{classify_close, CloseClass};
use crate::core::stt::reconnect::{Decision, ReconnectAction, ReconnectReason};
use crate::core::time::Millis;
use alloc::borrow::ToOwned;

/// Dead URLs (R5) before any socket opened that make the transcriber fail: the first is
/// re-provisioned, the second fresh one refused as well names a mistake.
const DEAD_URLS_BEFORE_OPEN: u32 = 2;

/// Whether `url` names a WebSocket endpoint: `ws://` or `wss://` and something after it.
fn is_socket_url(url: &str) -> bool {
    ["ws://", "wss://"].iter().any(|scheme| {
        url.len() > scheme.len()
            && url
                .get(..scheme.len())
                .is_some_and(|prefix| prefix.eq_ignore_ascii_case(scheme))
    })
}

impl Transcriber {
    /// `provision()` resolved with this URL.
    pub fn on_provisioned(&mut self, url: &str, now: Millis) {
        if self.state != State::Provisioning {
            return;
        }
        self.timers.provision = None;
        self.policy.on_provisioned();
        self.provision_attempt = 0;
        self.unreachable_reported = false;
        if !is_socket_url(url) {
            return self.fail(TranscriberError::InvalidUrl);
        }
        self.url = Some(url.to_owned());
        self.audio.on_new_session();
        self.connect(now);
    }

    /// `provision()` failed with this HTTP status, or 0 (network error, thrown callback).
    pub fn on_provision_failed(&mut self, http_status_or_zero: u16, now: Millis) {
        if self.state == State::Provisioning {
            self.timers.provision = None;
            self.last_provision_status = http_status_or_zero;
            let decision = self.policy.on_provision_failed(http_status_or_zero, now);
            self.follow(decision, now);
        }
    }

    /// `provision()` rejected with a `TypeError` (what `fetch` rejects with for no network or a
    /// CORS refusal): as `on_provision_failed(0)`, and said once while it lasts, so the cause
    /// shows before the retries run out.
    pub fn on_provision_unreachable(&mut self, now: Millis) {
        if self.state != State::Provisioning {
            return;
        }
        self.on_provision_failed(0, now);
        if self.state == State::Backoff && !self.unreachable_reported {
            self.unreachable_reported = true;
            let attempts = self.config.reconnect.max_provision_attempts.max(1);
            self.actions
                .push_back(Action::Error(TranscriberError::ProvisionUnreachable {
                    attempts,
                }));
        }
    }

    /// The browser says the network went down (`offline`) or came back (`online`) (W). While it
    /// is down nothing connects and nothing is provisioned: a backoff that ends waits, and the
    /// reconnect budgets are not spent on an outage the browser reported. Back up, a transcriber
    /// waiting in backoff goes on at once, whatever was left of its delay.
    pub fn set_online(&mut self, online: bool, now: Millis) {
        if self.offline != online {
            return;
        }
        self.offline = !online;
        if online {
            self.go_on(now);
        }
    }

    /// The page went into the back-forward cache (`pagehide` with `persisted`). A page that
    /// holds a socket is not kept there, so the socket closes (1000) and, as while offline,
    /// nothing connects or provisions until [`Transcriber::unpark`]; unconfirmed audio waits to
    /// be resent, and no reconnect budget is spent.
    pub fn park(&mut self, now: Millis) {
        if self.parked || self.stopping || self.state.is_terminal() || self.state == State::Idle {
            return;
        }
        self.parked = true;
        match self.state {
            State::Open | State::Connecting => {
                self.actions.push_back(Action::Close);
                self.timers.connect = None;
                self.opened_at = None;
                self.audio.on_socket_lost(now);
                self.after_backoff = ReconnectAction::ReconnectSameUrl;
            }
            State::Provisioning => {
                self.actions.push_back(Action::CancelProvision);
                self.timers.provision = None;
                self.after_backoff = ReconnectAction::Reprovision;
            }
            _ => {}
        }
        self.set_state(State::Backoff);
    }

    /// The page is shown again from the back-forward cache (`pageshow` with `persisted`): it
    /// connects at once (the network permitting), with the same URL where the protocol allows.
    pub fn unpark(&mut self, now: Millis) {
        if core::mem::take(&mut self.parked) {
            self.go_on(now);
        }
    }

    /// Nothing holds the connection back any more: a backoff ends at once.
    fn go_on(&mut self, now: Millis) {
        if !self.held() && self.state == State::Backoff {
            self.timers.retry = Some(now);
            self.handle_timeout(now);
        }
    }

    /// The network is down or the page is cached: nothing connects.
    pub(super) fn held(&self) -> bool {
        self.offline || self.parked
    }

    /// Whether the browser reported the network down.
    pub fn is_offline(&self) -> bool {
        self.offline
    }

    pub(super) fn provision(&mut self, now: Millis) {
        self.timers.provision = Some(now.after(self.config.provision_timeout_ms));
        self.set_state(State::Provisioning);
        self.stats.provisions += 1;
        self.provision_attempt = self.provision_attempt.saturating_add(1);
        if self.provision_reason == ProvisionReason::SessionOver && self.provision_attempt == 1 {
            // R3 counts the call itself, which an outage or a cached page may have held back.
            self.policy.on_reprovision_called(now);
        }
        self.actions.push_back(Action::Provision);
    }

    pub(super) fn connect(&mut self, now: Millis) {
        let Some(url) = self.url.clone() else {
            return self.provision(now);
        };
        self.set_state(State::Connecting);
        self.stats.connections += 1;
        self.timers.connect = Some(now.after(self.config.connect_timeout_ms));
        self.actions.push_back(Action::Connect(url));
    }

    /// The socket is gone while the app still wants it: unconfirmed audio waits again, and the
    /// policy says what comes next.
    pub(super) fn socket_lost(&mut self, code: u16, now: Millis) {
        self.timers.connect = None;
        let never_opened = self.opened_at.take().is_none();
        self.audio.on_socket_lost(now);
        let class = classify_close(self.profile, &mut *self.codec, code);
        let attempt = self.policy.failed_connects().saturating_add(1);
        let decision = self.policy.on_close(code, class, now);
        self.last_close = Some(CloseReport {
            code,
            class,
            next: decision.action,
            delay_ms: decision.delay_ms,
        });
        if decision.reason == ReconnectReason::FatalClose {
            return self.fail(TranscriberError::FatalClose { code });
        }
        if never_opened && class != CloseClass::SessionOver {
            // R5 counts it, and re-provisions a dead URL: one stale URL is an outage. Before any
            // socket ever opened, a fresh URL refused the same way is a mistake (a credential,
            // the subprotocols, the protocol, the URL) that a third session would repeat: fail.
            let url_dead = decision.reason == ReconnectReason::DeadUrl;
            if url_dead && !self.ever_opened {
                self.dead_urls_before_open += 1;
            }
            let terminal = url_dead && self.dead_urls_before_open >= DEAD_URLS_BEFORE_OPEN;
            let error = TranscriberError::ConnectFailed {
                protocol: self.profile.name,
                attempt,
                attempts: self.config.reconnect.max_failed_connects.max(1),
                terminal,
            };
            if terminal {
                return self.fail(error);
            }
            self.actions.push_back(Action::Error(error));
        }
        self.follow(decision, now);
    }

    /// `end_session` while in use (R5): the socket is done for, and so is its URL.
    pub(super) fn session_ended(&mut self, now: Millis) {
        if self.stopping {
            return;
        }
        self.actions.push_back(Action::Close);
        self.timers.connect = None;
        self.opened_at = None;
        self.audio.on_socket_lost(now);
        let decision = self.policy.on_session_ended(now);
        self.follow(decision, now);
    }

    pub(super) fn follow(&mut self, decision: Decision, now: Millis) {
        match decision.action {
            ReconnectAction::Stop => match decision.reason {
                ReconnectReason::ClientDetached => self.finish_stop(false),
                ReconnectReason::ProvisionRejected => {
                    // The policy stops on a provisioning status only; keep which one for the UI.
                    self.fail(TranscriberError::ProvisionRejected {
                        status: self.last_provision_status,
                    })
                }
                ReconnectReason::DeadSession => self.fail(TranscriberError::DeadSession),
                ReconnectReason::ProvisionExhausted => {
                    self.fail(TranscriberError::ProvisionExhausted {
                        attempts: self.config.reconnect.max_provision_attempts.max(1),
                    })
                }
                _ => self.fail(TranscriberError::ReprovisionLimit),
            },
            action => {
                if action == ReconnectAction::Reprovision {
                    self.url = None; // R2: never the old URL again
                }
                if matches!(
                    decision.reason,
                    ReconnectReason::SessionDead
                        | ReconnectReason::DeadUrl
                        | ReconnectReason::SessionEnded
                ) {
                    self.provision_reason = ProvisionReason::SessionOver;
                    self.provision_attempt = 0;
                }
                self.after_backoff = action;
                self.set_state(State::Backoff);
                self.timers.retry = Some(now.after(decision.delay_ms));
            }
        }
    }

    pub(super) fn finish_stop(&mut self, close: bool) {
        if close {
            self.actions.push_back(Action::Close);
        }
        self.stopping = false;
        self.finish_pending = false;
        self.opened_at = None;
        self.timers = Timers::default();
        self.url = None;
        self.audio.release(&mut self.actions);
        self.set_state(State::Stopped);
    }

    pub(super) fn fail(&mut self, error: TranscriberError) {
        self.timers = Timers::default();
        self.opened_at = None;
        self.url = None;
        self.audio.release(&mut self.actions);
        self.actions.push_back(Action::Error(error));
        self.set_state(State::Failed);
    }
}
