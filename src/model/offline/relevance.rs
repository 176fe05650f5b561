//! Which log patterns tell most about the question: the order in which the
//! offline Executor turns log groups into claims.
//!
//! A count is a fact to state, never the rank: a routine line logged
//! hundreds of times says less than the one crash. A pattern ranks by
//! - the question's words in it (stemmed; Chinese through the lexicon's
//!   glosses), and whether a keyword query found it;
//! - its rarity among the lines seen (an idf over patterns);
//! - its novelty: it began part-way through what was seen, not a line
//!   that runs through all of it;
//! - its closeness to an active alert's start;
//! - its level, when the question asks for one, and its severity a little.
//!
//! Nothing here knows any system: the words come from the question, the
//! figures from the evidence.

use crate::model::offline::entities;
use crate::model::offline::evidence::{AlertItem, LogItem, group_count, group_times};
use crate::model::offline::text::{content_tokens, tokens};
use crate::vocab::level::Level;
use chrono::{DateTime, Utc};
use std::collections::BTreeSet;

/// Question words that say nothing about which lines are meant.
const GENERIC_QUESTION_WORDS: &[&str] = &[
    "node",
    "nodes",
    "host",
    "hosts",
    "machine",
    "machines",
    "instance",
    "instances",
    "logs",
    "logged",
    "logging",
    "lines",
    "messages",
    "message",
    "wrong",
    "happened",
    "going",
    "failing",
    "failed",
    "errors",
    "warnings",
    "there",
    "about",
    "which",
    "what",
    "write",
    "wrote",
    "recently",
    "today",
    "service",
    "services",
    "server",
    "show",
    "tell",
    "check",
    "when",
    "where",
    "were",
    "have",
    "been",
    "does",
    "during",
    "last",
    "minutes",
    "hours",
    "since",
    "from",
    "with",
    "this",
    "that",
    "anything",
    "something",
    "issue",
    "issues",
    "problem",
    "problems",
    "system",
    "explain",
    "please",
];

/// A word as its stem: the forms of one word share it (`failures`,
/// `failure` -> `failur`; `timed`, `timeout` keep theirs).
pub fn stem(w: &str) -> String {
    let w = w.to_lowercase();
    for suffix in [
        "ations", "ation", "ings", "ing", "ures", "ure", "ies", "es", "ed", "s",
    ] {
        if let Some(base) = w.strip_suffix(suffix)
            && base.chars().count() >= 4
        {
            return base.to_string();
        }
    }
    w
}

/// What the question asks, to rank patterns by.
pub struct Relevance {
    /// Stems of the question's own words (not service names, not level
    /// words, not generic question words).
    words: BTreeSet<String>,
    /// Per word, how telling it is: an idf over the groups seen, so the
    /// rare word of a question ("expired") counts more than the common
    /// one ("client").
    weights: std::collections::BTreeMap<String, f64>,
    levels: Vec<Level>,
    /// The question's literal names (hosts, ids, quoted phrases), lower
    /// case: a line a query for one of them found is about the question.
    names: BTreeSet<String>,
    /// Active alerts' start times.
    alert_starts: Vec<DateTime<Utc>>,
    /// Lines seen in every group (the idf's corpus), and their span.
    total: u64,
    span: Option<(DateTime<Utc>, DateTime<Utc>)>,
}

/// The question's words worth searching the logs for, in question order:
/// its content words minus names, levels and generic question words.
pub fn question_words(question: &str, services: &[String]) -> Vec<String> {
    let service_words: BTreeSet<String> = services.iter().flat_map(|s| content_tokens(s)).collect();
    let mut out: Vec<String> = Vec::new();
    for w in tokens(question) {
        let han = w.chars().any(|c| (c as u32) >= 0x3400);
        let keep = if han {
            false
        } else {
            w.chars().count() >= 4
                && w.chars().all(|c| c.is_alphanumeric())
                && !w.chars().all(|c| c.is_ascii_digit())
                && !service_words.contains(&w)
                && Level::parse_word(&w).is_none()
                && !GENERIC_QUESTION_WORDS.contains(&w.as_str())
                && content_tokens(&w).contains(&w)
        };
        if keep && !out.contains(&w) {
            out.push(w);
        }
    }
    // Chinese words through the lexicon's glosses.
    for en in crate::evidence::lexicon::lexicon().english_of(question) {
        let en = en.to_string();
        if en.chars().count() >= 4
            && !GENERIC_QUESTION_WORDS.contains(&en.as_str())
            && !out.iter().any(|o| stem(o) == stem(&en))
        {
            out.push(en);
        }
    }
    out
}

impl Relevance {
    /// `services`: the names the question asks about, whose words say
    /// whose lines, not which.
    pub fn new(
        question: &str,
        groups: &[Vec<&LogItem>],
        alerts: &[AlertItem],
        services: &[String],
    ) -> Relevance {
        let e = entities::extract(question, services);
        let mut named: Vec<String> = e.services.clone();
        named.extend(services.iter().cloned());
        let mut words: BTreeSet<String> = question_words(question, &named)
            .iter()
            .map(|w| stem(w))
            .collect();
        for k in &e.keywords {
            words.extend(tokens(k).iter().filter(|t| t.len() >= 3).map(|t| stem(t)));
        }
        let names: BTreeSet<String> = e
            .keywords
            .iter()
            .cloned()
            .chain(entities::hosts(question, &e.services))
            .map(|n| n.to_lowercase())
            .collect();
        let stems: Vec<BTreeSet<String>> = groups.iter().map(|g| template_stems(g)).collect();
        let n = stems.len() as f64;
        let weights = words
            .iter()
            .map(|w| {
                let with = stems.iter().filter(|h| has_word(h, w)).count() as f64;
                (w.clone(), (1.0 + n / (1.0 + with)).ln())
            })
            .collect();
        let total = groups.iter().map(|g| group_count(g)).sum::<u64>().max(1);
        let times: Vec<(DateTime<Utc>, DateTime<Utc>)> =
            groups.iter().filter_map(|g| group_times(g)).collect();
        let span = times
            .iter()
            .map(|t| t.0)
            .min()
            .zip(times.iter().map(|t| t.1).max());
        Relevance {
            words,
            weights,
            names,
            levels: e.levels,
            alert_starts: alerts
                .iter()
                .filter(|a| a.is_active())
                .filter_map(AlertItem::since)
                .collect(),
            total,
            span,
        }
    }

    /// How much a group tells about the question; higher first.
    pub fn score(&self, g: &[&LogItem]) -> f64 {
        let Some(first) = g.first() else {
            return f64::MIN;
        };
        let mut s = 0.0;
        if !self.words.is_empty() {
            let have = template_stems(g);
            let weight = |w: &String| self.weights.get(w).copied().unwrap_or(1.0);
            let all: f64 = self.words.iter().map(weight).sum();
            let hit: f64 = self
                .words
                .iter()
                .filter(|w| has_word(&have, w))
                .map(weight)
                .sum();
            if hit > 0.0 && all > 0.0 {
                s += 2.0 + 3.0 * hit / all;
            }
        }
        // a keyword query found it (in its message or its other fields):
        // one for a name the question gives most, one for a word less
        let found: Vec<&String> = g.iter().flat_map(|l| &l.found_by).collect();
        if found.iter().any(|k| self.names.contains(*k)) {
            s += 8.0;
        } else if !found.is_empty() {
            s += 1.0;
        }
        let level = Level::parse(&first.level);
        if level.is_some_and(|l| self.levels.contains(&l)) {
            s += 1.5;
        }
        s += match level {
            Some(Level::Fatal) => 2.0,
            Some(Level::Error) => 1.2,
            Some(Level::Warn) => 0.5,
            Some(Level::Notice) => 0.2,
            _ => 0.0,
        };
        // idf over patterns: rarer is more telling, in [0, 1]
        let count = group_count(g).max(1) as f64;
        let n = self.total as f64;
        s += 1.5 * ((1.0 + n / count).ln() / (1.0 + n).ln()).clamp(0.0, 1.0);
        if let Some((start, end)) = group_times(g) {
            if let Some((a, b)) = self.span {
                let whole = (b - a).num_seconds().max(1) as f64;
                // began part-way through what was seen: new, not routine
                s += ((start - a).num_seconds().max(0) as f64 / whole).clamp(0.0, 1.0);
            }
            let near = self
                .alert_starts
                .iter()
                .map(|since| {
                    if end >= *since {
                        // runs into the alert's window: closest when it
                        // starts near the alert's start
                        (start - *since).num_seconds().abs()
                    } else {
                        (*since - end).num_seconds()
                    }
                })
                .min();
            if let Some(secs) = near {
                s += 1.0 / (1.0 + secs as f64 / 3600.0);
            }
        }
        s
    }

    /// `order` (indexes into `groups`) most telling first; equal scores
    /// keep their order.
    pub fn sort(&self, order: &mut [usize], groups: &[Vec<&LogItem>]) {
        let scores: Vec<f64> = groups.iter().map(|g| self.score(g)).collect();
        order.sort_by(|a, b| {
            let sa = scores.get(*a).copied().unwrap_or(f64::MIN);
            let sb = scores.get(*b).copied().unwrap_or(f64::MIN);
            sb.total_cmp(&sa)
        });
    }
}

/// The stems of a group's message template.
fn template_stems(g: &[&LogItem]) -> BTreeSet<String> {
    g.first()
        .map(|f| tokens(&f.template).iter().map(|t| stem(t)).collect())
        .unwrap_or_default()
}

/// A question word's stem begins a word of the template.
fn has_word(have: &BTreeSet<String>, w: &str) -> bool {
    have.iter().any(|h| h.starts_with(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_of_a_word_share_a_stem() {
        assert_eq!(stem("failures"), stem("failure"));
        assert!(stem("authenticated").starts_with(&stem("Authentication")));
        assert_eq!(stem("disk"), "disk");
    }

    #[test]
    fn question_words_leave_out_names_levels_and_generic_words() {
        let w = question_words(
            "Why did sshd log authentication failures and errors in the last 5 minutes?",
            &["sshd".to_string()],
        );
        assert_eq!(w, vec!["authentication", "failures"]);
        assert!(question_words("磁盘有问题吗", &[]).contains(&"disk".to_string()));
    }
}
