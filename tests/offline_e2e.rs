//! Full offline runs through the engine: the shipped shop pack, and a pack
//! built in a temp dir from ../shared/realdata (loghub logs, alert names and
//! descriptions from awesome-prometheus-alerts, prometheus-operator
//! runbooks) that the offline model has never seen.

use diagraph::engine::contracts::{
    ComposerOutput, ExecutorEvidence, NO_EVIDENCE_PATH, Verdict, find_overstatement,
};
use diagraph::engine::nodes::gatekeeper::GatekeeperRules;
use diagraph::engine::prompts::Prompts;
use diagraph::engine::{
    Catalog, Engine, EngineConfig, MemoryRecorder, RunOutcome, RunRequest, RunStatus,
};
use diagraph::model::offline::OfflineModel;
use diagraph::tools::ToolRegistry;
use diagraph::tools::pack::{Pack, pack_tools};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn engine_for(dir: &Path) -> (Engine, Arc<MemoryRecorder>) {
    let pack = Arc::new(Pack::load(dir).expect("pack loads"));
    let mut registry = ToolRegistry::new();
    for t in pack_tools(pack.clone()) {
        registry.register(t);
    }
    let recorder = Arc::new(MemoryRecorder::new());
    let engine = Engine {
        model: Arc::new(OfflineModel::new()),
        tools: Arc::new(registry),
        recorder: recorder.clone(),
        catalog: Arc::new(Catalog {
            domains: pack.domains.clone(),
            skills: pack.skill_catalog(),
            services: pack.manifest.services.clone(),
        }),
        prompts: Arc::new(Prompts::shipped()),
        rules: Arc::new(GatekeeperRules::shipped()),
        config: EngineConfig::default(),
    };
    (engine, recorder)
}

fn shop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/packs/shop")
}

struct Run {
    outcome: RunOutcome,
    recorder: Arc<MemoryRecorder>,
}

impl Run {
    fn eval(&self) -> &Value {
        &self.outcome.self_evaluation["verifier_evaluation"]
    }

    fn final_output(&self) -> ExecutorEvidence {
        serde_json::from_value(self.eval()["executor_structured_output"].clone())
            .expect("executor output recorded")
    }

    fn composer(&self) -> ComposerOutput {
        serde_json::from_value(self.eval()["composer_output"].clone())
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
    let run = ask(&shop_dir(), "why is payment-service slow?").await;
    assert_eq!(run.outcome.status, RunStatus::Success);
    assert!(!run.outcome.degraded, "{}", run.outcome.answer);
    assert_eq!(
        run.outcome.effective_verdict,
        Some(Verdict::Pass),
        "{}",
        run.outcome.answer
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
        run.outcome.answer.contains("HighCPUUsage"),
        "{}",
        run.outcome.answer
    );
    assert!(
        run.outcome.answer.contains("fraud-check"),
        "{}",
        run.outcome.answer
    );
}

#[tokio::test]
async fn narrow_high_cpu_question_yields_one_observation_and_no_cause() {
    let run = ask(
        &shop_dir(),
        "is there a HighCPUUsage alert on payment-service?",
    )
    .await;
    assert_eq!(run.outcome.status, RunStatus::Success);
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
    assert_eq!(run.outcome.effective_verdict, Some(Verdict::Pass));
}

#[tokio::test]
async fn service_without_logs_gets_a_negative_observation_only() {
    let run = ask(
        &shop_dir(),
        "are there errors in the inventory-service logs?",
    )
    .await;
    assert_eq!(run.outcome.status, RunStatus::Success);
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
        run.outcome.answer.contains("found no matching logs"),
        "{}",
        run.outcome.answer
    );
    assert_eq!(find_overstatement(&run.composer()), None);
}

#[tokio::test]
async fn chinese_question_gets_a_chinese_answer() {
    let run = ask(&shop_dir(), "order-service 为什么下单超时？").await;
    assert_eq!(run.outcome.status, RunStatus::Success);
    assert!(!run.outcome.degraded, "{}", run.outcome.answer);
    run.assert_all_claims_trace();
    assert!(run.outcome.answer.contains("order-service"));
    assert!(
        run.outcome.answer.contains("发现") || run.outcome.answer.contains("可能原因"),
        "{}",
        run.outcome.answer
    );
}

// ---- a pack built from real data ---------------------------------------

fn realdata() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/realdata");
    let dir = if dir.exists() {
        dir
    } else {
        PathBuf::from("/work/shared/realdata")
    };
    dir.exists().then_some(dir)
}

/// `2015-07-29 17:41:44,747` -> `2015-07-29T17:41:44.747Z`.
fn rfc3339(date: &str, time: &str) -> String {
    format!("{date}T{}Z", time.replace(',', "."))
}

/// Zookeeper: `DATE TIME - LEVEL [thread] - message`; Hadoop: `DATE TIME LEVEL [thread] class: message`.
fn loghub_lines(path: &Path, service: &str, take: usize) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("loghub sample");
    text.lines()
        .filter_map(|l| {
            let mut it = l.splitn(3, ' ');
            let (date, time, rest) = (it.next()?, it.next()?, it.next()?);
            let rest = rest.trim_start_matches("- ").trim_start();
            let (level, message) = rest.split_once(' ')?;
            Some(
                json!({"ts": rfc3339(date, time), "service": service, "level": level,
                        "message": message.trim_start_matches(['-', ' '])}),
            )
        })
        .take(take)
        .collect()
}

/// Name and description of a rule in awesome-prometheus-alerts' rules.yml.
fn rule(rules: &str, name: &str) -> (String, String) {
    let mut lines = rules
        .lines()
        .skip_while(|l| l.trim() != format!("- name: {name}"));
    lines.next().expect("rule exists");
    let description = lines
        .find_map(|l| {
            l.trim()
                .strip_prefix("description:")
                .map(|d| d.trim().trim_matches('"').to_string())
        })
        .unwrap_or_default();
    let alertname: String = name
        .split_whitespace()
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    (alertname, description)
}

fn build_realdata_pack(src: &Path, dst: &Path) {
    std::fs::write(
        dst.join("pack.toml"),
        "name = \"realdata\"\ndescription = \"built from loghub, awesome-prometheus-alerts and prometheus-operator runbooks\"\nservices = [\"zookeeper\", \"hadoop-mrappmaster\"]\n",
    )
    .unwrap();
    let mut logs = loghub_lines(
        &src.join("loghub/Zookeeper/Zookeeper_2k.log"),
        "zookeeper",
        600,
    );
    logs.extend(loghub_lines(
        &src.join("loghub/Hadoop/Hadoop_2k.log"),
        "hadoop-mrappmaster",
        2000,
    ));
    logs.sort_by(|a, b| a["ts"].as_str().cmp(&b["ts"].as_str()));
    let body: String = logs.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dst.join("logs.jsonl"), body).unwrap();
    let rules = std::fs::read_to_string(src.join("alerts/rules.yml")).unwrap();
    let alert = |name: &str, service: &str, state: &str, at: &str| {
        let (alertname, description) = rule(&rules, name);
        json!({"labels": {"alertname": alertname, "service": service, "severity": "critical"},
               "annotations": {"summary": description}, "state": state, "activeAt": at, "value": "1"})
    };
    let alerts = json!({"status": "success", "data": {"alerts": [
        alert("Zookeeper missing leader", "zookeeper", "firing", "2015-07-29T19:00:00Z"),
        alert("Hadoop Resource Manager Down", "hadoop-mrappmaster", "firing", "2015-10-18T18:05:00Z"),
        alert("Hadoop Map Reduce Task Failures", "hadoop-mrappmaster", "pending", "2015-10-18T18:06:00Z"),
    ]}});
    std::fs::write(dst.join("alerts.json"), alerts.to_string()).unwrap();
    let kdir = dst.join("knowledge/runbooks");
    std::fs::create_dir_all(&kdir).unwrap();
    for group in ["general", "kubernetes", "node", "etcd"] {
        let Ok(entries) = std::fs::read_dir(src.join("runbooks/content/runbooks").join(group))
        else {
            continue;
        };
        for e in entries.flatten() {
            let name = format!("{group}-{}", e.file_name().to_string_lossy());
            std::fs::copy(e.path(), kdir.join(name)).unwrap();
        }
    }
}

#[tokio::test]
async fn unseen_realdata_pack_traces_every_claim_and_finds_key_evidence() {
    let Some(src) = realdata() else {
        eprintln!("../shared/realdata not present; skipped");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    build_realdata_pack(&src, tmp.path());

    let run = ask(tmp.path(), "why is hadoop-mrappmaster failing?").await;
    assert_eq!(
        run.outcome.status,
        RunStatus::Success,
        "{}",
        run.outcome.answer
    );
    assert!(!run.outcome.degraded, "{}", run.outcome.answer);
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
        run.outcome.status,
        RunStatus::Success,
        "{}",
        run.outcome.answer
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
