//! Streamed answer text cut into sentences for TTS (rule T12).
//!
//! [`SentenceSplitter`] takes text as it streams ([`SentenceSplitter::push`]), hands out each
//! sentence as soon as its end is certain ([`SentenceSplitter::next_sentence`]), and the rest when
//! the stream is over ([`SentenceSplitter::finish`]). It never reads ahead of what it was given:
//! an end that the next chunk could still change waits for that chunk, so the sentences do not
//! depend on how the text was chunked.
//!
//! Where a sentence ends:
//! - after a run of `.`, `!`, `?` or `…`, with any closing quotes or brackets that follow it,
//!   when white space comes next (`Hi! How`, `"Stop." She`, `(Why?) No`);
//! - after `。`, `！`, `？` or `｡` (with closers that follow), with or without a space;
//! - at a line end: `\n`, `\r`, U+2028 or U+2029. Blank lines give no sentence.
//!
//! Where it does not:
//! - a terminator followed by something other than white space: `3.5`, `e.g.x`, `U.S.A`;
//! - a terminator at the very end of the text so far (the next chunk may be `5` of `3.5`);
//! - a period or ellipsis followed by a lowercase word: `etc. and`, `5 p.m. today`,
//!   `wait... what` — unknown abbreviations are usually followed by lowercase too;
//! - a single period after a title, `e.g.`, `i.e.`, `vs.`, `cf.` or a single capital letter,
//!   whatever follows: `Mr. Smith`, `Dr. Who`, `J. R. R. Tolkien`.
//!
//! Sentences are trimmed and never empty, and together they hold every non-white-space character
//! of the input, in order, once.
//!
//! ```
//! use turnguard::core::turn::sentences::SentenceSplitter;
//!
//! let mut splitter = SentenceSplitter::default();
//! splitter.push("It costs 3.");
//! // "3." may still become "3.5": nothing is certain yet.
//! assert_eq!(splitter.next_sentence(), None);
//! splitter.push("50 dollars. Mr. Smith");
//! assert_eq!(splitter.next_sentence().as_deref(), Some("It costs 3.50 dollars."));
//! assert_eq!(splitter.next_sentence(), None);
//! splitter.push(" agrees");
//! assert_eq!(splitter.finish().as_deref(), Some("Mr. Smith agrees"));
//! ```

/// Words that a single period never ends a sentence after (compared ignoring ASCII case).
use alloc::borrow::ToOwned;
use alloc::string::String;
const NEVER_ENDS_AFTER: [&str; 11] = [
    "mr", "mrs", "ms", "dr", "prof", "st", "vs", "e.g", "i.e", "cf", "mt",
];

/// Cuts streamed text into sentences. See the [module documentation](self) for the rules.
#[derive(Clone, Debug, Default)]
pub struct SentenceSplitter {
    /// Text not yet handed out.
    buf: String,
    /// Everything in `buf` before this byte offset was scanned and holds no sentence end.
    scan_from: usize,
}

/// What a scan of the buffer found.
enum Scan {
    /// A sentence ends; the rest of the text starts at this byte offset.
    End(usize),
    /// Nothing certain yet; scanning must resume at this byte offset when more text comes.
    Wait(usize),
}

impl SentenceSplitter {
    /// An empty splitter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the next chunk of streamed text.
    pub fn push(&mut self, text: &str) {
        self.buf.push_str(text);
    }

    /// The next complete sentence, trimmed, if one is certain. Call until `None` after each push.
    #[must_use]
    pub fn next_sentence(&mut self) -> Option<String> {
        loop {
            let end = match scan(&self.buf, self.scan_from) {
                Scan::End(end) => end,
                Scan::Wait(from) => {
                    self.scan_from = from;
                    return None;
                }
            };
            let sentence = self.buf.get(..end).map(str::trim).unwrap_or_default();
            let sentence = (!sentence.is_empty()).then(|| sentence.to_owned());
            if self.buf.is_char_boundary(end) {
                self.buf.drain(..end);
            } else {
                // Scan only returns offsets of characters; this keeps the loop finite regardless.
                self.buf.clear();
            }
            self.scan_from = 0;
            if sentence.is_some() {
                return sentence;
            }
        }
    }

    /// The text pushed but not yet handed out as a sentence.
    pub fn pending(&self) -> &str {
        &self.buf
    }

    /// Ends the stream: everything not yet handed out, trimmed, or `None` if that is blank.
    /// After draining [`SentenceSplitter::next_sentence`] this is at most one sentence.
    /// The splitter is empty afterwards and may be used again.
    pub fn finish(&mut self) -> Option<String> {
        let tail = self.buf.trim();
        let tail = (!tail.is_empty()).then(|| tail.to_owned());
        self.buf.clear();
        self.scan_from = 0;
        tail
    }
}

/// Finds the first sentence end in `buf`, starting at byte offset `from`.
///
/// Every decision reads only characters that are present and waits otherwise, so a decision made
/// on a prefix of the text is the same as on the whole text.
fn scan(buf: &str, from: usize) -> Scan {
    let Some(tail) = buf.get(from..) else {
        return Scan::Wait(buf.len());
    };
    let mut chars = tail.char_indices().map(|(at, c)| (at + from, c)).peekable();
    while let Some((start, c)) = chars.next() {
        if is_line_end(c) {
            return Scan::End(start + c.len_utf8());
        }
        if !is_terminator(c) {
            continue;
        }
        let mut run = 1;
        let mut cjk = is_cjk_terminator(c);
        let mut dots_only = matches!(c, '.' | '…');
        while let Some((_, next)) = chars.next_if(|&(_, next)| is_terminator(next)) {
            run += 1;
            cjk |= is_cjk_terminator(next);
            dots_only &= matches!(next, '.' | '…');
        }
        while chars.next_if(|&(_, next)| is_closer(next)).is_some() {}
        let Some(&(end, next)) = chars.peek() else {
            return Scan::Wait(start);
        };
        if cjk {
            return Scan::End(end);
        }
        if !next.is_whitespace() {
            continue;
        }
        if !dots_only {
            return Scan::End(end);
        }
        if run == 1 && c == '.' && never_ends_after(buf.get(..start).unwrap_or_default()) {
            continue;
        }
        // A period or ellipsis: the first character after the gap decides.
        let after_gap = buf
            .get(end..)
            .and_then(|rest| rest.chars().find(|&c| !c.is_whitespace() || is_line_end(c)));
        match after_gap {
            None => return Scan::Wait(start),
            // A line end ends the sentence by itself, a few characters on.
            Some(c) if is_line_end(c) || c.is_lowercase() => continue,
            Some(_) => return Scan::End(end),
        }
    }
    Scan::Wait(buf.len())
}

/// Whether a single period right after `before` is part of an abbreviation.
fn never_ends_after(before: &str) -> bool {
    let word_start = before
        .trim_end_matches(|c: char| c.is_alphanumeric() || c == '.')
        .len();
    let word = before.get(word_start..).unwrap_or_default();
    let mut chars = word.chars();
    match (chars.next(), chars.next()) {
        // An initial: `J. Smith`.
        (Some(letter), None) => letter.is_uppercase(),
        _ => NEVER_ENDS_AFTER
            .iter()
            .any(|abbreviation| abbreviation.eq_ignore_ascii_case(word)),
    }
}

fn is_line_end(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…') || is_cjk_terminator(c)
}

fn is_cjk_terminator(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '｡')
}

fn is_closer(c: char) -> bool {
    matches!(
        c,
        '"' | '\'' | ')' | ']' | '}' | '”' | '’' | '»' | '›' | '」' | '』' | '）' | '】' | '〕'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentences(text: &str) -> Vec<String> {
        let mut splitter = SentenceSplitter::new();
        splitter.push(text);
        let mut out: Vec<String> = core::iter::from_fn(|| splitter.next_sentence()).collect();
        out.extend(splitter.finish());
        out
    }

    #[test]
    fn abbreviation_word_is_the_run_of_letters_and_periods_before_the_period() {
        assert!(never_ends_after("see (e.g"));
        assert!(never_ends_after("Ask Dr"));
        assert!(never_ends_after("J"));
        assert!(!never_ends_after("a"));
        assert!(!never_ends_after("Dress"));
    }

    #[test]
    fn scan_resumes_where_it_stopped() {
        let mut splitter = SentenceSplitter::new();
        splitter.push("One two");
        assert_eq!(splitter.next_sentence(), None);
        assert_eq!(splitter.scan_from, 7);
        splitter.push(" three.");
        assert_eq!(splitter.next_sentence(), None);
        assert_eq!(splitter.scan_from, 13);
        splitter.push(" Four");
        assert_eq!(splitter.next_sentence().as_deref(), Some("One two three."));
        assert_eq!(sentences("a\n\nb"), ["a", "b"]);
    }
}
