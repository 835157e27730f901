//! What a turn leaves behind (rule T13): its record and the record of each attempt.

use crate::core::time::Millis;
use crate::core::turn::AttemptId;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// Where a turn stands. Only `Running` can still change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnStatus {
    /// Waiting for an attempt (or, when streaming, still delivering).
    Running,
    /// One answer was accepted and handed to `onAcceptedText`.
    Accepted,
    /// Interrupted: no speech, no recovery.
    Cancelled,
    /// No answer in time or within budget: the fixed recovery text was handed out instead.
    Exhausted,
}

impl TurnStatus {
    /// The name JS sees.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnStatus::Running => "running",
            TurnStatus::Accepted => "accepted",
            TurnStatus::Cancelled => "cancelled",
            TurnStatus::Exhausted => "exhausted",
        }
    }
}

/// How one attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptResult {
    /// The route has not answered yet.
    Running,
    /// This attempt's answer is the turn's answer.
    Accepted,
    /// Its own timeout, or the turn deadline, passed first.
    Timeout,
    /// The route failed (see the attempt's error).
    Error,
    /// The turn was interrupted or disposed while this attempt ran.
    Cancelled,
    /// The route answered after the attempt had already ended; the answer was recorded, never spoken.
    Late,
    /// A preemptive attempt the final did not keep (T17): aborted, never spoken.
    Discarded,
}

impl AttemptResult {
    /// The name JS sees.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptResult::Running => "running",
            AttemptResult::Accepted => "accepted",
            AttemptResult::Timeout => "timeout",
            AttemptResult::Error => "error",
            AttemptResult::Cancelled => "cancelled",
            AttemptResult::Late => "late",
            AttemptResult::Discarded => "discarded",
        }
    }
}

/// Why a turn ended with the recovery text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecoveryReason {
    /// Every allowed attempt failed.
    Exhausted,
    /// The turn deadline passed with nothing accepted.
    Deadline,
    /// A failure that retrying cannot fix (HTTP 400/401/403/404/422, `retryable === false`).
    NonRetryable,
    /// The only fallback would change the persona, and the fallback policy forbids it.
    Persona,
    /// The session's attempt budget is spent.
    SessionBudget,
    /// The cross-turn retry budget is empty (an outage is under way).
    RetryBudget,
}

impl RecoveryReason {
    /// The name JS sees.
    pub fn as_str(self) -> &'static str {
        match self {
            RecoveryReason::Exhausted => "exhausted",
            RecoveryReason::Deadline => "deadline",
            RecoveryReason::NonRetryable => "non_retryable",
            RecoveryReason::Persona => "persona",
            RecoveryReason::SessionBudget => "session_budget",
            RecoveryReason::RetryBudget => "retry_budget",
        }
    }
}

/// Why an attempt failed, as classified by the shell. Carries no message text, so nothing a route
/// or server said (which may echo credentials or conversation) reaches records or events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// The attempt's own timeout (or the deadline) passed.
    Timeout,
    /// The request never got an HTTP answer.
    Network,
    /// The server answered with this HTTP status.
    Http(u16),
    /// The route threw or rejected; `retryable` is false only when the error said so.
    Threw {
        /// Whether a fallback may follow.
        retryable: bool,
    },
    /// The route produced no text (empty, or not a string).
    NoText,
    /// A stream stopped producing text.
    Stalled,
    /// The answer passed `max_answer_chars` and was cut at its last sentence within it (T15).
    AnswerTooLong,
}

impl Failure {
    /// Rule T3: what a fallback may follow.
    pub fn is_retryable(self) -> bool {
        match self {
            Failure::Timeout | Failure::Network | Failure::NoText | Failure::Stalled => true,
            Failure::Http(status) => {
                status == 408 || status == 429 || (500..=599).contains(&status)
            }
            Failure::Threw { retryable } => retryable,
            // Only ever the error of an accepted attempt: nothing follows it.
            Failure::AnswerTooLong => false,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Timeout => f.write_str("timeout"),
            Failure::Network => f.write_str("network"),
            Failure::Http(status) => write!(f, "http_{status}"),
            Failure::Threw { retryable: true } => f.write_str("route_error"),
            Failure::Threw { retryable: false } => f.write_str("route_error_non_retryable"),
            Failure::NoText => f.write_str("no_text"),
            Failure::Stalled => f.write_str("stalled"),
            Failure::AnswerTooLong => f.write_str("answer_too_long"),
        }
    }
}

/// One LLM call inside a turn.
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    /// `"<turnId>:attempt:<n>"`, n from 1, or `"<turnId>:preemptive:<n>"` (see [`AttemptId`]).
    pub request_id: AttemptId,
    /// Started before the final (T17): its answer is held until the final keeps it.
    pub preemptive: bool,
    /// Index into the controller's routes.
    pub route: usize,
    /// When the call started.
    pub started_at: Millis,
    /// When it ended (for a late answer: when that answer arrived).
    pub finished_at: Option<Millis>,
    /// How it ended.
    pub result: AttemptResult,
    /// Why it failed, when it did.
    pub error: Option<Failure>,
    /// When its first text arrived (held, for a preemptive attempt, until its final).
    pub first_text_at: Option<Millis>,
}

/// One user turn and everything that happened in it.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnRecord {
    /// The caller's id for the turn; stable across fallbacks.
    pub turn_id: String,
    /// The final utterance.
    pub input: String,
    /// Where the turn stands.
    pub status: TurnStatus,
    /// When it started.
    pub started_at: Millis,
    /// When it gives up on getting an answer.
    pub deadline_at: Millis,
    /// Every attempt, in order.
    pub attempts: Vec<Attempt>,
    /// The attempt whose answer was accepted (or, when streaming, committed).
    pub accepted_request_id: Option<AttemptId>,
    /// The accepted answer.
    pub accepted_text: Option<String>,
    /// Why the recovery text was used.
    pub recovery_reason: Option<RecoveryReason>,
}
