//! When and how the live transcription socket comes back (rule L3, R1–R4).
//!
//! [`ReconnectPolicy`] is sans-IO and pure: the shell reports what happened to the socket and to
//! provisioning, with the current time, and gets back a [`Decision`] — what to do
//! ([`ReconnectAction`]), after how long, and why ([`ReconnectReason`]). It never reads a clock,
//! never sets a timer, and draws its jitter from a seeded PRNG, so a seed replays exactly.
//!
//! The rules and where they are kept:
//! - **R1** the backoff resets only when a socket stayed open at least `stable_open_ms` (inclusive)
//!   before it closed — never on open alone ([`ReconnectPolicy::on_open`],
//!   [`ReconnectPolicy::on_close`]);
//! - **R2** each close has a class ([`CloseClass`], from the protocol): *session over*
//!   re-provisions, never the old URL; *throttled* retries after at least `throttled_delay_ms`;
//!   *fatal* stops;
//! - **R3** at most `max_reprovisions_per_window` re-provisions in any sliding window of
//!   `reprovision_window_ms`; beyond that, stop with [`ReconnectReason::ReprovisionLimit`];
//! - **R4** after [`ReconnectPolicy::on_client_detach`] every decision is [`ReconnectAction::Stop`];
//! - **R5** a socket that closes before it ever opened is a failed connect; `max_failed_connects`
//!   of them in a row on one URL mean the session is dead ([`ReconnectReason::DeadUrl`]), and so
//!   does an `end_session` while the session is in use ([`ReconnectPolicy::on_session_ended`]):
//!   re-provision, counted by R3's window; with the window spent, stop with
//!   [`ReconnectReason::DeadSession`] (a browser reports an upgrade refused with HTTP 404 as 1006,
//!   so R2 alone never sees a dead token);
//! - **L7** retryable provisioning failures (no HTTP status — a thrown error, a network failure,
//!   a timeout — or 408, 429, 5xx) are retried at most `max_provision_attempts` times in a row,
//!   counting the first call: then stop with [`ReconnectReason::ProvisionExhausted`];
//! - any other close: the same URL again after an exponential backoff with full jitter;
//! - provisioning failures (network, 408, 429, 5xx) back off the same way and provision again;
//!   any other status stops ([`ReconnectPolicy::on_provision_failed`]).
//!
//! A `Stop` is terminal: every later input gets a `Stop` too. A new session starts a new policy.
//!
//! ```
//! use turnguard::core::stt::protocol::CloseClass;
//! use turnguard::core::stt::reconnect::{ReconnectAction, ReconnectConfig, ReconnectPolicy};
//! use turnguard::core::time::Millis;
//!
//! let mut policy = ReconnectPolicy::new(ReconnectConfig::default());
//! policy.on_open(Millis(0));
//! // The server says the session is dead: provision a new one, after a short jittered delay.
//! let decision = policy.on_close(4403, CloseClass::SessionOver, Millis(10));
//! assert_eq!(decision.action, ReconnectAction::Reprovision);
//! assert_eq!(decision.reason.as_str(), "session_dead");
//! assert!(decision.delay_ms <= 500);
//! // The page is leaving: whatever happens next, nothing reconnects.
//! policy.on_client_detach();
//! let decision = policy.on_close(1006, CloseClass::Retry, Millis(20));
//! assert_eq!(decision.action, ReconnectAction::Stop);
//! ```

use crate::core::queue::Queue;
use crate::core::stt::backoff::Backoff;
use crate::core::stt::protocol::CloseClass;
use crate::core::time::Millis;

mod config;
mod decision;

pub use config::ReconnectConfig;
pub use decision::{Decision, ReconnectAction, ReconnectReason};

/// Whether a provisioning failure may pass by itself: no HTTP status at all (network error,
/// thrown callback), 408 Request Timeout, 429 Too Many Requests, or any 5xx.
fn is_transient_provision_failure(http_status_or_zero: u16) -> bool {
    matches!(http_status_or_zero, 0 | 408 | 429 | 500..=599)
}

/// The reconnect policy of one live transcription session. See the module documentation.
#[derive(Clone, Debug)]
pub struct ReconnectPolicy {
    config: ReconnectConfig,
    backoff: Backoff,
    /// When the current socket opened; `None` while no socket is open.
    opened_at: Option<Millis>,
    /// When each recent re-provision for a dead session is due (decision time + delay), for R3.
    /// Entries a window older than the latest input are dropped, so it holds a handful at most.
    reprovisions_due: Queue<Millis>,
    /// Set by the first `Stop`; every later input gets a `Stop` with this reason.
    stopped: Option<ReconnectReason>,
    /// Sockets in a row that closed before they opened, on the current URL (R5).
    failed_connects: u32,
    /// Retryable provisioning failures since the last success (L7).
    provision_failures: u32,
    /// Least delay after a throttled close.
    throttled_delay_ms: u64,
}

impl ReconnectPolicy {
    /// A policy for a fresh session: backoff at attempt 0, no re-provisions yet.
    pub fn new(config: ReconnectConfig) -> Self {
        ReconnectPolicy {
            backoff: Backoff::new(
                config.initial_delay_ms,
                config.max_delay_ms,
                config.jitter,
                config.random_seed,
            ),
            config,
            opened_at: None,
            reprovisions_due: Queue::new(),
            stopped: None,
            failed_connects: 0,
            provision_failures: 0,
            throttled_delay_ms: Self::DEFAULT_THROTTLED_DELAY_MS,
        }
    }

    /// Default least delay after a throttled close.
    pub const DEFAULT_THROTTLED_DELAY_MS: u64 = 10_000;

    /// Sets the least delay after a close classified [`CloseClass::Throttled`] (default
    /// 10 000 ms); it may exceed `max_delay_ms`.
    pub fn set_throttled_delay_ms(&mut self, ms: u64) {
        self.throttled_delay_ms = ms;
    }

    /// The configuration in force.
    pub fn config(&self) -> &ReconnectConfig {
        &self.config
    }

    /// Backoff delays handed out since the backoff last reset (R1).
    pub fn backoff_attempt(&self) -> u32 {
        self.backoff.attempt()
    }

    /// Why the policy stopped, once it has: then every decision is [`ReconnectAction::Stop`].
    pub fn stopped(&self) -> Option<ReconnectReason> {
        self.stopped
    }

    /// Sockets in a row that closed before they opened on the current URL (R5).
    pub fn failed_connects(&self) -> u32 {
        self.failed_connects
    }

    /// Retryable provisioning failures in a row (L7).
    pub fn provision_failures(&self) -> u32 {
        self.provision_failures
    }

    /// The socket opened. This alone never resets the backoff (R1): a server that accepts and
    /// drops at once must keep backing off. It starts the clock that `on_close` checks and ends
    /// a run of failed connects (R5).
    pub fn on_open(&mut self, now: Millis) {
        if self.stopped.is_none() {
            self.opened_at = Some(now);
            self.failed_connects = 0;
        }
    }

    /// `provision()` gave a session: the run of provisioning failures is over (L7).
    pub fn on_provisioned(&mut self) {
        self.provision_failures = 0;
    }

    /// The socket closed with `code` (the browser reports 1006 when it never opened), which the
    /// protocol classifies as `class` (R2).
    ///
    /// R1: if it had been open for at least `stable_open_ms`, the backoff resets first, so this
    /// close waits at most `initial_delay_ms`. Then:
    /// - *session over*: the session is dead (R2). Re-provision, never the old URL, within the
    ///   window limit (R3) or else stop. The re-provision waits a backoff delay too: a session
    ///   that dies right after every open must not make us hammer `provision()` (which costs the
    ///   app a backend call and the provider a session), and the delay grows with the same
    ///   schedule as reconnects, reset only by R1;
    /// - *fatal*: stop with [`ReconnectReason::FatalClose`];
    /// - *throttled*: the same URL after at least the throttled delay;
    /// - *retry* (a normal 1000 while the session was still in use most likely means a restart
    ///   or a rotation behind a load balancer; 1001, 1006, 1011, …): the same URL after a backoff;
    /// - except (R5) a close of a socket that never opened, unless its class says the session is
    ///   over: the `max_failed_connects`-th in a row on one URL means the URL is dead, and the
    ///   session is re-provisioned as for R2, within the window, or else stops with
    ///   [`ReconnectReason::DeadSession`].
    pub fn on_close(&mut self, code: u16, class: CloseClass, now: Millis) -> Decision {
        let opened_at = self.opened_at.take();
        if let Some(reason) = self.stopped {
            return Decision::stop(reason);
        }
        let stayed_open_ms = opened_at.map(|at| now.since(at));
        if stayed_open_ms.is_some_and(|ms| ms >= self.config.stable_open_ms) {
            self.backoff.reset();
        }
        if class == CloseClass::Fatal {
            return self.stop(ReconnectReason::FatalClose);
        }
        if opened_at.is_none() && class != CloseClass::SessionOver {
            self.failed_connects = self.failed_connects.saturating_add(1);
            if self.failed_connects >= self.config.max_failed_connects {
                return self.reprovision_for_dead_session(
                    now,
                    ReconnectReason::DeadUrl,
                    ReconnectReason::DeadSession,
                );
            }
        }
        match class {
            CloseClass::SessionOver => self.reprovision_for_dead_session(
                now,
                ReconnectReason::SessionDead,
                ReconnectReason::ReprovisionLimit,
            ),
            CloseClass::Throttled => {
                let mut decision = self.after_backoff(
                    ReconnectAction::ReconnectSameUrl,
                    ReconnectReason::Throttled,
                );
                decision.delay_ms = decision.delay_ms.max(self.throttled_delay_ms);
                decision
            }
            _ if code == 1000 => self.after_backoff(
                ReconnectAction::ReconnectSameUrl,
                ReconnectReason::NormalClose,
            ),
            _ => self.after_backoff(
                ReconnectAction::ReconnectSameUrl,
                ReconnectReason::AbnormalClose,
            ),
        }
    }

    /// `provision()` failed with this HTTP status, or 0 when there was none (network error, a
    /// callback that threw).
    ///
    /// 0, 408, 429 and 5xx may pass: provision again after the next backoff delay. Any other
    /// status — other 4xx (bad key, no quota, not found) and statuses that are not errors at all
    /// (a 2xx or 3xx whose body held no URL) — will not get better by asking again: stop.
    ///
    /// Provisioning retries do not count toward the R3 window: the window limits how often a
    /// *dead session* makes us start a new one, and a retry is the same re-provision that has not
    /// succeeded yet. They are bounded by the backoff instead: at most one per `max_delay_ms`
    /// once the schedule reaches its cap, and never faster than the schedule allows.
    ///
    /// L7: a retryable failure (no status, 408, 429, 5xx) is the `n`-th in a row (since the last
    /// [`ReconnectPolicy::on_provisioned`]); the `max_provision_attempts`-th stops with
    /// [`ReconnectReason::ProvisionExhausted`]. A backend that answers 503 for ever must not keep
    /// `start()` pending for ever.
    pub fn on_provision_failed(&mut self, http_status_or_zero: u16, now: Millis) -> Decision {
        self.forget_old_reprovisions(now);
        if let Some(reason) = self.stopped {
            return Decision::stop(reason);
        }
        if is_transient_provision_failure(http_status_or_zero) {
            self.provision_failures = self.provision_failures.saturating_add(1);
            if self.provision_failures >= self.config.max_provision_attempts {
                return self.stop(ReconnectReason::ProvisionExhausted);
            }
        }
        if is_transient_provision_failure(http_status_or_zero) {
            self.after_backoff(
                ReconnectAction::Reprovision,
                ReconnectReason::ProvisionFailed,
            )
        } else {
            self.stop(ReconnectReason::ProvisionRejected)
        }
    }

    /// The server sent `end_session` while the session was in use (R5): the session is over.
    /// Like a close of a dead session (R2): re-provision within R3's window, never the old URL,
    /// or stop with [`ReconnectReason::DeadSession`]. The socket counts as closed now (R1 is
    /// checked here; the shell ignores the close that follows).
    pub fn on_session_ended(&mut self, now: Millis) -> Decision {
        let opened_at = self.opened_at.take();
        if let Some(reason) = self.stopped {
            return Decision::stop(reason);
        }
        if opened_at.is_some_and(|at| now.since(at) >= self.config.stable_open_ms) {
            self.backoff.reset();
        }
        self.reprovision_for_dead_session(
            now,
            ReconnectReason::SessionEnded,
            ReconnectReason::DeadSession,
        )
    }

    /// The local client detached (stop, dispose, page leaving): from now on every decision is
    /// [`ReconnectAction::Stop`] with [`ReconnectReason::ClientDetached`] (R4), whatever stopped
    /// the policy before.
    pub fn on_client_detach(&mut self) {
        self.stopped = Some(ReconnectReason::ClientDetached);
        self.opened_at = None;
    }

    /// R2, R5 and R3: a dead session gets a new one (`reason`), unless the window is full
    /// (then stop with `limit`).
    ///
    /// The window counts the moments at which decisions tell the shell to call `provision()`
    /// (decision time + delay, or the call itself when it came later: see
    /// [`ReconnectPolicy::on_reprovision_called`]), not the decision times, so the bound holds
    /// for the calls themselves: any half-open interval `[t, t + reprovision_window_ms)` holds at most
    /// `max_reprovisions_per_window` of them. Half-open means a re-provision due exactly
    /// `reprovision_window_ms` after an earlier one no longer counts that one: with the
    /// defaults, re-provisions due at 0 and 1 000 allow a third due at 300 000, not at 299 999.
    fn reprovision_for_dead_session(
        &mut self,
        now: Millis,
        reason: ReconnectReason,
        limit: ReconnectReason,
    ) -> Decision {
        self.forget_old_reprovisions(now);
        // Drawn on a copy: a stop takes no backoff step, so `backoff_attempt` counts real waits.
        let mut backoff = self.backoff.clone();
        let delay_ms = backoff.next_delay();
        let due = now.after(delay_ms);
        let window_ms = self.config.reprovision_window_ms;
        // A due time later than `due` (possible only when the caller's times jump about) counts
        // too: `since` saturates to 0, inside any nonempty window.
        let in_window = self
            .reprovisions_due
            .iter()
            .filter(|&&earlier| due.since(earlier) < window_ms)
            .count();
        let allowed =
            usize::try_from(self.config.max_reprovisions_per_window).unwrap_or(usize::MAX);
        if in_window >= allowed {
            return self.stop(limit);
        }
        self.backoff = backoff;
        self.reprovisions_due.push_back(due);
        self.failed_connects = 0; // a new URL starts its own count (R5)
        Decision {
            action: ReconnectAction::Reprovision,
            delay_ms,
            reason,
        }
    }

    /// The re-provision decided last is called now: later than it was due when the network
    /// was down or the page cached meanwhile. The window counts it from now, so the bound holds
    /// for the calls as they were made.
    pub fn on_reprovision_called(&mut self, now: Millis) {
        if let Some(due) = self.reprovisions_due.back_mut() {
            *due = (*due).max(now);
        }
    }

    /// Drops re-provisions a whole window older than `now`: inputs come at nondecreasing times
    /// and every new re-provision is due at or after its input, so those can never count again.
    fn forget_old_reprovisions(&mut self, now: Millis) {
        let window_ms = self.config.reprovision_window_ms;
        self.reprovisions_due
            .retain(|&due| now.since(due) < window_ms);
    }

    fn after_backoff(&mut self, action: ReconnectAction, reason: ReconnectReason) -> Decision {
        Decision {
            action,
            delay_ms: self.backoff.next_delay(),
            reason,
        }
    }

    fn stop(&mut self, reason: ReconnectReason) -> Decision {
        self.stopped = Some(reason);
        Decision::stop(reason)
    }
}
