//! Han script: which characters are Han (and kana, written in the same
//! runs), and the value of a run of Chinese numerals. One definition each,
//! for every module that reads Chinese text.

/// CJK ideographs (unified, extension A, compatibility, the supplementary
/// planes) and kana.
pub fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0xF900..=0xFAFF | 0x20000..=0x2FFFF
        | 0x3040..=0x309F | 0x30A0..=0x30FF)
}

/// The value of a run of Chinese numerals (`九十二` -> 92), if it is one.
pub fn han_number(run: &str) -> Option<u64> {
    let digit = |c: char| -> Option<u64> {
        Some(match c {
            '〇' | '零' => 0,
            '一' => 1,
            '二' | '两' => 2,
            '三' => 3,
            '四' => 4,
            '五' => 5,
            '六' => 6,
            '七' => 7,
            '八' => 8,
            '九' => 9,
            _ => return None,
        })
    };
    let mut total: u64 = 0;
    let mut section: u64 = 0;
    let mut current: Option<u64> = None;
    let mut plain: u64 = 0;
    let mut only_digits = true;
    for c in run.chars() {
        if let Some(d) = digit(c) {
            current = Some(d);
            plain = plain.checked_mul(10)?.checked_add(d)?;
            continue;
        }
        only_digits = false;
        let unit = match c {
            '十' => 10,
            '百' => 100,
            '千' => 1000,
            '万' => 10_000,
            '亿' => 100_000_000,
            _ => return None,
        };
        if unit >= 10_000 {
            section = section.checked_add(current.take().unwrap_or(0))?;
            total = total.checked_add(section.checked_mul(unit)?)?;
            section = 0;
        } else {
            section = section.checked_add(current.take().unwrap_or(1).checked_mul(unit)?)?;
        }
    }
    if only_digits {
        return Some(plain);
    }
    total
        .checked_add(section)?
        .checked_add(current.unwrap_or(0))
}

/// Whether `c` is a Chinese numeral character.
pub fn is_han_numeral(c: char) -> bool {
    matches!(
        c,
        '〇' | '零'
            | '一'
            | '二'
            | '两'
            | '三'
            | '四'
            | '五'
            | '六'
            | '七'
            | '八'
            | '九'
            | '十'
            | '百'
            | '千'
            | '万'
            | '亿'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn han_numbers() {
        assert_eq!(han_number("九十二"), Some(92));
        assert_eq!(han_number("十"), Some(10));
        assert_eq!(han_number("三万"), Some(30_000));
        assert_eq!(han_number("一百零五"), Some(105));
        assert_eq!(han_number("二〇二六"), Some(2026));
        assert_eq!(han_number("两千"), Some(2000));
        assert_eq!(han_number("九x"), None);
    }
}
