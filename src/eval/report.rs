//! An evaluation's report: the cases, their totals, the thresholds they
//! are held to, and the two renderings (`--json`, and a table for people).

use super::score::{CaseResult, EvalUsage};
use super::set::CaseKind;
use serde::Serialize;
use std::fmt::Write;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Totals {
    pub cases: usize,
    /// Fraction of non-negative cases whose recall hit (1 when there are
    /// none).
    pub recall: f64,
    /// Fraction of cases whose answer was traceable.
    pub traceable: f64,
    pub over_claims: usize,
    pub p50_ms: u64,
    pub usage: EvalUsage,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub cases: Vec<CaseResult>,
    pub totals: Totals,
}

/// What the evaluation must reach; any traceability below 1 always fails.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Thresholds {
    pub min_recall: Option<f64>,
    pub max_over_claims: Option<usize>,
}

impl Report {
    pub fn new(cases: Vec<CaseResult>) -> Report {
        let scored: Vec<bool> = cases.iter().filter_map(|c| c.recall_hit).collect();
        let recall = if scored.is_empty() {
            1.0
        } else {
            scored.iter().filter(|h| **h).count() as f64 / scored.len() as f64
        };
        let traceable = if cases.is_empty() {
            1.0
        } else {
            cases.iter().filter(|c| c.traceable).count() as f64 / cases.len() as f64
        };
        let mut latencies: Vec<u64> = cases.iter().map(|c| c.latency_ms).collect();
        latencies.sort_unstable();
        let p50_ms = latencies
            .get(latencies.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or(0);
        let mut usage = EvalUsage::default();
        for c in &cases {
            usage.add(c.usage);
        }
        let totals = Totals {
            cases: cases.len(),
            recall: round3(recall),
            traceable: round3(traceable),
            over_claims: cases.iter().filter(|c| c.over_claim).count(),
            p50_ms,
            usage,
        };
        Report { cases, totals }
    }

    /// Why the report falls short of the thresholds; empty when it passes.
    pub fn shortfalls(&self, t: &Thresholds) -> Vec<String> {
        let mut out = Vec::new();
        if self.cases.iter().any(|c| !c.traceable) {
            out.push(format!(
                "traceability {:.3} is below 1: every claim in an answer must rest on a verified binding",
                self.totals.traceable
            ));
        }
        if let Some(min) = t.min_recall
            && self.totals.recall < min
        {
            out.push(format!(
                "recall {:.3} is below --min-recall {min}",
                self.totals.recall
            ));
        }
        if let Some(max) = t.max_over_claims
            && self.totals.over_claims > max
        {
            out.push(format!(
                "{} over-claim(s), more than --max-over-claims {max}",
                self.totals.over_claims
            ));
        }
        out
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// A table for people: one line per case, then the totals.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<24} {:<8} {:<10} {:<10} {:<6} {:<5} {:<5} {:>7}  route",
            "case", "kind", "status", "verdict", "recall", "trace", "over", "ms"
        );
        for c in &self.cases {
            let recall = match c.recall_hit {
                Some(true) => "hit",
                Some(false) => "MISS",
                None => "-",
            };
            let status = if c.degraded && c.status == "SUCCESS" {
                "DEGRADED"
            } else {
                c.status.as_str()
            };
            let _ = writeln!(
                out,
                "{:<24} {:<8} {:<10} {:<10} {:<6} {:<5} {:<5} {:>7}  {}",
                crate::text::truncate_width(&crate::text::sanitize_line(&c.id), 24),
                c.kind.as_str(),
                status,
                c.effective_verdict.as_deref().unwrap_or("-"),
                recall,
                if c.traceable { "ok" } else { "NO" },
                if c.over_claim { "YES" } else { "no" },
                c.latency_ms,
                c.route.join(">"),
            );
            for n in &c.notes {
                let _ = writeln!(out, "    note: {}", crate::text::sanitize_line(n));
            }
        }
        let t = &self.totals;
        let negatives = self
            .cases
            .iter()
            .filter(|c| c.kind == CaseKind::Negative)
            .count();
        let _ = writeln!(
            out,
            "\n{} case(s): recall {:.3} ({} scored), traceable {:.3}, over-claims {} ({} negative case(s)), p50 {} ms, tokens {}, cost {}",
            t.cases,
            t.recall,
            self.cases.iter().filter(|c| c.recall_hit.is_some()).count(),
            t.traceable,
            t.over_claims,
            negatives,
            t.p50_ms,
            t.usage.tokens,
            t.usage
                .cost_usd
                .map_or("n/a".to_string(), |c| format!("${c:.4}")),
        );
        out
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, kind: CaseKind, hit: Option<bool>, ms: u64) -> CaseResult {
        CaseResult {
            id: id.into(),
            question: "q".into(),
            kind,
            lang: None,
            run_id: Some(1),
            status: "SUCCESS".into(),
            route: vec![],
            effective_verdict: Some("PASS".into()),
            degraded: false,
            recall_hit: hit,
            matched: None,
            traceable: true,
            over_claim: false,
            notes: vec![],
            latency_ms: ms,
            usage: EvalUsage {
                tokens: 10,
                cost_usd: None,
            },
        }
    }

    #[test]
    fn totals_and_thresholds() {
        let mut r = Report::new(vec![
            case("a", CaseKind::Open, Some(true), 5),
            case("b", CaseKind::Narrow, Some(false), 9),
            case("c", CaseKind::Negative, None, 1),
        ]);
        assert_eq!(r.totals.recall, 0.5);
        assert_eq!(r.totals.p50_ms, 5);
        assert_eq!(r.totals.usage.tokens, 30);
        let t = Thresholds {
            min_recall: Some(0.5),
            max_over_claims: Some(0),
        };
        assert!(r.shortfalls(&t).is_empty());
        let strict = Thresholds {
            min_recall: Some(0.9),
            ..t
        };
        assert_eq!(r.shortfalls(&strict).len(), 1);
        r.cases[2].over_claim = true;
        r.cases[0].traceable = false;
        let r = Report::new(r.cases);
        let why = r.shortfalls(&t);
        assert_eq!(why.len(), 2, "{why:?}");
        assert!(why[0].contains("traceability"));
        let json = r.to_json();
        assert_eq!(json["totals"]["over_claims"], 1);
        assert!(json["cases"][2]["recall_hit"].is_null());
        assert!(r.to_text().contains("MISS"));
    }
}
