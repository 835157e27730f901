//! Backchannels (V6): "uh huh", "okay", "got it" — the listener's small words while the agent
//! speaks. They never cut the agent, and a final made only of them starts no turn.

use crate::core::turn::preemptive::normalise;
use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// The default list: English, with the spellings recognizers write for the same sounds ("ok",
/// "yea", "mhm": measured in the room, a recognizer's "yea" for a spoken "okay" cut the agent).
pub const DEFAULT_BACKCHANNELS: [&str; 13] = [
    "uh huh", "mm hmm", "yeah", "yes", "okay", "right", "sure", "got it", "ok", "yea", "yep",
    "yup", "mhm",
];

/// The phrases, as normalised words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backchannels {
    phrases: Vec<Vec<String>>,
}

impl Default for Backchannels {
    fn default() -> Self {
        Backchannels::new(DEFAULT_BACKCHANNELS)
    }
}

impl Backchannels {
    /// The phrases given; an empty list turns the filter off.
    pub fn new<S: AsRef<str>>(phrases: impl IntoIterator<Item = S>) -> Self {
        let phrases = phrases
            .into_iter()
            .map(|phrase| {
                normalise(phrase.as_ref())
                    .split(' ')
                    .filter(|word| !word.is_empty())
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .filter(|words| !words.is_empty())
            .collect();
        Backchannels { phrases }
    }

    /// Whether `text` is nothing but backchannel phrases ("okay", "yeah okay", "mm hmm right").
    #[must_use]
    pub fn only(&self, text: &str) -> bool {
        let key = normalise(text);
        let words: Vec<&str> = key.split(' ').filter(|word| !word.is_empty()).collect();
        if words.is_empty() || self.phrases.is_empty() {
            return false;
        }
        // covered[i]: the first i words are whole phrases.
        let mut covered = vec![false; words.len() + 1];
        if let Some(start) = covered.first_mut() {
            *start = true;
        }
        for i in 0..words.len() {
            if !covered.get(i).copied().unwrap_or(false) {
                continue;
            }
            let rest = words.get(i..).unwrap_or_default();
            for phrase in &self.phrases {
                if rest.len() >= phrase.len() && rest.iter().zip(phrase).all(|(a, b)| a == b) {
                    if let Some(end) = covered.get_mut(i + phrase.len()) {
                        *end = true;
                    }
                }
            }
        }
        covered.last().copied().unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_phrases_only() {
        let list = Backchannels::default();
        for said in [
            "okay",
            "Okay.",
            "uh huh",
            "Mm-hmm!",
            "yeah, okay",
            "got it",
            "sure right",
        ] {
            assert!(list.only(said), "{said}");
        }
        for said in [
            "okay stop",
            "it",
            "got",
            "stop",
            "",
            "...",
            "yes please do it",
        ] {
            assert!(!list.only(said), "{said}");
        }
        assert!(
            !Backchannels::new(Vec::<String>::new()).only("okay"),
            "[] turns it off"
        );
        assert!(Backchannels::new(["d'accord", "oui"]).only("Oui, d'accord"));
    }
}
