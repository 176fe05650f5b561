//! Gaps of the statement check closed after issue 19, driven through the
//! engine: a Chinese service name is accepted when the glossary translates
//! it to a service the evidence names (and rejected otherwise), a
//! well-known infrastructure component the evidence does not mention is
//! an added name, and spelled-out numbers are numbers with their unit.
//! (Rule-level cases: `src/evidence/facts/grounded/tests.rs`; the property:
//! `answer_props.rs`.)

use crate::runs::{finished, run_captured};
use diagraph::vocab::graph::{NodeId, Outcome};

#[tokio::test]
async fn a_statement_is_rejected_for_its_gap_and_the_faithful_retry_is_assembled() {
    for (file, rule, (hidden, named), shown) in [
        (
            "54_composer_chinese_service_name_zh.toml",
            "answer.statement_facts",
            ("订单服务", "订单"),
            "支付服务的 HighCPUUsage 告警正在触发",
        ),
        (
            "55_composer_statement_adds_component.toml",
            "answer.statement_facts",
            ("redis", "slow"),
            "payment-service: its critical HighCPUUsage alert is firing at 92%.",
        ),
        (
            "56_composer_number_words_zh.toml",
            "answer.statement_facts",
            ("五分钟", "5min"),
            "十分钟以来高于 90%",
        ),
    ] {
        let (out, _, _) = run_captured(file).await;
        let attempts: Vec<(Outcome, String)> = finished(&out)
            .into_iter()
            .filter(|(node, ..)| *node == NodeId::Composer)
            .map(|(_, outcome, _, detail)| (outcome, detail))
            .collect();
        assert_eq!(attempts.len(), 2, "{file}: {attempts:?}");
        assert_eq!(attempts[0].0, Outcome::InvalidOutput, "{file}");
        assert!(
            attempts[0].1.contains(rule) || attempts[0].1.contains("answer.statement_grounded"),
            "{file}: {:?}",
            attempts[0].1
        );
        assert!(
            attempts[0].1.contains(named),
            "{file}: the rejection names what was added: {:?}",
            attempts[0].1
        );
        assert_eq!(attempts[1].0, Outcome::Completed, "{file}: {attempts:?}");
        assert!(!out.end.degraded, "{file}");
        let a = &out.end.answer;
        assert!(!a.contains(hidden), "{file}: {a}");
        assert!(a.contains(shown), "{file}: {a}");
    }
}
