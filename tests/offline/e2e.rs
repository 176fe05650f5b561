//! Full offline runs through the engine: the shipped shop pack, and a pack
//! built in a temp dir from ../shared/realdata (loghub logs, alert names and
//! descriptions from awesome-prometheus-alerts, prometheus-operator
//! runbooks) that the offline model has never seen.

use crate::helpers::{base_engine, pack_registry, shop_pack_dir};
use crate::realdata::{build_realdata_pack, realdata};
use diagraph::engine::{Engine, MemoryRecorder, RunOutcome, RunRequest};
use diagraph::model::offline::OfflineModel;
use diagraph::tools::pack::Pack;
use diagraph::vocab::contracts::{
    ComposerOutput, ExecutorEvidence, NO_EVIDENCE_PATH, Verdict, find_overstatement,
};
use diagraph::vocab::run::RunStatus;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

fn engine_for(dir: &Path) -> (Engine, Arc<MemoryRecorder>) {
    let pack = Arc::new(Pack::load(dir).expect("pack loads"));
    let recorder = Arc::new(MemoryRecorder::new());
    let engine = Engine {
        model: Arc::new(OfflineModel::new()),
        tools: Arc::new(pack_registry(&pack)),
        catalog: Arc::new(pack.catalog()),
        ..base_engine(recorder.clone())
    };
    (engine, recorder)
}

struct Run {
    outcome: RunOutcome,
    recorder: Arc<MemoryRecorder>,
}

impl Run {
    fn eval(&self) -> Value {
        self.outcome.self_evaluation.to_value()["verifier_evaluation"].take()
    }

    fn final_output(&self) -> ExecutorEvidence {
        serde_json::from_value(self.eval()["executor_structured_output"].take())
            .expect("executor output recorded")
    }

    fn composer(&self) -> ComposerOutput {
        serde_json::from_value(self.eval()["composer_output"].take())
            .expect("composer output recorded")
    }

    /// 100% of the final claims trace to stored evidence: every binding
    /// passed the Gatekeeper and its excerpt is the text of a ref of a
    /// recorded invocation of this run.
    fn assert_all_claims_trace(&self) {
        let out = self.final_output();
        let checked = self.eval()["gatekeeper_result"]["checked_bindings"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            checked.iter().all(|b| b["status"] == json!("pass")),
            "gatekeeper failures: {checked:#?}"
        );
        let data = self.recorder.snapshot();
        for c in &out.claims {
            assert!(!c.evidence_bindings.is_empty());
            for b in &c.evidence_bindings {
                let inv = data
                    .invocations
                    .iter()
                    .find(|i| {
                        Some(i.id) == b.source_invocation_id && i.run_id == self.outcome.run_id
                    })
                    .unwrap_or_else(|| {
                        panic!("{} cites an invocation not in this run", c.claim_id)
                    });
                assert_eq!(inv.tool_name, b.tool_name);
                assert!(
                    inv.retrieval_details
                        .evidence_refs
                        .iter()
                        .any(|r| Some(&r.raw_path) == b.raw_path.as_ref()
                            && r.text == b.evidence_excerpt),
                    "{} binding {:?} is not a stored ref",
                    c.claim_id,
                    b.raw_path
                );
            }
        }
    }
}

async fn ask(dir: &Path, question: &str) -> Run {
    let (engine, recorder) = engine_for(dir);
    let outcome = engine
        .run(RunRequest::new(question))
        .await
        .expect("run persisted");
    Run { outcome, recorder }
}

#[tokio::test]
async fn why_is_payment_service_slow_succeeds_and_cites_real_evidence() {
    let run = ask(&shop_pack_dir(), "why is payment-service slow?").await;
    assert_eq!(run.outcome.end.status, RunStatus::Success);
    assert!(!run.outcome.end.degraded, "{}", run.outcome.end.answer);
    assert_eq!(
        run.outcome.end.effective_verdict,
        Some(Verdict::Pass),
        "{}",
        run.outcome.end.answer
    );
    run.assert_all_claims_trace();
    let out = run.final_output();
    let bound = |tool: &str, needle: &str| {
        out.claims.iter().any(|c| {
            c.evidence_bindings
                .iter()
                .any(|b| b.tool_name == tool && b.evidence_excerpt.contains(needle))
        })
    };
    assert!(bound("query_metrics", "alertname=HighCPUUsage"), "{out:#?}");
    assert!(bound("query_logs", "payment-service"), "{out:#?}");
    assert!(
        run.outcome.end.answer.contains("HighCPUUsage"),
        "{}",
        run.outcome.end.answer
    );
    assert!(
        run.outcome.end.answer.contains("fraud-check"),
        "{}",
        run.outcome.end.answer
    );
}

#[tokio::test]
async fn narrow_high_cpu_question_yields_one_observation_and_no_cause() {
    let run = ask(
        &shop_pack_dir(),
        "is there a HighCPUUsage alert on payment-service?",
    )
    .await;
    assert_eq!(run.outcome.end.status, RunStatus::Success);
    run.assert_all_claims_trace();
    let out = run.final_output();
    assert_eq!(out.claims.len(), 1, "{out:#?}");
    assert_eq!(out.claims[0].claim_type, "observation");
    assert!(out.claims[0].claim_text.contains("HighCPUUsage"));
    assert!(out.claims.iter().all(|c| c.claim_type != "root_cause"));
    let invocations = run.recorder.snapshot().invocations;
    assert_eq!(
        invocations.len(),
        1,
        "a narrow question runs one exact query"
    );
    assert_eq!(run.outcome.end.effective_verdict, Some(Verdict::Pass));
}

#[tokio::test]
async fn service_without_logs_gets_a_negative_observation_only() {
    let run = ask(
        &shop_pack_dir(),
        "are there errors in the inventory-service logs?",
    )
    .await;
    assert_eq!(run.outcome.end.status, RunStatus::Success);
    run.assert_all_claims_trace();
    let out = run.final_output();
    assert!(!out.claims.is_empty());
    for c in &out.claims {
        assert_eq!(c.claim_type, "negative_observation");
        assert!(
            c.evidence_bindings
                .iter()
                .all(|b| b.raw_path.as_deref() == Some(NO_EVIDENCE_PATH))
        );
    }
    assert!(
        run.outcome.end.answer.contains("found no matching logs"),
        "{}",
        run.outcome.end.answer
    );
    assert_eq!(find_overstatement(&run.composer()), None);
}

#[tokio::test]
async fn chinese_question_gets_a_chinese_answer() {
    let run = ask(&shop_pack_dir(), "order-service 为什么下单超时？").await;
    assert_eq!(run.outcome.end.status, RunStatus::Success);
    assert!(!run.outcome.end.degraded, "{}", run.outcome.end.answer);
    run.assert_all_claims_trace();
    assert!(run.outcome.end.answer.contains("order-service"));
    assert!(
        run.outcome.end.answer.contains("发现") || run.outcome.end.answer.contains("可能原因"),
        "{}",
        run.outcome.end.answer
    );
}

// ---- a pack built from real data ---------------------------------------

#[tokio::test]
async fn unseen_realdata_pack_traces_every_claim_and_finds_key_evidence() {
    let Some(src) = realdata() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    build_realdata_pack(&src, tmp.path());

    let run = ask(tmp.path(), "why is hadoop-mrappmaster failing?").await;
    assert_eq!(
        run.outcome.end.status,
        RunStatus::Success,
        "{}",
        run.outcome.end.answer
    );
    assert!(!run.outcome.end.degraded, "{}", run.outcome.end.answer);
    run.assert_all_claims_trace();
    let out = run.final_output();
    // Key evidence: the firing alert and the MRAppMaster's ERROR lines.
    let excerpts: Vec<&str> = out
        .claims
        .iter()
        .flat_map(|c| {
            c.evidence_bindings
                .iter()
                .map(|b| b.evidence_excerpt.as_str())
        })
        .collect();
    assert!(
        excerpts
            .iter()
            .any(|e| e.contains("HadoopResourceManagerDown")),
        "{out:#?}"
    );
    assert!(
        excerpts
            .iter()
            .any(|e| e.contains(" ERROR hadoop-mrappmaster ")),
        "{out:#?}"
    );

    let run = ask(tmp.path(), "zookeeper 最近为什么连接异常？").await;
    assert_eq!(
        run.outcome.end.status,
        RunStatus::Success,
        "{}",
        run.outcome.end.answer
    );
    run.assert_all_claims_trace();
    let out = run.final_output();
    assert!(
        out.claims.iter().any(|c| c
            .evidence_bindings
            .iter()
            .any(|b| b.evidence_excerpt.contains(" zookeeper "))),
        "{out:#?}"
    );

    let run = ask(
        tmp.path(),
        "is there a ZookeeperMissingLeader alert on zookeeper?",
    )
    .await;
    run.assert_all_claims_trace();
    let out = run.final_output();
    assert_eq!(out.claims.len(), 1, "{out:#?}");
    assert!(out.claims[0].claim_text.contains("ZookeeperMissingLeader"));
}
