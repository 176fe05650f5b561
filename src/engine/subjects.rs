//! What the question is about, and whether the answer speaks to it.
//!
//! The Planner's plan names the question's subjects as the question writes
//! them (`PlannerPlan::subjects`; any model, offline or LLM). Code, never a
//! model, resolves each against the names the sources hold
//! ([`HeldNames`]: services, programs, alert names and labels, the pack's
//! `[aliases]`), tolerant of case, punctuation, a daemon's trailing `d`,
//! a suite's name around its program's, and the Chinese service words of
//! the lexicon. A plan without subjects gets those the question spells
//! that resolve to a held name, so a plain word of the question is never
//! taken for a service.
//!
//! A verified claim is *about* a subject when its evidence's record fields
//! name it (a log line's service, the filter of the query that found it)
//! or its message contains the subject's word. The run uses that twice:
//! the ceiling is at most LOW_CONFID when no verified claim is about any
//! subject ([`Focus::answered`], applied in `run::glue`), and the answer
//! puts findings about the subjects first, the rest under "Other
//! activity", with one line per subject saying what was found about it
//! ([`Focus::status_lines`]).

use crate::evidence::lexicon::lexicon;
use crate::vocab::catalog::HeldNames;
use crate::vocab::contracts::{Lang, SubjectKind, Subjects};
use crate::vocab::dto::{AllowedClaim, VerifiedEvidence};
use crate::vocab::tool::{LOOKUP_KNOWLEDGE, ToolInvocation};
use serde_json::Value;
use std::sync::Arc;

/// Shortest name part a partial match may rest on ("db" is too common).
const MIN_PART: usize = 3;

/// One subject of the question, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    /// As the question (or the plan) wrote it.
    pub asked: String,
    pub kind: SubjectKind,
    /// The held names it stands for; empty when no list holds it.
    pub names: Vec<String>,
}

impl Subject {
    /// Whether some source's list of names holds it.
    pub fn held(&self) -> bool {
        !self.names.is_empty()
    }

    /// The words (lower case) a record or message about it contains.
    fn words(&self) -> Vec<String> {
        let mut out: Vec<String> = self.names.iter().map(|n| n.to_lowercase()).collect();
        let asked = self.asked.to_lowercase();
        // A service asked about under another name is found by the names
        // the sources use; hosts, components, keywords by their own word.
        if self.kind != SubjectKind::Service || out.is_empty() {
            out.push(asked);
        }
        out.retain(|w| w.chars().count() >= 2);
        out.sort();
        out.dedup();
        out
    }
}

/// Letters and digits only, lower case: `Web_Frontend` = `web-frontend`.
fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// A name's parts: `hdfs-datanode` -> `hdfs`, `datanode`.
fn parts(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Suffixes that do not tell one service from another.
const GENERIC: &[&str] = &["service", "svc", "server", "daemon", "api", "app"];

/// Whether the asked name (squashed, or one of its parts) names `held`.
fn names(asked: &str, held: &str) -> bool {
    let a = squash(asked);
    let h = squash(held);
    if a.is_empty() || h.is_empty() {
        return false;
    }
    if a == h {
        return true;
    }
    let strip = |s: &str| {
        GENERIC
            .iter()
            .find_map(|g| s.strip_suffix(g).filter(|b| b.len() >= MIN_PART))
            .map(str::to_string)
            .unwrap_or_else(|| s.to_string())
    };
    if strip(&a) == strip(&h) {
        return true;
    }
    let asked_parts: Vec<String> = parts(asked)
        .into_iter()
        .filter(|p| !GENERIC.contains(&p.as_str()))
        .collect();
    let held_parts: Vec<String> = parts(held)
        .into_iter()
        .filter(|p| !GENERIC.contains(&p.as_str()))
        .collect();
    if asked_parts.is_empty() || held_parts.is_empty() {
        return false;
    }
    // Every distinctive part of the asked name is a part of the held one
    // ("datanode" for hdfs-datanode), or the program serving it: a daemon
    // is the protocol plus `d` (ssh -> sshd), a suite's name ends with
    // its program's (openssh -> sshd).
    asked_parts.iter().all(|a| {
        a.chars().count() >= MIN_PART
            && held_parts.iter().any(|h| {
                let daemon = h
                    .strip_suffix('d')
                    .filter(|b| b.chars().count() >= MIN_PART);
                h == a || daemon.is_some_and(|b| b == a || a.ends_with(b))
            })
    })
}

/// The English words a Chinese name stands for (支付服务 -> payment).
fn english(asked: &str) -> Vec<String> {
    if !asked.chars().any(crate::text::is_han) {
        return vec![];
    }
    // The lexicon's glosses: the one table the answer check reads too.
    lexicon()
        .english_of(asked)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// The held names one asked name stands for.
fn resolve_name(asked: &str, kind: SubjectKind, held: &HeldNames) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |n: &str| {
        if !out.iter().any(|o| o.eq_ignore_ascii_case(n)) {
            out.push(n.to_string());
        }
    };
    for (alias, targets) in &held.aliases {
        if squash(alias) == squash(asked) || alias.trim() == asked.trim() {
            targets.iter().for_each(|t| add(t));
        }
    }
    let lists: Vec<&[String]> = match kind {
        SubjectKind::Alert => vec![&held.alerts],
        SubjectKind::Keyword => vec![],
        SubjectKind::Service | SubjectKind::Component => vec![&held.services, &held.labels],
        SubjectKind::Host => vec![&held.labels, &held.services],
    };
    let glossed = english(asked);
    for list in lists {
        for n in list {
            if names(asked, n) || glossed.iter().any(|g| names(g, n)) {
                add(n);
            }
        }
    }
    out
}

/// The plan's subjects resolved against the held names. Keywords and
/// hosts stay subjects when no list holds them (a message or a record's
/// host field may); so do services and components, which the answer then
/// says no source holds.
pub fn resolve(subjects: &Subjects, held: &HeldNames) -> Vec<Subject> {
    let mut out: Vec<Subject> = Vec::new();
    for (kind, asked) in subjects.named() {
        if out.iter().any(|s| s.asked.eq_ignore_ascii_case(asked)) {
            continue;
        }
        out.push(Subject {
            asked: asked.to_string(),
            kind,
            names: resolve_name(asked, kind, held),
        });
    }
    out
}

/// The subjects a question spells that resolve to a held name: for a plan
/// that named none. Only held names count here, so an ordinary word of
/// the question never becomes a subject.
pub fn from_question(question: &str, held: &HeldNames) -> Vec<Subject> {
    let mut out: Vec<Subject> = Vec::new();
    // An alias in a script without spaces is found inside the question.
    for (alias, _) in &held.aliases {
        if !alias.is_ascii() && question.contains(alias.as_str()) {
            let names = resolve_name(alias, SubjectKind::Service, held);
            if !names.is_empty() {
                out.push(Subject {
                    asked: alias.clone(),
                    kind: SubjectKind::Service,
                    names,
                });
            }
        }
    }
    let words: Vec<&str> = question
        .split(|c: char| c.is_whitespace() || ",;:?!()\"'“”，。？！：；（）".contains(c))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| w.chars().count() >= MIN_PART || w.chars().any(|c| (c as u32) >= 0x3400))
        .collect();
    for w in words {
        let alias = held.aliases.iter().any(|(a, _)| squash(a) == squash(w));
        // whole held names only (or an alias): a part would turn common
        // words into services
        let exact = held
            .services
            .iter()
            .chain(&held.alerts)
            .any(|n| squash(n) == squash(w));
        if !(alias || exact) || out.iter().any(|s| s.asked.eq_ignore_ascii_case(w)) {
            continue;
        }
        let kind = if held.alerts.iter().any(|a| squash(a) == squash(w)) {
            SubjectKind::Alert
        } else {
            SubjectKind::Service
        };
        let names = resolve_name(w, kind, held);
        if !names.is_empty() {
            out.push(Subject {
                asked: w.to_string(),
                kind,
                names,
            });
        }
    }
    out
}

/// `word` in `hay` (both lower case) where it is not part of a longer
/// name: `db-1` is not in `db-12`.
fn contains_name(hay: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let name_char = |c: char| c.is_alphanumeric() || c == '_';
    hay.match_indices(word).any(|(i, _)| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + word.len()..].chars().next();
        before.is_none_or(|c| !name_char(c)) && after.is_none_or(|c| !name_char(c))
    })
}

/// What the subjects are and which verified claims are about them.
#[derive(Debug, Clone, Default)]
pub struct Focus {
    pub subjects: Vec<Subject>,
    /// Per subject (same order), whether a verified claim is about it.
    pub found: Vec<bool>,
    /// Claim ids (as [`claim_key`](crate::engine::nodes::answer::claim_key)
    /// reads them) about some subject.
    pub about: Vec<String>,
}

impl Focus {
    /// Reads which of `claims` (id, negative, evidence) are about the
    /// subjects, through the refs of this run's `invocations`.
    pub fn new<'a>(
        subjects: Vec<Subject>,
        claims: impl Iterator<Item = (&'a str, bool, &'a [VerifiedEvidence])>,
        invocations: &[Arc<ToolInvocation>],
    ) -> Focus {
        let mut found = vec![false; subjects.len()];
        let mut about = Vec::new();
        for (id, negative, evidence) in claims {
            let mut hit = false;
            for (i, s) in subjects.iter().enumerate() {
                // Found nothing about a name no source holds is not an
                // answer about it: it says the name is not there.
                if negative && !s.held() {
                    continue;
                }
                if evidence.iter().any(|e| evidence_about(s, e, invocations)) {
                    found[i] = true;
                    hit = true;
                }
            }
            if hit {
                about.push(crate::engine::nodes::answer::claim_key(id));
            }
        }
        Focus {
            subjects,
            found,
            about,
        }
    }

    /// The focus of a Composer input's allowed claims.
    pub fn of_claims(
        subjects: Vec<Subject>,
        claims: &[AllowedClaim],
        invocations: &[Arc<ToolInvocation>],
    ) -> Focus {
        Focus::new(
            subjects,
            claims
                .iter()
                .map(|c| (c.claim_id.as_str(), c.is_negative, c.evidence.as_slice())),
            invocations,
        )
    }

    /// Whether the question has subjects to answer about.
    pub fn applies(&self) -> bool {
        !self.subjects.is_empty()
    }

    /// Some verified claim is about some subject (true without subjects).
    pub fn answered(&self) -> bool {
        !self.applies() || self.found.iter().any(|f| *f)
    }

    /// Whether a claim is about a subject (every claim is, without any).
    pub fn is_about(&self, claim_id: &str) -> bool {
        !self.applies()
            || self
                .about
                .contains(&crate::engine::nodes::answer::claim_key(claim_id))
    }

    /// One line per subject saying what was found about it, then, when
    /// nothing was, that the question is not answered.
    pub fn status_lines(&self, lang: Lang) -> Vec<String> {
        let zh = lang == Lang::Zh;
        let name = |s: &Subject| crate::text::clean(&s.asked, 80);
        let mut out: Vec<String> = Vec::new();
        for (s, found) in self.subjects.iter().zip(&self.found) {
            let n = name(s);
            let listed = s.held() && !s.names.iter().any(|h| h.eq_ignore_ascii_case(&s.asked));
            let as_names = s
                .names
                .iter()
                .map(|h| crate::text::clean(h, 60))
                .collect::<Vec<_>>()
                .join(", ");
            out.push(match (found, s.held(), s.kind, zh) {
                (true, _, _, false) if listed => {
                    format!("{n} (in the sources as {as_names}): verified evidence found.")
                }
                (true, _, _, true) if listed => {
                    format!("{n}（来源中的名称：{as_names}）：已找到经核验的证据。")
                }
                (true, _, _, false) => format!("{n}: verified evidence found."),
                (true, _, _, true) => format!("{n}：已找到经核验的证据。"),
                (false, false, SubjectKind::Service | SubjectKind::Component, false) => {
                    format!("No evidence about {n}: no source holds that name.")
                }
                (false, false, SubjectKind::Service | SubjectKind::Component, true) => {
                    format!("没有关于 {n} 的证据：没有任何数据源包含这个名称。")
                }
                (false, _, _, false) => format!("No verified evidence about {n} was found."),
                (false, _, _, true) => format!("没有找到关于 {n} 的经核验证据。"),
            });
        }
        if !self.answered() {
            let all = self
                .subjects
                .iter()
                .map(name)
                .collect::<Vec<_>>()
                .join(", ");
            out.push(if zh {
                format!("问题没有得到回答：没有任何经核验的发现与 {all} 有关。")
            } else {
                format!("The question is not answered: no verified finding is about {all}.")
            });
        }
        out
    }
}

/// The title of the section that says what was found per subject.
pub fn title(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "What the question asks about:",
        Lang::Zh => "问题涉及的对象：",
    }
}

/// The title of the findings about none of the question's subjects.
pub fn other_title(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "Other activity (not about what the question asks):",
        Lang::Zh => "其他活动（与问题所问对象无关）：",
    }
}

/// Whether one piece of verified evidence is about `s`: the record's
/// fields name it (the service of a log ref, the labels of an alert ref,
/// the filter of the query that returned it) or its text contains the
/// subject's word. Knowledge text is background, never about anything
/// that happened.
fn evidence_about(s: &Subject, e: &VerifiedEvidence, invocations: &[Arc<ToolInvocation>]) -> bool {
    if e.tool_name == LOOKUP_KNOWLEDGE {
        return false;
    }
    let words = s.words();
    let by_id = |id: i64| invocations.iter().find(|i| i.id == id);
    if let Some(inv) = by_id(e.source_invocation_id) {
        if filter_names(&inv.input_params, &words) {
            return true;
        }
        // a deduped query's refs are the earlier invocation's
        let refs_of = inv
            .retrieval_details
            .deduped_from
            .and_then(by_id)
            .unwrap_or(inv);
        if let Some(r) = refs_of
            .retrieval_details
            .evidence_refs
            .iter()
            .find(|r| r.raw_path == e.raw_path)
        {
            let text = r.text.to_lowercase();
            if words.iter().any(|w| contains_name(&text, w)) {
                return true;
            }
            // the same record returned by a query that filtered on the
            // subject (a host named in a field the ref text leaves out)
            if invocations.iter().any(|other| {
                other.id != inv.id
                    && filter_names(&other.input_params, &words)
                    && other
                        .retrieval_details
                        .evidence_refs
                        .iter()
                        .any(|o| o.text == r.text)
            }) {
                return true;
            }
        }
    }
    let matched = e.matched_text.to_lowercase();
    words.iter().any(|w| contains_name(&matched, w))
}

/// A query's filter names one of the words: the tool returned only
/// records whose field (service, alert name) or text holds it.
fn filter_names(args: &Value, words: &[String]) -> bool {
    let Some(map) = args.as_object() else {
        return false;
    };
    ["service", "alertname", "keyword", "host", "instance"]
        .iter()
        .filter_map(|k| map.get(*k)?.as_str())
        .map(str::to_lowercase)
        .any(|v| words.iter().any(|w| v == *w || contains_name(&v, w)))
}

#[cfg(test)]
mod tests;
