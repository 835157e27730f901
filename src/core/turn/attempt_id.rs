//! The id of one attempt (T13): `"<turnId>:attempt:<n>"`, n from 1, which JS knows as
//! `requestId`. It is built once, when the attempt starts, and carried from then on — in the
//! record, the actions and events, and back through the shell's inputs — so nothing parses it.

use crate::core::text::push_decimal;
use alloc::rc::Rc;
use alloc::string::String;
use core::fmt;
use core::ops::Deref;

/// An attempt's turn, its place in the turn, and its request id text, shared by every copy.
#[derive(Clone)]
pub struct AttemptId {
    turn_id: Rc<str>,
    index: usize,
    text: Rc<str>,
}

impl AttemptId {
    /// The id of attempt `index` (0-based) of the turn `turn_id`.
    pub(crate) fn new(turn_id: Rc<str>, index: usize) -> Self {
        Self::numbered(turn_id, index, ATTEMPT, index.saturating_add(1))
    }

    /// The id of the attempt at `index` of a turn's record, named `"<turnId><kind><number>"`:
    /// a ladder attempt after preemptive ones is numbered among the ladder's attempts only, and a
    /// preemptive attempt by the ladder's own count of them, so no id is ever sent twice (T17).
    pub(crate) fn numbered(turn_id: Rc<str>, index: usize, kind: &str, number: usize) -> Self {
        let text = Rc::from(request_id_text(&turn_id, kind, number).as_str());
        AttemptId {
            turn_id,
            index,
            text,
        }
    }

    /// Whether the id is `"<turnId>:attempt:<index + 1>"`, the same suffix for every turn.
    pub fn is_plain(&self) -> bool {
        let mut plain = String::new();
        push_decimal(&mut plain, self.index.saturating_add(1) as u64);
        self.suffix()
            .strip_prefix(ATTEMPT)
            .is_some_and(|number| number == plain)
    }

    /// The turn the attempt belongs to.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Whether the attempt was started by the turn whose id is `turn_id` (that very `Rc`).
    pub(crate) fn belongs_to(&self, turn_id: &Rc<str>) -> bool {
        Rc::ptr_eq(&self.turn_id, turn_id)
    }

    /// The attempt's place in its turn, from 0.
    pub fn index(&self) -> usize {
        self.index
    }

    /// `"<turnId>:attempt:<n>"`.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// What the id adds to its turn id, `":attempt:<n>"`: the same for attempt `n` of every
    /// turn, so a shell that holds the turn id's JS string needs only this part's once.
    pub fn suffix(&self) -> &str {
        self.text.get(self.turn_id.len()..).unwrap_or_default()
    }
}

/// `"{turn_id}:attempt:{number}"`, built without the formatting machinery: it is on every
/// attempt's path.
/// The kind of a ladder attempt's id.
pub(crate) const ATTEMPT: &str = ":attempt:";
/// The kind of a preemptive attempt's id (T17).
pub(crate) const PREEMPTIVE: &str = ":preemptive:";

fn request_id_text(turn_id: &str, kind: &str, number: usize) -> String {
    let mut id = String::with_capacity(turn_id.len() + kind.len() + 2);
    id.push_str(turn_id);
    id.push_str(kind);
    push_decimal(&mut id, number as u64);
    id
}

impl Deref for AttemptId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl PartialEq for AttemptId {
    fn eq(&self, other: &Self) -> bool {
        // The same allocation when both are copies of one id: no byte compare.
        Rc::ptr_eq(&self.text, &other.text) || self.text == other.text
    }
}

impl Eq for AttemptId {}

impl PartialEq<str> for AttemptId {
    fn eq(&self, other: &str) -> bool {
        &*self.text == other
    }
}

impl PartialEq<&str> for AttemptId {
    fn eq(&self, other: &&str) -> bool {
        &*self.text == *other
    }
}

impl fmt::Debug for AttemptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.text, f)
    }
}

impl fmt::Display for AttemptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_the_turn_and_the_attempt_number() {
        for (turn_id, index) in [("t", 0), ("turn:attempt:7", 1), ("", 9), ("ünï", 122)] {
            let id = AttemptId::new(Rc::from(turn_id), index);
            assert_eq!(id.as_str(), format!("{turn_id}:attempt:{}", index + 1));
            assert_eq!((id.turn_id(), id.index()), (turn_id, index));
            assert_eq!(id.suffix(), format!(":attempt:{}", index + 1));
            assert!(id.is_plain());
        }
        let preemptive = AttemptId::numbered(Rc::from("t"), 0, PREEMPTIVE, 7);
        assert_eq!(
            (preemptive.as_str(), preemptive.is_plain()),
            ("t:preemptive:7", false)
        );
        let after = AttemptId::numbered(Rc::from("t"), 2, ATTEMPT, 1);
        assert_eq!((after.as_str(), after.is_plain()), ("t:attempt:1", false));
    }
}
