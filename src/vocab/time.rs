//! Time windows a question names, in English and Chinese, resolved against
//! a reference "now" (the pack's `now`, or the live clock).
//!
//! Relative windows ("in the last 2 days", "past hour", "过去3小时",
//! "最近30分钟") stay relative, [`Window::Last`], so the tool anchors
//! them to its own now. Calendar and clock windows ("today", "yesterday",
//! "since 10:00", "between 10:00 and 11:30", "昨天", "10点以来",
//! "from 2026-07-08 22:00") need a date; they resolve against `now` into
//! [`Window::Range`], and without a `now` they are not guessed. Clock
//! times are UTC, the zone every source's timestamps are normalised to.

use crate::text::literal_regex;
use chrono::{DateTime, Duration, NaiveDate, NaiveTime, TimeZone, Utc};
use regex::Regex;
use std::sync::LazyLock;

/// A time window for log queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// The last `minutes` before the source's now.
    Last { minutes: u32 },
    /// From `since` up to `until` (open: up to now).
    Range {
        since: DateTime<Utc>,
        until: Option<DateTime<Utc>>,
    },
}

impl Window {
    /// "last 120 min", "2026-07-08T10:00:00Z .. now".
    pub fn describe(&self) -> String {
        match self {
            Window::Last { minutes } => format!("last {minutes} min"),
            Window::Range { since, until } => format!(
                "{} .. {}",
                fmt(since),
                until.as_ref().map_or("now".to_string(), fmt)
            ),
        }
    }
}

/// RFC 3339 in whole seconds, the form tools take and refs show.
pub fn fmt(t: &DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// An RFC 3339 timestamp (or the `YYYY-MM-DD hh:mm:ss` form logs write),
/// read as UTC when it carries no zone. None for anything else.
pub fn parse_ts(text: &str) -> Option<DateTime<Utc>> {
    let t = text.trim();
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return Some(d.with_timezone(&Utc));
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(n) = chrono::NaiveDateTime::parse_from_str(t, f) {
            return Some(Utc.from_utc_datetime(&n));
        }
    }
    None
}

static LAST_EN: LazyLock<Regex> = LazyLock::new(|| {
    literal_regex(
        r"(?i)\b(?:last|past|previous|within|in the last|over the last|for the last)\s+(\d{1,4}|an?|one|two|three|four|five|six|twelve|24)\s*(minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w)\b",
    )
});
static AGO_EN: LazyLock<Regex> = LazyLock::new(|| {
    literal_regex(r"(?i)\b(?:since|from)\s+(\d{1,4})\s*(minutes?|mins?|hours?|hrs?|days?)\s+ago\b")
});
static LAST_UNIT_EN: LazyLock<Regex> = LazyLock::new(|| {
    literal_regex(r"(?i)\b(?:the\s+)?(?:last|past|previous)\s+(hour|day|week|24h|24 hours)\b")
});
static LAST_ZH: LazyLock<Regex> = LazyLock::new(|| {
    literal_regex(
        r"(?:最近|过去|近|前)\s*(\d{1,4}|[一二两三四五六七八九十半]{1,3})\s*(?:个)?\s*(分钟|小时|钟头|天|日|周|星期)",
    )
});
static LAST_UNIT_ZH: LazyLock<Regex> =
    LazyLock::new(|| literal_regex(r"(?:最近|过去)\s*(?:一|1)?\s*(?:个)?\s*(小时|钟头|天|周)"));
static DATE_TIME: LazyLock<Regex> = LazyLock::new(|| {
    literal_regex(r"(\d{4}-\d{2}-\d{2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?)?(?:Z|UTC)?")
});
/// `10:00`, `9:30`, `22:05:10` (not inside a longer timestamp).
static CLOCK: LazyLock<Regex> =
    LazyLock::new(|| literal_regex(r"(?:^|[^\d:-])(\d{1,2}):(\d{2})(?::(\d{2}))?(?:[^\d:]|$)"));
/// `10点`, `10点30分`, `10点半`.
static CLOCK_ZH: LazyLock<Regex> =
    LazyLock::new(|| literal_regex(r"(\d{1,2})\s*点\s*(?:(\d{1,2})\s*分|(半))?"));

/// The window the question names, or None.
pub fn parse(question: &str, now: Option<DateTime<Utc>>) -> Option<Window> {
    let lower = question.to_lowercase();
    if let Some(w) = clock_window(&lower, now) {
        return Some(w);
    }
    if let Some(w) = day_window(&lower, now) {
        return Some(w);
    }
    relative(&lower).map(|minutes| Window::Last { minutes })
}

/// Minutes of a relative window ("last 2 days", "过去3小时").
pub fn relative(lower: &str) -> Option<u32> {
    if let Some(c) = LAST_EN.captures(lower).or_else(|| AGO_EN.captures(lower)) {
        let n = count_en(c.get(1)?.as_str())?;
        return Some(n.saturating_mul(unit_minutes(c.get(2)?.as_str())?));
    }
    if let Some(c) = LAST_ZH.captures(lower) {
        let n = count_zh(c.get(1)?.as_str())?;
        let unit = unit_minutes(c.get(2)?.as_str())?;
        // "半小时": half an hour.
        return Some(if n == 0 {
            unit / 2
        } else {
            n.saturating_mul(unit)
        });
    }
    if let Some(c) = LAST_UNIT_EN.captures(lower) {
        return unit_minutes(c.get(1)?.as_str());
    }
    if let Some(c) = LAST_UNIT_ZH.captures(lower) {
        return unit_minutes(c.get(1)?.as_str());
    }
    None
}

fn count_en(w: &str) -> Option<u32> {
    Some(match w {
        "a" | "an" | "one" => 1,
        "two" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "twelve" => 12,
        d => d.parse().ok()?,
    })
}

/// A count in Chinese numerals (`三`, `十二`, `二十四`); `半` is 0 (half).
fn count_zh(w: &str) -> Option<u32> {
    if let Ok(n) = w.parse() {
        return Some(n);
    }
    if w == "半" {
        return Some(0);
    }
    crate::text::han_number(w).and_then(|n| u32::try_from(n).ok())
}

fn unit_minutes(unit: &str) -> Option<u32> {
    Some(match unit {
        "24h" | "24 hours" => 1440,
        "分钟" => 1,
        "小时" | "钟头" => 60,
        "天" | "日" => 1440,
        "周" | "星期" => 7 * 1440,
        u if u.starts_with('w') => 7 * 1440,
        u if u.starts_with('d') => 1440,
        u if u.starts_with('h') => 60,
        u if u.starts_with('m') => 1,
        _ => return None,
    })
}

/// The first clock time after `at` in `lower`, as (h, m, s).
fn clock_at(lower: &str, at: usize) -> Option<(usize, NaiveTime)> {
    let rest = lower.get(at..)?;
    let en = CLOCK.captures(rest).and_then(|c| {
        let m = c.get(1)?;
        let t = NaiveTime::from_hms_opt(
            m.as_str().parse().ok()?,
            c.get(2)?.as_str().parse().ok()?,
            c.get(3).map_or(Some(0), |s| s.as_str().parse().ok())?,
        )?;
        Some((at + m.start(), t))
    });
    let zh = CLOCK_ZH.captures(rest).and_then(|c| {
        let m = c.get(0)?;
        let minute = match (c.get(2), c.get(3)) {
            (Some(mm), _) => mm.as_str().parse().ok()?,
            (None, Some(_)) => 30,
            _ => 0,
        };
        let t = NaiveTime::from_hms_opt(c.get(1)?.as_str().parse().ok()?, minute, 0)?;
        Some((at + m.start(), t))
    });
    match (en, zh) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// "since 10:00", "between 10:00 and 11:00", "10:00 到 11:00",
/// "10点以来", "from 2026-07-08 22:00": a clock or date-time start,
/// optionally an end.
fn clock_window(lower: &str, now: Option<DateTime<Utc>>) -> Option<Window> {
    // A full date-time needs no now.
    let stamps: Vec<DateTime<Utc>> = DATE_TIME
        .captures_iter(lower)
        .filter_map(|c| {
            let date = NaiveDate::parse_from_str(c.get(1)?.as_str(), "%Y-%m-%d").ok()?;
            let h = c.get(2).map_or(Some(0), |m| m.as_str().parse().ok())?;
            let m = c.get(3).map_or(Some(0), |m| m.as_str().parse().ok())?;
            let s = c.get(4).map_or(Some(0), |m| m.as_str().parse().ok())?;
            Some(Utc.from_utc_datetime(&date.and_time(NaiveTime::from_hms_opt(h, m, s)?)))
        })
        .collect();
    let with_date = DATE_TIME
        .captures(lower)
        .is_some_and(|c| c.get(2).is_some());
    match stamps.as_slice() {
        [a, b, ..] if a < b => {
            return Some(Window::Range {
                since: *a,
                until: Some(*b),
            });
        }
        [a] if with_date => {
            return Some(if before_cue(lower) {
                Window::Range {
                    since: a.checked_sub_signed(Duration::days(1))?,
                    until: Some(*a),
                }
            } else {
                Window::Range {
                    since: *a,
                    until: None,
                }
            });
        }
        [a] => {
            // A bare date: that whole day.
            return Some(Window::Range {
                since: *a,
                until: Some(*a + Duration::days(1)),
            });
        }
        _ => {}
    }
    let now = now?;
    let (at, start) = clock_at(lower, 0)?;
    let end = clock_at(lower, at + 2)
        .filter(|(_, t)| *t > start)
        .map(|(_, t)| t);
    let day = if day_offset(lower) != 0 {
        now.date_naive() - Duration::days(i64::from(day_offset(lower)))
    } else if now.time() < start {
        // "since 23:00" asked at 01:00 means last night.
        now.date_naive() - Duration::days(1)
    } else {
        now.date_naive()
    };
    let since = Utc.from_utc_datetime(&day.and_time(start));
    let until = end.map(|t| Utc.from_utc_datetime(&day.and_time(t)));
    if before_cue(lower) && until.is_none() {
        return Some(Window::Range {
            since: since - Duration::days(1),
            until: Some(since),
        });
    }
    Some(Window::Range { since, until })
}

/// "before 10:00", "10点之前": a window that ends at the time.
fn before_cue(lower: &str) -> bool {
    ["before ", "until ", "之前", "以前"]
        .iter()
        .any(|w| lower.contains(w))
}

/// 1 for yesterday, 2 for the day before, 0 otherwise.
fn day_offset(lower: &str) -> u32 {
    if lower.contains("前天") || lower.contains("day before yesterday") {
        2
    } else if lower.contains("昨天") || lower.contains("昨日") || lower.contains("yesterday") {
        1
    } else {
        0
    }
}

/// "yesterday", "昨天", "today", "今天", "前天": a calendar day.
fn day_window(lower: &str, now: Option<DateTime<Utc>>) -> Option<Window> {
    let offset = day_offset(lower);
    let today = lower.contains("today") || lower.contains("今天") || lower.contains("今日");
    if offset == 0 && !today {
        return None;
    }
    let Some(now) = now else {
        // Without a date, "today" is at least the last day.
        return today.then_some(Window::Last { minutes: 1440 });
    };
    let midnight = Utc.from_utc_datetime(&now.date_naive().and_time(NaiveTime::MIN));
    if offset == 0 {
        return Some(Window::Range {
            since: midnight,
            until: None,
        });
    }
    let since = midnight - Duration::days(i64::from(offset));
    Some(Window::Range {
        since,
        until: Some(since + Duration::days(1)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        parse_ts(s).unwrap()
    }

    #[test]
    fn relative_windows_in_english_and_chinese() {
        let cases = [
            ("errors in the last 2 days?", 2880),
            ("what failed over the past 3 hours", 180),
            ("last 45 minutes", 45),
            ("in the last hour", 60),
            ("past week", 7 * 1440),
            ("since 30 minutes ago", 30),
            ("过去3小时有没有错误", 180),
            ("最近30分钟", 30),
            ("最近两天", 2880),
            ("过去一小时", 60),
            ("近半小时", 30),
            ("过去十二小时", 720),
            ("最近一周", 7 * 1440),
        ];
        for (q, m) in cases {
            assert_eq!(parse(q, None), Some(Window::Last { minutes: m }), "{q}");
        }
        assert_eq!(parse("why is payment slow?", None), None);
        assert_eq!(parse("HTTP 500 from last release", None), None);
    }

    #[test]
    fn clock_and_calendar_windows_resolve_against_now() {
        let now = at("2026-07-08T23:12:00Z");
        let range = |a: &str, b: Option<&str>| Window::Range {
            since: at(a),
            until: b.map(at),
        };
        assert_eq!(
            parse("errors since 10:00", Some(now)),
            Some(range("2026-07-08T10:00:00Z", None))
        );
        assert_eq!(
            parse("between 22:30 and 23:00?", Some(now)),
            Some(range("2026-07-08T22:30:00Z", Some("2026-07-08T23:00:00Z")))
        );
        assert_eq!(
            parse("昨天有没有错误", Some(now)),
            Some(range("2026-07-07T00:00:00Z", Some("2026-07-08T00:00:00Z")))
        );
        assert_eq!(
            parse("what happened yesterday at 10:00 to 11:00", Some(now)),
            Some(range("2026-07-07T10:00:00Z", Some("2026-07-07T11:00:00Z")))
        );
        assert_eq!(
            parse("今天的告警", Some(now)),
            Some(range("2026-07-08T00:00:00Z", None))
        );
        assert_eq!(
            parse("22点以来 order-service 的错误", Some(now)),
            Some(range("2026-07-08T22:00:00Z", None))
        );
        assert_eq!(
            parse("22点半以后", Some(now)),
            Some(range("2026-07-08T22:30:00Z", None))
        );
        // Later than now today: last night.
        assert_eq!(
            parse("since 23:30", Some(now)),
            Some(range("2026-07-07T23:30:00Z", None))
        );
        assert_eq!(
            parse("from 2026-07-08 22:00 to 2026-07-08 23:00", None),
            Some(range("2026-07-08T22:00:00Z", Some("2026-07-08T23:00:00Z")))
        );
        assert_eq!(
            parse("on 2026-07-07", None),
            Some(range("2026-07-07T00:00:00Z", Some("2026-07-08T00:00:00Z")))
        );
        // Without a now, clock and calendar windows are not guessed.
        assert_eq!(parse("since 10:00", None), None);
        assert_eq!(parse("yesterday", None), None);
    }

    #[test]
    fn malformed_times_are_not_windows() {
        let now = at("2026-07-08T23:12:00Z");
        for q in [
            "since 25:00",
            "since 10:75",
            "2026-13-45",
            "last 99999 days",
            "过去百天",
            ":::",
            "1:2:3:4:5",
        ] {
            let w = parse(q, Some(now));
            assert!(
                !matches!(w, Some(Window::Range { since, .. }) if since.timestamp() == 0),
                "{q}: {w:?}"
            );
        }
        assert_eq!(parse("since 25:00", Some(now)), None);
        assert_eq!(parse("2026-13-45", Some(now)), None);
        assert_eq!(parse_ts("not a time"), None);
        assert_eq!(
            parse_ts("2026-07-08 22:55:03"),
            Some(at("2026-07-08T22:55:03Z"))
        );
    }
}
