//! The turn ladder: one answer per user turn, from a bounded number of LLM calls (rules T2–T16).
//!
//! [`TurnLadder`] is a sans-IO state machine. The shell feeds it inputs that carry the current
//! time (`start_turn`, `on_attempt_chunk`, `on_attempt_result`, `on_stream_end`, `interrupt`,
//! `handle_timeout`) and then drains what it must do with [`TurnLadder::poll_action`] and when to
//! wake it next with [`TurnLadder::poll_timeout`]. It never reads a clock, never calls out, and
//! never blocks.
//!
//! Invariants it keeps, whatever order the inputs come in:
//! - a turn ends exactly once: [`Action::Deliver`] once, or [`Action::Recover`] once, or
//!   nothing (cancelled) — followed by one [`Action::Settled`];
//! - at most one attempt per turn commits (its first text passes the gate of T6), and only its
//!   text reaches TTS, as [`Action::Sentence`]s in order, then [`Action::Deliver`];
//! - at most `max_attempts_per_turn` attempts per turn, the next only after a retryable failure
//!   and only as the fallback policy allows;
//! - no attempt starts after the turn's deadline or after an interrupt; no sentence goes out
//!   after an interrupt;
//! - no more than `history_limit` settled records and history exchanges are kept;
//! - an answer never holds more than `max_answer_chars` (T15): a longer one is cut at its last
//!   sentence within the bound and its stream aborted ([`Action::AbortAttempt`]), so no turn stays
//!   running because a provider never stops;
//! - the history handed to a route never holds more than `history_max_chars` (T16).
//!
//! The code is split by concept: this file holds the turn's life (start, interrupt, timeouts,
//! settling); `answers` what routes send back; `attempts` the rungs of the ladder (start,
//! timeout, failure, fallback, late answers); `delivery` the committed answer going out as
//! sentences within its bound; `attempt_id` the id each attempt is known by.
//!
//! A non-streaming answer is treated as a stream of one chunk that ends at once, so both kinds
//! follow the same path: commit, sentences, deliver.

use crate::core::queue::Queue;
use crate::core::sorted_map::SortedMap;
use crate::core::time::Millis;
use crate::core::turn::budget::{RetryBudget, SessionBudget};
use crate::core::turn::history::{Exchange, History};
use crate::core::turn::record::{Attempt, AttemptResult, RecoveryReason, TurnRecord, TurnStatus};
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::vec::Vec;
use delivery::Delivery;
use preemptive::Pending;
use wakeups::Wakeups;

mod answers;
mod attempt_id;
mod attempts;
pub mod budget;
pub mod config;
mod delivery;
pub mod history;
pub mod output;
pub mod preemptive;
pub mod record;
pub mod sentences;
pub mod sse;
mod wakeups;

pub use attempt_id::AttemptId;
pub use config::{FallbackPolicy, RouteSpec, StartError, Started, TurnConfig};
pub use output::{Action, Event};
pub use preemptive::{DiscardReason, PreemptRefusal, Preempted};

/// A running turn and its timers.
#[derive(Debug)]
struct ActiveTurn {
    /// The turn id: the key in `TurnLadder::active`, shared with its filings in `wakeups`.
    id: Rc<str>,
    record: TurnRecord,
    /// When the running, uncommitted attempt times out; `None` when no such attempt runs.
    attempt_deadline: Option<Millis>,
    /// Set once an attempt committed; the deadline no longer applies from then on.
    delivery: Option<Delivery>,
    /// Start order, the tie-break among turns due at the same time.
    seq: u64,
    /// The time of this turn's current filing in `TurnLadder::wakeups`.
    scheduled: Option<Millis>,
    /// Set while the turn waits for its final after a preemptive start (T17).
    pending: Option<Pending>,
}

impl ActiveTurn {
    fn next_timeout(&self) -> Millis {
        match (&self.delivery, self.attempt_deadline) {
            (Some(delivery), _) => delivery.idle_deadline,
            (None, Some(at)) => at.min(self.record.deadline_at),
            (None, None) => self.record.deadline_at,
        }
    }

    fn running_attempt(&mut self) -> Option<&mut Attempt> {
        self.record
            .attempts
            .last_mut()
            .filter(|attempt| attempt.result == AttemptResult::Running)
    }

    fn is_running(&self, attempt_index: usize) -> bool {
        self.record
            .attempts
            .get(attempt_index)
            .is_some_and(|attempt| attempt.result == AttemptResult::Running)
    }
}

/// The turn ladder of one controller. See the module documentation.
#[derive(Debug)]
pub struct TurnLadder {
    config: TurnConfig,
    /// Running turns, boxed: the map's vector moves entries on every insert and removal, and
    /// a turn is a few hundred bytes (performance.md, "500 turns in flight").
    active: SortedMap<Rc<str>, Box<ActiveTurn>>,
    /// Settled records kept for `turn` and for idempotent starts.
    /// Shared with the `Settled` action that hands the record to the shell: no copy per turn.
    settled: SortedMap<Rc<str>, Rc<TurnRecord>>,
    /// Settled ids, oldest first, to drop beyond `history_limit`.
    settled_order: Queue<Rc<str>>,
    history: History,
    session_budget: SessionBudget,
    retry_budget: RetryBudget,
    actions: Queue<Action>,
    /// Running turns by when they next need `handle_timeout`, so the next wake-up and the due
    /// turns are found without a scan over every running turn.
    wakeups: Wakeups,
    next_seq: u64,
    /// Preemptive attempts started, numbering their ids across the ladder (T17).
    next_preemptive: u64,
}

impl TurnLadder {
    /// A ladder with no turns yet.
    pub fn new(config: TurnConfig) -> Self {
        TurnLadder {
            session_budget: SessionBudget::new(config.max_attempts_per_session),
            retry_budget: RetryBudget::new(config.retry_max_tokens, config.retry_token_ratio),
            history: History::new(config.history_limit, config.history_max_chars),
            config,
            active: SortedMap::default(),
            settled: SortedMap::default(),
            settled_order: Queue::new(),
            actions: Queue::new(),
            wakeups: Wakeups::default(),
            next_seq: 0,
            next_preemptive: 0,
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
            .or_else(|| self.settled.get(turn_id).map(|record| &**record))
    }

    /// Whether the turn's whole answer may still go out: the check right before TTS (T6).
    pub fn may_deliver(&self, turn_id: &str) -> bool {
        self.turn(turn_id)
            .is_some_and(|record| record.status == TurnStatus::Accepted)
    }

    /// Whether sentences of the turn's answer may still go out: it committed and was neither
    /// interrupted nor disposed since (T12).
    pub fn may_speak(&self, turn_id: &str) -> bool {
        self.turn(turn_id)
            .is_some_and(|record| match record.status {
                TurnStatus::Running => record.accepted_request_id.is_some(),
                TurnStatus::Accepted => true,
                TurnStatus::Cancelled | TurnStatus::Exhausted => false,
            })
    }

    /// The conversation so far, oldest exchange first.
    pub fn history(&self) -> impl Iterator<Item = &Exchange> {
        self.history.exchanges()
    }

    /// Keeps only what the user heard of a turn's answer in the history (after a barge-in).
    /// False when the turn has no exchange in the history.
    pub fn set_heard_text(&mut self, turn_id: &str, heard: &str) -> bool {
        self.history.set_heard(turn_id, heard)
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

    /// Starts a turn for a final utterance (T2, T9), or confirms a pending one (T17).
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
        if self.is_pending(turn_id) {
            self.check_input(turn_id, input)?;
            return Ok(self.confirm(turn_id, input, now));
        }
        if self.turn(turn_id).is_some() {
            return Ok(Started::Existing);
        }
        self.check_input(turn_id, input)?;
        self.open_turn(turn_id, input, now);
        self.start_attempt(turn_id, false, now);
        self.reschedule(turn_id);
        Ok(Started::New)
    }

    fn check_input(&self, turn_id: &str, input: &str) -> Result<(), StartError> {
        if turn_id.is_empty() {
            return Err(StartError::EmptyTurnId);
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
        Ok(())
    }

    /// A running turn with no attempt yet, for a final or a first guess (T17).
    fn open_turn(&mut self, turn_id: &str, input: &str, now: Millis) {
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
        let id: Rc<str> = Rc::from(turn_id);
        self.active.insert(
            Rc::clone(&id),
            Box::new(ActiveTurn {
                id,
                record,
                attempt_deadline: None,
                delivery: None,
                seq: self.next_seq,
                scheduled: None,
                pending: None,
            }),
        );
        self.next_seq = self.next_seq.wrapping_add(1);
        self.event(|| Event::TurnStarted {
            turn_id: turn_id.to_owned(),
            at: now,
        });
    }

    /// Interrupts a running turn (T7): true if it was running, and then nothing more is spoken.
    pub fn interrupt(&mut self, turn_id: &str, now: Millis) -> bool {
        self.handle_timeout(now);
        let Some(turn) = self.active.get_mut(turn_id) else {
            return false;
        };
        if let Some(delivery) = turn.delivery.take() {
            if let Some(attempt) = turn.record.attempts.get_mut(delivery.attempt_index) {
                attempt.result = AttemptResult::Running;
            }
            // The sentences that went out may have been heard; a voice session trims them further
            // to what was played with `set_heard_text`.
            let exchange = Exchange {
                turn_id: turn_id.to_owned(),
                user: turn.record.input.clone(),
                assistant: delivery.delivered().to_owned(),
            };
            self.history.push(exchange);
        }
        self.finish_attempt(turn_id, AttemptResult::Cancelled, None, now);
        self.actions.push_back(Action::AbortTurn {
            turn_id: turn_id.to_owned(),
        });
        self.event(|| Event::Cancelled {
            turn_id: turn_id.to_owned(),
            at: now,
        });
        self.settle(turn_id, TurnStatus::Cancelled);
        true
    }

    /// Interrupts every running turn (the controller is going away).
    pub fn interrupt_all(&mut self, now: Millis) {
        // Oldest first, as they started: each time the oldest still running (an ending happens
        // once per controller, so a scan beats linking a sort).
        while let Some(turn_id) = self
            .active
            .values()
            .min_by_key(|turn| turn.seq)
            .map(|turn| Rc::clone(&turn.id))
        {
            if !self.interrupt(&turn_id, now) {
                break;
            }
        }
    }

    /// Fires every timer that is due at `now`. Early or repeated calls are harmless.
    pub fn handle_timeout(&mut self, now: Millis) {
        let mut due = Vec::new();
        while let Some(turn_id) = self.wakeups.pop_due(now, is_filed(&self.active)) {
            // Unfiled at once: a turn filed twice under the same time comes out once.
            if let Some(turn) = self.active.get_mut(&*turn_id) {
                turn.scheduled = None;
            }
            due.push(turn_id);
        }
        for turn_id in due {
            self.expire(&turn_id, now);
            self.reschedule(&turn_id);
        }
    }

    /// When `handle_timeout` must be called next, if any timer is armed.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Millis> {
        self.wakeups.next()
    }

    /// Files a running turn under its next timeout, after an input that may have moved it.
    fn reschedule(&mut self, turn_id: &str) {
        let Some(turn) = self.active.get_mut(turn_id) else {
            return;
        };
        let next = turn.next_timeout();
        if turn.scheduled == Some(next) {
            return;
        }
        self.wakeups.file(next, turn.seq, turn.id.clone());
        turn.scheduled = Some(next);
        self.prune_wakeups();
    }

    /// Drops filings of turns that moved or settled (see `Wakeups::prune`).
    fn prune_wakeups(&mut self) {
        let active = &self.active;
        self.wakeups.prune(active.len(), is_filed(active));
    }

    /// The next thing the shell must do, in order. Call until `None`: settled records beyond
    /// `history_limit` are dropped only then.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        let action = self.actions.pop_front();
        if action.is_none() {
            self.drop_old_records();
        }
        action
    }

    fn recover(&mut self, turn_id: &str, reason: RecoveryReason, now: Millis) {
        let Some(turn) = self.active.get_mut(turn_id) else {
            return;
        };
        turn.record.recovery_reason = Some(reason);
        let latency_ms = now.since(turn.record.started_at);
        self.event(|| Event::Recovered {
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

    /// Moves a turn from running to retained.
    fn settle(&mut self, turn_id: &str, status: TurnStatus) {
        let Some((turn_id, mut turn)) = self.active.remove_entry(turn_id) else {
            return;
        };
        self.prune_wakeups();
        turn.record.status = status;
        let record = Rc::new(turn.record);
        self.actions.push_back(Action::Settled(Rc::clone(&record)));
        self.settled_order.push_back(Rc::clone(&turn_id));
        self.settled.insert(turn_id, record);
    }

    /// Drops the oldest settled records beyond `history_limit` (T10). Only once every queued
    /// action was taken: a `Deliver` checks its turn's record right before TTS (T6), and another
    /// turn settling in the same input must not evict it first.
    fn drop_old_records(&mut self) {
        while self.settled_order.len() > self.config.history_limit {
            if let Some(oldest) = self.settled_order.pop_front() {
                self.settled.remove(&oldest);
            }
        }
    }

    /// Queues an event, made only when events are wanted (`TurnConfig::emit_events`).
    fn event(&mut self, make: impl FnOnce() -> Event) {
        if self.config.emit_events {
            self.actions.push_back(Action::Event(make()));
        }
    }
}

/// Whether a filing in `wakeups` is its turn's current one: the turn still runs and is filed
/// under that time.
fn is_filed(
    active: &SortedMap<Rc<str>, Box<ActiveTurn>>,
) -> impl Fn(&str, u64, Millis) -> bool + '_ {
    move |turn_id, seq, at| {
        active
            .get(turn_id)
            .is_some_and(|turn| turn.seq == seq && turn.scheduled == Some(at))
    }
}
