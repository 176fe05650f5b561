//! The LogQL diagraph sends: a stream selector on the service label, label
//! filters on the level, case-insensitive line filters for keywords, and
//! the metric query that counts every matching line.
//!
//! Every value from the model goes into a double-quoted LogQL string
//! (Go syntax: `\\`, `\"` and control characters escaped) and, where it is
//! a regex, is regex-escaped first, so no argument can change the query's
//! structure.

/// `s` as a LogQL (Go) double-quoted string literal.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A case-insensitive regex matching exactly `s`.
pub fn exact_ci(s: &str) -> String {
    format!("(?i){}", regex::escape(s))
}

/// The spellings of a normalised level (`tools::logs::norm_level`) that
/// systems write into a level label.
pub fn level_spellings(level: &str) -> Vec<&str> {
    match level {
        "ERROR" => vec!["error", "err", "eror"],
        "WARN" => vec!["warn", "warning"],
        "FATAL" => vec![
            "fatal",
            "critical",
            "crit",
            "emerg",
            "emergency",
            "alert",
            "panic",
        ],
        "INFO" => vec!["info", "information", "informational", "notice"],
        "DEBUG" => vec!["debug", "dbug"],
        "TRACE" => vec!["trace"],
        other => vec![other],
    }
}

/// What to filter on.
pub struct Selection<'a> {
    pub service_label: &'a str,
    pub service: Option<&'a str>,
    pub level_label: &'a str,
    /// Normalised levels; empty = any.
    pub levels: &'a [String],
    /// Lowercased keywords; every one must occur, in any case.
    pub words: &'a [String],
}

/// The log query: `{service=~"(?i)payment\-service"} | level=~"(?i)(error|err)" |~ "(?i)pool"`.
pub fn log_query(s: &Selection) -> String {
    let matcher = match s.service {
        Some(svc) => format!("{}=~{}", s.service_label, string(&exact_ci(svc))),
        None => format!("{}=~{}", s.service_label, string(".+")),
    };
    let mut q = format!("{{{matcher}}}");
    if !s.levels.is_empty() {
        let mut spellings: Vec<String> = Vec::new();
        for l in s.levels {
            for sp in level_spellings(l) {
                let sp = regex::escape(&sp.to_ascii_lowercase());
                if !spellings.contains(&sp) {
                    spellings.push(sp);
                }
            }
        }
        q.push_str(&format!(
            " | {}=~{}",
            s.level_label,
            string(&format!("(?i)({})", spellings.join("|")))
        ));
    }
    for w in s.words {
        q.push_str(&format!(" |~ {}", string(&exact_ci(w))));
    }
    q
}

/// The metric query counting the log query's lines over `range_secs`.
pub fn count_query(log_query: &str, range_secs: u64) -> String {
    format!("sum(count_over_time({log_query} [{}s]))", range_secs.max(1))
}

/// The metric query counting the log query's lines per `step_ms`
/// (a range query's evaluation step).
pub fn bucket_query(log_query: &str, step_ms: i64) -> String {
    format!("sum(count_over_time({log_query} [{}ms]))", step_ms.max(1))
}

/// A label name Loki accepts (`[a-zA-Z_][a-zA-Z0-9_]*`): configured names
/// are checked before they go into a query.
pub fn valid_label(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_text_cannot_change_the_query_structure() {
        let words = vec!["a\"} or {x=\"y".to_string(), "50%\\n".to_string()];
        let levels = vec!["ERROR".to_string()];
        let q = log_query(&Selection {
            service_label: "service",
            service: Some("pay\"}|~ment"),
            level_label: "detected_level",
            levels: &levels,
            words: &words,
        });
        assert_eq!(
            q,
            r#"{service=~"(?i)pay\"\\}\\|\\~ment"} | detected_level=~"(?i)(error|err|eror)" |~ "(?i)a\"\\} or \\{x=\"y" |~ "(?i)50%\\\\n""#
        );
        assert_eq!(string("a\u{1}b\tc"), r#""a\u0001b\tc""#);
        assert_eq!(
            count_query("{a=\"b\"}", 0),
            "sum(count_over_time({a=\"b\"} [1s]))"
        );
        assert!(valid_label("service_name") && !valid_label("service.name") && !valid_label("9a"));
    }
}
