//! Untrusted text (server bodies, error chains) made fit for a one-line
//! message: printable, single-line, bounded.

/// Printable text of at most `max` chars on one line: control characters
/// (terminal escapes, newlines) become spaces and runs of whitespace
/// collapse.
pub fn clean(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(max)
        .collect();
    if s.chars().count() > max {
        out.push('…');
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The innermost error text of a chain (reqwest's own Display repeats the
/// URL, which is noise in a one-line message).
pub fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cur: &(dyn std::error::Error + 'static) = err;
    while let Some(next) = cur.source() {
        cur = next;
    }
    clean(&cur.to_string(), 200)
}

/// The kind of a JSON value, as error messages name it ("a string").
pub fn json_kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn clean_is_one_bounded_line() {
        assert_eq!(super::clean("a\x1b[2J\n  b", 100), "a [2J b");
        assert_eq!(super::clean("abcdef", 3), "abc…");
    }
}
