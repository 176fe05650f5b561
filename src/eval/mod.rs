//! `diagraph eval`: run an evaluation set as ordinary
//! runs and score them: recall of the expected evidence, traceability of
//! every claim in the answer, over-claims on questions whose honest answer
//! is "nothing found", route, verdict, latency and usage.
//!
//! The set file ([`set`]), the scoring of one run ([`score`]) and the
//! report with its thresholds ([`report`]) know nothing about which model
//! answered: the caller hands in an engine per pack, so a team can compare
//! the offline model with an LLM on its own incidents.

pub mod report;
pub mod score;
pub mod set;

pub use report::{Report, Thresholds};
pub use score::{CaseResult, EvalUsage};
pub use set::{Case, CaseKind, EvalSet, SetError};

use crate::engine::{Engine, RunRequest};
use std::path::PathBuf;
use std::time::Instant;

/// Runs every case of `set` on the engine `engines` gives for its pack
/// (`None`: the configured sources), one stored run per case, in order.
/// A case the engine could not run at all is scored as a miss with the
/// reason, and the evaluation goes on.
pub async fn run(set: &EvalSet, engines: &[(Option<PathBuf>, Engine)]) -> Report {
    let mut results = Vec::with_capacity(set.cases.len());
    for (case, pack) in &set.cases {
        let Some((_, engine)) = engines.iter().find(|(p, _)| p == pack) else {
            results.push(score::failed(case, "no engine for this case's pack", 0));
            continue;
        };
        let mut request = RunRequest::new(case.question.clone());
        request.pack = pack.as_ref().map(|p| p.display().to_string());
        let start = Instant::now();
        let outcome = engine.run(request).await;
        let ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        results.push(match outcome {
            Ok(o) => score::score(case, &o, ms),
            Err(e) => score::failed(case, &crate::text::error_line(&e), ms),
        });
    }
    Report::new(results)
}
