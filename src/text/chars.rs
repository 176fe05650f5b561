//! Character classes shared by the sanitiser and [`super::clean`]: which
//! characters can move or spoof a terminal, and how an escape sequence is
//! skipped. Kept in one place so the two rules cannot drift apart.

use unicode_width::UnicodeWidthChar;

/// ESC and the 8-bit introducers that start a sequence a terminal acts on:
/// DCS, SOS, CSI, OSC, PM, APC.
pub fn is_escape_introducer(c: char) -> bool {
    matches!(
        c,
        '\u{1b}' | '\u{90}' | '\u{98}' | '\u{9b}' | '\u{9d}' | '\u{9e}' | '\u{9f}'
    )
}

/// Bidi controls (embeddings, overrides, isolates and the LRM/RLM/ALM
/// marks) reorder what the user reads (Trojan Source).
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// Characters that render as nothing, or change how their neighbours
/// render, without being visible themselves: every format character (Cf,
/// bidi controls included) and every default-ignorable code point
/// (zero-width space/joiners, word joiner, BOM, soft hyphen, variation
/// selectors, Hangul fillers, tag characters). They can hide text, join
/// two words into what looks like one, or smuggle data past a reader.
pub fn is_invisible(c: char) -> bool {
    // nothing below the soft hyphen is invisible: the common case, first
    if c < '\u{00AD}' {
        return false;
    }
    is_bidi_control(c)
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{0600}'..='\u{0605}'
                | '\u{06DD}'
                | '\u{070F}'
                | '\u{0890}'..='\u{0891}'
                | '\u{08E2}'
                | '\u{115F}'..='\u{1160}'
                | '\u{17B4}'..='\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFFB}'
                | '\u{110BD}'
                | '\u{110CD}'
                | '\u{13430}'..='\u{1343F}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// Line and paragraph separators: some renderers break the line on them.
pub fn is_line_separator(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}')
}

/// A visible character of no width of its own: a combining mark that
/// draws on the character before it.
pub fn is_mark(c: char) -> bool {
    !c.is_ascii() && !c.is_control() && !is_invisible(c) && c.width() == Some(0)
}

/// Marks kept on one base character. Real scripts stack two or three
/// (Vietnamese, Thai, pointed Hebrew); "Zalgo" text stacks dozens so that
/// they draw over the lines above and below.
pub const MAX_MARKS: usize = 3;

/// Display width of one character as the truncation helpers count it:
/// controls count 0 (the sanitiser removes them anyway).
pub fn width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Consumes the rest of an escape sequence whose introducer `intro` was
/// just read, the way a terminal would: CSI parameters up to the final
/// byte, a control string (OSC, DCS, SOS, PM, APC) up to BEL or ST, or
/// ESC's intermediates and final byte. An ESC inside a sequence aborts it
/// and starts the next one (a loop, not recursion: input is untrusted).
/// A character that cannot belong to the sequence is left unread.
pub fn skip_escape(intro: char, chars: &mut Chars<'_>) {
    let mut intro = intro;
    loop {
        let aborted_by_esc = match intro {
            '\u{9b}' => skip_csi(chars),
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => skip_string(chars),
            _ => match chars.peek() {
                Some('[') => {
                    chars.next();
                    skip_csi(chars)
                }
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    chars.next();
                    skip_string(chars)
                }
                // nF: intermediates (SP to '/') then one final byte.
                Some(' '..='/') => {
                    while chars.next_if(|c| (' '..='/').contains(c)).is_some() {}
                    chars.next_if(|c| ('0'..='~').contains(c));
                    false
                }
                // Fp, Fe, Fs: ESC and one byte (ESC 7, ESC c, ...).
                Some('0'..='~') => {
                    chars.next();
                    false
                }
                _ => false,
            },
        };
        if !aborted_by_esc {
            return;
        }
        intro = '\u{1b}';
    }
}

/// The peekable character stream the escape skipper reads.
pub type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// CSI: parameter and intermediate bytes, then one final byte in `@..~`.
/// True when an ESC cut it short.
fn skip_csi(chars: &mut Chars<'_>) -> bool {
    while let Some(&c) = chars.peek() {
        match c {
            ' '..='?' => {
                chars.next();
            }
            '@'..='~' => {
                chars.next();
                return false;
            }
            '\u{1b}' => {
                chars.next();
                return true;
            }
            _ => return false,
        }
    }
    false
}

/// A control string ends at BEL, ST (U+9C) or ESC `\`; true when an ESC
/// that is not ST cut it short.
fn skip_string(chars: &mut Chars<'_>) -> bool {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => return false,
            '\u{1b}' => return chars.next_if_eq(&'\\').is_none(),
            _ => {}
        }
    }
    false
}
