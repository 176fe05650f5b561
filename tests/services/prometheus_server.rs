//! Starts a real Prometheus (Debian package `prometheus`) on 127.0.0.1 with
//! a temporary TSDB and a rule file whose alerts fire at once (and a
//! recorded p99 latency of 2.3 s for payment-service, evaluated before
//! them), waits until it is ready and the alert fires, and kills it on
//! drop.
//!
//! Without the binary the tests that need it are skipped with a note,
//! except under CI, where a missing binary is a failure
//! (`helpers::skip_or_fail`).
//!
//! Also what every Prometheus test shares: the tool on a URL, its
//! arguments, and the invocation the engine records for an output.

use crate::helpers::{free_port, invocation, skip_or_fail};
use diagraph::tools::ToolOutput;
use diagraph::tools::prometheus::{PrometheusConfig, PrometheusMetrics};
use diagraph::vocab::tool::ToolInvocation;
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const RULES: &str = r#"groups:
  - name: diagraph-test
    interval: 1s
    rules:
      - record: service:http_request_duration_seconds:p99
        expr: vector(2.3)
        labels:
          service: payment-service
      - alert: HighCPUUsage
        expr: vector(92)
        for: 0s
        labels:
          severity: critical
          service: payment-service
        annotations:
          summary: "CPU usage above 90%"
      - alert: OrderLatencyCreeping
        expr: vector(1.5)
        for: 1h
        labels:
          severity: warning
          service: order-service
        annotations:
          summary: "p99 latency above 1s"
"#;

pub struct PromServer {
    child: Child,
    pub url: String,
    pub dir: tempfile::TempDir,
}

impl Drop for PromServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn binary() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("DIAGRAPH_PROMETHEUS_BIN") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|d| d.join("prometheus"))
        .find(|p| p.is_file())
}

impl PromServer {
    /// `None` (with a note on stderr) when the binary is missing outside CI.
    pub async fn start() -> Option<PromServer> {
        let Some(bin) = binary() else {
            skip_or_fail(
                "real Prometheus",
                "prometheus binary not found (apt-get install prometheus)",
            );
            return None;
        };
        // The free port can be taken between probe and bind: try again.
        let mut last = String::new();
        for _ in 0..3 {
            match Self::try_start(&bin).await {
                Ok(s) => return Some(s),
                Err(e) => last = e,
            }
        }
        panic!("prometheus did not start: {last}");
    }

    async fn try_start(bin: &PathBuf) -> Result<PromServer, String> {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        std::fs::write(dir.path().join("rules.yml"), RULES).unwrap();
        let config = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - rules.yml\n\
             scrape_configs:\n  - job_name: prometheus\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n        labels:\n          service: payment-service\n"
        );
        std::fs::write(dir.path().join("prometheus.yml"), config).unwrap();
        let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
        let child = Command::new(bin)
            .arg(format!(
                "--config.file={}",
                dir.path().join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
        let mut server = PromServer {
            child,
            url: format!("http://127.0.0.1:{port}"),
            dir,
        };
        server.wait_until_firing().await?;
        Ok(server)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prometheus.log")).unwrap_or_default()
    }

    async fn wait_until_firing(&mut self) -> Result<(), String> {
        let http = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut ready = false;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("prometheus exited with {status}: {}", self.log()));
            }
            if !ready {
                ready = matches!(
                    http.get(format!("{}/-/ready", self.url)).send().await,
                    Ok(r) if r.status().is_success()
                );
            } else if let Ok(r) = http.get(format!("{}/api/v1/alerts", self.url)).send().await {
                let body = r.text().await.unwrap_or_default();
                // The instant-value tests also need one scrape of `up`.
                let scraped = match http
                    .get(format!("{}/api/v1/query?query=up", self.url))
                    .send()
                    .await
                {
                    Ok(r) => r
                        .text()
                        .await
                        .unwrap_or_default()
                        .contains("payment-service"),
                    Err(_) => false,
                };
                if body.contains("HighCPUUsage") && body.contains("\"firing\"") && scraped {
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Err(format!(
            "prometheus at {} was not ready with a firing alert within 60 s: {}",
            self.url,
            self.log()
        ))
    }
}

/// Tool arguments from a JSON object.
pub fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

/// `query_metrics` over the Prometheus at `url`, with a 5 s timeout.
pub fn tool(url: &str) -> PrometheusMetrics {
    PrometheusMetrics::new(PrometheusConfig {
        timeout: Duration::from_secs(5),
        ..PrometheusConfig::new(url)
    })
    .unwrap()
}

/// The invocation the engine would record for this output.
pub fn as_invocation(id: i64, out: &ToolOutput) -> ToolInvocation {
    ToolInvocation {
        id,
        step_id: Some(1),
        output_preview: out.body.to_string(),
        output_length: out.body.to_string().len(),
        success: true,
        ..invocation(
            1,
            1,
            "query_metrics",
            out.evidence_status,
            out.evidence_refs.clone(),
        )
    }
}
