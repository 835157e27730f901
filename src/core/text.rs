//! Text built without `core::fmt`: the shipped wasm has no formatting machinery (performance.md,
//! "Levers measured"), so numbers in messages and ids are written here and joined with `concat`.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_every_digit() {
        for n in [0, 7, 10, 99, 100, 65_535, 1_000_000_007, u64::MAX] {
            assert_eq!(decimal(n), n.to_string());
        }
    }
}
