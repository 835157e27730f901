//! The id of one attempt (T13): `"<turnId>:attempt:<n>"`, n from 1, which JS knows as
//! `requestId`. It is built once, when the attempt starts, and carried from then on — in the
//! record, the actions and events, and back through the shell's inputs — so nothing parses it.

use core::fmt;
use core::ops::Deref;
use std::rc::Rc;

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
        let text = Rc::from(request_id_text(&turn_id, index.saturating_add(1)).as_str());
        AttemptId {
            turn_id,
            index,
            text,
        }
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
fn request_id_text(turn_id: &str, number: usize) -> String {
    fn push_decimal(out: &mut String, n: usize) {
        if n >= 10 {
            push_decimal(out, n / 10);
        }
        out.push(char::from(b'0' + (n % 10) as u8));
    }
    let mut id = String::with_capacity(turn_id.len() + ":attempt:".len() + 2);
    id.push_str(turn_id);
    id.push_str(":attempt:");
    push_decimal(&mut id, number);
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
        }
    }
}
