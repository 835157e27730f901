//! What the user heard of an answer that was cut off (P3, V2).
//!
//! Heard text is the sentences played in full, plus the whole words of the cut sentence in
//! proportion to the share of its audio that played. Nothing after the cut counts, even if a later
//! sentence was already synthesized.

/// One spoken sentence: its text and how much of its audio played, from the audio clock.
use alloc::string::String;
use alloc::vec::Vec;
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpokenSentence<'a> {
    pub text: &'a str,
    pub duration_ms: f64,
    pub played_ms: f64,
}

/// A sentence counts as played in full when at most this much of its end is missing: the stop
/// itself is only accurate to one render quantum (128 frames, 2.9 ms at 44.1 kHz).
pub const FULL_TOLERANCE_MS: f64 = 3.0;

/// The text heard of `sentences`, in play order.
#[must_use]
// `max`/`min`, not `clamp`: its NaN assertion pulls float formatting into the wasm.
#[allow(clippy::manual_clamp)]
pub fn heard_text(sentences: &[SpokenSentence<'_>]) -> String {
    let mut heard: Vec<&str> = Vec::new();
    for sentence in sentences {
        let text = sentence.text.trim();
        if sentence.played_ms + FULL_TOLERANCE_MS >= sentence.duration_ms {
            if !text.is_empty() {
                heard.push(text);
            }
            continue;
        }
        let share = if sentence.duration_ms > 0.0 {
            (sentence.played_ms / sentence.duration_ms)
                .max(0.0)
                .min(1.0)
        } else {
            0.0
        };
        let words: Vec<&str> = text.split_whitespace().collect();
        // `as` saturates: a NaN share gives 0 words, never a trap.
        let count = libm::floor((words.len() as f64) * share) as usize;
        heard.extend(words.iter().take(count));
        break;
    }
    heard.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentence(text: &str, duration_ms: f64, played_ms: f64) -> SpokenSentence<'_> {
        SpokenSentence {
            text,
            duration_ms,
            played_ms,
        }
    }

    #[test]
    fn full_sentences_and_the_share_of_the_cut_one() {
        let heard = heard_text(&[
            sentence("It is sunny.", 1000.0, 1000.0),
            sentence("Take one two three four.", 1000.0, 610.0),
            sentence("Never heard.", 1000.0, 0.0),
        ]);
        // 5 words at 61 % → 3 whole words.
        assert_eq!(heard, "It is sunny. Take one two");
    }

    #[test]
    fn a_sentence_short_by_less_than_a_quantum_counts_in_full() {
        let heard = heard_text(&[sentence("Hello there.", 500.0, 498.0)]);
        assert_eq!(heard, "Hello there.");
    }

    #[test]
    fn nothing_played_is_nothing_heard() {
        assert_eq!(heard_text(&[sentence("Hello there.", 500.0, 0.0)]), "");
        assert_eq!(heard_text(&[]), "");
    }

    #[test]
    fn a_zero_length_or_odd_duration_never_panics() {
        assert_eq!(heard_text(&[sentence("a b", 0.0, 0.0)]), "a b");
        assert_eq!(heard_text(&[sentence("a b", f64::NAN, 1.0)]), "");
    }
}
