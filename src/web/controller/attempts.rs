//! The browser resources of a controller's turns and attempts: each attempt's `AbortController`,
//! kept until the attempt ends, and, within a bound, what is needed to mark a late answer late.

use crate::core::queue::Queue;
use crate::core::sorted_map::SortedMap;
use crate::core::turn::AttemptId;
use crate::web::report::TurnStrings;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use web_sys::AbortController;

/// Ended attempts whose routes have not settled yet are remembered, so that a late answer is
/// recorded as `late` (T6), but only this many: a route that never settles cannot grow memory.
const LATE_ATTEMPTS_KEPT: usize = 64;

/// An attempt whose route has not settled yet, by the id `glue.callRoute` reports it under.
pub(super) struct AttemptIo {
    pub(super) request_id: AttemptId,
    /// The attempt's own controller; its signal is the one the route sees. Taken when the
    /// attempt ends (its timeout, or its turn's end), which aborts or releases it.
    pub(super) abort: Option<AbortController>,
}

/// A running turn's JS strings and its live attempts (at most `maxAttemptsPerTurn`).
pub(super) struct TurnIo {
    pub(super) strings: TurnStrings,
    pub(super) live: Vec<u32>,
}

#[derive(Default)]
pub(super) struct Io {
    /// Boxed, as the ladder's turns: the map moves its entries on insert and removal.
    pub(super) turns: SortedMap<String, Box<TurnIo>>,
    pub(super) attempts: SortedMap<u32, AttemptIo>,
    /// Ids of ended attempts still in `attempts`, oldest first (at most `LATE_ATTEMPTS_KEPT`).
    pub(super) ended: Queue<u32>,
    pub(super) next_attempt: u32,
}

impl Io {
    /// Ends an attempt's I/O: its controller is returned (to abort) and it is kept only to
    /// record a late answer, within the bound.
    pub(super) fn end_attempt(&mut self, id: u32) -> Option<AbortController> {
        let attempt = self.attempts.get_mut(&id)?;
        let controller = attempt.abort.take()?;
        if let Some(turn) = self.turns.get_mut(attempt.request_id.turn_id()) {
            turn.live.retain(|&live| live != id);
        }
        self.ended.push_back(id);
        while self.ended.len() > LATE_ATTEMPTS_KEPT {
            if let Some(oldest) = self.ended.pop_front() {
                self.attempts.remove(&oldest);
            }
        }
        Some(controller)
    }

    /// Forgets an attempt whose route is done (settled, or told to stop reading).
    pub(super) fn forget_attempt(&mut self, id: u32) {
        let Some(attempt) = self.attempts.remove(&id) else {
            return;
        };
        if attempt.abort.is_some() {
            if let Some(turn) = self.turns.get_mut(attempt.request_id.turn_id()) {
                turn.live.retain(|&live| live != id);
            }
        } else {
            self.ended.retain(|&ended| ended != id);
        }
    }

    /// Ends every live attempt of a turn; their controllers are returned.
    pub(super) fn end_attempts_of(&mut self, turn_id: &str) -> Vec<AbortController> {
        let live = self
            .turns
            .get_mut(turn_id)
            .map(|turn| core::mem::take(&mut turn.live))
            .unwrap_or_default();
        live.into_iter()
            .filter_map(|id| self.end_attempt(id))
            .collect()
    }

    /// The live attempt with this id, if it is live.
    pub(super) fn live_attempt(&self, request_id: &AttemptId) -> Option<u32> {
        let turn = self.turns.get(request_id.turn_id())?;
        turn.live.iter().copied().find(|id| {
            self.attempts
                .get(id)
                .is_some_and(|attempt| attempt.request_id == *request_id)
        })
    }
}
