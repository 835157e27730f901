//! What the reconnect policy decides: an action, after how long, and why.

/// What the shell does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReconnectAction {
    /// Open a new socket to the URL of the current session, after the delay.
    ReconnectSameUrl,
    /// Call `provision()` for a new session and connect to its URL, after the delay.
    Reprovision,
    /// Do not reconnect. Unless the client detached, report a terminal error.
    Stop,
}

impl ReconnectAction {
    /// The name JS sees.
    pub fn as_str(self) -> &'static str {
        match self {
            ReconnectAction::ReconnectSameUrl => "reconnect_same_url",
            ReconnectAction::Reprovision => "reprovision",
            ReconnectAction::Stop => "stop",
        }
    }
}

/// Why the policy decided what it did; terminal errors show it to the UI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReconnectReason {
    /// A close outside 1000 and 4000–4999 (1006 and friends): the same URL again.
    AbnormalClose,
    /// A close with 1000 while the session was still in use: the same URL again.
    NormalClose,
    /// A close with 4000–4999: the session is gone, provision a new one (R2).
    SessionDead,
    /// A dead session with the re-provision window already full: stop (R3).
    ReprovisionLimit,
    /// The local client detached: stop, for good (R4).
    ClientDetached,
    /// Provisioning failed in a way that may pass (network, 408, 429, 5xx): provision again.
    ProvisionFailed,
    /// Provisioning was refused in a way asking again will not fix: stop.
    ProvisionRejected,
    /// `max_failed_connects` sockets in a row closed before they opened: the URL is dead,
    /// provision a new session (R5).
    DeadUrl,
    /// The server sent `end_session` while the session was in use: provision a new one (R5).
    SessionEnded,
    /// A session died by R5 with the re-provision window already full: stop (R3).
    DeadSession,
    /// `max_provision_attempts` retryable provisioning failures in a row: stop (L7).
    ProvisionExhausted,
    /// A close the protocol classifies as throttled: the same URL after a longer delay.
    Throttled,
    /// A close the protocol classifies as fatal (configuration, authorization): stop.
    FatalClose,
}

impl ReconnectReason {
    /// The name JS sees.
    pub fn as_str(self) -> &'static str {
        match self {
            ReconnectReason::AbnormalClose => "abnormal_close",
            ReconnectReason::NormalClose => "normal_close",
            ReconnectReason::SessionDead => "session_dead",
            ReconnectReason::ReprovisionLimit => "reprovision_limit",
            ReconnectReason::ClientDetached => "client_detached",
            ReconnectReason::ProvisionFailed => "provision_failed",
            ReconnectReason::ProvisionRejected => "provision_rejected",
            ReconnectReason::DeadUrl => "dead_url",
            ReconnectReason::SessionEnded => "session_ended",
            ReconnectReason::DeadSession => "dead_session",
            ReconnectReason::ProvisionExhausted => "provision_exhausted",
            ReconnectReason::Throttled => "throttled",
            ReconnectReason::FatalClose => "fatal_close",
        }
    }
}

/// One decision of the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "the shell must follow the decision: act after `delay_ms`, or stop"]
pub struct Decision {
    /// What to do.
    pub action: ReconnectAction,
    /// How long to wait before doing it, within `[0, max_delay_ms]`; 0 for [`ReconnectAction::Stop`].
    pub delay_ms: u64,
    /// Why.
    pub reason: ReconnectReason,
}

impl Decision {
    pub(super) fn stop(reason: ReconnectReason) -> Self {
        Decision {
            action: ReconnectAction::Stop,
            delay_ms: 0,
            reason,
        }
    }

    /// Whether this is [`ReconnectAction::Stop`].
    pub fn is_stop(&self) -> bool {
        self.action == ReconnectAction::Stop
    }
}
