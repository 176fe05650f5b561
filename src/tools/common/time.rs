//! The timestamps tools read from arguments and write into refs, and the
//! durations refs state.

use chrono::{DateTime, Utc};

/// RFC 3339, or `YYYY-MM-DD HH:MM:SS[.fff]` read as UTC.
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    for fmt in ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f"] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(s, fmt) {
            return Some(t.and_utc());
        }
    }
    None
}

/// `2026-07-08T22:40:00Z`: second precision, the form refs use.
pub fn fmt_time(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// "25m", "2h5m", "3d4h": coarse on purpose, it is read by people.
pub fn human_duration(from: DateTime<Utc>, to: DateTime<Utc>) -> String {
    let mins = (to - from).num_minutes().max(0);
    match mins {
        m if m < 60 => format!("{m}m"),
        m if m < 24 * 60 => format!("{}h{}m", m / 60, m % 60),
        m => format!("{}d{}h", m / (24 * 60), (m / 60) % 24),
    }
}
