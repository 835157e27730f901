//! Text built without `core::fmt`: the shipped wasm has no formatting machinery (performance.md,
//! "Levers measured"), so numbers in messages and ids are written here and joined with `concat`.
//! Searching for a `&str` is here too: `str::replace` and `str::contains` with a `&str` pattern
//! bring the two-way searcher and, through its slicing, the panic path that formats a `char`
//! with the Unicode tables it reads (about 5 KB gzipped); the texts searched here are short (an
//! error message, a URL), so a plain scan does.

use alloc::string::String;

/// `n` in decimal.
pub(crate) fn decimal(n: u64) -> String {
    let mut out = String::new();
    push_decimal(&mut out, n);
    out
}

/// Appends `n` in decimal.
pub(crate) fn push_decimal(out: &mut String, n: u64) {
    if n >= 10 {
        push_decimal(out, n / 10);
    }
    out.push(char::from(b'0' + (n % 10) as u8));
}

/// Whether `needle` occurs in `text`.
pub(crate) fn contains(text: &str, needle: &str) -> bool {
    suffixes(text).any(|rest| rest.starts_with(needle))
}

/// `text` with every `from` replaced by `to`, left to right (what `str::replace` does).
// The browser shell's option errors use it: the native build has no shell, the controller's
// entry no transcriber.
#[cfg_attr(
    any(not(target_arch = "wasm32"), not(feature = "transcriber")),
    allow(dead_code)
)]
pub(crate) fn replace_all(text: &str, from: &str, to: &str) -> String {
    if from.is_empty() {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix(from) {
            out.push_str(to);
            rest = after;
        } else {
            let mut chars = rest.chars();
            out.extend(chars.next());
            rest = chars.as_str();
        }
    }
    out
}

/// `text` from each of its characters to the end, then the empty end.
fn suffixes(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    core::iter::from_fn(move || {
        let current = rest?;
        let mut chars = current.chars();
        rest = chars.next().map(|_| chars.as_str());
        Some(current)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_finds_as_str_does() {
        let cases = [
            (
                "options.maxMs must be below options.minMs",
                "options",
                "options.policy",
            ),
            ("options.x", "options.", "options.voice."),
            ("routes[0] is not a function", "options.", "options.voice."),
            ("aaa", "aa", "b"),
            ("é options é", "options", "ö"),
            ("", "x", "y"),
            ("abc", "", "z"),
        ];
        for (text, from, to) in cases {
            if !from.is_empty() {
                assert_eq!(
                    replace_all(text, from, to),
                    text.replace(from, to),
                    "{text:?}"
                );
            }
            assert_eq!(
                contains(text, from),
                text.contains(from),
                "{text:?} {from:?}"
            );
        }
        assert_eq!(replace_all("abc", "", "z"), "abc");
        assert!(contains(
            "wss://x/v3/ws?format_turns=true&a=1",
            "format_turns=true"
        ));
        assert!(!contains(
            "wss://x/v3/ws?format_turns=false",
            "format_turns=true"
        ));
    }

    #[test]
    fn writes_every_digit() {
        for n in [0, 7, 10, 99, 100, 65_535, 1_000_000_007, u64::MAX] {
            assert_eq!(decimal(n), n.to_string());
        }
    }
}
