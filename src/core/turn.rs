//! The turn ladder: one answer per user turn, from a bounded number of LLM calls (rules T2–T10).
//!
//! [`TurnLadder`] is a sans-IO state machine. The shell feeds it inputs that carry the current
//! time (`start_turn`, `on_attempt_result`, `interrupt`, `handle_timeout`) and then drains what it
//! must do with [`TurnLadder::poll_action`] and when to wake it next with
//! [`TurnLadder::poll_timeout`]. It never reads a clock, never calls out, and never blocks.
//!
//! Invariants it keeps, whatever order the inputs come in:
//! - a turn ends exactly once: [`Action::Deliver`] once, or [`Action::Recover`] once, or
//!   nothing (cancelled) — followed by one [`Action::Settled`];
//! - at most `max_attempts_per_turn` attempts per turn, the next only after a retryable failure;
//! - no attempt starts after the turn's deadline or after an interrupt;
//! - no more than `history_limit` settled records are kept.

use crate::core::budget::{RetryBudget, SessionBudget};
use crate::core::record::{
    Attempt, AttemptResult, Failure, RecoveryReason, TurnRecord, TurnStatus,
};
use crate::core::time::Millis;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;

/// What the ladder knows about a route. The shell keeps the callable part.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteSpec {
    /// Shown in records and events.
    pub name: String,
}

/// Limits and texts of one controller. [`TurnConfig::new`] fills in the defaults.
#[derive(Clone, Debug)]
pub struct TurnConfig {
    /// Routes in ladder order: attempt `n` uses route `min(n - 1, len - 1)`.
    pub routes: Vec<RouteSpec>,
    /// How long a turn may take before the recovery text is used (T5).
    pub turn_deadline_ms: u64,
    /// How long one attempt may take (T4); capped by the time left to the deadline.
    pub attempt_timeout_ms: u64,
    /// The fixed text spoken when no answer can be had (T8).
    pub recovery_text: String,
    /// Attempts per turn, the first included (T3).
    pub max_attempts_per_turn: u32,
    /// Attempts per session, `None` for no cap (T9).
    pub max_attempts_per_session: Option<u32>,
    /// Longest input accepted, in Unicode scalar values (T9).
    pub max_input_chars: usize,
    /// Settled records kept for `getTurn` and idempotent `run` (T10).
    pub history_limit: usize,
    /// Retry budget bucket size (T9).
    pub retry_max_tokens: f64,
    /// Retry budget refill per accepted answer (T9).
    pub retry_token_ratio: f64,
}

impl TurnConfig {
    /// Default turn deadline.
    pub const DEFAULT_TURN_DEADLINE_MS: u64 = 12_000;
    /// Default attempt timeout.
    pub const DEFAULT_ATTEMPT_TIMEOUT_MS: u64 = 6_000;
    /// Default attempts per turn: the primary and one fallback.
    pub const DEFAULT_MAX_ATTEMPTS_PER_TURN: u32 = 2;
    /// Default input limit.
    pub const DEFAULT_MAX_INPUT_CHARS: usize = 4_000;
    /// Default number of settled records kept.
    pub const DEFAULT_HISTORY_LIMIT: usize = 1_000;

    /// A configuration with the default limits.
    pub fn new(routes: Vec<RouteSpec>, recovery_text: impl Into<String>) -> Self {
        TurnConfig {
            routes,
            turn_deadline_ms: Self::DEFAULT_TURN_DEADLINE_MS,
            attempt_timeout_ms: Self::DEFAULT_ATTEMPT_TIMEOUT_MS,
            recovery_text: recovery_text.into(),
            max_attempts_per_turn: Self::DEFAULT_MAX_ATTEMPTS_PER_TURN,
            max_attempts_per_session: None,
            max_input_chars: Self::DEFAULT_MAX_INPUT_CHARS,
            history_limit: Self::DEFAULT_HISTORY_LIMIT,
            retry_max_tokens: RetryBudget::DEFAULT_MAX_TOKENS,
            retry_token_ratio: RetryBudget::DEFAULT_TOKEN_RATIO,
        }
    }
}

/// Why `start_turn` refused a turn. Nothing was started.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StartError {
    /// The turn id is empty.
    EmptyTurnId,
    /// The input is empty or only white space.
    EmptyInput,
    /// The input is longer than `max_input_chars`.
    InputTooLong {
        /// Its length in Unicode scalar values.
        chars: usize,
        /// The configured limit.
        max: usize,
    },
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::EmptyTurnId => f.write_str("turnId must not be empty"),
            StartError::EmptyInput => f.write_str("input must not be empty"),
            StartError::InputTooLong { chars, max } => {
                write!(f, "input is {chars} characters, over maxInputChars ({max})")
            }
        }
    }
}

/// What `start_turn` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Started {
    /// A new turn began.
    New,
    /// The id names a running or retained turn: nothing new began (T2).
    Existing,
}

/// A transition, for logs and metrics (T14). Carries ids, routes and times, never text.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A turn began.
    TurnStarted { turn_id: String, at: Millis },
    /// An attempt began on `route`; it times out at `timeout_at`.
    AttemptStarted {
        turn_id: String,
        request_id: String,
        route: usize,
        at: Millis,
        timeout_at: Millis,
    },
    /// An attempt ended (or, with `Late`, answered after it had ended).
    AttemptFinished {
        turn_id: String,
        request_id: String,
        route: usize,
        at: Millis,
        result: AttemptResult,
        error: Option<Failure>,
        duration_ms: u64,
    },
    /// The turn's answer was accepted.
    Accepted {
        turn_id: String,
        request_id: String,
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
}

/// What the shell must do next, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Call `route` for this attempt with a fresh signal chained to the turn's.
    StartAttempt {
        turn_id: String,
        request_id: String,
        route: usize,
        input: String,
    },
    /// Abort this attempt's signal only: it timed out, the turn goes on (T4).
    AbortAttempt { request_id: String },
    /// Abort the turn's signal and with it any attempt (interrupt, deadline, dispose).
    AbortTurn { turn_id: String },
    /// Hand the accepted answer to TTS, once (T6).
    Deliver { turn_id: String, text: String },
    /// Hand the fixed recovery text to TTS, once (T5, T8).
    Recover { turn_id: String, text: String },
    /// The turn settled: resolve whoever waits on it with this record.
    Settled(Box<TurnRecord>),
    /// Report a transition (T14).
    Event(Event),
}

/// A running turn and its one timer besides the deadline.
#[derive(Debug)]
struct ActiveTurn {
    record: TurnRecord,
    /// When the running attempt times out; `None` when no attempt runs.
    attempt_deadline: Option<Millis>,
}

impl ActiveTurn {
    fn next_timeout(&self) -> Millis {
        match self.attempt_deadline {
            Some(at) => at.min(self.record.deadline_at),
            None => self.record.deadline_at,
        }
    }

    fn running_attempt(&mut self) -> Option<&mut Attempt> {
        self.record
            .attempts
            .last_mut()
            .filter(|attempt| attempt.result == AttemptResult::Running)
    }
}

/// The turn ladder of one controller. See the module documentation.
#[derive(Debug)]
pub struct TurnLadder {
    config: TurnConfig,
    /// Running turns, ordered by id so that simultaneous timeouts resolve deterministically.
    active: BTreeMap<String, ActiveTurn>,
    /// Settled records kept for `turn` and for idempotent starts.
    settled: HashMap<String, TurnRecord>,
    /// Settled ids, oldest first, to drop beyond `history_limit`.
    settled_order: VecDeque<String>,
    session_budget: SessionBudget,
    retry_budget: RetryBudget,
    actions: VecDeque<Action>,
}

impl TurnLadder {
    /// A ladder with no turns yet.
    pub fn new(config: TurnConfig) -> Self {
        TurnLadder {
            session_budget: SessionBudget::new(config.max_attempts_per_session),
            retry_budget: RetryBudget::new(config.retry_max_tokens, config.retry_token_ratio),
            config,
            active: BTreeMap::new(),
            settled: HashMap::new(),
            settled_order: VecDeque::new(),
            actions: VecDeque::new(),
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &TurnConfig {
        &self.config
    }

    /// A route's name, for records and events.
    pub fn route_name(&self, route: usize) -> &str {
        self.config
            .routes
            .get(route)
            .map_or("", |spec| spec.name.as_str())
    }

    /// The record of a running or retained turn.
    pub fn turn(&self, turn_id: &str) -> Option<&TurnRecord> {
        self.active
            .get(turn_id)
            .map(|turn| &turn.record)
            .or_else(|| self.settled.get(turn_id))
    }

    /// Whether the turn's accepted answer may still go to TTS: the check right before speaking (T6).
    pub fn may_deliver(&self, turn_id: &str) -> bool {
        self.turn(turn_id)
            .is_some_and(|record| record.status == TurnStatus::Accepted)
    }

    /// Number of turns still running.
    pub fn running_turns(&self) -> usize {
        self.active.len()
    }

    /// Number of settled records kept.
    pub fn retained_turns(&self) -> usize {
        self.settled.len()
    }

    /// Attempts started in this session.
    pub fn session_attempts(&self) -> u32 {
        self.session_budget.used()
    }

    /// Tokens left in the retry budget.
    pub fn retry_tokens(&self) -> f64 {
        self.retry_budget.tokens()
    }

    /// Starts a turn for a final utterance (T2, T9).
    pub fn start_turn(
        &mut self,
        turn_id: &str,
        input: &str,
        now: Millis,
    ) -> Result<Started, StartError> {
        if turn_id.is_empty() {
            return Err(StartError::EmptyTurnId);
        }
        self.handle_timeout(now);
        if self.turn(turn_id).is_some() {
            return Ok(Started::Existing);
        }
        if input.trim().is_empty() {
            return Err(StartError::EmptyInput);
        }
        let chars = input.chars().count();
        if chars > self.config.max_input_chars {
            return Err(StartError::InputTooLong {
                chars,
                max: self.config.max_input_chars,
            });
        }
        let record = TurnRecord {
            turn_id: turn_id.to_owned(),
            input: input.to_owned(),
            status: TurnStatus::Running,
            started_at: now,
            deadline_at: now.after(self.config.turn_deadline_ms),
            attempts: Vec::new(),
            accepted_request_id: None,
            accepted_text: None,
            recovery_reason: None,
        };
        self.active.insert(
            turn_id.to_owned(),
            ActiveTurn {
                record,
                attempt_deadline: None,
            },
        );
        self.event(Event::TurnStarted {
            turn_id: turn_id.to_owned(),
            at: now,
        });
        self.start_attempt(turn_id, now);
        Ok(Started::New)
    }

    /// The route of `request_id` answered (`Ok(text)`) or failed.
    pub fn on_attempt_result(
        &mut self,
        request_id: &str,
        outcome: Result<String, Failure>,
        now: Millis,
    ) {
        // A deadline that is due is decided first: an answer at or after it is late (T5, T6).
        self.handle_timeout(now);
        let Some((turn_id, attempt_index)) = parse_request_id(request_id) else {
            return;
        };
        let outcome = match outcome {
            Ok(text) if text.trim().is_empty() => Err(Failure::NoText),
            other => other,
        };
        let is_running = self
            .active
            .get(turn_id)
            .and_then(|turn| turn.record.attempts.get(attempt_index))
            .is_some_and(|attempt| attempt.result == AttemptResult::Running);
        if !is_running {
            if outcome.is_ok() {
                self.record_late_answer(turn_id, attempt_index, now);
            }
            return;
        }
        match outcome {
            Ok(text) => self.accept(turn_id, text, now),
            Err(failure) => {
                let result = if failure == Failure::Timeout {
                    AttemptResult::Timeout
                } else {
                    AttemptResult::Error
                };
                self.finish_attempt(turn_id, result, Some(failure), now);
                self.after_failure(turn_id, failure, now);
            }
        }
    }

    /// Interrupts a running turn (T7): true if it was running, and then nothing more is spoken.
    pub fn interrupt(&mut self, turn_id: &str, now: Millis) -> bool {
        self.handle_timeout(now);
        if !self.active.contains_key(turn_id) {
            return false;
        }
        self.finish_attempt(turn_id, AttemptResult::Cancelled, None, now);
        self.actions.push_back(Action::AbortTurn {
            turn_id: turn_id.to_owned(),
        });
        self.event(Event::Cancelled {
            turn_id: turn_id.to_owned(),
            at: now,
        });
        self.settle(turn_id, TurnStatus::Cancelled);
        true
    }

    /// Interrupts every running turn (the controller is going away).
    pub fn interrupt_all(&mut self, now: Millis) {
        let running: Vec<String> = self.active.keys().cloned().collect();
        for turn_id in running {
            self.interrupt(&turn_id, now);
        }
    }

    /// Fires every timer that is due at `now`. Early or repeated calls are harmless.
    pub fn handle_timeout(&mut self, now: Millis) {
        let due: Vec<String> = self
            .active
            .iter()
            .filter(|(_, turn)| turn.next_timeout() <= now)
            .map(|(turn_id, _)| turn_id.clone())
            .collect();
        for turn_id in due {
            self.expire(&turn_id, now);
        }
    }

    /// When `handle_timeout` must be called next, if any timer is armed.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Millis> {
        self.active.values().map(ActiveTurn::next_timeout).min()
    }

    /// The next thing the shell must do, in order.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn expire(&mut self, turn_id: &str, now: Millis) {
        let Some(turn) = self.active.get(turn_id) else {
            return;
        };
        if now >= turn.record.deadline_at {
            self.finish_attempt(turn_id, AttemptResult::Timeout, Some(Failure::Timeout), now);
            self.actions.push_back(Action::AbortTurn {
                turn_id: turn_id.to_owned(),
            });
            self.recover(turn_id, RecoveryReason::Deadline, now);
        } else if turn.attempt_deadline.is_some_and(|at| now >= at) {
            let request_id =
                self.finish_attempt(turn_id, AttemptResult::Timeout, Some(Failure::Timeout), now);
            if let Some(request_id) = request_id {
                self.actions.push_back(Action::AbortAttempt { request_id });
            }
            self.after_failure(turn_id, Failure::Timeout, now);
        }
    }

    /// After a failed attempt: the next rung of the ladder, or recovery (T3, T9).
    fn after_failure(&mut self, turn_id: &str, failure: Failure, now: Millis) {
        if !failure.is_retryable() {
            return self.recover(turn_id, RecoveryReason::NonRetryable, now);
        }
        self.retry_budget.on_failure();
        let attempts = self
            .active
            .get(turn_id)
            .map_or(usize::MAX, |turn| turn.record.attempts.len());
        if attempts >= self.config.max_attempts_per_turn as usize {
            return self.recover(turn_id, RecoveryReason::Exhausted, now);
        }
        if !self.retry_budget.allows_retry() {
            return self.recover(turn_id, RecoveryReason::RetryBudget, now);
        }
        self.start_attempt(turn_id, now);
    }

    fn start_attempt(&mut self, turn_id: &str, now: Millis) {
        if !self.session_budget.try_take() {
            return self.recover(turn_id, RecoveryReason::SessionBudget, now);
        }
        let last_route = self.config.routes.len().saturating_sub(1);
        let attempt_timeout_ms = self.config.attempt_timeout_ms;
        let Some(turn) = self.active.get_mut(turn_id) else {
            return;
        };
        let number = turn.record.attempts.len() + 1;
        let route = (number - 1).min(last_route);
        let request_id = format!("{turn_id}:attempt:{number}");
        let timeout_at = now.after(attempt_timeout_ms).min(turn.record.deadline_at);
        turn.attempt_deadline = Some(timeout_at);
        turn.record.attempts.push(Attempt {
            request_id: request_id.clone(),
            route,
            started_at: now,
            finished_at: None,
            result: AttemptResult::Running,
            error: None,
        });
        let input = turn.record.input.clone();
        self.actions.push_back(Action::StartAttempt {
            turn_id: turn_id.to_owned(),
            request_id: request_id.clone(),
            route,
            input,
        });
        self.event(Event::AttemptStarted {
            turn_id: turn_id.to_owned(),
            request_id,
            route,
            at: now,
            timeout_at,
        });
    }

    /// Ends the running attempt of a turn, if any; returns its request id.
    fn finish_attempt(
        &mut self,
        turn_id: &str,
        result: AttemptResult,
        error: Option<Failure>,
        now: Millis,
    ) -> Option<String> {
        let turn = self.active.get_mut(turn_id)?;
        turn.attempt_deadline = None;
        let attempt = turn.running_attempt()?;
        attempt.result = result;
        attempt.error = error;
        attempt.finished_at = Some(now);
        let event = Event::AttemptFinished {
            turn_id: turn_id.to_owned(),
            request_id: attempt.request_id.clone(),
            route: attempt.route,
            at: now,
            result,
            error,
            duration_ms: now.since(attempt.started_at),
        };
        let request_id = attempt.request_id.clone();
        self.event(event);
        Some(request_id)
    }

    fn accept(&mut self, turn_id: &str, text: String, now: Millis) {
        let Some(request_id) = self.finish_attempt(turn_id, AttemptResult::Accepted, None, now)
        else {
            return;
        };
        self.retry_budget.on_success();
        let Some(turn) = self.active.get_mut(turn_id) else {
            return;
        };
        let route = turn
            .record
            .attempts
            .last()
            .map_or(0, |attempt| attempt.route);
        let latency_ms = now.since(turn.record.started_at);
        turn.record.accepted_request_id = Some(request_id.clone());
        turn.record.accepted_text = Some(text.clone());
        self.event(Event::Accepted {
            turn_id: turn_id.to_owned(),
            request_id,
            route,
            at: now,
            latency_ms,
        });
        self.actions.push_back(Action::Deliver {
            turn_id: turn_id.to_owned(),
            text,
        });
        self.settle(turn_id, TurnStatus::Accepted);
    }

    fn recover(&mut self, turn_id: &str, reason: RecoveryReason, now: Millis) {
        let Some(turn) = self.active.get_mut(turn_id) else {
            return;
        };
        turn.record.recovery_reason = Some(reason);
        let latency_ms = now.since(turn.record.started_at);
        self.event(Event::Recovered {
            turn_id: turn_id.to_owned(),
            reason,
            at: now,
            latency_ms,
        });
        self.actions.push_back(Action::Recover {
            turn_id: turn_id.to_owned(),
            text: self.config.recovery_text.clone(),
        });
        self.settle(turn_id, TurnStatus::Exhausted);
    }

    /// Moves a turn from running to retained, dropping the oldest beyond `history_limit` (T10).
    fn settle(&mut self, turn_id: &str, status: TurnStatus) {
        let Some(mut turn) = self.active.remove(turn_id) else {
            return;
        };
        turn.record.status = status;
        self.actions
            .push_back(Action::Settled(Box::new(turn.record.clone())));
        self.settled_order.push_back(turn_id.to_owned());
        self.settled.insert(turn_id.to_owned(), turn.record);
        while self.settled_order.len() > self.config.history_limit {
            if let Some(oldest) = self.settled_order.pop_front() {
                self.settled.remove(&oldest);
            }
        }
    }

    /// An answer for an attempt that had already ended: kept on the record, never spoken (T6).
    fn record_late_answer(&mut self, turn_id: &str, attempt_index: usize, now: Millis) {
        let record = match self.active.get_mut(turn_id) {
            Some(turn) => &mut turn.record,
            None => match self.settled.get_mut(turn_id) {
                Some(record) => record,
                None => return,
            },
        };
        let Some(attempt) = record.attempts.get_mut(attempt_index) else {
            return;
        };
        if !matches!(
            attempt.result,
            AttemptResult::Timeout | AttemptResult::Cancelled
        ) {
            return;
        }
        attempt.result = AttemptResult::Late;
        attempt.finished_at = Some(now);
        let event = Event::AttemptFinished {
            turn_id: turn_id.to_owned(),
            request_id: attempt.request_id.clone(),
            route: attempt.route,
            at: now,
            result: AttemptResult::Late,
            error: attempt.error,
            duration_ms: now.since(attempt.started_at),
        };
        self.event(event);
    }

    fn event(&mut self, event: Event) {
        self.actions.push_back(Action::Event(event));
    }
}

/// Splits `"<turnId>:attempt:<n>"` into the turn id and the attempt's index (n - 1).
fn parse_request_id(request_id: &str) -> Option<(&str, usize)> {
    let (turn_id, number) = request_id.rsplit_once(":attempt:")?;
    let number: usize = number.parse().ok()?;
    Some((turn_id, number.checked_sub(1)?))
}
