//! The agent's words in the provider's transcript (V8).
//!
//! Without a working canceller the provider transcribes the agent too, and its utterances do not
//! keep to the agent's: it sends the end of an answer after the answer ended, or joins it to the
//! user's next question in one final ("… no real answer to that try asking about the way up",
//! measured in the room). Whether the detector heard voice when such a final arrives says little:
//! by then the user may be asking the next question. What does tell is how the utterance began:
//! an utterance whose first words came while the words were taken for the echo opens with the
//! agent's words, in the agent's order. Those are dropped; what follows is the user's, when it is
//! at least [`MIN_USER_WORDS`] words (a shorter rest is the echo's misheard end, "the way up" for
//! "the weather").
//!
//! A working canceller leaks too, for a moment: the detector takes the leak for voice and pauses
//! the agent, and the provider writes a word of it — the agent's word at that moment. A short
//! final made only of the words about the place the agent paused at ([`words_around`]) is that
//! echo, not the user's word: it confirms no pause.

use crate::core::queue::Queue;
use crate::core::turn::preemptive::normalise;
use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;

/// The sentences the player got last: the one sounding, the one queued behind it, and the one
/// before (the provider's words lag the sound).
const KEPT_SENTENCES: usize = 3;
/// Words that do not follow the agent's text, in a row, that end its echo in a transcript.
const MISSES_THAT_END: usize = 2;
/// What is left of an echo's utterance counts as the user's from this many words.
pub const MIN_USER_WORDS: usize = 3;
/// The agent's words before the place it paused at that a leak may have been: the detector's
/// voice pauses the agent a capture path and `min_speech_ms` after a leak begins (200–300 ms in
/// the room, a word of speech at 175 words a minute), and a leak may span two words.
pub const LEAK_WORDS_BEFORE: usize = 3;
/// And after it: the place is the share of the sentence's audio that played, whole words counted
/// down, so the word sounding then is the next one, and the share's rounding one more.
pub const LEAK_WORDS_AFTER: usize = 2;

/// The agent's words about the place it paused at: `heard` words of `spoken` (its sentences, in
/// order) played; the last [`LEAK_WORDS_BEFORE`] of them and the next [`LEAK_WORDS_AFTER`],
/// normalised, one space between two.
pub fn words_around<'t>(heard: usize, spoken: impl Iterator<Item = &'t str>) -> String {
    let (from, to) = (
        heard.saturating_sub(LEAK_WORDS_BEFORE),
        heard.saturating_add(LEAK_WORDS_AFTER),
    );
    let mut window = String::new();
    // Words counted as `heard_text` counts them.
    for (index, word) in spoken.flat_map(str::split_whitespace).enumerate() {
        if index >= to {
            break;
        }
        if index >= from {
            window.push_str(word);
            window.push(' ');
        }
    }
    normalise(&window)
}

/// Whether `transcript` has words and all of them are among `words` (normalised).
#[must_use]
pub fn only_words_of(transcript: &str, words: &str) -> bool {
    let said = normalise(transcript);
    !said.is_empty()
        && said
            .split(' ')
            .all(|word| words.split(' ').any(|known| known == word))
}

/// The agent's last sentences, as words.
#[derive(Clone, Debug, Default)]
pub struct RecentSpeech {
    sentences: Queue<Vec<String>>,
}

impl RecentSpeech {
    /// A sentence handed to the player.
    pub fn played(&mut self, text: &str) {
        if self.sentences.len() == KEPT_SENTENCES {
            self.sentences.pop_front();
        }
        self.sentences
            .push_back(normalise(text).split(' ').map(str::to_owned).collect());
    }

    /// The words of `transcript` after the agent's: `None` when nothing is left that counts as
    /// the user's. The agent's words are the transcript's opening words that follow the agent's
    /// last sentences in order (a word the provider misheard may come between two of them).
    #[must_use]
    pub fn users_words(&self, transcript: &str) -> Option<String> {
        let said = normalise(transcript);
        let words: Vec<&str> = said.split(' ').filter(|word| !word.is_empty()).collect();
        let mut agent = self.sentences.iter().flatten().map(String::as_str);
        let (mut echo_ends, mut misses) = (0, 0);
        for (index, word) in words.iter().enumerate() {
            // The agent's words are searched from after the last match: its order holds.
            let mut rest = agent.clone();
            if rest.any(|spoken| spoken == *word) {
                agent = rest;
                echo_ends = index + 1;
                misses = 0;
            } else {
                misses += 1;
                if misses == MISSES_THAT_END {
                    break;
                }
            }
        }
        let users = words.get(echo_ends..).unwrap_or_default();
        (users.len() >= MIN_USER_WORDS || (echo_ends == 0 && !users.is_empty()))
            .then(|| users.join(" "))
    }
}
