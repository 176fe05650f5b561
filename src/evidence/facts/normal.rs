//! The one Unicode normalisation every fact comparison starts from.

use crate::text::is_invisible;
use unicode_normalization::UnicodeNormalization;

/// `text` in NFKC with decimal digits of every script as ASCII, invisible
/// characters removed and the private-use area dropped. ASCII text is
/// returned as it is (borrowed).
pub fn normalize(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() && !text.bytes().any(|b| b < 0x20 && b != b'\t' && b != b'\n') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.nfkc() {
        if is_invisible(c) || matches!(c as u32, 0xE000..=0xF8FF) {
            continue;
        }
        if c == '\n' {
            out.push('\n');
            continue;
        }
        if c.is_control() {
            out.push(' ');
            continue;
        }
        // every dash is a hyphen: `payment‑service` (U+2011) is the name
        if matches!(
            c,
            '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}'
        ) {
            out.push('-');
            continue;
        }
        match decimal_digit(c) {
            Some(d) => out.push(d),
            None => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The ASCII digit of a decimal digit of another script (`٩`, `९`, `๙`).
fn decimal_digit(c: char) -> Option<char> {
    if c.is_ascii_digit() {
        return Some(c);
    }
    let u = c as u32;
    if u < 0x660 || !c.is_numeric() {
        return None;
    }
    // Zeros of the decimal digit blocks (Unicode category Nd) not folded by NFKC.
    const ZEROS: &[u32] = &[
        0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6,
        0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0,
        0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0,
        0xAA50, 0xABF0, 0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450,
        0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60,
        0x16AC0, 0x16B50, 0x1E140, 0x1E2F0, 0x1E950,
    ];
    ZEROS
        .iter()
        .find(|z| (**z..**z + 10).contains(&u))
        .and_then(|z| char::from_digit(u - z, 10))
}
