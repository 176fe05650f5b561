//! Timestamps in the renderings logs, alerts and people use
//! (`2026-07-08T23:05:28Z`, `2026-07-08 23:05:28`, `2026/07/08 23:05:28.120`,
//! `07-08 23:05:28`, `23:05:28`, `23:05`, `2026年7月8日 23时05分`, with an
//! optional `Z`, `UTC` or `+08:00` offset), parsed into their fields so two
//! renderings of one instant compare equal.
//!
//! A quotation may render a ref's own timestamp differently from the ref;
//! comparing fields rather than digits is what lets it.

use chrono::{Duration, NaiveDate, NaiveDateTime, NaiveTime};

/// The fields of one timestamp a text shows. Absent fields were not written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub date: Option<(i32, u32, u32)>,
    /// Month and day without a year (`07-08 23:05:28`).
    pub month_day: Option<(u32, u32)>,
    pub time: Option<Clock>,
    /// Offset east of UTC in minutes; `Z` and `UTC` are 0.
    pub offset: Option<i32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    pub h: u32,
    pub m: u32,
    pub s: Option<u32>,
    /// Nanoseconds, when a fraction was written.
    pub frac: Option<u32>,
}

struct Cursor<'a> {
    b: &'a [u8],
    s: &'a str,
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn digits(&mut self, min: usize, max: usize) -> Option<(u32, usize)> {
        let start = self.i;
        let mut v: u32 = 0;
        while self.i - start < max {
            match self.peek() {
                Some(d @ b'0'..=b'9') => {
                    v = v * 10 + u32::from(d - b'0');
                    self.i += 1;
                }
                _ => break,
            }
        }
        let n = self.i - start;
        if n < min || self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i = start;
            return None;
        }
        Some((v, n))
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, t: &str) -> bool {
        if self.s.get(self.i..).is_some_and(|r| r.starts_with(t)) {
            self.i += t.len();
            true
        } else {
            false
        }
    }
}

/// Parses a timestamp starting at byte `start` of `s` (an ASCII digit with
/// no letter or digit before it). Returns it and the byte index after it.
pub fn parse_at(s: &str, start: usize) -> Option<(Stamp, usize)> {
    let mut c = Cursor {
        b: s.as_bytes(),
        s,
        i: start,
    };
    let mut stamp = Stamp {
        date: None,
        month_day: None,
        time: None,
        offset: None,
    };
    if let Some((y, 4)) = c.digits(4, 4) {
        if c.eat_str("年") {
            let (m, _) = c.digits(1, 2)?;
            if !c.eat_str("月") {
                return None;
            }
            let (d, _) = c.digits(1, 2)?;
            c.eat_str("日");
            valid_date(y as i32, m, d)?;
            stamp.date = Some((y as i32, m, d));
            let before = c.i;
            while c.eat(b' ') {}
            match clock(&mut c) {
                Some(t) => stamp.time = Some(t),
                None => c.i = before,
            }
        } else {
            let sep = c.peek().filter(|b| matches!(b, b'-' | b'/' | b'.'))?;
            c.i += 1;
            let (m, _) = c.digits(1, 2)?;
            if !c.eat(sep) {
                return None;
            }
            let (d, _) = c.digits(1, 2)?;
            valid_date(y as i32, m, d)?;
            stamp.date = Some((y as i32, m, d));
            date_then_time(&mut c, &mut stamp);
        }
    } else {
        c.i = start;
        if let Some(md) = han_month_day(&mut c) {
            // `7月8日`, `7月8日 23:05:28`: a month and day without a year
            stamp.month_day = Some(md);
            let before = c.i;
            while c.eat(b' ') {}
            match clock(&mut c) {
                Some(t) => stamp.time = Some(t),
                None => c.i = before,
            }
            if stamp.time.is_some() {
                stamp.offset = offset(&mut c);
            }
            return Some((stamp, c.i));
        }
        c.i = start;
        // month-day before a time (`07-08 23:05:28`), or a bare time
        let md = (|| {
            let (m, _) = c.digits(1, 2)?;
            let sep = c.peek().filter(|b| matches!(b, b'-' | b'/'))?;
            c.i += 1;
            let (d, _) = c.digits(1, 2)?;
            if c.eat(sep) {
                return None;
            }
            ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some((m, d))
        })();
        match md {
            Some(md) => {
                if !(c.eat(b' ') || c.eat(b'T')) {
                    return None;
                }
                while c.eat(b' ') {}
                let t = clock(&mut c)?;
                stamp.month_day = Some(md);
                stamp.time = Some(t);
            }
            None => {
                c.i = start;
                stamp.time = Some(clock(&mut c)?);
            }
        }
    }
    if stamp.time.is_some() {
        stamp.offset = offset(&mut c);
    }
    // A stamp ends at a boundary: not inside a longer word or number.
    if c.peek().is_some_and(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    Some((stamp, c.i))
}

/// `7月8日` / `7月8号`: a month and day written in Chinese, no year.
fn han_month_day(c: &mut Cursor<'_>) -> Option<(u32, u32)> {
    let (m, _) = c.digits(1, 2)?;
    if !c.eat_str("月") {
        return None;
    }
    let (d, _) = c.digits(1, 2)?;
    if !(c.eat_str("日") || c.eat_str("号")) {
        return None;
    }
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some((m, d))
}

/// The month an English month name or its abbreviation stands for (any
/// case, `sept` included).
fn month_number(w: &str) -> Option<u32> {
    const NAMES: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let n = NAMES
        .iter()
        .position(|full| {
            full.eq_ignore_ascii_case(w)
                || (w.len() == 3 && full.get(..3).is_some_and(|p| p.eq_ignore_ascii_case(w)))
        })
        .or_else(|| w.eq_ignore_ascii_case("sept").then_some(8))?;
    u32::try_from(n + 1).ok()
}

/// Parses a date written with an English month name at byte `start` of
/// `s` (a letter with no letter or digit before it): `Jul 8`, `July 8,
/// 2026`, `Jul 8 23:05:28`, `July 8th, 23:05 UTC`. Returns it and the byte
/// index after it; None when the word is no month name followed by a day.
pub fn parse_month_name_at(s: &str, start: usize) -> Option<(Stamp, usize)> {
    let rest = s.get(start..)?;
    let word_len = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    if !(3..=9).contains(&word_len) {
        return None;
    }
    let word = rest.get(..word_len)?;
    // `may` and `march` are words too: only capitalised are they months
    if ["may", "march", "mar"]
        .iter()
        .any(|w| w.eq_ignore_ascii_case(word))
        && !word.starts_with('M')
    {
        return None;
    }
    let month = month_number(word)?;
    let mut c = Cursor {
        b: s.as_bytes(),
        s,
        i: start + word_len,
    };
    c.eat(b'.');
    if !c.eat(b' ') {
        return None;
    }
    while c.eat(b' ') {}
    let (d, _) = c.digits(1, 2)?;
    for suffix in ["st", "nd", "rd", "th"] {
        if c.eat_str(suffix) {
            break;
        }
    }
    if !(1..=31).contains(&d) || c.peek().is_some_and(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let mut stamp = Stamp {
        date: None,
        month_day: Some((month, d)),
        time: None,
        offset: None,
    };
    // `, 2026` or ` 2026`: the year
    let before = c.i;
    c.eat(b',');
    while c.eat(b' ') {}
    match c.digits(4, 4) {
        Some((y, _)) if valid_date(y as i32, month, d).is_some() => {
            stamp.date = Some((y as i32, month, d));
            stamp.month_day = None;
        }
        _ => c.i = before,
    }
    // a time right after it (`Jul 8 23:05:28`, `July 8, 23:05`)
    let before = c.i;
    c.eat(b',');
    while c.eat(b' ') {}
    match clock(&mut c) {
        Some(t) => {
            stamp.time = Some(t);
            stamp.offset = offset(&mut c);
        }
        None => c.i = before,
    }
    if c.peek().is_some_and(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    Some((stamp, c.i))
}

fn date_then_time(c: &mut Cursor<'_>, stamp: &mut Stamp) {
    let before = c.i;
    let sep = c.eat(b'T') || c.eat(b't') || c.eat(b'_') || {
        let mut any = false;
        while c.eat(b' ') {
            any = true;
        }
        any
    };
    if sep && let Some(t) = clock(c) {
        stamp.time = Some(t);
        return;
    }
    c.i = before;
}

fn valid_date(y: i32, m: u32, d: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(y, m, d)
}

/// `HH:MM[:SS[.frac]]` or `HH时MM分[SS秒]` / `HH点MM分`.
fn clock(c: &mut Cursor<'_>) -> Option<Clock> {
    let start = c.i;
    let (h, _) = c.digits(1, 2)?;
    if c.eat(b':') {
        let (m, _) = c.digits(2, 2)?;
        let mut t = Clock {
            h,
            m,
            s: None,
            frac: None,
        };
        if c.eat(b':') {
            let (s, _) = c.digits(2, 2)?;
            t.s = Some(s);
            let before = c.i;
            let comma = c.peek() == Some(b',');
            if (c.eat(b'.') || c.eat(b',')) && c.peek().is_some_and(|b| b.is_ascii_digit()) {
                t.frac = Some(fraction(c));
                // `23:06:01,1ms` or `23:06:01,2026-07-08` (a full-width
                // comma, NFKC'd): a list, not a fraction; log4j's
                // `23:06:01,123` is followed by a space
                if comma
                    && c.peek().is_some_and(|b| {
                        b.is_ascii_alphabetic() || matches!(b, b'-' | b'/' | b':' | b'.')
                    })
                {
                    t.frac = None;
                    c.i = before;
                }
            } else {
                c.i = before;
            }
        }
        if let Some(pm) = meridiem(c, h) {
            t.h = h % 12 + if pm { 12 } else { 0 };
        }
        return (t.h < 24 && m < 60 && t.s.is_none_or(|s| s <= 60)).then_some(t);
    }
    if c.eat_str("时") || c.eat_str("点") {
        let (m, _) = c.digits(1, 2)?;
        if !c.eat_str("分") {
            c.i = start;
            return None;
        }
        let mut t = Clock {
            h,
            m,
            s: None,
            frac: None,
        };
        let before = c.i;
        match c.digits(1, 2) {
            Some((s, _)) if c.eat_str("秒") => t.s = Some(s),
            _ => c.i = before,
        }
        return (h < 24 && m < 60).then_some(t);
    }
    c.i = start;
    None
}

/// `AM` / `PM` (`a.m.`, `pm`) after a 12-hour clock hour: whether it is
/// PM. "10:40 PM UTC" is 22:40 UTC; without this the hour read as 10
/// rejected the honest rendering.
fn meridiem(c: &mut Cursor<'_>, h: u32) -> Option<bool> {
    if !(1..=12).contains(&h) {
        return None;
    }
    let before = c.i;
    c.eat(b' ');
    for (form, pm) in [
        ("AM", false),
        ("am", false),
        ("a.m.", false),
        ("PM", true),
        ("pm", true),
        ("p.m.", true),
    ] {
        let Some(rest) = c.s.get(c.i..) else { break };
        if rest.starts_with(form)
            && !rest[form.len()..]
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric())
        {
            c.i += form.len();
            return Some(pm);
        }
    }
    c.i = before;
    None
}

fn fraction(c: &mut Cursor<'_>) -> u32 {
    let mut nanos: u64 = 0;
    let mut n = 0;
    while let Some(d @ b'0'..=b'9') = c.peek() {
        if n < 9 {
            nanos = nanos * 10 + u64::from(d - b'0');
            n += 1;
        }
        c.i += 1;
    }
    while n < 9 {
        nanos *= 10;
        n += 1;
    }
    u32::try_from(nanos).unwrap_or(0)
}

/// A zone abbreviation with one offset the world over ("22:40 PST" is
/// 06:40 UTC the next day, not 22:40 UTC). CST, IST and BST name more
/// than one zone and stay unread.
fn named_zone(c: &mut Cursor<'_>) -> Option<i32> {
    const ZONES: &[(&str, i32)] = &[
        ("PST", -8 * 60),
        ("PDT", -7 * 60),
        ("MST", -7 * 60),
        ("MDT", -6 * 60),
        ("EST", -5 * 60),
        ("EDT", -4 * 60),
        ("CET", 60),
        ("CEST", 2 * 60),
        ("JST", 9 * 60),
        ("KST", 9 * 60),
        ("HKT", 8 * 60),
        ("SGT", 8 * 60),
        ("AEST", 10 * 60),
    ];
    let rest = c.s.get(c.i..)?;
    let (name, v) = ZONES.iter().find(|(z, _)| {
        rest.starts_with(z)
            && !rest[z.len()..]
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric())
    })?;
    c.i += name.len();
    Some(*v)
}

fn offset(c: &mut Cursor<'_>) -> Option<i32> {
    if c.eat(b'Z') || c.eat(b'z') {
        return Some(0);
    }
    let before = c.i;
    c.eat(b' ');
    // `(UTC+8)`: the zone in parentheses after the time
    if c.eat(b'(') {
        let inner = offset(c);
        if inner.is_some() && c.eat(b')') {
            return inner;
        }
        c.i = before;
        return None;
    }
    if c.eat_str("UTC") || c.eat_str("GMT") || c.eat_str("utc") {
        if let Some(sign) = c.peek().filter(|b| matches!(b, b'+' | b'-')) {
            c.i += 1;
            if let Some((h, _)) = c.digits(1, 2) {
                let m = if c.eat(b':') {
                    c.digits(2, 2).map_or(0, |v| v.0)
                } else {
                    0
                };
                let v = (h * 60 + m) as i32;
                return Some(if sign == b'-' { -v } else { v });
            }
        }
        return Some(0);
    }
    if let Some(v) = named_zone(c) {
        return Some(v);
    }
    c.i = before;
    c.eat(b' ');
    let Some(sign) = c.peek().filter(|b| matches!(b, b'+' | b'-')) else {
        c.i = before;
        return None;
    };
    c.i += 1;
    let parsed = (|| {
        let (h, n) = c.digits(2, 4)?;
        if n == 4 {
            return Some(((h / 100) * 60 + h % 100) as i32);
        }
        if n != 2 {
            return None;
        }
        let m = if c.eat(b':') { c.digits(2, 2)?.0 } else { 0 };
        Some((h * 60 + m) as i32)
    })();
    match parsed {
        Some(v) if v <= 14 * 60 => Some(if sign == b'-' { -v } else { v }),
        _ => {
            c.i = before;
            None
        }
    }
}

impl Stamp {
    /// This stamp moved to `offset` (when both offsets are known).
    fn shifted(self, to: Option<i32>) -> Stamp {
        let (Some(from), Some(to)) = (self.offset, to) else {
            return self;
        };
        let Some(t) = self.time else { return self };
        if from == to {
            return self;
        }
        let delta = Duration::minutes(i64::from(to - from));
        let Some(clock) = NaiveTime::from_hms_nano_opt(t.h, t.m, t.s.unwrap_or(0), 0) else {
            return self;
        };
        let base = match self.date {
            Some((y, m, d)) => NaiveDate::from_ymd_opt(y, m, d),
            None => NaiveDate::from_ymd_opt(2000, 1, 1),
        };
        let Some(date) = base else { return self };
        let moved = NaiveDateTime::new(date, clock) + delta;
        use chrono::{Datelike, Timelike};
        Stamp {
            date: self
                .date
                .map(|_| (moved.year(), moved.month(), moved.day())),
            month_day: self.month_day.map(|_| (moved.month(), moved.day())),
            time: Some(Clock {
                h: moved.hour(),
                m: moved.minute(),
                s: t.s,
                frac: t.frac,
            }),
            offset: Some(to),
        }
    }

    /// Whether this stamp (from a quotation) renders `of` (a ref's own):
    /// every field it writes agrees with `of`, after moving it to `of`'s
    /// offset when both have one. A stamp without an offset is read in the
    /// ref's zone.
    pub fn renders(self, of: Stamp) -> bool {
        let me = self.shifted(of.offset);
        if let Some(d) = me.date
            && of.date != Some(d)
        {
            return false;
        }
        if let Some((m, d)) = me.month_day
            && of.date.map(|(_, om, od)| (om, od)) != Some((m, d))
            && of.month_day != Some((m, d))
        {
            return false;
        }
        match (me.time, of.time) {
            (Some(t), Some(o)) => {
                t.h == o.h
                    && t.m == o.m
                    && match (t.s, o.s) {
                        (Some(a), Some(b)) => a == b,
                        (Some(a), None) => a == 0,
                        (None, _) => true,
                    }
                    && match (t.frac, o.frac) {
                        (Some(a), Some(b)) => a == b,
                        (Some(a), None) => a == 0,
                        (None, _) => true,
                    }
            }
            (Some(_), None) => false,
            (None, _) => me.date.is_some() || me.month_day.is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Option<Stamp> {
        parse_at(s, 0)
            .filter(|(_, end)| *end == s.len())
            .map(|(st, _)| st)
    }

    #[test]
    fn parses_common_renderings() {
        let iso = p("2026-07-08T23:05:28Z").unwrap();
        for same in [
            "2026-07-08 23:05:28",
            "2026-07-08T23:05:28",
            "2026/07/08 23:05:28",
            "2026.07.08 23:05:28",
            "2026-07-08T23:05:28.000Z",
            "2026-07-08 23:05:28 UTC",
            "2026-07-09T07:05:28+08:00",
            "2026-07-09 07:05:28 +0800",
            "2026-07-08T19:05:28-04:00",
            "07-08 23:05:28",
            "23:05:28",
            "23:05",
            "2026年7月8日 23:05:28",
            "2026年07月08日 23时05分28秒",
            "2026-07-08",
        ] {
            let st = p(same).unwrap_or_else(|| panic!("{same} did not parse"));
            assert!(st.renders(iso), "{same}");
        }
        for other in [
            "2026-07-08 23:05:29",
            "2026-07-09 23:05:28",
            "2026-07-08T23:05:28+08:00",
            "07-09 23:05:28",
            "23:06",
            "22:05:28",
        ] {
            let st = p(other).unwrap_or_else(|| panic!("{other} did not parse"));
            assert!(!st.renders(iso), "{other}");
        }
    }

    #[test]
    fn parses_month_names_year_less_chinese_dates_and_zones_in_parentheses() {
        let iso = p("2026-07-08T23:05:28Z").unwrap();
        let named = |s: &str| {
            parse_month_name_at(s, 0)
                .filter(|(_, end)| *end == s.len())
                .map(|(st, _)| st)
        };
        for same in [
            "Jul 8 23:05:28",
            "July 8, 23:05:28",
            "July 8th, 2026 23:05:28 UTC",
            "jul 8",
            "Jul. 8 23:05",
        ] {
            let st = named(same).unwrap_or_else(|| panic!("{same} did not parse"));
            assert!(st.renders(iso), "{same}");
        }
        for other in ["Jul 9 23:05:28", "June 8", "July 8, 2025", "Aug 8 23:05"] {
            let st = named(other).unwrap_or_else(|| panic!("{other} did not parse"));
            assert!(!st.renders(iso), "{other}");
        }
        for not in ["may 8", "Julyx 8", "July", "July 40", "Jul 8x"] {
            assert!(named(not).is_none(), "{not}");
        }
        for same in [
            "7月8日 23:05:28",
            "7月8日",
            "07月08号 23:05",
            "2026年7月9日 07:05:28 (UTC+8)",
        ] {
            let st = p(same).unwrap_or_else(|| panic!("{same} did not parse"));
            assert!(st.renders(iso), "{same}");
        }
        for other in [
            "7月9日 23:05:28",
            "7月8日 22:05",
            "2026年7月9日 07:05:28 (UTC+9)",
        ] {
            let st = p(other).unwrap_or_else(|| panic!("{other} did not parse"));
            assert!(!st.renders(iso), "{other}");
        }
    }

    #[test]
    fn a_comma_before_a_word_is_no_fraction() {
        // a Chinese list after a time (`23:06:01，1ms`, NFKC'd) keeps the
        // time whole and the number out of it
        assert_eq!(parse_at("23:06:01,1ms", 0).map(|(_, end)| end), Some(8));
        assert_eq!(
            parse_at("23:06:01,2026-07-08", 0).map(|(_, end)| end),
            Some(8)
        );
        let log4j = parse_at("23:06:01,123 ERROR", 0).unwrap();
        assert_eq!(log4j.1, 12);
        assert!(log4j.0.time.is_some_and(|t| t.frac.is_some()));
    }

    #[test]
    fn rejects_what_is_not_a_timestamp() {
        for s in [
            "2026",
            "30000ms",
            "1.8s",
            "92",
            "2026-13-01",
            "25:00",
            "12-34",
        ] {
            assert!(p(s).is_none(), "{s}");
        }
    }
}
