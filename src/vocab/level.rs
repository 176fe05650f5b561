//! Log levels: the one vocabulary every log source, the offline model and
//! the tools speak.
//!
//! Log formats spell the same severity many ways: `WARN` and `WARNING`;
//! `ERR` and `ERROR`; `FATAL`, `CRITICAL`, `SEVERE` (Java), `EMERG` and
//! `ALERT` (syslog); syslog's numeric priorities 0-7; Apache's lowercase
//! `[error]`; single letters (`E`, `W`, `I`: glog, Android, many JVM
//! layouts); the numeric levels of JSON loggers (bunyan/pino: 10 trace ..
//! 60 fatal). [`Level::parse`] reads them all into seven canonical levels,
//! ordered by severity, and [`canonical`] gives the name a filter compares.
//! Everything above ERROR is [`Level::Fatal`], because to someone asking
//! about errors a `CRITICAL` or `EMERG` line is an error and worse.

use serde::{Deserialize, Serialize};

/// A canonical log level, least severe first (so `Ord` is severity).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    Trace,
    Debug,
    Info,
    Notice,
    Warn,
    Error,
    Fatal,
}

impl Level {
    /// Every level, least severe first.
    pub const ALL: [Level; 7] = [
        Level::Trace,
        Level::Debug,
        Level::Info,
        Level::Notice,
        Level::Warn,
        Level::Error,
        Level::Fatal,
    ];

    /// The canonical name filters and refs use.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Trace => "TRACE",
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
            Level::Notice => "NOTICE",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
            Level::Fatal => "FATAL",
        }
    }

    /// A level as any common format writes it: a name in any case, with
    /// the brackets, colons or angle brackets around it that formats add
    /// (`[error]`, `<3>`, `ERROR:`), a syslog priority 0-7, a single
    /// letter (`E`, `W`) or a JSON logger's number (10-60). None for
    /// anything else, so an unknown word is never taken for a level. Only
    /// a level *field* is read this way: free text goes through
    /// [`Level::parse_word`], where a letter or a digit is not a level.
    pub fn parse(text: &str) -> Option<Level> {
        let t = text
            .trim()
            .trim_matches(|c: char| matches!(c, '[' | ']' | '<' | '>' | ':' | '(' | ')' | '|'));
        if t.is_empty() || t.len() > 13 {
            return None;
        }
        let upper = t.to_ascii_uppercase();
        Some(match upper.as_str() {
            "TRACE" | "TRC" | "FINEST" | "FINER" | "VERBOSE" | "T" | "V" | "10" => Level::Trace,
            "DEBUG" | "DBG" | "FINE" | "D" | "7" | "20" => Level::Debug,
            "INFO" | "INF" | "INFORMATION" | "INFORMATIONAL" | "CONFIG" | "I" | "6" | "30" => {
                Level::Info
            }
            "NOTICE" | "N" | "5" => Level::Notice,
            "WARN" | "WARNING" | "WRN" | "W" | "4" | "40" => Level::Warn,
            "ERROR" | "ERR" | "E" | "3" | "50" => Level::Error,
            "FATAL" | "FTL" | "CRITICAL" | "CRIT" | "SEVERE" | "EMERG" | "EMERGENCY" | "ALERT"
            | "PANIC" | "F" | "0" | "1" | "2" | "60" => Level::Fatal,
            _ => return None,
        })
    }

    /// A level word found in free text (a line without a level field):
    /// [`Level::parse`] without the spellings that are also ordinary words
    /// or numbers there (`alert`, `fine`, `config`, `panic`, a digit).
    pub fn parse_word(word: &str) -> Option<Level> {
        let bare = word.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        const AMBIGUOUS: [&str; 8] = [
            "ALERT",
            "FINE",
            "FINER",
            "CONFIG",
            "PANIC",
            "VERBOSE",
            "INFORMATION",
            "INFORMATIONAL",
        ];
        // A letter or a number in free text is a word or a figure, not a
        // level: only a level field is read that short.
        if bare.chars().all(|c| c.is_ascii_digit())
            || bare.chars().count() < 2
            || AMBIGUOUS.iter().any(|a| a.eq_ignore_ascii_case(bare))
        {
            return None;
        }
        Level::parse(word)
    }

    /// This level and every more severe one, least severe first: what a
    /// question about this level asks for ("errors" includes FATAL).
    pub fn and_above(self) -> Vec<Level> {
        Level::ALL.into_iter().filter(|l| *l >= self).collect()
    }

    /// ERROR or worse.
    pub fn is_error(self) -> bool {
        self >= Level::Error
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The name a level filter compares: the canonical name of a known level,
/// else the text upper-cased and trimmed (an unknown level still matches
/// itself).
pub fn canonical(text: &str) -> String {
    match Level::parse(text) {
        Some(l) => l.as_str().to_string(),
        None => text.trim().to_ascii_uppercase(),
    }
}

/// Levels as a filter argument: `ERROR,FATAL`.
pub fn filter_arg(levels: &[Level]) -> String {
    levels
        .iter()
        .map(|l| l.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// The level word among the first few words of a log text
/// (`2026-07-08T22:55:03Z ERROR order-service …`, `… - WARN  [main] …`,
/// `[Sun Dec 04 04:47:44 2005] [error] …`), as written, with the level it
/// names. Only names count here, never a bare digit, which in free text is
/// far more often a number than a syslog priority.
pub fn find_in_text(text: &str, words: usize) -> Option<(&str, Level)> {
    text.split_whitespace()
        .take(words)
        .find_map(|w| Level::parse_word(w).map(|l| (w.trim_matches(['[', ']', '<', '>', ':']), l)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_of_every_format_read_as_one_level() {
        for (text, want) in [
            ("WARN", Level::Warn),
            ("warning", Level::Warn),
            ("[warn]", Level::Warn),
            ("ERR", Level::Error),
            ("[error]", Level::Error),
            ("ERROR:", Level::Error),
            ("<3>", Level::Error),
            ("FATAL", Level::Fatal),
            ("CRITICAL", Level::Fatal),
            ("crit", Level::Fatal),
            ("SEVERE", Level::Fatal),
            ("emerg", Level::Fatal),
            ("ALERT", Level::Fatal),
            ("0", Level::Fatal),
            ("2", Level::Fatal),
            ("4", Level::Warn),
            ("notice", Level::Notice),
            ("6", Level::Info),
            ("FINE", Level::Debug),
            ("finest", Level::Trace),
            ("E", Level::Error),
            ("w", Level::Warn),
            ("I", Level::Info),
            ("D", Level::Debug),
            ("F", Level::Fatal),
            ("30", Level::Info),
            ("50", Level::Error),
            ("60", Level::Fatal),
            ("<2>", Level::Fatal),
        ] {
            assert_eq!(Level::parse(text), Some(want), "{text}");
        }
        for not_a_level in [
            "",
            "8",
            "-1",
            "ERRORS",
            "warned",
            "x",
            "Information technology",
            "X",
            "35",
            "100",
        ] {
            assert_eq!(Level::parse(not_a_level), None, "{not_a_level:?}");
        }
    }

    #[test]
    fn errors_include_the_levels_above() {
        assert_eq!(Level::Error.and_above(), vec![Level::Error, Level::Fatal]);
        assert_eq!(filter_arg(&Level::Warn.and_above()), "WARN,ERROR,FATAL");
        assert!(Level::Fatal.is_error() && !Level::Warn.is_error());
        assert_eq!(canonical("Critical"), "FATAL");
        assert_eq!(canonical(" custom "), "CUSTOM");
    }

    #[test]
    fn finds_the_level_word_of_common_line_shapes() {
        let f = |t| find_in_text(t, 4);
        assert_eq!(
            f("2026-07-08T22:55:03Z ERROR order-service pool"),
            Some(("ERROR", Level::Error))
        );
        assert_eq!(
            f("[Sun Dec 04 04:47:44 2005] [error] mod_jk"),
            None,
            "the fifth word is past the window"
        );
        assert_eq!(
            find_in_text("[Sun Dec 04 04:47:44 2005] [error] mod_jk", 6),
            Some(("error", Level::Error))
        );
        assert_eq!(f("took 3 seconds at 4 pm"), None);
        assert_eq!(f("alert sent to ops"), None);
        assert_eq!(Level::parse_word("[WARN]"), Some(Level::Warn));
        // a letter in free text is a word ("I", "a"), never a level
        assert_eq!(f("I restarted E node"), None);
        assert_eq!(Level::parse_word("E"), None);
    }
}
