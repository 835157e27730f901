//! Delivering a committed answer (T12, T15): its text goes out as complete sentences as it
//! streams, and never more than `max_answer_chars` of it.
//!
//! The bound is on the answer's text as the route sent it, in Unicode scalar values. A sentence
//! goes out only if it ends (white space aside) within the first `max_answer_chars` characters.
//! Once the text passes the bound, at most [`TurnConfig::ANSWER_LOOKAHEAD_CHARS`] more are read
//! — enough for the sentence splitter to tell whether a sentence ends right at the bound — and the
//! answer is cut: the stream is aborted, and the turn is accepted with the sentences that went
//! out. When no
//! complete sentence fits, the answer is cut after the last whole word within the bound (or, for
//! a first word longer than the bound, at the bound itself), so an accepted turn always says
//! something. A whole (non-streamed) answer is cut the same way.
//!
//! The accepted text is always the route's text up to the end of what went out, trimmed: it holds
//! exactly the characters of the delivered sentences, in order, with the route's own white space
//! between them.

use super::{AttemptId, TurnLadder};
use crate::core::time::Millis;
use crate::core::turn::config::TurnConfig;
use crate::core::turn::history::Exchange;
use crate::core::turn::output::{Action, Event};
use crate::core::turn::record::{AttemptResult, Failure, TurnStatus};
use crate::core::turn::sentences::SentenceSplitter;
use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;

/// Characters read past `max_answer_chars` before the answer is cut.
const LOOKAHEAD_CHARS: usize = TurnConfig::ANSWER_LOOKAHEAD_CHARS;

/// The answer a committed attempt is delivering.
#[derive(Debug)]
pub(super) struct Delivery {
    /// Index of the committed attempt in the record.
    pub(super) attempt_index: usize,
    /// When the stream counts as stalled if no chunk arrives (T12).
    pub(super) idle_deadline: Millis,
    /// What the route sent, at most `max_chars + LOOKAHEAD_CHARS` of it.
    text: String,
    /// `text`'s length in Unicode scalar values.
    text_chars: usize,
    /// `text[..delivered_bytes]` holds the sentences handed to TTS so far.
    delivered_bytes: usize,
    /// `text[..delivered_bytes]`'s length in Unicode scalar values.
    delivered_chars: usize,
    splitter: SentenceSplitter,
    max_chars: usize,
}

impl Delivery {
    pub(super) fn new(attempt_index: usize, idle_deadline: Millis, max_chars: usize) -> Self {
        Delivery {
            attempt_index,
            idle_deadline,
            text: String::new(),
            text_chars: 0,
            delivered_bytes: 0,
            delivered_chars: 0,
            splitter: SentenceSplitter::default(),
            max_chars,
        }
    }

    /// What went out so far, as the route wrote it: what the user can have heard.
    pub(super) fn delivered(&self) -> &str {
        self.text
            .get(..self.delivered_bytes)
            .unwrap_or_default()
            .trim()
    }

    /// Whether the route sent more than `max_answer_chars`.
    fn is_over(&self) -> bool {
        self.text_chars > self.max_chars
    }

    /// Takes a chunk; returns the sentences it completed within the bound, and whether the answer
    /// is full (the bound was passed: nothing more is wanted).
    fn take(&mut self, chunk: &str) -> (Vec<String>, bool) {
        // White space before the first word is no part of the answer, nor of its bound.
        let chunk = if self.text.is_empty() {
            chunk.trim_start()
        } else {
            chunk
        };
        let limit = self.max_chars.saturating_add(LOOKAHEAD_CHARS);
        let (part, part_chars) = prefix_of_chars(chunk, limit.saturating_sub(self.text_chars));
        self.text.push_str(part);
        self.splitter.push(part);
        self.text_chars = self.text_chars.saturating_add(part_chars);
        let mut full = part.len() < chunk.len() || self.text_chars >= limit;
        let mut sentences = Vec::new();
        while let Some(sentence) = self.splitter.next_sentence() {
            let end = self
                .text
                .len()
                .saturating_sub(self.splitter.pending().len());
            if !self.hand_out_to(end) {
                full = true;
                break;
            }
            sentences.push(sentence);
        }
        (sentences, full)
    }

    /// A whole answer taken at once, unsplit, when it is within the bound: what `take` and
    /// `finish` would deliver, without the sentences. False (nothing taken) otherwise.
    fn take_whole(&mut self, text: &str) -> bool {
        // As `take`: white space before the first word is no part of the answer nor its bound.
        let text = text.trim_start();
        let chars = text.chars().count();
        if !self.text.is_empty() || chars > self.max_chars {
            return false;
        }
        self.text.push_str(text);
        (self.text_chars, self.delivered_chars) = (chars, chars);
        self.delivered_bytes = text.len();
        true
    }

    /// Marks `text[..end]` as delivered if it ends within the bound; false otherwise.
    fn hand_out_to(&mut self, end: usize) -> bool {
        let Some(segment) = self.text.get(self.delivered_bytes..end) else {
            return false;
        };
        let content_end = self.delivered_chars + segment.trim_end().chars().count();
        if content_end > self.max_chars {
            return false;
        }
        self.delivered_chars += segment.chars().count();
        self.delivered_bytes = end;
        true
    }

    /// The answer is over: the last piece to hand out, if any. After a natural end the rest of
    /// the text is the last sentence; after a break, stall or cut it is unfinished and goes out
    /// only when nothing else did (it is all there is to say). Either way only within the bound.
    fn finish(&mut self, ended_naturally: bool) -> Option<String> {
        self.splitter.finish();
        let nothing_yet = self.delivered().is_empty();
        if !ended_naturally && !nothing_yet {
            return None;
        }
        let from = self.delivered_bytes;
        if self.hand_out_to(self.text.len()) {
            let tail = self.text.get(from..).unwrap_or_default().trim();
            return (!tail.is_empty()).then(|| tail.to_owned());
        }
        if !nothing_yet {
            return None;
        }
        self.delivered_bytes = cut_at_word(&self.text, self.max_chars);
        let tail = self.delivered();
        (!tail.is_empty()).then(|| tail.to_owned())
    }
}

/// The longest prefix of `text` with at most `max_chars` Unicode scalar values, and its length.
fn prefix_of_chars(text: &str, max_chars: usize) -> (&str, usize) {
    // No more bytes than the bound: no more characters either (the common case, one pass).
    if text.len() <= max_chars {
        return (text, text.chars().count());
    }
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => (text.get(..end).unwrap_or_default(), max_chars),
        None => (text, text.chars().count()),
    }
}

/// Where to cut `text` so that at most `max_chars` remain: after the last whole word that fits,
/// or at the bound itself when not even the first word fits (a byte offset).
fn cut_at_word(text: &str, max_chars: usize) -> usize {
    let (head, _) = prefix_of_chars(text, max_chars);
    let rest = text.get(head.len()..).unwrap_or_default();
    if rest.is_empty()
        || rest.starts_with(char::is_whitespace)
        || head.ends_with(char::is_whitespace)
    {
        return head.len();
    }
    match head.trim_end().rfind(char::is_whitespace) {
        Some(space) if !head.get(..space).unwrap_or_default().trim().is_empty() => space,
        _ => head.len(),
    }
}

impl TurnLadder {
    /// The attempt's first text passed the gate (T6): it is the turn's answer from now on, with
    /// no fallback and no deadline; the running attempt stays `running` while it delivers.
    pub(super) fn commit(&mut self, turn_id: &str, attempt_index: usize, now: Millis) {
        let idle_deadline = now.after(self.config.chunk_idle_timeout_ms);
        let max_chars = self.config.max_answer_chars;
        let Some(turn) = self.active.get_mut(turn_id) else {
            return;
        };
        let Some(attempt) = turn.record.attempts.get_mut(attempt_index) else {
            return;
        };
        attempt.first_text_at.get_or_insert(now);
        let request_id = attempt.request_id.clone();
        let route = attempt.route;
        turn.attempt_deadline = None;
        turn.record.accepted_request_id = Some(request_id.clone());
        turn.delivery = Some(Delivery::new(attempt_index, idle_deadline, max_chars));
        let latency_ms = now.since(turn.record.started_at);
        self.retry_budget.on_success();
        self.event(|| Event::Committed {
            turn_id: turn_id.to_owned(),
            request_id,
            route,
            at: now,
            latency_ms,
        });
    }

    /// Text of the committed attempt: complete sentences within the bound go out at once (T12,
    /// T15). True when the answer is full and must be cut.
    pub(super) fn deliver_chunk(&mut self, turn_id: &str, chunk: &str, now: Millis) -> bool {
        let idle_timeout_ms = self.config.chunk_idle_timeout_ms;
        let Some(delivery) = self
            .active
            .get_mut(turn_id)
            .and_then(|turn| turn.delivery.as_mut())
        else {
            return false;
        };
        let (sentences, full) = delivery.take(chunk);
        delivery.idle_deadline = now.after(idle_timeout_ms);
        for text in sentences {
            self.actions.push_back(Action::Sentence {
                turn_id: turn_id.to_owned(),
                text,
            });
        }
        full
    }

    /// A whole answer, when no one wants its sentences (`TurnConfig::emit_sentences`): taken
    /// unsplit if it is within the bound. False when it was not taken (`deliver_chunk` then is).
    pub(super) fn deliver_whole(&mut self, turn_id: &str, text: &str) -> bool {
        if self.config.emit_sentences {
            return false;
        }
        self.active
            .get_mut(turn_id)
            .and_then(|turn| turn.delivery.as_mut())
            .is_some_and(|delivery| delivery.take_whole(text))
    }

    /// The committed stream passed `max_answer_chars`: abort it, so the provider stops, and
    /// accept what went out (T15).
    pub(super) fn cut_stream(&mut self, turn_id: &str, request_id: &AttemptId, now: Millis) {
        self.actions.push_back(Action::AbortAttempt {
            request_id: request_id.clone(),
        });
        self.complete(turn_id, Some(Failure::AnswerTooLong), now);
    }

    /// The committed answer is complete (or its stream broke, stalled or was cut): the last
    /// piece, the whole text once, and the turn is accepted with what was delivered.
    pub(super) fn complete(&mut self, turn_id: &str, error: Option<Failure>, now: Millis) {
        let Some(turn) = self.active.get_mut(turn_id) else {
            return;
        };
        let Some(mut delivery) = turn.delivery.take() else {
            return;
        };
        let tail = delivery.finish(error.is_none());
        let error = error.or_else(|| delivery.is_over().then_some(Failure::AnswerTooLong));
        let text = delivery.delivered().to_owned();
        turn.record.accepted_text = Some(text.clone());
        let route = turn
            .record
            .attempts
            .get(delivery.attempt_index)
            .map_or(0, |attempt| attempt.route);
        let request_id = turn.record.accepted_request_id.clone();
        let latency_ms = now.since(turn.record.started_at);
        let exchange = Exchange {
            turn_id: turn_id.to_owned(),
            user: turn.record.input.clone(),
            assistant: text.clone(),
        };
        if let Some(tail) = tail {
            self.actions.push_back(Action::Sentence {
                turn_id: turn_id.to_owned(),
                text: tail,
            });
        }
        self.finish_attempt(turn_id, AttemptResult::Accepted, error, now);
        self.history.push(exchange);
        if let Some(request_id) = request_id {
            self.event(|| Event::Accepted {
                turn_id: turn_id.to_owned(),
                request_id,
                route,
                at: now,
                latency_ms,
            });
        }
        self.actions.push_back(Action::Deliver {
            turn_id: turn_id.to_owned(),
            text,
        });
        self.settle(turn_id, TurnStatus::Accepted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deliver(max_chars: usize, chunks: &[&str], ended_naturally: bool) -> (Vec<String>, String) {
        let mut delivery = Delivery::new(0, Millis(0), max_chars);
        let mut out = Vec::new();
        for chunk in chunks {
            let (sentences, full) = delivery.take(chunk);
            out.extend(sentences);
            if full {
                out.extend(delivery.finish(false));
                return (out, delivery.delivered().to_owned());
            }
        }
        out.extend(delivery.finish(ended_naturally));
        (out, delivery.delivered().to_owned())
    }

    #[test]
    fn a_sentence_ending_at_the_bound_goes_out_one_beyond_does_not() {
        // "One. Two." is 9 characters.
        let (sentences, text) = deliver(9, &["One. Two. Three. Four."], true);
        assert_eq!(
            (sentences, text.as_str()),
            (vec!["One.".into(), "Two.".into()], "One. Two.")
        );
        let (sentences, _) = deliver(8, &["One. Two. Three."], true);
        assert_eq!(sentences, ["One."]);
    }

    #[test]
    fn an_answer_of_exactly_the_bound_is_whole() {
        let (sentences, text) = deliver(9, &["One.", " Two."], true);
        assert_eq!(sentences, ["One.", "Two."]);
        assert_eq!(text, "One. Two.");
    }

    #[test]
    fn with_no_sentence_in_the_bound_the_cut_is_at_the_last_whole_word() {
        let (sentences, text) = deliver(12, &["A long sentence with no end in sight"], false);
        assert_eq!(
            (sentences, text.as_str()),
            (vec!["A long".into()], "A long")
        );
        let (_, text) = deliver(6, &["Supercalifragilistic words"], false);
        assert_eq!(
            text, "Superc",
            "a first word over the bound is cut at the bound"
        );
        let (_, text) = deliver(6, &["  \n Hello world"], false);
        assert_eq!(
            text, "Hello",
            "leading white space does not count; the space after the bound ends a word"
        );
    }

    #[test]
    fn an_endless_text_is_read_only_to_the_lookahead() {
        let mut delivery = Delivery::new(0, Millis(0), 10);
        let (_, full) = delivery.take("Short one. ");
        assert!(!full);
        let (sentences, full) = delivery.take(&"X".repeat(1_000_000));
        assert_eq!(sentences, ["Short one."]);
        assert!(full);
        assert_eq!(delivery.text.chars().count(), 10 + LOOKAHEAD_CHARS);
        assert_eq!(delivery.finish(false), None);
        assert_eq!(delivery.delivered(), "Short one.");
    }

    #[test]
    fn the_bound_counts_unicode_scalar_values() {
        let (sentences, _) = deliver(6, &["Ça va. Très bien."], true);
        assert_eq!(sentences, ["Ça va."]);
        let (sentences, text) = deliver(6, &["你好。再见。谢谢。"], true);
        assert_eq!(sentences, ["你好。", "再见。"]);
        assert_eq!(text, "你好。再见。");
    }
}
