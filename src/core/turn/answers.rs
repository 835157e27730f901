//! What routes send back (T3, T6, T12): chunks of a stream, whole answers or failures, and the
//! end of a stream, each for the attempt it names. An attempt that already ended gets its answer
//! recorded as late, never spoken.

use super::preemptive::Held;
use super::{ActiveTurn, AttemptId, TurnLadder};
use crate::core::time::Millis;
use crate::core::turn::record::Failure;
use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;

impl TurnLadder {
    /// A streaming route produced `chunk`. The first non-blank chunk of a running attempt
    /// commits it if the gate of T6 passes; chunks of the committed attempt go out as sentences.
    pub fn on_attempt_chunk(&mut self, request_id: &AttemptId, chunk: &str, now: Millis) {
        self.chunk_arrived(request_id, chunk, now);
        self.reschedule(request_id.turn_id());
    }

    fn chunk_arrived(&mut self, request_id: &AttemptId, chunk: &str, now: Millis) {
        self.handle_timeout(now);
        let (turn_id, index) = (request_id.turn_id(), request_id.index());
        if self.is_pending(turn_id) && self.hold(request_id, Ok(Held::Chunk(chunk.to_owned())), now)
        {
            return;
        }
        let Some(turn) = self.turn_running(request_id) else {
            if !chunk.trim().is_empty() {
                self.record_late_answer(request_id, now);
            }
            return;
        };
        let full = match &turn.delivery {
            Some(delivery) if delivery.attempt_index == index => {
                self.deliver_chunk(turn_id, chunk, now)
            }
            // Blank text before the first word commits nothing.
            None if turn.is_running(index) && chunk.trim().is_empty() => false,
            None if turn.is_running(index) => {
                self.commit(turn_id, index, now);
                self.deliver_chunk(turn_id, chunk, now)
            }
            _ => {
                if !chunk.trim().is_empty() {
                    self.record_late_answer(request_id, now);
                }
                false
            }
        };
        if full {
            self.cut_stream(turn_id, request_id, now);
        }
    }

    /// The route of `request_id` answered with its whole text (`Ok`) or failed. For the committed
    /// attempt of a stream, a failure ends the turn as accepted with what was delivered (T12).
    pub fn on_attempt_result(
        &mut self,
        request_id: &AttemptId,
        outcome: Result<String, Failure>,
        now: Millis,
    ) {
        self.result_arrived(request_id, outcome, now);
        self.reschedule(request_id.turn_id());
    }

    fn result_arrived(
        &mut self,
        request_id: &AttemptId,
        outcome: Result<String, Failure>,
        now: Millis,
    ) {
        // A deadline that is due is decided first: an answer at or after it is late (T5, T6).
        self.handle_timeout(now);
        let (turn_id, index) = (request_id.turn_id(), request_id.index());
        let outcome = match outcome {
            Ok(text) if text.trim().is_empty() => Err(Failure::NoText),
            other => other,
        };
        if self.is_pending(turn_id) && self.hold(request_id, outcome.clone().map(Held::Result), now)
        {
            return;
        }
        let Some(turn) = self.turn_running(request_id) else {
            if outcome.is_ok() {
                self.record_late_answer(request_id, now);
            }
            return;
        };
        let committed_here = turn
            .delivery
            .as_ref()
            .is_some_and(|delivery| delivery.attempt_index == index);
        if committed_here {
            return self.complete(turn_id, outcome.err(), now);
        }
        if turn.delivery.is_some() || !turn.is_running(index) {
            if outcome.is_ok() {
                self.record_late_answer(request_id, now);
            }
            return;
        }
        match outcome {
            Ok(text) => {
                self.commit(turn_id, index, now);
                // Unsplit when no one wants its sentences and it fits; else as a stream's chunk.
                let taken_whole = self.deliver_whole(turn_id, &text);
                let full = !taken_whole && self.deliver_chunk(turn_id, &text, now);
                // A whole answer over the bound is cut like a stream; there is nothing to abort.
                self.complete(turn_id, full.then_some(Failure::AnswerTooLong), now);
            }
            Err(failure) => self.fail_attempt(turn_id, failure, now),
        }
    }

    /// The stream of `request_id` ended. For the committed attempt this completes the turn; an
    /// attempt whose stream ended before any text failed with `NoText`.
    pub fn on_stream_end(&mut self, request_id: &AttemptId, now: Millis) {
        self.stream_ended(request_id, now);
        self.reschedule(request_id.turn_id());
    }

    fn stream_ended(&mut self, request_id: &AttemptId, now: Millis) {
        self.handle_timeout(now);
        let (turn_id, index) = (request_id.turn_id(), request_id.index());
        if self.is_pending(turn_id) && self.hold(request_id, Ok(Held::End), now) {
            return;
        }
        let Some(turn) = self.turn_running(request_id) else {
            return;
        };
        match &turn.delivery {
            Some(delivery) if delivery.attempt_index == index => self.complete(turn_id, None, now),
            None if turn.is_running(index) => self.fail_attempt(turn_id, Failure::NoText, now),
            _ => {}
        }
    }

    /// The running turn an attempt belongs to: the very turn that started it, not a later one
    /// under the same id (after the first was dropped from the retained records).
    fn turn_running(&self, request_id: &AttemptId) -> Option<&ActiveTurn> {
        self.active
            .get(request_id.turn_id())
            .map(Box::as_ref)
            .filter(|turn| request_id.belongs_to(&turn.id))
    }
}
