//! The conversation so far: accepted exchanges, with what the user actually heard (T11, V2).

use std::collections::VecDeque;

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

/// Accepted exchanges in order, at most `limit` of them (the oldest go first).
#[derive(Clone, Debug)]
pub struct History {
    exchanges: VecDeque<Exchange>,
    limit: usize,
}

impl History {
    /// An empty history keeping at most `limit` exchanges.
    pub fn new(limit: usize) -> Self {
        History {
            exchanges: VecDeque::new(),
            limit,
        }
    }

    /// Appends an exchange, dropping the oldest beyond the limit.
    pub fn push(&mut self, exchange: Exchange) {
        self.exchanges.push_back(exchange);
        while self.exchanges.len() > self.limit {
            self.exchanges.pop_front();
        }
    }

    /// Replaces the agent's side of a turn's exchange with what the user heard; false when the
    /// turn has no exchange (never committed, or already dropped).
    pub fn set_heard(&mut self, turn_id: &str, heard: &str) -> bool {
        match self.exchanges.iter_mut().find(|e| e.turn_id == turn_id) {
            Some(exchange) => {
                heard.trim().clone_into(&mut exchange.assistant);
                true
            }
            None => false,
        }
    }

    /// The exchanges, oldest first.
    pub fn exchanges(&self) -> impl Iterator<Item = &Exchange> {
        self.exchanges.iter()
    }

    /// A copy for a route that shares history.
    pub fn snapshot(&self) -> Vec<Exchange> {
        self.exchanges.iter().cloned().collect()
    }
}
