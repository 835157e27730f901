//! Running turns by when they next need `handle_timeout`: a min-heap on (time, start order).
//!
//! A turn that moves is filed again rather than found and moved; its old entry goes stale and is
//! dropped when it reaches the top, or when stale entries outnumber live ones. So filing is
//! O(log n), the next wake-up is the top, and a `BinaryHeap` is all the code it takes.

use crate::core::time::Millis;
use alloc::collections::BinaryHeap;
use alloc::rc::Rc;
use core::cmp::Ordering;

/// One filing of a turn.
#[derive(Debug)]
struct Wakeup {
    at: Millis,
    /// The turn's start order: the tie-break among turns due at the same time.
    seq: u64,
    turn_id: Rc<str>,
}

impl Wakeup {
    /// Earliest first (`BinaryHeap` is a max-heap), then oldest turn first.
    fn key(&self) -> (core::cmp::Reverse<Millis>, core::cmp::Reverse<u64>) {
        (core::cmp::Reverse(self.at), core::cmp::Reverse(self.seq))
    }
}

impl PartialEq for Wakeup {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Wakeup {}

impl PartialOrd for Wakeup {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Wakeup {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

#[derive(Debug, Default)]
pub(super) struct Wakeups {
    heap: BinaryHeap<Wakeup>,
}

impl Wakeups {
    /// Files a turn under `at`. The caller records `at` as the turn's current filing.
    pub(super) fn file(&mut self, at: Millis, seq: u64, turn_id: Rc<str>) {
        self.heap.push(Wakeup { at, seq, turn_id });
    }

    /// The earliest filing (current, once `prune` ran after the last change).
    pub(super) fn next(&self) -> Option<Millis> {
        self.heap.peek().map(|wakeup| wakeup.at)
    }

    /// Takes the earliest current filing due at `now`, skipping stale ones. `current(turn_id,
    /// seq, at)` says whether a filing is still its turn's current one.
    pub(super) fn pop_due(
        &mut self,
        now: Millis,
        current: impl Fn(&str, u64, Millis) -> bool,
    ) -> Option<Rc<str>> {
        while let Some(top) = self.heap.peek() {
            if top.at > now {
                return None;
            }
            let wakeup = self.heap.pop()?;
            if current(&wakeup.turn_id, wakeup.seq, wakeup.at) {
                return Some(wakeup.turn_id);
            }
        }
        None
    }

    /// Drops stale filings at the top (so `next` is exact), and all of them once they outnumber
    /// the `live` turns: memory stays proportional to the running turns.
    pub(super) fn prune(&mut self, live: usize, current: impl Fn(&str, u64, Millis) -> bool) {
        if self.heap.len() > 2 * live + 32 {
            self.heap
                .retain(|wakeup| current(&wakeup.turn_id, wakeup.seq, wakeup.at));
        }
        while let Some(top) = self.heap.peek() {
            if current(&top.turn_id, top.seq, top.at) {
                break;
            }
            self.heap.pop();
        }
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_turns_come_out_earliest_first_then_oldest_first_and_stale_filings_are_skipped() {
        let mut wakeups = Wakeups::default();
        let a: Rc<str> = Rc::from("a");
        let b: Rc<str> = Rc::from("b");
        wakeups.file(Millis(10), 1, b.clone());
        wakeups.file(Millis(10), 0, a.clone());
        wakeups.file(Millis(5), 1, b.clone()); // b moved from 10 to 5: its first filing is stale
        let current = |id: &str, _seq: u64, at: Millis| {
            (id == "a" && at == Millis(10)) || (id == "b" && at == Millis(5))
        };
        wakeups.prune(2, current);
        assert_eq!(wakeups.next(), Some(Millis(5)));
        assert_eq!(wakeups.pop_due(Millis(4), current), None);
        assert_eq!(wakeups.pop_due(Millis(10), current).as_deref(), Some("b"));
        assert_eq!(wakeups.pop_due(Millis(10), current).as_deref(), Some("a"));
        assert_eq!(
            wakeups.pop_due(Millis(10), current),
            None,
            "b's stale filing at 10 is skipped"
        );
        assert_eq!(wakeups.next(), None);
    }

    #[test]
    fn stale_filings_never_outnumber_the_live_turns_by_much() {
        let mut wakeups = Wakeups::default();
        let id: Rc<str> = Rc::from("t");
        for at in 0..10_000 {
            wakeups.file(Millis(20_000 - at), 0, id.clone());
            let latest = Millis(20_000 - at);
            wakeups.prune(1, |_: &str, _, filed| filed == latest);
            assert!(
                wakeups.len() <= 2 + 32 + 1,
                "{} filings for one turn",
                wakeups.len()
            );
        }
        assert_eq!(wakeups.next(), Some(Millis(10_001)));
    }
}
