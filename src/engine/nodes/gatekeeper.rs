//! The Gatekeeper: code-level citation checks of every evidence binding
//! against this run's recorded invocations (ARCHITECTURE.md, "Evidence
//! trust boundary"; the rules are listed in `gatekeeper-rules.json`).
//!
//! Executor output is untrusted. A binding passes only when it resolves to
//! one evidence ref of one invocation of *this* run (possibly through the
//! unique-match backfill) and every enabled rule accepts it; its
//! `matched_text` is then the ref's code-made text, which is all that
//! VerifiedInput lets through. A binding that cannot be resolved never
//! passes, even if the rule that would name its fault is disabled: it then
//! fails at `low_confid` so it is dropped without rejecting the run.
//! Error lines name the claim, binding and rule and quote at most a short,
//! control-character-free snippet of model text.

mod rules;

pub use crate::evidence::excerpt::{ExcerptParams, ExcerptRule, Unsupported, supports};
pub use crate::evidence::facts::{FactCache, FactText};
pub use rules::{GatekeeperRules, RULE_SET_VERSION, RuleDef, RuleId};

use crate::text::{clean, truncate_middle};
use crate::vocab::contracts::{
    BindingStatus, CLAIM_TYPES, CheckedBinding, Claim, ClaimError, EXECUTOR_ANSWER_VERSION,
    EvidenceBinding, ExecutorEvidence, GatekeeperResult, NO_EVIDENCE_PATH, SUPPORT_LEVELS,
    Severity,
};
use crate::vocab::tool::{EvidenceRef, EvidenceStatus, ToolInvocation};
use regex::Regex;
use rules::Resolved;
use std::borrow::Borrow;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

static RAW_PATH_SHAPE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\$\.([a-z_][a-z0-9_]*)\[(0|[1-9][0-9]{0,8})\]$").ok());

/// The array `path` names when it points at one whole item (`$.logs[3]`
/// -> `logs`); `None` for a field sub-path or anything else.
pub fn raw_path_array(path: &str) -> Option<&str> {
    let re = RAW_PATH_SHAPE.as_ref()?;
    re.captures(path)?.get(1).map(|m| m.as_str())
}

/// Whether `path` points at a whole item of one of `arrays` (the evidence
/// arrays a tool's spec declares) or at `$.no_evidence`.
pub fn raw_path_shape_ok(path: &str, arrays: &[String]) -> bool {
    path == NO_EVIDENCE_PATH || raw_path_array(path).is_some_and(|a| arrays.iter().any(|d| d == a))
}

/// Checks every binding of `output` against `invocations` (this run's
/// only). A raw_path may point into any array; [`check_with_tools`] holds
/// each to the arrays its tool declares.
pub fn check<I: Borrow<ToolInvocation>>(
    output: &ExecutorEvidence,
    invocations: &[I],
    rules: &GatekeeperRules,
) -> GatekeeperResult {
    check_with_tools(output, invocations, rules, None)
}

/// [`check`], with each binding's raw_path held to the evidence arrays
/// its tool's registered spec declares.
pub fn check_with_tools<I: Borrow<ToolInvocation>>(
    output: &ExecutorEvidence,
    invocations: &[I],
    rules: &GatekeeperRules,
    tools: Option<&crate::tools::ToolRegistry>,
) -> GatekeeperResult {
    check_cached(output, invocations, rules, tools, &mut FactCache::default())
}

/// [`check_with_tools`], parsing each ref text through the run's `facts`
/// cache, so the answer check that follows finds them parsed.
pub fn check_cached<I: Borrow<ToolInvocation>>(
    output: &ExecutorEvidence,
    invocations: &[I],
    rules: &GatekeeperRules,
    tools: Option<&crate::tools::ToolRegistry>,
    facts: &mut FactCache,
) -> GatekeeperResult {
    let invocations: Vec<&ToolInvocation> = invocations.iter().map(Borrow::borrow).collect();
    let mut run = Checker::new(&invocations, rules, facts);
    run.tools = tools;
    if output.answer_version != EXECUTOR_ANSWER_VERSION {
        let detail = format!(
            "answer_version is {}, expected {EXECUTOR_ANSWER_VERSION}",
            quote(&output.answer_version)
        );
        run.fail_run(RuleId::AnswerVersion, detail);
    }
    if output.claims.is_empty() {
        let detail = "the output has no claims, so it verifies nothing".to_string();
        run.fail_run(RuleId::HasClaims, detail);
    }
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut checked = Vec::new();
    for (i, claim) in output.claims.iter().enumerate() {
        run.check_claim(i, claim, &mut ids);
        if claim.evidence_bindings.is_empty() {
            let detail = format!("claim {} has no evidence bindings", quote(&claim.claim_id));
            run.fail_claim(i, claim, RuleId::ClaimHasBindings, detail);
        }
        let mut seen: HashSet<(i64, String)> = HashSet::new();
        for (n, binding) in claim.evidence_bindings.iter().enumerate() {
            checked.push(run.check_binding(claim, n, binding, &mut seen));
        }
    }
    // Bindings on hypotheses and actions: never evidence of a finding, but
    // a fabricated citation anywhere is a failure with its rule.
    let items = output
        .hypotheses
        .iter()
        .enumerate()
        .map(|(i, h)| {
            (
                format!("hypotheses[{i}]"),
                &h.hypothesis_text,
                &h.evidence_bindings,
            )
        })
        .chain(output.recommended_actions.iter().enumerate().map(|(i, a)| {
            (
                format!("recommended_actions[{i}]"),
                &a.action_text,
                &a.evidence_bindings,
            )
        }));
    let mut unverified = Vec::new();
    for (id, text, bindings) in items {
        if bindings.is_empty() {
            continue;
        }
        let item = Claim {
            claim_id: id,
            claim_type: UNVERIFIED_ITEM.into(),
            claim_text: text.clone(),
            support_level: String::new(),
            evidence_bindings: Vec::new(),
        };
        let mut seen: HashSet<(i64, String)> = HashSet::new();
        for (n, binding) in bindings.iter().enumerate() {
            unverified.push(run.check_binding(&item, n, binding, &mut seen));
        }
    }
    run.finish(checked, unverified)
}

/// The `claim_type` the Gatekeeper gives a hypothesis or action while it
/// checks its bindings: not a claim, so neither claim-type rule applies.
const UNVERIFIED_ITEM: &str = "unverified";

/// One failed rule on one binding.
struct Failure {
    rule: RuleId,
    severity: Severity,
    detail: String,
}

struct Checker<'a, 'f> {
    invocations: &'a [&'a ToolInvocation],
    by_id: HashMap<i64, usize>,
    resolved: Resolved,
    rules: &'a GatekeeperRules,
    /// The registered tools, whose specs declare their evidence arrays.
    tools: Option<&'a crate::tools::ToolRegistry>,
    /// Normalised ref texts, filled on first use (the run's cache).
    facts: &'f mut FactCache,
    severity: Severity,
    failed_rules: Vec<String>,
    claim_errors: Vec<ClaimError>,
    warnings: Vec<String>,
    errors: Vec<String>,
}

/// A claim id as the Verifier and Composer may write it back: NFKC,
/// trimmed, case folded. Two ids equal under it are one id.
fn claim_id_key(id: &str) -> String {
    crate::evidence::facts::normalize(id).trim().to_lowercase()
}

impl<'a, 'f> Checker<'a, 'f> {
    fn new(
        invocations: &'a [&'a ToolInvocation],
        rules: &'a GatekeeperRules,
        facts: &'f mut FactCache,
    ) -> Self {
        let mut by_id = HashMap::with_capacity(invocations.len());
        for (i, inv) in invocations.iter().enumerate() {
            by_id.entry(inv.id).or_insert(i);
        }
        let resolved = rules.resolve();
        Checker {
            invocations,
            by_id,
            resolved,
            rules,
            tools: None,
            facts,
            severity: Severity::None,
            failed_rules: Vec::new(),
            claim_errors: Vec::new(),
            warnings: Vec::new(),
            errors: Vec::new(),
        }
    }

    fn record(&mut self, rule: RuleId, severity: Severity, line: String) {
        if severity == Severity::None {
            self.warnings.push(line);
            return;
        }
        self.severity = self.severity.max(severity);
        if !self.failed_rules.iter().any(|r| r == rule.as_str()) {
            self.failed_rules.push(rule.as_str().into());
        }
        self.errors.push(line);
    }

    /// A failure of the whole output (answer_version, no claims).
    fn fail_run(&mut self, rule: RuleId, detail: String) {
        if let Some(sev) = self.resolved.severity(rule) {
            let line = format!("{} ({}): {detail}", rule.as_str(), sev.as_str());
            self.record(rule, sev, line);
            self.claim_errors.push(ClaimError {
                claim_id: None,
                claim_index: None,
                rule: rule.as_str().into(),
                severity: sev,
                detail,
            });
        }
    }

    /// A failure of one claim (not of one of its bindings).
    fn fail_claim(&mut self, index: usize, claim: &Claim, rule: RuleId, detail: String) {
        if let Some(sev) = self.resolved.severity(rule) {
            let line = format!("{} ({}): {detail}", rule.as_str(), sev.as_str());
            self.record(rule, sev, line);
            self.claim_errors.push(ClaimError {
                claim_id: Some(claim.claim_id.clone()),
                claim_index: Some(index),
                rule: rule.as_str().into(),
                severity: sev,
                detail,
            });
        }
    }

    /// The contract rules on one claim: its enum values are the contract's,
    /// exactly spelled, and its id is its own.
    fn check_claim(&mut self, i: usize, claim: &Claim, ids: &mut HashMap<String, usize>) {
        for (field, value, allowed) in [
            ("claim_type", &claim.claim_type, &CLAIM_TYPES[..]),
            ("support_level", &claim.support_level, &SUPPORT_LEVELS[..]),
        ] {
            if !allowed.contains(&value.as_str()) {
                let detail = format!(
                    "claims[{i}] ({}) {field} {} is not one of {} (exact spelling)",
                    quote(&claim.claim_id),
                    quote(value),
                    allowed.join(", ")
                );
                self.fail_claim(i, claim, RuleId::EnumValues, detail);
            }
        }
        let key = claim_id_key(&claim.claim_id);
        match ids.get(&key) {
            Some(first) => {
                let detail = format!(
                    "claims[{i}] repeats the claim_id {} of claims[{first}]; every claim needs its own id",
                    quote(&claim.claim_id)
                );
                self.fail_claim(i, claim, RuleId::UniqueClaimIds, detail);
            }
            None => {
                ids.insert(key, i);
            }
        }
    }

    fn ref_text(&mut self, inv: usize, r: usize) -> Option<std::sync::Arc<FactText>> {
        let text = self
            .invocations
            .get(inv)?
            .retrieval_details
            .evidence_refs
            .get(r)?;
        Some(self.facts.get(&text.text))
    }

    fn supported(&mut self, excerpt: &FactText, inv: usize, r: usize) -> Result<(), Unsupported> {
        let params = self.resolved.excerpt;
        match self.ref_text(inv, r) {
            Some(reference) => supports(excerpt, &reference, &params),
            None => Err(Unsupported::FactMissing("the ref".into())),
        }
    }

    fn check_binding(
        &mut self,
        claim: &Claim,
        n: usize,
        b: &EvidenceBinding,
        seen: &mut HashSet<(i64, String)>,
    ) -> CheckedBinding {
        let mut eval = Eval::default();
        let excerpt = FactText::new(&b.evidence_excerpt);
        let raw_path = b
            .raw_path
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string);
        let mut id = b.source_invocation_id;
        let mut path = raw_path.clone();
        let mut matched = String::new();

        if let Some(inv) = self.resolve_invocation(b, raw_path.as_deref(), &excerpt, &mut eval) {
            id = self.invocations.get(inv).map(|i| i.id);
            if let Some((r, p)) = self.resolve_ref(b, inv, raw_path.as_deref(), &excerpt, &mut eval)
            {
                path = Some(p.clone());
                self.check_ref(
                    claim,
                    inv,
                    r,
                    &p,
                    (&excerpt, &b.evidence_excerpt),
                    seen,
                    &mut eval,
                );
                if let Some(text) = self.ref_raw(inv, r) {
                    matched = text.text.clone();
                }
            }
        }

        let failed = eval.worst();
        let status = if failed.is_some() {
            BindingStatus::Fail
        } else {
            BindingStatus::Pass
        };
        if !eval.warnings.is_empty() || !eval.failures.is_empty() {
            let what = if claim.claim_type == UNVERIFIED_ITEM {
                "item"
            } else {
                "claim"
            };
            let where_ = format!(
                "{what} {} binding #{} ({} invocation {} {})",
                quote(&claim.claim_id),
                n + 1,
                quote(&b.tool_name),
                id.map_or_else(|| "?".to_string(), |i| i.to_string()),
                quote(path.as_deref().unwrap_or("?")),
            );
            for w in &eval.warnings {
                self.warnings.push(format!("{where_}: {w}"));
            }
            for f in &eval.failures {
                let line = format!(
                    "{where_}: {} ({}): {}",
                    f.rule.as_str(),
                    f.severity.as_str(),
                    f.detail
                );
                self.record(f.rule, f.severity, line);
            }
        }
        let (failed_rule, detail) = match failed {
            Some(f) => (Some(f.rule.as_str().to_string()), f.detail.clone()),
            None => (None, String::new()),
        };
        CheckedBinding {
            claim_id: claim.claim_id.clone(),
            claim_text: claim.claim_text.clone(),
            claim_type: claim.claim_type.clone(),
            tool_name: b.tool_name.clone(),
            source_invocation_id: id,
            raw_path: path,
            evidence_excerpt: b.evidence_excerpt.clone(),
            matched_text: if status == BindingStatus::Pass {
                matched
            } else {
                String::new()
            },
            status,
            failed_rule,
            detail,
            backfilled: eval.backfilled,
        }
    }

    fn ref_raw(&self, inv: usize, r: usize) -> Option<&EvidenceRef> {
        self.invocations
            .get(inv)?
            .retrieval_details
            .evidence_refs
            .get(r)
    }

    /// The index of the invocation the binding cites, or None (with a
    /// failure recorded) when it cites none of this run's.
    fn resolve_invocation(
        &mut self,
        b: &EvidenceBinding,
        raw_path: Option<&str>,
        excerpt: &FactText,
        eval: &mut Eval,
    ) -> Option<usize> {
        if let Some(bad) = &b.invalid_invocation_id {
            let detail = format!(
                "source_invocation_id {} is not an invocation id",
                quote(bad)
            );
            eval.fail_essential(&self.resolved, RuleId::InvocationOwned, detail);
            return None;
        }
        if let Some(id) = b.source_invocation_id {
            return match self.by_id.get(&id) {
                Some(&i) => Some(i),
                None => {
                    let detail = format!("invocation {id} is not one of this run's invocations");
                    eval.fail_essential(&self.resolved, RuleId::InvocationOwned, detail);
                    None
                }
            };
        }
        let Some(path) = raw_path else {
            let detail =
                "source_invocation_id and raw_path are both missing; cannot backfill".to_string();
            eval.fail_essential(&self.resolved, RuleId::InvocationIdPresent, detail);
            return None;
        };
        let mut candidates = Vec::new();
        for (i, inv) in self.invocations.iter().enumerate() {
            if inv.tool_name != b.tool_name || !has_usable_refs(inv) {
                continue;
            }
            let refs = &inv.retrieval_details.evidence_refs;
            if let Some(r) = refs.iter().position(|r| r.raw_path == path)
                && self.supported(excerpt, i, r).is_ok()
            {
                candidates.push(i);
            }
        }
        match candidates.as_slice() {
            [only] => {
                let id = self.invocations.get(*only).map_or(0, |i| i.id);
                eval.backfilled = true;
                eval.warnings.push(format!(
                    "source_invocation_id was missing; backfilled to {id} (unique tool_name + raw_path + excerpt match)"
                ));
                Some(*only)
            }
            _ => {
                let detail = format!(
                    "source_invocation_id is missing and tool_name + raw_path + excerpt match {} invocations, not exactly one",
                    candidates.len()
                );
                eval.fail_essential(&self.resolved, RuleId::InvocationIdPresent, detail);
                None
            }
        }
    }

    /// The ref (index, raw_path) the binding cites within invocation `inv`.
    fn resolve_ref(
        &mut self,
        b: &EvidenceBinding,
        inv: usize,
        raw_path: Option<&str>,
        excerpt: &FactText,
        eval: &mut Eval,
    ) -> Option<(usize, String)> {
        let invocation = self.invocations.get(inv)?;
        let inv_id = invocation.id;
        if b.tool_name != invocation.tool_name {
            let detail = format!(
                "tool_name {} does not match invocation {inv_id}'s tool {}",
                quote(&b.tool_name),
                invocation.tool_name
            );
            eval.fail(&self.resolved, RuleId::ToolName, detail);
        }
        if !has_usable_refs(invocation) {
            let status = invocation.retrieval_details.evidence_status.as_str();
            let detail = format!(
                "invocation {inv_id} has no evidence_refs (evidence_status {status}); cite the invocation that holds the evidence"
            );
            eval.fail_essential(&self.resolved, RuleId::InvocationHasRefs, detail);
            return None;
        }
        let ref_count = invocation.retrieval_details.evidence_refs.len();
        let Some(path) = raw_path else {
            let mut supporting = Vec::new();
            for r in 0..ref_count {
                if self.supported(excerpt, inv, r).is_ok() {
                    supporting.push(r);
                }
            }
            return match supporting.as_slice() {
                [only] => {
                    let p = self.ref_raw(inv, *only)?.raw_path.clone();
                    eval.backfilled = true;
                    eval.warnings.push(format!(
                        "raw_path was missing; backfilled to {} (the only ref supporting the excerpt)",
                        quote(&p)
                    ));
                    Some((*only, p))
                }
                _ => {
                    let detail = format!(
                        "raw_path is missing and {} refs of invocation {inv_id} support the excerpt, not exactly one",
                        supporting.len()
                    );
                    eval.fail_essential(&self.resolved, RuleId::RawPathPresent, detail);
                    None
                }
            };
        };
        // The arrays the tool declares; a tool not registered here (or
        // declaring none) is held to the shape only.
        let declared = self
            .tools
            .and_then(|t| t.spec(&invocation.tool_name))
            .map(|s| s.evidence_arrays.clone())
            .filter(|a| !a.is_empty());
        let shape_ok = match &declared {
            Some(arrays) => raw_path_shape_ok(path, arrays),
            None => path == NO_EVIDENCE_PATH || raw_path_array(path).is_some(),
        };
        if !shape_ok {
            let arrays = match &declared {
                Some(a) => a
                    .iter()
                    .map(|a| format!("$.{a}[i]"))
                    .collect::<Vec<_>>()
                    .join(", "),
                None => "$.<array>[i]".into(),
            };
            let detail = format!(
                "raw_path {} must be {arrays} or $.no_evidence (no field sub-paths)",
                quote(path)
            );
            eval.fail_essential(&self.resolved, RuleId::RawPathShape, detail);
            return None;
        }
        let refs = &invocation.retrieval_details.evidence_refs;
        match refs.iter().position(|r| r.raw_path == path) {
            Some(r) => Some((r, path.to_string())),
            None => {
                let detail = format!(
                    "raw_path {} is not among invocation {inv_id}'s evidence_refs",
                    quote(path)
                );
                eval.fail_essential(&self.resolved, RuleId::RawPathExists, detail);
                None
            }
        }
    }

    /// Rules on a binding that resolved to one ref.
    #[allow(clippy::too_many_arguments)]
    fn check_ref(
        &mut self,
        claim: &Claim,
        inv: usize,
        r: usize,
        path: &str,
        (excerpt, raw_excerpt): (&FactText, &str),
        seen: &mut HashSet<(i64, String)>,
        eval: &mut Eval,
    ) {
        let inv_id = self.invocations.get(inv).map_or(0, |i| i.id);
        let no_evidence = path == NO_EVIDENCE_PATH;
        let is_claim = claim.claim_type != UNVERIFIED_ITEM;
        if is_claim && claim.is_negative() && !no_evidence {
            let detail = format!(
                "a negative_observation may only bind $.no_evidence, not {}",
                quote(path)
            );
            eval.fail(&self.resolved, RuleId::NegativeBindsNoEvidence, detail);
        }
        if is_claim && !claim.is_negative() && no_evidence {
            let detail = format!(
                "a {} claim cannot be supported by a $.no_evidence ref (it only says the query found nothing)",
                quote(&claim.claim_type)
            );
            eval.fail(
                &self.resolved,
                RuleId::PositiveNeedsPositiveEvidence,
                detail,
            );
        }
        if !seen.insert((inv_id, path.to_string())) {
            let detail = format!(
                "invocation {inv_id} {} is already bound in this claim",
                quote(path)
            );
            eval.fail(&self.resolved, RuleId::UniqueItem, detail);
        }
        if self.resolved.excerpt.any()
            && let Err(why) = self.supported(excerpt, inv, r)
        {
            let detail = format!(
                "evidence_excerpt {} is not supported by the ref text: {}",
                quote(&clean(raw_excerpt, 80)),
                why.describe()
            );
            eval.fail(&self.resolved, excerpt_rule(why.rule()), detail);
        }
    }

    fn finish(
        self,
        checked_bindings: Vec<CheckedBinding>,
        unverified_bindings: Vec<CheckedBinding>,
    ) -> GatekeeperResult {
        GatekeeperResult {
            status: if self.severity == Severity::None {
                "pass".into()
            } else {
                "fail".into()
            },
            severity: self.severity.as_str().into(),
            rule_set_version: self.rules.rule_set_version.clone(),
            rules: self.rules.summaries(),
            checked_bindings,
            unverified_bindings,
            claim_errors: self.claim_errors,
            failed_rules: self.failed_rules,
            warnings: self.warnings,
            errors: self.errors,
        }
    }
}

/// An invocation whose refs may be cited: failed, deduped and blocked
/// invocations carry no evidence of their own even if refs slipped in.
fn has_usable_refs(inv: &ToolInvocation) -> bool {
    let d = &inv.retrieval_details;
    !d.evidence_refs.is_empty()
        && !d.blocked
        && matches!(
            d.evidence_status,
            EvidenceStatus::Supported | EvidenceStatus::NoEvidence
        )
}

/// The outcome of the rules on one binding.
#[derive(Default)]
struct Eval {
    failures: Vec<Failure>,
    warnings: Vec<String>,
    backfilled: bool,
}

impl Eval {
    fn fail(&mut self, resolved: &Resolved, rule: RuleId, detail: String) {
        match resolved.severity(rule) {
            Some(Severity::None) => self.warnings.push(format!("{}: {detail}", rule.as_str())),
            Some(severity) => self.failures.push(Failure {
                rule,
                severity,
                detail,
            }),
            None => {}
        }
    }

    /// A failure that leaves the binding without a ref: it can never pass,
    /// whatever the rule's configuration says.
    fn fail_essential(&mut self, resolved: &Resolved, rule: RuleId, detail: String) {
        let severity = match resolved.severity(rule) {
            Some(Severity::Reject) => Severity::Reject,
            _ => Severity::LowConfid,
        };
        self.failures.push(Failure {
            rule,
            severity,
            detail,
        });
    }

    /// The most severe failure (the first among equals).
    fn worst(&self) -> Option<&Failure> {
        let mut worst: Option<&Failure> = None;
        for f in &self.failures {
            if worst.is_none_or(|w| f.severity > w.severity) {
                worst = Some(f);
            }
        }
        worst
    }
}

/// A short quote of untrusted text (an id, a tool name, a raw_path) for a
/// rule message: both ends kept, and Rust string escapes, so a stray
/// space, control or invisible character is visible rather than hidden
/// or interpreted.
pub(crate) fn quote(s: &str) -> String {
    format!("{:?}", truncate_middle(s, 48))
}

/// The Gatekeeper rule an excerpt check reports under.
fn excerpt_rule(r: ExcerptRule) -> RuleId {
    match r {
        ExcerptRule::Identifies => RuleId::ExcerptIdentifies,
        ExcerptRule::Facts => RuleId::ExcerptFacts,
        ExcerptRule::Polarity => RuleId::ExcerptPolarity,
        ExcerptRule::Supported => RuleId::ExcerptSupported,
    }
}

#[cfg(test)]
mod tests;
