//! The conversation so far: accepted exchanges, with what the user actually heard (T11, T16, V2).
//!
//! Two bounds apply. At most `limit` exchanges are kept. And what a route is handed never holds
//! more than `max_chars` Unicode scalar values of `user` + `assistant` text (T16): the newest
//! exchanges that fit together, whole, the oldest left out first. An exchange is never cut: when
//! the newest alone is over `max_chars`, the route gets an empty history (with the default limits,
//! 4000 + 4000 ≤ 16000, it always fits).

use crate::core::queue::Queue;
use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;

/// One exchange: what the user said and what the agent said back (or what of it was heard).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// The turn it came from.
    pub turn_id: String,
    /// The user's utterance.
    pub user: String,
    /// The agent's answer as delivered, or as heard after `set_heard`; empty when none was heard.
    pub assistant: String,
}

impl Exchange {
    /// Its length as T16 counts it: Unicode scalar values of both sides.
    pub fn content_chars(&self) -> usize {
        self.user.chars().count() + self.assistant.chars().count()
    }
}

/// An exchange and its [`Exchange::content_chars`], counted once.
#[derive(Clone, Debug)]
struct Kept {
    exchange: Exchange,
    chars: usize,
}

/// Accepted exchanges in order, within both bounds (see the [module documentation](self)).
#[derive(Clone, Debug)]
pub struct History {
    exchanges: Queue<Kept>,
    /// Sum of the kept exchanges' `chars`.
    total_chars: usize,
    limit: usize,
    max_chars: usize,
    /// Counts every change, so a preemptive attempt can tell whether the history it was given
    /// is still the history (T17).
    revision: u64,
}

impl History {
    /// An empty history keeping at most `limit` exchanges and handing out at most `max_chars`.
    pub fn new(limit: usize, max_chars: usize) -> Self {
        History {
            exchanges: Queue::new(),
            total_chars: 0,
            limit,
            max_chars,
            revision: 0,
        }
    }

    /// Changes so far: equal revisions mean the same history.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Appends an exchange, dropping the oldest beyond `limit`, and those that could not be
    /// handed out even if the newest shrank to nothing: what the user heard of an answer may
    /// still shorten it (`set_heard`), so the newest does not count towards that bound.
    pub fn push(&mut self, exchange: Exchange) {
        let chars = exchange.content_chars();
        self.revision = self.revision.wrapping_add(1);
        self.total_chars = self.total_chars.saturating_add(chars);
        self.exchanges.push_back(Kept { exchange, chars });
        while self.exchanges.len() > self.limit
            || self.total_chars.saturating_sub(chars) > self.max_chars
        {
            match self.exchanges.pop_front() {
                Some(oldest) => self.total_chars = self.total_chars.saturating_sub(oldest.chars),
                None => break,
            }
        }
    }

    /// Replaces the agent's side of a turn's exchange with what the user heard; false when the
    /// turn has no exchange (never committed, or already dropped).
    pub fn set_heard(&mut self, turn_id: &str, heard: &str) -> bool {
        let Some(kept) = self
            .exchanges
            .iter_mut()
            .find(|kept| kept.exchange.turn_id == turn_id)
        else {
            return false;
        };
        if kept.exchange.assistant != heard.trim() {
            self.revision = self.revision.wrapping_add(1);
        }
        heard.trim().clone_into(&mut kept.exchange.assistant);
        let chars = kept.exchange.content_chars();
        self.total_chars = self
            .total_chars
            .saturating_sub(kept.chars)
            .saturating_add(chars);
        kept.chars = chars;
        true
    }

    /// The exchanges kept, oldest first.
    pub fn exchanges(&self) -> impl Iterator<Item = &Exchange> {
        self.exchanges.iter().map(|kept| &kept.exchange)
    }

    /// A copy for a route that shares history: the newest whole exchanges whose content fits in
    /// `max_chars` together, oldest first (T16).
    pub fn snapshot(&self) -> Vec<Exchange> {
        let mut room = self.max_chars;
        let fitting = self
            .exchanges
            .iter()
            .rev()
            .take_while(|kept| match room.checked_sub(kept.chars) {
                Some(left) => {
                    room = left;
                    true
                }
                None => false,
            })
            .count();
        let skip = self.exchanges.len().saturating_sub(fitting);
        self.exchanges
            .iter()
            .skip(skip)
            .map(|kept| kept.exchange.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(turn: &str, user: &str, assistant: &str) -> Exchange {
        Exchange {
            turn_id: turn.to_owned(),
            user: user.to_owned(),
            assistant: assistant.to_owned(),
        }
    }

    fn turns(exchanges: &[Exchange]) -> Vec<&str> {
        exchanges.iter().map(|e| e.turn_id.as_str()).collect()
    }

    #[test]
    fn snapshot_keeps_the_newest_whole_exchanges_within_max_chars() {
        let mut history = History::new(10, 10);
        history.push(exchange("a", "12", "34"));
        history.push(exchange("b", "1", "2345"));
        history.push(exchange("c", "éé", "ü"));
        assert_eq!(
            turns(&history.snapshot()),
            ["b", "c"],
            "5 + 3 fit, 4 more do not"
        );
        history.push(exchange("d", "12345678901", ""));
        let kept: Vec<Exchange> = history.exchanges().cloned().collect();
        assert_eq!(
            turns(&kept),
            ["b", "c", "d"],
            "a could not fit even beside an empty d"
        );
        assert!(
            history.snapshot().is_empty(),
            "the newest alone is over: nothing"
        );
        assert!(
            history.set_heard("d", ""),
            "the newest is kept for set_heard"
        );
        history.push(exchange("e", "1234", ""));
        assert_eq!(turns(&history.snapshot()), ["e"]);
    }

    #[test]
    fn set_heard_recounts_so_older_exchanges_may_fit_again() {
        let mut history = History::new(10, 8);
        history.push(exchange("a", "123", ""));
        history.push(exchange("b", "1", "23456"));
        assert_eq!(turns(&history.snapshot()), ["b"]);
        assert!(history.set_heard("b", " 2 "));
        assert_eq!(turns(&history.snapshot()), ["a", "b"]);
    }
}
