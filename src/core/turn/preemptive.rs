//! Preemptive attempts (T17): a turn's first attempt started on an eager end of turn, before the
//! final, and kept only if the final confirms it.
//!
//! A turn begun by [`TurnLadder::start_preemptive`] is *pending*: its record exists, but it has
//! no deadline of its own yet and whatever its attempt answers is held here, not delivered.
//! `start_turn` with the same id is the final. It **keeps** the attempt when the final's text
//! equals the eager text once normalised (case, punctuation, white space) and the history is the
//! one the attempt was given; the held answer then goes through the ladder as if it had arrived
//! that instant, so nothing of it sounds before the final. Otherwise the attempt is **discarded**
//! (aborted, `discarded` on the record, never spoken) and the ladder starts as for any turn.
//!
//! The bill stays bounded: at most [`MAX_PREEMPTIVE_PER_TURN`] per turn; each takes an attempt
//! from the session budget, needs the retry budget to allow a retry, and drains a retry token
//! when it is discarded or fails (T9). A pending turn the final never comes for is forgotten at
//! its deadline (`turnDeadlineMs` after the first eager signal), so a late final still starts it.

use super::{ActiveTurn, AttemptId, TurnLadder};
use crate::core::time::Millis;
use crate::core::turn::attempt_id::PREEMPTIVE;
use crate::core::turn::output::{Action, Event};
use crate::core::turn::record::{AttemptResult, Failure, TurnRecord};
use crate::core::turn::{StartError, Started};
use alloc::borrow::ToOwned;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

/// At most this many preemptive attempts per turn.
pub const MAX_PREEMPTIVE_PER_TURN: u8 = 2;

/// What `start_preemptive` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preempted {
    /// A preemptive attempt started.
    Started,
    /// One already runs for the same text: nothing new.
    Running,
    /// None started, for this reason.
    Refused(PreemptRefusal),
}

/// Why no preemptive attempt started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreemptRefusal {
    /// The turn already had its final (running or settled).
    Started,
    /// The turn had [`MAX_PREEMPTIVE_PER_TURN`] already.
    Limit,
    /// The session's attempt budget is spent.
    SessionBudget,
    /// The retry budget allows no extra call now (an outage is draining it).
    RetryBudget,
}

impl PreemptRefusal {
    /// The name events and the JS API use.
    pub fn as_str(self) -> &'static str {
        match self {
            PreemptRefusal::Started => "too_late",
            PreemptRefusal::Limit => "limit",
            PreemptRefusal::SessionBudget => "session_budget",
            PreemptRefusal::RetryBudget => "retry_budget",
        }
    }
}

/// Why a preemptive attempt was not kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiscardReason {
    /// The final's text differs from the eager text.
    TextChanged,
    /// The history changed since the attempt started (a barge-in trimmed an answer, a turn
    /// settled).
    HistoryChanged,
    /// The caller withdrew the guess (a provider's `TurnResumed`, speech went on).
    Withdrawn,
    /// A newer eager text replaced it.
    Replaced,
    /// It failed or timed out before the final.
    Failed,
    /// No final came before the turn's deadline.
    Expired,
}

impl DiscardReason {
    /// The name events use.
    pub fn as_str(self) -> &'static str {
        match self {
            DiscardReason::TextChanged => "text_changed",
            DiscardReason::HistoryChanged => "history_changed",
            DiscardReason::Withdrawn => "withdrawn",
            DiscardReason::Replaced => "replaced",
            DiscardReason::Failed => "failed",
            DiscardReason::Expired => "expired",
        }
    }
}

/// What a pending turn's attempt answered before the final, in order.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Held {
    Chunk(String),
    Result(String),
    End,
}

impl Held {
    fn has_text(&self) -> bool {
        match self {
            Held::Chunk(text) | Held::Result(text) => !text.trim().is_empty(),
            Held::End => false,
        }
    }
}

/// A turn waiting for its final.
#[derive(Debug)]
pub(super) struct Pending {
    /// The eager text, normalised.
    key: String,
    /// The history's revision when the attempt started.
    history_revision: u64,
    /// Preemptive attempts started for this turn.
    started: u8,
    /// What the running preemptive attempt answered so far.
    held: Vec<Held>,
}

/// Punctuation outside ASCII that transcripts use; any other non-ASCII character is a letter.
const WIDE_PUNCTUATION: [char; 16] = [
    '¿', '¡', '«', '»', '…', '“', '”', '‘', '’', '。', '、', '，', '？', '！', '：', '；',
];

/// Text compared word for word: words of letters, digits and apostrophes, ASCII letters in lower
/// case, single spaces. Unicode's case and category tables would add about 13 KiB to the
/// controller for this one comparison; a difference they would have hidden (`É` against `é`)
/// only discards a guess, which is never wrong, just a request more.
pub fn normalise(text: &str) -> String {
    let is_word = |c: char| {
        c.is_ascii_alphanumeric()
            || c == '\''
            || (!c.is_ascii() && !c.is_whitespace() && !WIDE_PUNCTUATION.contains(&c))
    };
    let mut out = String::with_capacity(text.len());
    for word in text
        .split(|c: char| !is_word(c))
        .map(|word| word.trim_matches('\''))
        .filter(|word| !word.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().map(|c| c.to_ascii_lowercase()));
    }
    out
}

impl TurnLadder {
    /// Starts (or restarts) a preemptive attempt for `turn_id` on an eager `input` (T17).
    pub fn start_preemptive(
        &mut self,
        turn_id: &str,
        input: &str,
        now: Millis,
    ) -> Result<Preempted, StartError> {
        self.check_input(turn_id, input)?;
        self.handle_timeout(now);
        let key = normalise(input);
        let started = match self.active.get(turn_id) {
            None if self.settled.contains_key(turn_id) => {
                return Ok(Preempted::Refused(PreemptRefusal::Started));
            }
            None => 0,
            Some(turn) => match &turn.pending {
                None => return Ok(Preempted::Refused(PreemptRefusal::Started)),
                Some(pending) => {
                    if pending.key == key && preemptive_running(turn) {
                        return Ok(Preempted::Running);
                    }
                    pending.started
                }
            },
        };
        if started >= MAX_PREEMPTIVE_PER_TURN {
            return Ok(Preempted::Refused(PreemptRefusal::Limit));
        }
        if !self.retry_budget.allows_retry() {
            return Ok(Preempted::Refused(PreemptRefusal::RetryBudget));
        }
        if !self.session_budget.has_room() {
            return Ok(Preempted::Refused(PreemptRefusal::SessionBudget));
        }
        if started > 0 {
            self.discard_running(turn_id, DiscardReason::Replaced, now);
        } else {
            self.open_turn(turn_id, input, now);
        }
        let revision = self.history.revision();
        let Some(turn) = self.active.get_mut(turn_id) else {
            return Ok(Preempted::Refused(PreemptRefusal::Started));
        };
        turn.pending = Some(Pending {
            key,
            history_revision: revision,
            started: started.saturating_add(1),
            held: Vec::new(),
        });
        if turn.record.input != input {
            input.clone_into(&mut turn.record.input);
            self.actions.push_back(Action::InputChanged {
                turn_id: turn_id.to_owned(),
            });
        }
        self.next_preemptive = self.next_preemptive.wrapping_add(1);
        self.start_attempt(turn_id, true, now);
        self.reschedule(turn_id);
        Ok(Preempted::Started)
    }

    /// Withdraws the eager guess of a pending turn: its running attempt is discarded. True when
    /// one was running. The turn stays pending for its final (or a new guess).
    pub fn discard_preemptive(&mut self, turn_id: &str, now: Millis) -> bool {
        self.handle_timeout(now);
        let running = self
            .active
            .get(turn_id)
            .is_some_and(|turn| turn.pending.is_some() && preemptive_running(turn));
        if running {
            self.discard_running(turn_id, DiscardReason::Withdrawn, now);
            self.reschedule(turn_id);
        }
        running
    }

    /// Whether the turn is waiting for its final.
    pub fn is_pending(&self, turn_id: &str) -> bool {
        self.active
            .get(turn_id)
            .is_some_and(|turn| turn.pending.is_some())
    }

    /// The final of a pending turn: keep its attempt or discard it and start the ladder.
    pub(super) fn confirm(&mut self, turn_id: &str, input: &str, now: Millis) -> Started {
        let revision = self.history.revision();
        let Some(turn) = self.active.get_mut(turn_id) else {
            return Started::Existing;
        };
        let Some(pending) = turn.pending.take() else {
            return Started::Existing;
        };
        let running = preemptive_running(turn);
        let verdict = if pending.key != normalise(input) {
            Some(DiscardReason::TextChanged)
        } else if pending.history_revision != revision {
            Some(DiscardReason::HistoryChanged)
        } else {
            None
        };
        let changed_input = turn.record.input != input;
        if changed_input {
            input.clone_into(&mut turn.record.input);
        }
        turn.record.started_at = now;
        turn.record.deadline_at = now.after(self.config.turn_deadline_ms);
        if changed_input {
            self.actions.push_back(Action::InputChanged {
                turn_id: turn_id.to_owned(),
            });
        }
        match (running, verdict) {
            (true, None) => self.keep(turn_id, pending.held, now),
            (true, Some(reason)) => {
                // The discarded attempt's state is gone from the turn; it is not pending now.
                self.discard_attempt(turn_id, reason, now);
                self.start_attempt(turn_id, false, now);
            }
            (false, _) => self.start_attempt(turn_id, false, now),
        }
        self.reschedule(turn_id);
        Started::Committed
    }

    /// The final confirmed the running preemptive attempt: it becomes the ladder's first, and
    /// what it answered so far arrives now.
    fn keep(&mut self, turn_id: &str, held: Vec<Held>, now: Millis) {
        let first_text_within = self.first_text_within();
        let Some(turn) = self.active.get_mut(turn_id) else {
            return;
        };
        let Some(request_id) = turn
            .running_attempt()
            .map(|attempt| attempt.request_id.clone())
        else {
            return;
        };
        let answered = held.iter().any(Held::has_text);
        turn.attempt_deadline =
            (!answered).then(|| now.after(first_text_within).min(turn.record.deadline_at));
        self.event(|| Event::PreemptiveEnded {
            turn_id: turn_id.to_owned(),
            request_id: request_id.clone(),
            kept: true,
            reason: None,
            at: now,
        });
        let ended = held.iter().any(|held| !matches!(held, Held::Chunk(_)));
        let queued = self.actions.len();
        for held in held {
            match held {
                Held::Chunk(text) => self.on_attempt_chunk(&request_id, &text, now),
                Held::Result(text) => self.on_attempt_result(&request_id, Ok(text), now),
                Held::End => self.on_stream_end(&request_id, now),
            }
        }
        if ended {
            // An answer cut at `max_answer_chars` while replayed had already ended: nothing to
            // abort.
            let mut index = 0;
            self.actions.retain(|action| {
                index += 1;
                index <= queued
                    || !matches!(action, Action::AbortAttempt { request_id: id } if *id == request_id)
            });
        }
    }

    /// Holds what a pending turn's preemptive attempt answered; true when the answer was taken
    /// here (the turn is pending), so the ladder must not see it yet.
    pub(super) fn hold(
        &mut self,
        request_id: &AttemptId,
        answer: Result<Held, Failure>,
        now: Millis,
    ) -> bool {
        let Some(turn) = self.active.get_mut(request_id.turn_id()) else {
            return false;
        };
        if !request_id.belongs_to(&turn.id) {
            return false;
        }
        let running = turn.is_running(request_id.index());
        let Some(pending) = turn.pending.as_mut() else {
            return false;
        };
        if !running {
            // An attempt of this pending turn that was already discarded: nothing to keep.
            return true;
        }
        let failure = match answer {
            Err(failure) => Some(failure),
            Ok(Held::Result(text)) if text.trim().is_empty() => Some(Failure::NoText),
            Ok(Held::End) if !pending.held.iter().any(Held::has_text) => Some(Failure::NoText),
            Ok(held) => {
                if held.has_text() {
                    // Answered: only the turn's deadline applies until the final.
                    turn.attempt_deadline = None;
                    if let Some(attempt) = turn.record.attempts.get_mut(request_id.index()) {
                        attempt.first_text_at.get_or_insert(now);
                    }
                }
                pending.held.push(held);
                None
            }
        };
        if let Some(failure) = failure {
            self.discard_attempt_failed(request_id.turn_id(), failure, now);
        }
        true
    }

    /// A pending turn's timers: its attempt's first-text timeout discards the attempt; its
    /// deadline forgets the turn. True when the turn was pending.
    pub(super) fn expire_pending(&mut self, turn_id: &str, now: Millis) -> bool {
        let Some(turn) = self.active.get(turn_id) else {
            return false;
        };
        if turn.pending.is_none() {
            return false;
        }
        if now >= turn.record.deadline_at {
            self.discard_running(turn_id, DiscardReason::Expired, now);
            self.forget(turn_id, now);
        } else if turn.attempt_deadline.is_some_and(|at| now >= at) {
            self.discard_attempt_failed(turn_id, Failure::Timeout, now);
        }
        true
    }

    fn discard_attempt_failed(&mut self, turn_id: &str, failure: Failure, now: Millis) {
        if let Some(turn) = self.active.get_mut(turn_id) {
            if let Some(attempt) = turn.running_attempt() {
                attempt.error = Some(failure);
            }
        }
        self.discard_running(turn_id, DiscardReason::Failed, now);
    }

    /// Discards the running preemptive attempt of a pending turn, if any.
    fn discard_running(&mut self, turn_id: &str, reason: DiscardReason, now: Millis) {
        let running = self
            .active
            .get(turn_id)
            .is_some_and(|turn| preemptive_running(turn));
        if running {
            self.discard_attempt(turn_id, reason, now);
            if let Some(pending) = self
                .active
                .get_mut(turn_id)
                .and_then(|turn| turn.pending.as_mut())
            {
                pending.held.clear();
            }
        }
    }

    /// Ends the running preemptive attempt as discarded: aborted, a retry token drained.
    fn discard_attempt(&mut self, turn_id: &str, reason: DiscardReason, now: Millis) {
        let error = self
            .active
            .get_mut(turn_id)
            .and_then(|turn| turn.running_attempt())
            .and_then(|attempt| attempt.error);
        let Some(request_id) = self.finish_attempt(turn_id, AttemptResult::Discarded, error, now)
        else {
            return;
        };
        self.retry_budget.on_failure();
        self.actions.push_back(Action::AbortAttempt {
            request_id: request_id.clone(),
        });
        self.event(|| Event::PreemptiveEnded {
            turn_id: turn_id.to_owned(),
            request_id,
            kept: false,
            reason: Some(reason),
            at: now,
        });
    }

    /// Drops a pending turn without a trace: its final, if it ever comes, starts it afresh.
    fn forget(&mut self, turn_id: &str, now: Millis) {
        if self.active.remove(turn_id).is_some() {
            self.prune_wakeups();
            self.event(|| Event::Forgotten {
                turn_id: turn_id.to_owned(),
                at: now,
            });
            self.actions.push_back(Action::Forget {
                turn_id: turn_id.to_owned(),
            });
        }
    }

    /// The id of the next attempt of a turn: preemptive ones by the ladder's count of them.
    pub(super) fn next_attempt_id(turn: &ActiveTurn, preemptive: bool, serial: u64) -> AttemptId {
        let index = turn.record.attempts.len();
        if preemptive {
            let number = usize::try_from(serial).unwrap_or(usize::MAX);
            return AttemptId::numbered(Rc::clone(&turn.id), index, PREEMPTIVE, number);
        }
        let number = ladder_attempts(&turn.record).saturating_add(1);
        if number == index.saturating_add(1) {
            AttemptId::new(Rc::clone(&turn.id), index)
        } else {
            AttemptId::numbered(
                Rc::clone(&turn.id),
                index,
                super::attempt_id::ATTEMPT,
                number,
            )
        }
    }
}

/// The attempts that are rungs of the ladder: all but the discarded preemptive ones (T3).
pub(super) fn ladder_attempts(record: &TurnRecord) -> usize {
    record
        .attempts
        .iter()
        .filter(|attempt| attempt.result != AttemptResult::Discarded)
        .count()
}

fn preemptive_running(turn: &ActiveTurn) -> bool {
    turn.record
        .attempts
        .last()
        .is_some_and(|attempt| attempt.preemptive && attempt.result == AttemptResult::Running)
}
