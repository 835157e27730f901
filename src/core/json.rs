//! Just enough JSON: a validating, depth-limited reader that visits object members and array
//! elements, decodes strings and skips everything else. Never panics, never recurses unbounded.

use alloc::borrow::Cow;
use alloc::string::String;

/// The text is not JSON, or nests deeper than [`MAX_DEPTH`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Malformed;

type Result<T> = core::result::Result<T, Malformed>;

/// Deepest nesting read; chat chunks use about five levels.
const MAX_DEPTH: u32 = 32;

pub(crate) struct Reader<'a> {
    text: &'a str,
    pos: usize,
    depth: u32,
}

/// `"12.3456"` seconds → 12 346 ms; `None` for a sign, an exponent or an overflow.
fn seconds_as_ms(number: &str) -> Option<u64> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut ms = whole.parse::<u64>().ok()?.checked_mul(1_000)?;
    let mut digits = fraction.bytes().map(|b| u64::from(b - b'0'));
    for scale in [100, 10, 1] {
        ms = ms.checked_add(digits.next().unwrap_or(0) * scale)?;
    }
    if digits.next().is_some_and(|digit| digit >= 5) {
        ms = ms.checked_add(1)?;
    }
    Some(ms)
}

/// The kind a message says it is: the first string among its top-level `type`, `message`,
/// `message_type` and `event`, if it looks like a name (what arrived, never what was said).
pub(crate) fn message_kind(text: &str) -> Option<String> {
    let mut kind = None;
    let mut reader = Reader::new(text);
    reader
        .object(|reader, key| match key {
            "type" | "message" | "message_type" | "event" if kind.is_none() => {
                kind = reader.string_or_skip()?.map(Cow::into_owned);
                Ok(())
            }
            _ => reader.skip(),
        })
        .ok()?;
    kind.filter(|kind| {
        (1..=48).contains(&kind.len())
            && kind
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-:/".contains(&b))
    })
}

/// A message's view: `member` reads each member of the object `text` into it; `None` when the
/// text is not one JSON object (or nests too deep).
pub(crate) fn read_view<'a, V: Default>(
    text: &'a str,
    mut member: impl FnMut(&mut V, &mut Reader<'a>, &str) -> Result<()>,
) -> Option<V> {
    let mut view = V::default();
    let mut reader = Reader::new(text);
    reader
        .object(|reader, key| member(&mut view, reader, key))
        .ok()?;
    reader.end().ok()?;
    Some(view)
}

impl<'a> Reader<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Reader {
            text,
            pos: 0,
            depth: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// The first byte of the next value, after white space.
    pub(crate) fn peek_value(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.peek()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek_value() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    fn require(&mut self, byte: u8) -> Result<()> {
        self.eat(byte).then_some(()).ok_or(Malformed)
    }

    /// Only white space is left.
    pub(crate) fn end(&mut self) -> Result<()> {
        (self.peek_value().is_none()).then_some(()).ok_or(Malformed)
    }

    fn nest<T>(&mut self, read: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_DEPTH {
            return Err(Malformed);
        }
        self.depth += 1;
        let value = read(self);
        self.depth -= 1;
        value
    }

    /// Reads an object, calling `member` with each key; `member` must read the value.
    pub(crate) fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, &str) -> Result<()>,
    ) -> Result<()> {
        self.members(&mut member)
    }

    /// [`Reader::object`]'s loop, compiled once: every protocol's views call it with their own
    /// closures, and inlined generic loops were a copy per object of every message type.
    #[inline(never)]
    fn members(&mut self, member: &mut dyn FnMut(&mut Self, &str) -> Result<()>) -> Result<()> {
        self.require(b'{')?;
        self.nest(|reader| {
            if reader.eat(b'}') {
                return Ok(());
            }
            loop {
                if reader.peek_value() != Some(b'"') {
                    return Err(Malformed);
                }
                let key = reader.string()?;
                reader.require(b':')?;
                member(reader, &key)?;
                if reader.eat(b'}') {
                    return Ok(());
                }
                reader.require(b',')?;
            }
        })
    }

    /// Reads an array, calling `element` for each element; `element` must read it.
    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Result<()>) -> Result<()> {
        self.elements(&mut element)
    }

    /// [`Reader::array`]'s loop, compiled once (as [`Reader::members`]).
    #[inline(never)]
    fn elements(&mut self, element: &mut dyn FnMut(&mut Self) -> Result<()>) -> Result<()> {
        self.require(b'[')?;
        self.nest(|reader| {
            if reader.eat(b']') {
                return Ok(());
            }
            loop {
                element(reader)?;
                if reader.eat(b']') {
                    return Ok(());
                }
                reader.require(b',')?;
            }
        })
    }

    /// [`Reader::object`] if the value is an object, else skips it.
    pub(crate) fn object_or_skip(
        &mut self,
        member: impl FnMut(&mut Self, &str) -> Result<()>,
    ) -> Result<()> {
        match self.peek_value() {
            Some(b'{') => self.object(member),
            _ => self.skip(),
        }
    }

    /// [`Reader::array`] if the value is an array, else skips it.
    pub(crate) fn array_or_skip(
        &mut self,
        element: impl FnMut(&mut Self) -> Result<()>,
    ) -> Result<()> {
        match self.peek_value() {
            Some(b'[') => self.array(element),
            _ => self.skip(),
        }
    }

    /// The string if the value is one, else skips it.
    pub(crate) fn string_or_skip(&mut self) -> Result<Option<Cow<'a, str>>> {
        match self.peek_value() {
            Some(b'"') => self.string().map(Some),
            _ => self.skip().map(|()| None),
        }
    }

    /// `true`/`false`, or `None` for any other value (which is skipped).
    pub(crate) fn bool_or_skip(&mut self) -> Result<Option<bool>> {
        match self.peek_value() {
            Some(b't') => self.skip().map(|()| Some(true)),
            Some(b'f') => self.skip().map(|()| Some(false)),
            _ => self.skip().map(|()| None),
        }
    }

    /// A number of seconds as whole milliseconds (rounded to the nearest), or `None` for any other
    /// value, a negative number or an exponent (skipped): no float parsing in the wasm.
    pub(crate) fn seconds_as_ms_or_skip(&mut self) -> Result<Option<u64>> {
        Ok(self.number_or_skip()?.and_then(seconds_as_ms))
    }

    /// [`Reader::string_or_skip`] into `slot`: what a member of a message view reads.
    pub(crate) fn string_into(&mut self, slot: &mut Option<Cow<'a, str>>) -> Result<()> {
        *slot = self.string_or_skip()?;
        Ok(())
    }

    /// [`Reader::bool_or_skip`] into `slot`.
    pub(crate) fn bool_into(&mut self, slot: &mut Option<bool>) -> Result<()> {
        *slot = self.bool_or_skip()?;
        Ok(())
    }

    /// Whether the value is `true`, into `slot`.
    pub(crate) fn flag_into(&mut self, slot: &mut bool) -> Result<()> {
        *slot = self.bool_or_skip()? == Some(true);
        Ok(())
    }

    /// [`Reader::seconds_as_ms_or_skip`] into `slot`.
    pub(crate) fn seconds_as_ms_into(&mut self, slot: &mut Option<u64>) -> Result<()> {
        *slot = self.seconds_as_ms_or_skip()?;
        Ok(())
    }

    /// A whole number into `slot` (`None` for any other value: a sign, a fraction, an overflow).
    pub(crate) fn whole_into<T: core::str::FromStr>(&mut self, slot: &mut Option<T>) -> Result<()> {
        *slot = self.number_or_skip()?.and_then(|n| n.parse().ok());
        Ok(())
    }

    /// The number's text if the value is one, else skips it.
    pub(crate) fn number_or_skip(&mut self) -> Result<Option<&'a str>> {
        match self.peek_value() {
            Some(b'-' | b'0'..=b'9') => self.number().map(Some),
            _ => self.skip().map(|()| None),
        }
    }

    /// Reads any value.
    pub(crate) fn skip(&mut self) -> Result<()> {
        match self.peek_value() {
            Some(b'{') => self.object(|reader, _| reader.skip()),
            Some(b'[') => self.array(Self::skip),
            Some(b'"') => self.string().map(drop),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            _ => self.number().map(drop),
        }
    }

    fn literal(&mut self, word: &str) -> Result<()> {
        let rest = self.text.get(self.pos..).unwrap_or_default();
        if !rest.starts_with(word) {
            return Err(Malformed);
        }
        self.pos += word.len();
        Ok(())
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<&'a str> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(Malformed),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(Malformed);
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(Malformed);
            }
        }
        self.text.get(start..self.pos).ok_or(Malformed)
    }

    /// Reads a string at the current position; borrowed when it has no escapes.
    fn string(&mut self) -> Result<Cow<'a, str>> {
        self.require(b'"')?;
        let text = self.text;
        let mut decoded: Option<String> = None;
        let mut run_start = self.pos;
        loop {
            // `"` and `\` are ASCII, so every run between them is whole characters.
            match self.peek().ok_or(Malformed)? {
                b'"' => {
                    let run = text.get(run_start..self.pos).ok_or(Malformed)?;
                    self.pos += 1;
                    return Ok(match decoded {
                        Some(mut decoded) => {
                            decoded.push_str(run);
                            Cow::Owned(decoded)
                        }
                        None => Cow::Borrowed(run),
                    });
                }
                b'\\' => {
                    let run = text.get(run_start..self.pos).ok_or(Malformed)?;
                    let decoded = decoded.get_or_insert_with(String::new);
                    decoded.push_str(run);
                    self.pos += 1;
                    let escaped = self.peek().ok_or(Malformed)?;
                    self.pos += 1;
                    decoded.push(match escaped {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(Malformed),
                    });
                    run_start = self.pos;
                }
                0..=0x1f => return Err(Malformed),
                _ => self.pos += 1,
            }
        }
    }

    /// The character of a `\u` escape whose `\u` was read, joining a surrogate pair.
    /// A lone surrogate becomes U+FFFD, as it has no character.
    fn unicode_escape(&mut self) -> Result<char> {
        let first = self.hex4()?;
        if (0xD800..0xDC00).contains(&first) {
            let before_low = self.pos;
            if self.text.as_bytes().get(self.pos..self.pos + 2) == Some(b"\\u") {
                self.pos += 2;
                match self.hex4() {
                    Ok(second @ 0xDC00..=0xDFFF) => {
                        let scalar = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                        return Ok(char::from_u32(scalar).unwrap_or(char::REPLACEMENT_CHARACTER));
                    }
                    // Not a low surrogate: that escape is read on its own.
                    _ => self.pos = before_low,
                }
            }
        }
        Ok(char::from_u32(first).unwrap_or(char::REPLACEMENT_CHARACTER))
    }

    fn hex4(&mut self) -> Result<u32> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .filter(|digits| digits.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or(Malformed)?;
        self.pos += 4;
        u32::from_str_radix(digits, 16).map_err(|_| Malformed)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_message_says_its_kind_as_a_name_only() {
        use super::message_kind;
        assert_eq!(
            message_kind(r#"{"type":"Results","x":1}"#).as_deref(),
            Some("Results")
        );
        assert_eq!(
            message_kind(r#"{"message":"AddTranscript"}"#).as_deref(),
            Some("AddTranscript")
        );
        assert_eq!(
            message_kind(r#"{"data":{},"message_type":"partial_transcript"}"#).as_deref(),
            Some("partial_transcript")
        );
        assert_eq!(
            message_kind(r#"{"type":"hello world, my card is 1234"}"#),
            None,
            "never content"
        );
        assert_eq!(message_kind(r#"{"type":7}"#), None);
        assert_eq!(message_kind("not json"), None);
        assert_eq!(message_kind(r#"{"tokens":[]}"#), None);
    }

    #[test]
    fn seconds_become_milliseconds() {
        assert_eq!(super::seconds_as_ms("1.02"), Some(1_020));
        assert_eq!(super::seconds_as_ms("0.0199999"), Some(20));
        assert_eq!(super::seconds_as_ms("3"), Some(3_000));
        assert_eq!(super::seconds_as_ms("2.5004"), Some(2_500));
        assert_eq!(super::seconds_as_ms("-1.0"), None);
        assert_eq!(super::seconds_as_ms("1e3"), None);
        assert_eq!(super::seconds_as_ms("99999999999999999999"), None);
    }
    use super::*;

    fn string(json: &str) -> Result<String> {
        Reader::new(json).string().map(Cow::into_owned)
    }

    fn valid(json: &str) -> bool {
        let mut reader = Reader::new(json);
        reader.skip().and_then(|()| reader.end()).is_ok()
    }

    #[test]
    fn strings_decode_every_escape() {
        assert_eq!(
            string(r#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude42""#),
            Ok("a\"b\\c/d\u{8}\u{c}\n\r\té🙂".to_owned())
        );
        assert_eq!(string(r#""\ud83d""#), Ok("\u{FFFD}".to_owned()));
        assert_eq!(string(r#""\ude42x""#), Ok("\u{FFFD}x".to_owned()));
        assert_eq!(string(r#""\ud83d\u0041""#), Ok("\u{FFFD}A".to_owned()));
        assert_eq!(string(r#""\u+123""#), Err(Malformed));
        assert_eq!(string("\"tab\there\""), Err(Malformed));
        assert_eq!(string(r#""\x""#), Err(Malformed));
        assert_eq!(string(r#""open"#), Err(Malformed));
        assert_eq!(string(r#""\u12"#), Err(Malformed));
    }

    #[test]
    fn validates_values() {
        for ok in [
            "0",
            "-0",
            "1.5e+3",
            "-12E-1",
            "true",
            "null",
            "[]",
            "{}",
            " [1, {\"a\": [null]}] ",
        ] {
            assert!(valid(ok), "{ok}");
        }
        for bad in [
            "", "01", "1.", ".5", "-", "1e", "tru", "[1,]", "{\"a\"}", "{a:1}", "[1 2]", "{} x",
        ] {
            assert!(!valid(bad), "{bad}");
        }
    }

    #[test]
    fn depth_is_limited() {
        let nested = |depth: usize| "[".repeat(depth) + &"]".repeat(depth);
        assert!(valid(&nested(MAX_DEPTH as usize)));
        assert!(!valid(&nested(MAX_DEPTH as usize + 1)));
        assert!(!valid(&nested(100_000)));
    }
}
