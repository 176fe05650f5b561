//! The answer, assembled by code from the statements the Composer chose
//! (ARCHITECTURE.md, "Evidence trust boundary"; the `answer.*` rules of
//! `gatekeeper-rules.json`).
//!
//! The Composer names, for every statement, the verified claims it rests
//! on. [`assemble`] checks each statement against the verified evidence of
//! those claims (`evidence::answer::check_text`: every word grounded in
//! that evidence, no negation, state or recombination of facts it lacks)
//! and rejects the whole output
//! on the first statement that fails: the node turns that into
//! INVALID_OUTPUT, so the Composer gets its one technical retry and then
//! the post-verifier fallback, which applies the same check to every
//! claim text it shows. What a rejected statement said is recorded with
//! its rule (node detail, run failures); the user never sees it.
//!
//! Negative findings are never the Composer's words: every allowed
//! negative claim is rendered from the code template
//! (`evidence::answer::negative_line`). Hypotheses, missing information and
//! next steps appear only in the section marked unverified, and a line
//! there that concludes ("healthy", "ruled out", 正常...) is dropped with a
//! warning.

use crate::engine::nodes::gatekeeper::{GatekeeperRules, RuleId};
use crate::engine::subjects::{self, Focus};
pub use crate::evidence::answer::check_text;
use crate::evidence::answer::check_text_cached;
use crate::evidence::answer::{self, titles};
use crate::evidence::facts::FactCache;
use crate::evidence::facts::grounded::Added;
use crate::vocab::contracts::{ComposerOutput, Severity};
use crate::vocab::dto::{AllowedClaim, ComposerInput};

/// A statement the answer rules reject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub rule: RuleId,
    pub detail: String,
    /// The word or fact the rejected statement added, when a statement
    /// rule rejected it.
    pub word: Option<String>,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.rule.as_str(), self.detail)
    }
}

/// An assembled answer and the warnings about what it left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembled {
    pub text: String,
    pub warnings: Vec<String>,
}

/// A claim id as a model may write it back: NFKC, trimmed, case folded.
pub fn claim_key(id: &str) -> String {
    crate::evidence::facts::normalize(id).trim().to_lowercase()
}

/// Which rule an addition breaks.
fn rule_of(a: &Added) -> RuleId {
    if matches!(a, Added::Ungrounded(_)) {
        RuleId::StatementGrounded
    } else if a.is_polarity() {
        RuleId::StatementPolarity
    } else {
        RuleId::StatementFacts
    }
}

/// The rules the answer runs under.
struct On {
    facts: bool,
    polarity: bool,
    grounded: bool,
    background: bool,
    negative: bool,
    unverified: Option<Severity>,
}

impl On {
    fn new(rules: &GatekeeperRules) -> On {
        // one resolution of the rule table, not one per rule asked
        let resolved = rules.resolve();
        let on = |r| resolved.severity(r).is_some_and(|s| s != Severity::None);
        On {
            facts: on(RuleId::StatementFacts),
            polarity: on(RuleId::StatementPolarity),
            grounded: on(RuleId::StatementGrounded),
            background: rules.severity(RuleId::RunbookBackground).is_some(),
            negative: on(RuleId::NegativeByTemplate),
            unverified: resolved.severity(RuleId::UnverifiedConclusion),
        }
    }
}

/// Assembles the answer from the Composer's statements, or names the rule
/// the first failing statement breaks. `names`: service names the sources
/// know (lower case).
pub fn assemble(
    input: &ComposerInput,
    output: &ComposerOutput,
    names: &[String],
    rules: &GatekeeperRules,
) -> Result<Assembled, Rejection> {
    assemble_cached(input, output, names, rules, &mut FactCache::default())
}

/// [`assemble`], reading the evidence texts through the run's `facts`
/// cache (the Gatekeeper parsed them when it checked the refs).
pub fn assemble_cached(
    input: &ComposerInput,
    output: &ComposerOutput,
    names: &[String],
    rules: &GatekeeperRules,
    facts: &mut FactCache,
) -> Result<Assembled, Rejection> {
    assemble_focused(input, output, names, rules, facts, &Focus::default())
}

/// [`assemble_cached`] for a question with subjects: what was found about
/// each comes first, findings about none of them under "Other activity"
/// (`engine::subjects`).
pub fn assemble_focused(
    input: &ComposerInput,
    output: &ComposerOutput,
    names: &[String],
    rules: &GatekeeperRules,
    facts: &mut FactCache,
    focus: &Focus,
) -> Result<Assembled, Rejection> {
    let lang = input.lang;
    let t = titles(lang);
    let on = On::new(rules);
    let reject = |rule: RuleId, detail: String| {
        Err(Rejection {
            rule,
            detail,
            word: None,
        })
    };
    // Free text in place of statements names no claim; with only negative
    // claims there is nothing for it to state (they are templates), so it
    // is simply not shown.
    if output.statements.is_empty()
        && !output.user_facing_answer.trim().is_empty()
        && input.allowed_claims.iter().any(|c| !c.is_negative)
    {
        return reject(
            RuleId::StatementCitesClaim,
            "the output has no statements: its free-text user_facing_answer names no verified claim"
                .into(),
        );
    }
    let mut causes: Vec<String> = Vec::new();
    let mut findings: Vec<String> = Vec::new();
    let mut other: Vec<String> = Vec::new();
    let mut background: Vec<String> = Vec::new();
    for (i, st) in output.statements.iter().enumerate() {
        if st.claim_ids.is_empty() {
            return reject(
                RuleId::StatementCitesClaim,
                format!("statements[{i}] names no claim"),
            );
        }
        let mut claims: Vec<&AllowedClaim> = Vec::new();
        for id in &st.claim_ids {
            let key = claim_key(id);
            match input
                .allowed_claims
                .iter()
                .find(|c| claim_key(&c.claim_id) == key)
            {
                Some(c) if !claims.iter().any(|x| x.claim_id == c.claim_id) => claims.push(c),
                Some(_) => {}
                None => {
                    return reject(
                        RuleId::StatementCitesClaim,
                        format!(
                            "statements[{i}] names claim {:?}, which is not a verified claim the Verifier allowed",
                            crate::text::truncate_middle(id, 48)
                        ),
                    );
                }
            }
        }
        let negatives = claims.iter().filter(|c| c.is_negative).count();
        if negatives > 0 && negatives < claims.len() && on.negative {
            return reject(
                RuleId::NegativeByTemplate,
                format!("statements[{i}] mixes a negative finding with positive claims"),
            );
        }
        // the text as it will be shown is the text checked
        let shown = crate::text::clean(&st.text, answer::STATEMENT_CHARS);
        if let Some(a) = check_text_cached(&shown, &claims, names, facts) {
            let rule = rule_of(&a);
            let enabled = match rule {
                RuleId::StatementGrounded => on.grounded,
                RuleId::StatementPolarity => on.polarity,
                _ => on.facts,
            };
            if enabled {
                return Err(Rejection {
                    rule,
                    detail: format!("statements[{i}] {}", a.describe()),
                    word: Some(a.word().to_string()),
                });
            }
        }
        if negatives == claims.len() {
            // rendered from the template below, whatever the statement says
            continue;
        }
        let line = answer::finding_line(lang, &shown, &claims);
        if on.background && runbook_only_cause(&claims) {
            background.push(format!("{}{line}", t.background));
            continue;
        }
        if !claims.iter().any(|c| focus.is_about(&c.claim_id)) {
            other.push(line);
        } else if claims.iter().any(|c| c.claim_type == "root_cause") {
            causes.push(line);
        } else {
            findings.push(line);
        }
    }
    let negatives: Vec<String> = input
        .allowed_claims
        .iter()
        .filter(|c| c.is_negative)
        .map(|c| answer::negative_line(lang, c))
        .collect();

    let mut warnings: Vec<String> = background
        .iter()
        .map(|l| {
            format!(
                "{}: {:?} rests only on knowledge-base text: shown as runbook background, not as a cause",
                RuleId::RunbookBackground.as_str(),
                crate::text::truncate_middle(l, 80)
            )
        })
        .collect();
    let mut out = String::new();
    if let Some(banner) = crate::evidence::answer::verdict_banner(lang, input.verdict) {
        out.push_str(banner);
    }
    if focus.applies() {
        answer::section(&mut out, subjects::title(lang), &focus.status_lines(lang));
    }
    answer::section(&mut out, t.likely_cause, &causes);
    answer::section(&mut out, t.findings, &findings);
    answer::section(&mut out, subjects::other_title(lang), &other);
    answer::section(&mut out, t.not_found, &negatives);
    if causes.is_empty() && findings.is_empty() && other.is_empty() && negatives.is_empty() {
        answer::section(&mut out, t.findings, &[t.none.to_string()]);
    }
    // Missing information is the Executor's words too: unverified.
    let mut unverified_lines = background;
    unverified_lines.extend(unverified(
        input.missing_info.iter().map(String::as_str),
        t.missing,
        on.unverified,
        &mut warnings,
    ));
    unverified_lines.extend(unverified(
        input
            .allowed_hypotheses
            .iter()
            .map(|h| h.hypothesis_text.as_str()),
        t.hypothesis,
        on.unverified,
        &mut warnings,
    ));
    unverified_lines.extend(unverified(
        output
            .recommended_actions
            .iter()
            .map(|a| a.action_text.as_str()),
        t.next_step,
        on.unverified,
        &mut warnings,
    ));
    answer::section(&mut out, t.unverified, &unverified_lines);
    Ok(Assembled {
        text: out,
        warnings,
    })
}

/// A statement whose claims rest only on knowledge-base text, whatever
/// their type: runbook background (`answer.runbook_background`), never a
/// finding or a likely cause. A runbook says what can happen, not what
/// happened here.
pub fn runbook_only_cause(claims: &[&AllowedClaim]) -> bool {
    !claims.is_empty() && claims.iter().all(|c| answer::is_background(c))
}

/// Lines for the unverified section (or missing information), prefixed;
/// a concluding line is dropped with a warning while the rule is on.
pub fn unverified<'a>(
    items: impl Iterator<Item = &'a str>,
    prefix: &str,
    rule: Option<Severity>,
    warnings: &mut Vec<String>,
) -> Vec<String> {
    let items: Vec<&str> = items.collect();
    let (kept, dropped) = answer::unverified_lines(items.iter().copied());
    if rule.is_none() {
        return items
            .iter()
            .map(|l| crate::text::clean(l, 300))
            .filter(|l| !l.is_empty())
            .map(|l| format!("{prefix}{l}"))
            .collect();
    }
    for (line, word) in dropped {
        warnings.push(format!(
            "{}: dropped {:?}: it concludes ({word:?}), which no evidence can carry",
            RuleId::UnverifiedConclusion.as_str(),
            crate::text::truncate_middle(&line, 80)
        ));
    }
    kept.into_iter().map(|l| format!("{prefix}{l}")).collect()
}

#[cfg(test)]
mod tests;
