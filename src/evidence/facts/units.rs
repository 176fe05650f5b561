//! Numbers and their units: a number and its unit are one fact however
//! they are spaced (`2300 ms`, `2300ms`), and two numbers match by value
//! and unit, not by text.

use super::words::{canonical_unit, number_word};
use super::{Builder, FactText, Join, Kind, Part};

/// Writes every number with its unit as one part, the unit canonical:
/// `2300 ms`, `2300ms` and `2300 milliseconds` are all `2300ms`, `5 分钟`
/// and `5m` are `5min`, `10 req/s` is `10req/s`. A unit is the number's
/// own suffix, or the word (a Han unit run, an `x/y` rate) written apart
/// right after it in its clause; a number inside an identifier
/// (`HikariPool-1 s`) or a key keeps its text. So a unit's spacing is not a
/// fact, and a different unit or value still is.
pub(super) fn attach_units(b: &mut Builder) {
    fn text(b: &Builder, k: usize) -> &str {
        b.parts
            .get(k)
            .and_then(|p| b.padded.get(p.start as usize..p.end as usize))
            .unwrap_or("")
    }
    let joined = |b: &Builder, k: usize, j: Join| b.parts.get(k).is_some_and(|p| p.join == j);
    if !b.parts.iter().any(|p| p.kind == Kind::Number) {
        return;
    }
    // (index of the number part, new text, parts it absorbs after it)
    let mut merges: Vec<(usize, String, usize)> = Vec::new();
    let mut i = 0;
    while i < b.parts.len() {
        let Some(p) = b.parts.get(i).copied() else {
            break;
        };
        i += 1;
        if p.kind != Kind::Number || p.key || p.join == Join::Joined {
            continue;
        }
        let t = text(b, i - 1);
        let end = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        // a lone `one` is a count when a unit follows (`one minute`)
        let (num, suffix) = if t == "one" {
            ("1", "")
        } else {
            t.split_at(end)
        };
        if num.is_empty() || num.ends_with('.') {
            continue;
        }
        let next_ok = |b: &Builder, k: usize, j: Join| {
            b.parts.get(k).is_some_and(|q| {
                q.join == j
                    && q.clause == p.clause
                    && q.segment == p.segment
                    && !q.key
                    && !matches!(q.kind, Kind::Stamp(_) | Kind::Negation)
            })
        };
        let mut found: Option<(&'static str, usize)> = None;
        if !suffix.is_empty() {
            // `2300ms`, `10req/s` (`10req` joined to `s`)
            if next_ok(b, i, Join::Joined) && !joined(b, i + 1, Join::Joined) {
                found = two_part_unit(suffix, text(b, i)).map(|u| (u, 1));
            }
            if found.is_none() && !joined(b, i, Join::Joined) {
                found = canonical_unit(suffix).map(|u| (u, 0));
            }
        } else if next_ok(b, i, Join::Apart) || next_ok(b, i, Join::HanRun) {
            let first = text(b, i);
            if first.is_ascii() {
                if next_ok(b, i + 1, Join::Joined) && !joined(b, i + 2, Join::Joined) {
                    found = two_part_unit(first, text(b, i + 1)).map(|u| (u, 2));
                }
                if found.is_none() && !joined(b, i + 1, Join::Joined) {
                    found = canonical_unit(first).map(|u| (u, 1));
                }
            } else {
                // the longest Han unit run: 分钟 before 分
                let mut run = first.to_string();
                let mut runs = vec![(run.clone(), 1)];
                for n in 1..3 {
                    if !next_ok(b, i + n, Join::HanRun) {
                        break;
                    }
                    run.push_str(text(b, i + n));
                    runs.push((run.clone(), n + 1));
                }
                found = runs
                    .iter()
                    .rev()
                    .find_map(|(w, n)| canonical_unit(w).map(|u| (u, *n)));
            }
        }
        if let Some((unit, absorbed)) = found.filter(|(u, _)| !u.is_empty()) {
            merges.push((i - 1, format!("{num}{unit}"), absorbed));
            i += absorbed;
        }
    }
    if merges.is_empty() {
        return;
    }
    let old_parts = std::mem::take(&mut b.parts);
    let mut fresh = String::with_capacity(b.padded.len() + 8);
    fresh.push(' ');
    let old_padded = std::mem::replace(&mut b.padded, fresh);
    let mut merges = merges.into_iter().peekable();
    let mut k = 0;
    while let Some(p) = old_parts.get(k).copied() {
        let merged = merges.next_if(|m| m.0 == k);
        let (t, skip) = match &merged {
            Some((_, t, n)) => (t.as_str(), *n),
            None => (
                old_padded
                    .get(p.start as usize..p.end as usize)
                    .unwrap_or(""),
                0,
            ),
        };
        let start = b.padded.len() as u32;
        b.padded.push_str(t);
        let end = b.padded.len() as u32;
        b.padded.push(' ');
        b.parts.push(Part { start, end, ..p });
        k += 1 + skip;
    }
}

/// A unit written as two joined parts: a rate (`req/s`) or a camelCase
/// split (`GiB` is `gi` `b`).
fn two_part_unit(a: &str, b: &str) -> Option<&'static str> {
    canonical_unit(&format!("{a}{b}")).or_else(|| canonical_unit(&format!("{a}/{b}")))
}

/// A number part split into its value and canonical unit (`30000ms` ->
/// (30000, "ms")); None when it is not a number with a known unit.
pub fn number_value(text: &str) -> Option<(f64, &'static str)> {
    if let Some(v) = number_word(text) {
        return Some((v as f64, ""));
    }
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (num, unit) = text.split_at(end);
    let v: f64 = num.parse().ok()?;
    Some((v, canonical_unit(unit)?))
}

/// Whether two number parts say the same number: equal text, or equal
/// value with the same unit or a unit on one side only (`27` and `27m`).
/// `unit_a`/`unit_b` are units written as separate words after the number
/// (`27 minutes`), "" when none.
pub fn numbers_match(a: &str, unit_a: &str, b: &str, unit_b: &str) -> bool {
    if a == b && (unit_a.is_empty() || unit_b.is_empty() || unit_a == unit_b) {
        return true;
    }
    let (Some((va, ua)), Some((vb, ub))) = (number_value(a), number_value(b)) else {
        return false;
    };
    let ua = if ua.is_empty() { unit_a } else { ua };
    let ub = if ub.is_empty() { unit_b } else { ub };
    (va - vb).abs() < 1e-9 && (ua.is_empty() || ub.is_empty() || ua == ub)
}

/// Whether two number parts say the same quantity: [`numbers_match`], or
/// the same duration in another unit. For a statement, which may
/// paraphrase; an excerpt is a quotation and keeps the ref's own unit.
pub fn quantities_match(a: &str, unit_a: &str, b: &str, unit_b: &str) -> bool {
    if numbers_match(a, unit_a, b, unit_b) {
        return true;
    }
    let (Some((va, ua)), Some((vb, ub))) = (number_value(a), number_value(b)) else {
        return false;
    };
    let ua = if ua.is_empty() { unit_a } else { ua };
    let ub = if ub.is_empty() { unit_b } else { ub };
    same_duration(va, ua, vb, ub)
}

/// Two durations in different units that are exactly equal (`30s` =
/// `30000ms`, `1.5h` = `90min`): a conversion, not a rounding, so `30s`
/// is not `30123ms`. Sizes are left alone (a `kb` is 1000 or 1024 bytes
/// depending on who wrote it).
fn same_duration(va: f64, ua: &str, vb: f64, ub: &str) -> bool {
    let ns = |u: &str| -> Option<f64> {
        Some(match u {
            "ns" => 1.0,
            "us" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "min" => 60e9,
            "h" => 3600e9,
            "d" => 86_400e9,
            _ => return None,
        })
    };
    let (Some(a), Some(b)) = (ns(ua), ns(ub)) else {
        return false;
    };
    let (x, y) = (va * a, vb * b);
    ua != ub && (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
}

/// The canonical unit written as the word after part `i`, "" if none.
pub fn unit_after(t: &FactText, i: usize) -> &'static str {
    match t.parts().get(i + 1) {
        Some(p) if p.join == Join::Apart || p.join == Join::HanRun => {
            canonical_unit(t.text(p)).unwrap_or("")
        }
        _ => "",
    }
}
