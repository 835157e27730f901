//! What the turn ladder tells its shell: actions to perform and events to report.

use crate::core::time::Millis;
use crate::core::turn::history::Exchange;
use crate::core::turn::record::{AttemptResult, Failure, RecoveryReason, TurnRecord};
use crate::core::turn::AttemptId;
use crate::core::turn::DiscardReason;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

/// A transition, for logs and metrics (T14). Carries ids, routes and times, never text.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A turn began.
    TurnStarted { turn_id: String, at: Millis },
    /// An attempt began on `route`; it times out at `timeout_at`.
    AttemptStarted {
        turn_id: String,
        request_id: AttemptId,
        route: usize,
        preemptive: bool,
        at: Millis,
        timeout_at: Millis,
    },
    /// An attempt ended (or, with `Late`, answered after it had ended).
    AttemptFinished {
        turn_id: String,
        request_id: AttemptId,
        route: usize,
        at: Millis,
        result: AttemptResult,
        error: Option<Failure>,
        duration_ms: u64,
    },
    /// A streaming attempt produced its first text and became the turn's answer (T12).
    Committed {
        turn_id: String,
        request_id: AttemptId,
        route: usize,
        at: Millis,
        latency_ms: u64,
    },
    /// The turn's answer was accepted (for a stream: the stream ended).
    Accepted {
        turn_id: String,
        request_id: AttemptId,
        route: usize,
        at: Millis,
        latency_ms: u64,
    },
    /// The turn ended with the recovery text.
    Recovered {
        turn_id: String,
        reason: RecoveryReason,
        at: Millis,
        latency_ms: u64,
    },
    /// The turn was interrupted.
    Cancelled { turn_id: String, at: Millis },
    /// A pending turn no final came for by its deadline is gone, without a record (T17).
    Forgotten { turn_id: String, at: Millis },
    /// A preemptive attempt was kept by the final, or discarded for `reason` (T17).
    PreemptiveEnded {
        turn_id: String,
        request_id: AttemptId,
        kept: bool,
        reason: Option<DiscardReason>,
        at: Millis,
    },
}

/// What the shell must do next, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Call `route` for this attempt with a fresh signal chained to the turn's. `history` is
    /// the conversation so far, given only to routes that share history (T11).
    StartAttempt {
        request_id: AttemptId,
        route: usize,
        input: String,
        history: Option<Vec<Exchange>>,
    },
    /// Abort this attempt's signal only: it timed out, the turn goes on (T4).
    AbortAttempt { request_id: AttemptId },
    /// Abort the turn's signal and with it any attempt (interrupt, deadline, dispose).
    AbortTurn { turn_id: String },
    /// Hand one complete sentence of the committed answer to TTS, in order (T12).
    Sentence { turn_id: String, text: String },
    /// The whole accepted answer, once, when it is complete (T6, T12).
    Deliver { turn_id: String, text: String },
    /// Hand the fixed recovery text to TTS, once (T5, T8).
    Recover { turn_id: String, text: String },
    /// The turn settled: resolve whoever waits on it with this record.
    Settled(Rc<TurnRecord>),
    /// The turn's input changed (a preemptive turn's final or newer guess): the shell's copy of
    /// it, handed to the routes, is stale.
    InputChanged { turn_id: String },
    /// A pending turn no final came for is gone without a record (T17): drop what is kept for it.
    Forget { turn_id: String },
    /// Report a transition (T14).
    Event(Event),
}
