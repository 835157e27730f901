//! The ladder's rungs (T3–T6, T9, T11): starting attempts, their timeouts and failures, the next
//! rung or recovery, and answers that come too late.

use super::{AttemptId, TurnLadder};
use crate::core::time::Millis;
use crate::core::turn::config::FallbackPolicy;
use crate::core::turn::output::{Action, Event};
use crate::core::turn::preemptive::ladder_attempts;
use crate::core::turn::record::Attempt;
use crate::core::turn::record::{AttemptResult, Failure, RecoveryReason};
use alloc::borrow::ToOwned;
use alloc::rc::Rc;

impl TurnLadder {
    pub(super) fn expire(&mut self, turn_id: &str, now: Millis) {
        if self.expire_pending(turn_id, now) {
            return;
        }
        let Some(turn) = self.active.get(turn_id) else {
            return;
        };
        if let Some(delivery) = &turn.delivery {
            // A committed stream that stalled: stop it and keep what was delivered (T12).
            if now >= delivery.idle_deadline {
                if let Some(attempt) = turn.record.attempts.get(delivery.attempt_index) {
                    self.actions.push_back(Action::AbortAttempt {
                        request_id: attempt.request_id.clone(),
                    });
                }
                self.complete(turn_id, Some(Failure::Stalled), now);
            }
        } else if now >= turn.record.deadline_at {
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

    /// The running, uncommitted attempt failed.
    pub(super) fn fail_attempt(&mut self, turn_id: &str, failure: Failure, now: Millis) {
        let result = if failure == Failure::Timeout {
            AttemptResult::Timeout
        } else {
            AttemptResult::Error
        };
        self.finish_attempt(turn_id, result, Some(failure), now);
        self.after_failure(turn_id, failure, now);
    }

    /// After a failed attempt: the next rung of the ladder, or recovery (T3, T9, T11).
    pub(super) fn after_failure(&mut self, turn_id: &str, failure: Failure, now: Millis) {
        if !failure.is_retryable() {
            return self.recover(turn_id, RecoveryReason::NonRetryable, now);
        }
        self.retry_budget.on_failure();
        let attempts = self
            .active
            .get(turn_id)
            .map_or(usize::MAX, |turn| ladder_attempts(&turn.record));
        if attempts >= self.config.max_attempts_per_turn as usize
            || self.config.fallback_policy == FallbackPolicy::None
        {
            return self.recover(turn_id, RecoveryReason::Exhausted, now);
        }
        if self.config.fallback_policy == FallbackPolicy::SamePersona
            && self.persona_of(self.route_for(attempts + 1)) != self.persona_of(0)
        {
            return self.recover(turn_id, RecoveryReason::Persona, now);
        }
        if !self.retry_budget.allows_retry() {
            return self.recover(turn_id, RecoveryReason::RetryBudget, now);
        }
        self.start_attempt(turn_id, false, now);
    }

    /// The route of attempt `number` (from 1): `min(number - 1, routes - 1)`.
    pub(super) fn route_for(&self, number: usize) -> usize {
        number
            .saturating_sub(1)
            .min(self.config.routes.len().saturating_sub(1))
    }

    pub(super) fn persona_of(&self, route: usize) -> Option<&str> {
        self.config
            .routes
            .get(route)
            .and_then(|spec| spec.persona.as_deref())
    }

    /// The time an attempt has for its first text.
    pub(super) fn first_text_within(&self) -> u64 {
        self.config
            .attempt_timeout_ms
            .min(self.config.first_chunk_timeout_ms)
    }

    /// Starts the turn's next attempt: a rung of the ladder, or a preemptive one (T17), which is
    /// always on the first route.
    pub(super) fn start_attempt(&mut self, turn_id: &str, preemptive: bool, now: Millis) {
        if !self.session_budget.try_take() {
            return self.recover(turn_id, RecoveryReason::SessionBudget, now);
        }
        let Some(number) = self
            .active
            .get(turn_id)
            .map(|turn| ladder_attempts(&turn.record) + 1)
        else {
            return;
        };
        let route = self.route_for(if preemptive { 1 } else { number });
        let history = self
            .config
            .routes
            .get(route)
            .filter(|spec| spec.share_history)
            .map(|_| self.history.snapshot());
        let first_text_within = self.first_text_within();
        let serial = self.next_preemptive;
        let Some(turn) = self.active.get_mut(turn_id) else {
            return;
        };
        let request_id = Self::next_attempt_id(turn, preemptive, serial);
        let timeout_at = now.after(first_text_within).min(turn.record.deadline_at);
        turn.attempt_deadline = Some(timeout_at);
        turn.record.attempts.push(Attempt {
            request_id: request_id.clone(),
            preemptive,
            route,
            started_at: now,
            finished_at: None,
            result: AttemptResult::Running,
            error: None,
            first_text_at: None,
        });
        let input = turn.record.input.clone();
        self.actions.push_back(Action::StartAttempt {
            request_id: request_id.clone(),
            route,
            input,
            history,
        });
        self.event(|| Event::AttemptStarted {
            turn_id: turn_id.to_owned(),
            request_id,
            route,
            preemptive,
            at: now,
            timeout_at,
        });
    }

    /// Ends the running attempt of a turn, if any; returns its id.
    pub(super) fn finish_attempt(
        &mut self,
        turn_id: &str,
        result: AttemptResult,
        error: Option<Failure>,
        now: Millis,
    ) -> Option<AttemptId> {
        let emit = self.config.emit_events;
        let turn = self.active.get_mut(turn_id)?;
        turn.attempt_deadline = None;
        let attempt = turn.running_attempt()?;
        attempt.result = result;
        attempt.error = error;
        attempt.finished_at = Some(now);
        let event = emit.then(|| Event::AttemptFinished {
            turn_id: turn_id.to_owned(),
            request_id: attempt.request_id.clone(),
            route: attempt.route,
            at: now,
            result,
            error,
            duration_ms: now.since(attempt.started_at),
        });
        let request_id = attempt.request_id.clone();
        if let Some(event) = event {
            self.event(|| event);
        }
        Some(request_id)
    }

    /// Text for an attempt that had already ended: kept on the record as `late`, never spoken (T6).
    pub(super) fn record_late_answer(&mut self, request_id: &AttemptId, now: Millis) {
        let emit = self.config.emit_events;
        let turn_id = request_id.turn_id();
        let record = match self.active.get_mut(turn_id) {
            Some(turn) => &mut turn.record,
            // The shell has turned the `Settled` record into JS by now: no copy is made here.
            None => match self.settled.get_mut(turn_id) {
                Some(record) => Rc::make_mut(record),
                None => return,
            },
        };
        let committed = record.accepted_request_id.clone();
        // The attempt's own record: not one of a later turn under the same id.
        let Some(attempt) = record
            .attempts
            .get_mut(request_id.index())
            .filter(|attempt| attempt.request_id == *request_id)
        else {
            return;
        };
        // The attempt that was cut off mid-delivery stays `cancelled`, whatever it still sends.
        if committed.as_ref() == Some(request_id) {
            return;
        }
        if !matches!(
            attempt.result,
            AttemptResult::Timeout | AttemptResult::Cancelled
        ) {
            return;
        }
        attempt.result = AttemptResult::Late;
        attempt.finished_at = Some(now);
        let event = emit.then(|| Event::AttemptFinished {
            turn_id: turn_id.to_owned(),
            request_id: attempt.request_id.clone(),
            route: attempt.route,
            at: now,
            result: AttemptResult::Late,
            error: attempt.error,
            duration_ms: now.since(attempt.started_at),
        });
        if let Some(event) = event {
            self.event(|| event);
        }
    }
}
