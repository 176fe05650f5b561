//! query_metrics against VictoriaMetrics (Debian package
//! `victoria-metrics`), a Prometheus-compatible store: samples imported
//! through its `/api/v1/import/prometheus` become a rising p99 latency
//! that a range query states as min/max/last, a claim bound to it passes
//! the Gatekeeper and a fabricated number fails, its alerts API (empty
//! without vmalert) answers, and a query it rejects fails the call with
//! its reason.
//!
//! Without the binary the test is skipped with a note, except under CI
//! (`helpers::skip_or_fail`).

use crate::helpers::{free_port, skip_or_fail};
use crate::prometheus_server::{args, as_invocation};
use diagraph::engine::nodes::gatekeeper::{GatekeeperRules, check_with_tools};
use diagraph::tools::prometheus::{PrometheusConfig, PrometheusMetrics};
use diagraph::tools::{Tool, ToolRegistry};
use diagraph::vocab::contracts::parse_executor_evidence;
use diagraph::vocab::tool::EvidenceStatus;
use serde_json::json;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct VmServer {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for VmServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn binary() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("DIAGRAPH_VICTORIA_METRICS_BIN") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|d| d.join("victoria-metrics"))
        .find(|p| p.is_file())
}

impl VmServer {
    async fn start() -> Option<VmServer> {
        let Some(bin) = binary() else {
            skip_or_fail(
                "real VictoriaMetrics",
                "victoria-metrics binary not found (apt-get install victoria-metrics)",
            );
            return None;
        };
        let mut last = String::new();
        // The free port can be taken between probe and bind: try again.
        for _ in 0..3 {
            let dir = tempfile::tempdir().unwrap();
            let port = free_port();
            let child = Command::new(&bin)
                .arg(format!(
                    "-storageDataPath={}",
                    dir.path().join("data").display()
                ))
                .arg(format!("-httpListenAddr=127.0.0.1:{port}"))
                .arg("-retentionPeriod=100y")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let server = VmServer {
                child,
                url: format!("http://127.0.0.1:{port}"),
                _dir: dir,
            };
            let http = reqwest::Client::new();
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                if matches!(http.get(format!("{}/health", server.url)).send().await,
                    Ok(r) if r.status().is_success())
                {
                    return Some(server);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            last = format!("victoria-metrics on {} did not become healthy", server.url);
        }
        panic!("{last}");
    }

    /// Imports `metric value unix_ms` lines and waits until they are
    /// searchable.
    async fn import(&self, lines: &str, check: &str) {
        let http = reqwest::Client::new();
        let r = http
            .post(format!("{}/api/v1/import/prometheus", self.url))
            .body(lines.to_string())
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{}", r.text().await.unwrap());
        http.get(format!("{}/internal/force_flush", self.url))
            .send()
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let mut url = reqwest::Url::parse(&format!("{}/api/v1/series", self.url)).unwrap();
            url.query_pairs_mut().append_pair("match[]", check);
            let body = http.get(url).send().await.unwrap().text().await.unwrap();
            if body.contains(check) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!("imported samples of {check} never became searchable");
    }
}

#[tokio::test]
async fn a_rising_p99_from_victoria_metrics_is_evidence() {
    let Some(vm) = VmServer::start().await else {
        return;
    };
    let now = chrono::Utc::now().timestamp();
    let name = "service:http_request_duration_seconds:p99";
    let mut lines = String::new();
    for (ago, v) in [
        (540, "0.41"),
        (420, "0.44"),
        (300, "1.2"),
        (180, "2.3"),
        (60, "2.3"),
    ] {
        lines.push_str(&format!(
            "{name}{{service=\"payment-service\"}} {v} {}\n",
            (now - ago) * 1000
        ));
    }
    lines.push_str(&format!(
        "{name}{{service=\"order-service\"}} 0.2 {}\n",
        (now - 60) * 1000
    ));
    vm.import(&lines, name).await;

    let metrics = PrometheusMetrics::new(PrometheusConfig {
        timeout: Duration::from_secs(5),
        ..PrometheusConfig::new(&vm.url)
    })
    .unwrap();
    let promql = format!("{name}{{service=\"payment-service\"}}");
    let out = metrics
        .call(&args(
            json!({"promql": promql, "window_minutes": 10, "step_seconds": 60}),
        ))
        .await
        .unwrap();
    // No alerts without vmalert: the values alone are the evidence.
    assert_eq!(out.evidence_status, EvidenceStatus::Supported);
    assert_eq!(out.body["total"], 0);
    assert!(out.partial.is_none(), "{:?}", out.partial);
    assert_eq!(out.evidence_refs.len(), 1, "{:?}", out.evidence_refs);
    let r = &out.evidence_refs[0];
    assert_eq!(r.raw_path, "$.series[0]");
    assert!(
        r.text
            .starts_with(&format!("metric={name} service=payment-service from=")),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains(" step=60s min=0.41 s max=2.3 s last=2.3 s points="),
        "{}",
        r.text
    );

    let inv = as_invocation(7, &out);
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(metrics));
    let verdict = |excerpt: &str| {
        let claim = parse_executor_evidence(
            &json!({"answer_version": "executor_evidence_v2", "claims": [{
                "claim_id": "claim-1", "claim_type": "observation",
                "claim_text": "p99 latency of payment-service rose from 0.41 s to 2.3 s",
                "support_level": "direct",
                "evidence_bindings": [{"tool_name": "query_metrics", "source_invocation_id": 7,
                    "raw_path": "$.series[0]", "evidence_excerpt": excerpt}]}],
                "hypotheses": [], "recommended_actions": [], "missing_info": []})
            .to_string(),
        )
        .unwrap();
        check_with_tools(
            &claim,
            std::slice::from_ref(&inv),
            &GatekeeperRules::shipped(),
            Some(&tools),
        )
    };
    let good = verdict(&format!(
        "metric={name} service=payment-service min=0.41 s max=2.3 s last=2.3 s"
    ));
    assert_eq!(good.status, "pass", "{good:?}");
    let fabricated = verdict(&format!(
        "metric={name} service=payment-service min=0.41 s max=3.2 s last=3.2 s"
    ));
    assert_eq!(fabricated.status, "fail", "{fabricated:?}");

    // An instant query: the newest value.
    let metrics = tools.get("query_metrics").unwrap();
    let out = metrics
        .call(&args(json!({"promql": format!("max({name})")})))
        .await
        .unwrap();
    assert!(
        out.evidence_refs[0]
            .text
            .starts_with(&format!("expr=max({name}) at=")),
        "{:?}",
        out.evidence_refs
    );
    assert!(out.evidence_refs[0].text.ends_with(" value=2.3 s"));

    // A query VictoriaMetrics rejects, with nothing else found: a failed
    // call with its reason.
    let err = metrics
        .call(&args(json!({"promql": "sum(rate(", "alertname": "none"})))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("sum(rate("), "{err}");
}
