//! Synthetic engine event sequences for the TUI's tests and benchmarks:
//! the shapes the engine emits for a PASS run, a Gatekeeper REJECT that
//! falls back, a LOW_CONFID capped by the ceiling, and a large run. They
//! are built with the real event types, so a change in the event schema
//! breaks them at compile time.
//!
//! Test data, so not part of the library: a module of the TUI tests, and
//! `benches/tui.rs` includes the same file with `#[path]`.

use diagraph::vocab::agent::AgentRole;
use diagraph::vocab::contracts::{BindingStatus, CheckedBinding, GatekeeperResult, Lang, Verdict};
use diagraph::vocab::events::{EngineEvent, EventKind};
use diagraph::vocab::graph::{NodeId, Outcome, ReasonCode};
use diagraph::vocab::run::{RunEnd, RunStatus, VerdictSnapshot};
use diagraph::vocab::tool::{EvidenceRef, EvidenceStatus, RetrievalDetails, ToolInvocation};
use diagraph::vocab::trace::{NodeEvent, build_trace};
use std::sync::Arc;

/// Builds one run's events with gapless seq numbers and a fake clock.
pub struct RunBuilder {
    pub run_id: i64,
    pub events: Vec<EngineEvent>,
    node_events: Vec<NodeEvent>,
    clock: u64,
    next_invocation: i64,
    evidence_retries: u32,
}

impl RunBuilder {
    pub fn new(run_id: i64, question: &str) -> RunBuilder {
        let mut b = RunBuilder {
            run_id,
            events: vec![],
            node_events: vec![],
            clock: 0,
            next_invocation: run_id * 1000 + 1,
            evidence_retries: 0,
        };
        b.push(EventKind::RunStarted {
            session_id: format!("s-{run_id}"),
            question: question.into(),
            lang: Lang::En,
            model: "offline (rule-based)".into(),
            scenario: None,
            sources: Default::default(),
        });
        b
    }

    pub fn push(&mut self, kind: EventKind) -> &mut Self {
        self.clock += 37;
        self.events.push(EngineEvent {
            run_id: self.run_id,
            seq: self.events.len() as u32 + 1,
            at_ms: self.clock,
            kind,
        });
        self
    }

    pub fn enter(&mut self, node: NodeId, via: Option<&str>) -> &mut Self {
        let attempt = self.node_events.iter().filter(|e| e.node == node).count() as u32 + 1;
        self.push(EventKind::NodeEntered {
            node,
            attempt,
            via: via.map(reason),
        })
    }

    /// Enters and finishes a node in one go.
    pub fn node(
        &mut self,
        node: NodeId,
        outcome: Outcome,
        reason: &str,
        next: NodeId,
    ) -> &mut Self {
        let via = self.node_events.last().map(|e| e.reason_code.as_str());
        self.enter(node, via.or(Some("start")));
        self.finish(node, outcome, reason, next)
    }

    pub fn finish(
        &mut self,
        node: NodeId,
        outcome: Outcome,
        reason_text: &str,
        next: NodeId,
    ) -> &mut Self {
        let attempt = self.node_events.iter().filter(|e| e.node == node).count() as u32 + 1;
        self.node_events.push(NodeEvent {
            node,
            outcome,
            reason_code: reason(reason_text),
            attempt,
        });
        self.push(EventKind::NodeFinished {
            node,
            outcome,
            reason_code: reason(reason_text),
            attempt,
            next,
            detail: String::new(),
        })
    }

    pub fn model(&mut self, role: AgentRole) -> &mut Self {
        self.push(EventKind::ModelCalled {
            role,
            attempt: 1,
            step_id: self.events.len() as i64,
            duration_ms: 12,
            tokens: 300,
            tool_calls: 0,
            error: None,
            usage: None,
            parse_error: None,
        })
    }

    /// Records a tool invocation with `refs` log-line refs and returns its id.
    pub fn tool(&mut self, tool: &str, service: &str, text: &str, refs: usize) -> i64 {
        let id = self.next_invocation;
        self.next_invocation += 1;
        let status = if refs == 0 {
            EvidenceStatus::NoEvidence
        } else {
            EvidenceStatus::Supported
        };
        let evidence_refs = (0..refs.max(1))
            .map(|i| EvidenceRef {
                raw_path: if refs == 0 {
                    "$.no_evidence".into()
                } else {
                    format!("$.logs[{i}]")
                },
                text: text.into(),
            })
            .collect();
        let seq = self.events.len() as u32 + 1;
        self.push(EventKind::ToolInvoked {
            invocation: Arc::new(ToolInvocation {
                id,
                run_id: self.run_id,
                step_id: Some(1),
                seq,
                tool_name: tool.into(),
                input_params: serde_json::json!({ "service": service }),
                output_preview: format!("{{\"logs\": [{:?}]}}", text),
                output_length: text.len() + 12,
                is_truncated: false,
                retrieval_details: RetrievalDetails {
                    evidence_status: status,
                    evidence_refs,
                    deduped_from: None,
                    blocked: false,
                    retrieved_domains: vec![],
                    source: Default::default(),
                    buckets: None,
                },
                dedup_reason: None,
                duration_ms: 4,
                success: true,
                error_message: None,
            }),
        });
        id
    }

    pub fn gatekeeper(
        &mut self,
        status: &str,
        severity: &str,
        bindings: Vec<CheckedBinding>,
    ) -> &mut Self {
        self.gatekeeper_with(status, severity, bindings, vec![])
    }

    /// A Gatekeeper result with `unverified` bindings too (those of the
    /// Executor's hypotheses and recommended actions).
    pub fn gatekeeper_with(
        &mut self,
        status: &str,
        severity: &str,
        bindings: Vec<CheckedBinding>,
        unverified: Vec<CheckedBinding>,
    ) -> &mut Self {
        let failed_rules = bindings
            .iter()
            .chain(&unverified)
            .filter_map(|b| b.failed_rule.clone())
            .collect();
        self.push(EventKind::GatekeeperChecked {
            result: Arc::new(GatekeeperResult {
                status: status.into(),
                severity: severity.into(),
                rule_set_version: "gatekeeper-rules-v1".into(),
                rules: vec![],
                checked_bindings: bindings,
                unverified_bindings: unverified,
                claim_errors: vec![],
                failed_rules,
                warnings: vec![],
                errors: vec![],
            }),
        })
    }

    pub fn verdict(
        &mut self,
        model: Option<Verdict>,
        ceiling: Option<Verdict>,
        score: Option<f64>,
    ) -> &mut Self {
        let effective = match (model, ceiling) {
            (Some(m), Some(c)) => Some(m.min(c)),
            (m, None) => m,
            (None, c) => c,
        };
        self.push(EventKind::VerdictUpdated(VerdictSnapshot {
            model_verdict: model,
            ceiling,
            effective_verdict: effective,
            groundedness_score: score,
            evidence_retry_count: self.evidence_retries,
        }))
    }

    pub fn done(&mut self, answer: &str, verdict: Option<Verdict>) -> Vec<EngineEvent> {
        let trace = build_trace(&self.node_events, self.evidence_retries);
        let degraded = trace.degraded;
        self.push(EventKind::RunFinished(RunEnd {
            status: RunStatus::Success,
            degraded,
            answer: answer.into(),
            effective_verdict: verdict,
            trace,
            failure: None,
        }));
        self.events.clone()
    }
}

pub fn binding(
    claim: &str,
    text: &str,
    tool: &str,
    inv: i64,
    path: &str,
    pass: bool,
) -> CheckedBinding {
    CheckedBinding {
        claim_id: claim.into(),
        claim_text: text.into(),
        claim_type: "fact".into(),
        tool_name: tool.into(),
        source_invocation_id: Some(inv),
        raw_path: Some(path.into()),
        evidence_excerpt: "Connection is not available".into(),
        matched_text: if pass {
            "ERROR order-service HikariPool-1 - Connection is not available".into()
        } else {
            String::new()
        },
        status: if pass {
            BindingStatus::Pass
        } else {
            BindingStatus::Fail
        },
        failed_rule: (!pass).then(|| "raw_path_in_refs".into()),
        detail: String::new(),
        backfilled: false,
    }
}

const LOG: &str = "2026-07-08T23:05:28Z ERROR order-service HikariPool-1 - Connection is not available, request timed out after 30000ms";

/// planner -> executor -> gatekeeper(PASS) -> verified_input -> verifier -> composer -> END.
pub fn pass_run(run_id: i64) -> Vec<EngineEvent> {
    use NodeId::*;
    let mut b = RunBuilder::new(run_id, "why is order-service failing?");
    b.enter(Planner, Some("start")).model(AgentRole::Planner);
    b.finish(Planner, Outcome::Completed, "completed", Executor);
    b.enter(Executor, Some("completed"))
        .model(AgentRole::Executor);
    let inv1 = b.tool("query_logs", "order-service", LOG, 2);
    let inv2 = b.tool(
        "query_metrics",
        "order-service",
        "alertname=HighDbPool service=order-service state=firing",
        1,
    );
    b.model(AgentRole::Executor)
        .finish(Executor, Outcome::Completed, "completed", Gatekeeper);
    b.enter(Gatekeeper, Some("completed")).gatekeeper(
        "pass",
        "none",
        vec![
            binding(
                "claim-1",
                "DB pool exhausted",
                "query_logs",
                inv1,
                "$.logs[0]",
                true,
            ),
            binding(
                "claim-2",
                "Alert firing",
                "query_metrics",
                inv2,
                "$.logs[0]",
                true,
            ),
        ],
    );
    b.verdict(None, Some(Verdict::Pass), None);
    b.finish(Gatekeeper, Outcome::Pass, "gatekeeper_pass", VerifiedInput);
    b.node(VerifiedInput, Outcome::Completed, "completed", Verifier);
    b.enter(Verifier, Some("completed"))
        .model(AgentRole::Verifier);
    b.verdict(Some(Verdict::Pass), Some(Verdict::Pass), Some(0.92));
    b.finish(Verifier, Outcome::Completed, "completed", Composer);
    b.enter(Composer, Some("completed"))
        .model(AgentRole::Composer);
    b.finish(Composer, Outcome::Completed, "composer_completed", End);
    b.done(
        "order-service's database connection pool is exhausted: HikariPool-1 timed out after 30000ms (invocation 1).\nRecommended: check long-running transactions.",
        Some(Verdict::Pass),
    )
}

/// The Gatekeeper rejects a forged binding and the run falls back.
pub fn reject_run(run_id: i64) -> Vec<EngineEvent> {
    use NodeId::*;
    let mut b = RunBuilder::new(run_id, "is payment-service down?");
    b.node(Planner, Outcome::Completed, "completed", Executor);
    b.enter(Executor, Some("completed"));
    let inv = b.tool("query_logs", "payment-service", LOG, 1);
    b.finish(Executor, Outcome::Completed, "completed", Gatekeeper);
    b.enter(Gatekeeper, Some("completed")).gatekeeper(
        "fail",
        "reject",
        vec![
            binding(
                "claim-1",
                "payment DB crashed",
                "query_logs",
                inv,
                "$.logs[7]",
                false,
            ),
            binding(
                "claim-2",
                "pool exhausted",
                "query_logs",
                inv,
                "$.logs[0]",
                true,
            ),
        ],
    );
    b.verdict(None, Some(Verdict::Reject), None);
    b.finish(Gatekeeper, Outcome::Reject, "gatekeeper_reject", Fallback);
    b.node(Fallback, Outcome::Completed, "gatekeeper_reject", End);
    b.done(
        "The diagnosis did not pass evidence validation. Tool calls: 1 succeeded, 0 failed, 0 blocked. No trustworthy root cause can be given; see the run trace.",
        None,
    )
}

/// The Gatekeeper caps the ceiling at LOW_CONFID; the Verifier said PASS.
pub fn capped_run(run_id: i64) -> Vec<EngineEvent> {
    use NodeId::*;
    let mut b = RunBuilder::new(run_id, "why is checkout slow?");
    b.node(Planner, Outcome::Completed, "completed", Executor);
    b.enter(Executor, Some("completed"));
    let inv = b.tool("query_logs", "checkout", LOG, 1);
    let inv2 = b.tool("query_logs", "inventory", "", 0);
    b.finish(Executor, Outcome::Completed, "completed", Gatekeeper);
    b.enter(Gatekeeper, Some("completed")).gatekeeper(
        "fail",
        "low_confid",
        vec![
            binding(
                "claim-1",
                "pool exhausted",
                "query_logs",
                inv,
                "$.logs[0]",
                true,
            ),
            binding(
                "claim-2",
                "inventory slow",
                "query_logs",
                inv2,
                "$.logs[3]",
                false,
            ),
        ],
    );
    b.verdict(None, Some(Verdict::LowConfid), None);
    b.finish(
        Gatekeeper,
        Outcome::LowConfid,
        "gatekeeper_low_confid",
        VerifiedInput,
    );
    b.node(VerifiedInput, Outcome::Completed, "completed", Verifier);
    b.enter(Verifier, Some("completed"));
    b.verdict(Some(Verdict::Pass), Some(Verdict::LowConfid), Some(0.61));
    b.finish(Verifier, Outcome::Completed, "completed", Composer);
    b.node(Composer, Outcome::Completed, "composer_completed", End);
    b.done(
        "Likely cause (low confidence): the connection pool is exhausted.",
        Some(Verdict::LowConfid),
    )
}

/// The claims' bindings all pass; of the bindings the Executor's
/// hypotheses and recommended actions carry, one passes and one fails its
/// rule, which caps the ceiling at LOW_CONFID.
pub fn unverified_run(run_id: i64) -> Vec<EngineEvent> {
    use NodeId::*;
    let mut b = RunBuilder::new(run_id, "why is order-service failing?");
    b.node(Planner, Outcome::Completed, "completed", Executor);
    b.enter(Executor, Some("completed"));
    let logs = b.tool("query_logs", "order-service", LOG, 2);
    let alerts = b.tool(
        "query_metrics",
        "order-service",
        "alertname=HighDbPool service=order-service state=firing",
        1,
    );
    b.finish(Executor, Outcome::Completed, "completed", Gatekeeper);
    let mut hypothesis = binding(
        "hypotheses[0]",
        "a long transaction holds the pool",
        "query_metrics",
        alerts,
        "$.logs[0]",
        true,
    );
    hypothesis.claim_type = "hypothesis".into();
    let mut action = binding(
        "recommended_actions[0]",
        "restart order-service",
        "query_logs",
        logs,
        "$.logs[1]",
        false,
    );
    action.claim_type = "recommended_action".into();
    action.failed_rule = Some("binding.positive_needs_positive_evidence".into());
    b.enter(Gatekeeper, Some("completed")).gatekeeper_with(
        "fail",
        "low_confid",
        vec![
            binding(
                "claim-1",
                "DB pool exhausted",
                "query_logs",
                logs,
                "$.logs[0]",
                true,
            ),
            binding(
                "claim-2",
                "Alert firing",
                "query_metrics",
                alerts,
                "$.logs[0]",
                true,
            ),
        ],
        vec![hypothesis, action],
    );
    b.verdict(None, Some(Verdict::LowConfid), None);
    b.finish(
        Gatekeeper,
        Outcome::LowConfid,
        "gatekeeper_low_confid",
        VerifiedInput,
    );
    b.node(VerifiedInput, Outcome::Completed, "completed", Verifier);
    b.enter(Verifier, Some("completed"));
    b.verdict(Some(Verdict::Pass), Some(Verdict::LowConfid), Some(0.8));
    b.finish(Verifier, Outcome::Completed, "completed", Composer);
    b.node(Composer, Outcome::Completed, "composer_completed", End);
    b.done(
        "order-service's database connection pool is exhausted.\nNot verified: a long transaction may hold the pool.",
        Some(Verdict::LowConfid),
    )
}

/// A run with `tools` invocations and `bindings` checked bindings, for the
/// render benchmark.
#[allow(dead_code)] // only benches/tui.rs uses it
pub fn big_run(run_id: i64, tools: usize, bindings: usize) -> Vec<EngineEvent> {
    use NodeId::*;
    let mut b = RunBuilder::new(run_id, "why is everything slow?");
    b.node(Planner, Outcome::Completed, "completed", Executor);
    b.enter(Executor, Some("completed"));
    let ids: Vec<i64> = (0..tools)
        .map(|i| b.tool("query_logs", &format!("svc-{i}"), LOG, 1 + i % 3))
        .collect();
    b.finish(Executor, Outcome::Completed, "completed", Gatekeeper);
    let bs = (0..bindings)
        .map(|i| {
            let inv = ids.get(i % ids.len().max(1)).copied().unwrap_or(0);
            binding(
                &format!("claim-{i}"),
                "a claim",
                "query_logs",
                inv,
                "$.logs[0]",
                i % 5 != 0,
            )
        })
        .collect();
    b.enter(Gatekeeper, Some("completed"))
        .gatekeeper("fail", "low_confid", bs);
    b.verdict(None, Some(Verdict::LowConfid), None);
    b.finish(
        Gatekeeper,
        Outcome::LowConfid,
        "gatekeeper_low_confid",
        VerifiedInput,
    );
    b.events.clone()
}

/// A stored run as the runs list gets it.
pub fn summary(id: i64, session: &str, status: &str) -> diagraph::vocab::run::RunSummary {
    diagraph::vocab::run::RunSummary {
        run_id: id,
        session_id: session.into(),
        status: diagraph::vocab::run::RunStatus::parse(status).unwrap(),
        effective_verdict: Some(Verdict::Pass),
        degraded: false,
        duration_ms: Some(1_250),
        question: format!("question {id}"),
        created_at: "2026-07-08T23:05:28.000Z".into(),
        tokens: 1_500 + id as u64,
        cost_usd: None,
        rerun_of: None,
    }
}

/// The workbench as it opens: no run started yet.
pub fn idle_state() -> diagraph::tui::state::AppState {
    let mut state = diagraph::tui::state::AppState::new(
        diagraph::tui::theme::Theme::dark(),
        diagraph::tui::keymap::Keymap::default(),
        "offline (rule-based)",
        "sqlite:/tmp/diagraph-test.db",
    );
    state.focus = diagraph::tui::state::Pane::Graph;
    state
}

/// A state in the dark theme with `events` applied as a live run.
pub fn live_state(events: &[EngineEvent]) -> diagraph::tui::state::AppState {
    use diagraph::tui::state::{AppState, Mode};
    use diagraph::tui::update::{Msg, update};
    let mut state = AppState::new(
        diagraph::tui::theme::Theme::dark(),
        diagraph::tui::keymap::Keymap::default(),
        "offline (rule-based)",
        "sqlite:/tmp/diagraph-test.db",
    );
    let generation = state.begin(Mode::Live, true, false);
    for e in events {
        update(
            &mut state,
            Msg::Engine {
                generation,
                event: Box::new(e.clone()),
            },
        );
    }
    state.focus = diagraph::tui::state::Pane::Graph;
    state
}

/// A key press without modifiers, as the terminal sends it.
pub fn key(code: crossterm::event::KeyCode) -> diagraph::tui::update::Msg {
    use crossterm::event::{KeyEvent, KeyModifiers};
    diagraph::tui::update::Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// A typed character; upper case comes with SHIFT, as terminals send it.
pub fn ch(c: char) -> diagraph::tui::update::Msg {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mods = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    diagraph::tui::update::Msg::Key(KeyEvent::new(KeyCode::Char(c), mods))
}

/// Renders the whole screen at a fixed size.
pub fn render(
    state: &diagraph::tui::state::AppState,
    w: u16,
    h: u16,
) -> ratatui::Terminal<ratatui::backend::TestBackend> {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h))
        .unwrap_or_else(|e| panic!("test backend: {e}"));
    let _ = terminal.draw(|f| diagraph::tui::view::view(state, f));
    terminal
}

/// Position of the first cell where `text` starts (searching row by row).
pub fn find_text(buf: &ratatui::buffer::Buffer, text: &str) -> Option<(u16, u16)> {
    let area = buf.area;
    for y in area.top()..area.bottom() {
        let mut row = String::new();
        let mut xs = Vec::new();
        for x in area.left()..area.right() {
            let sym = buf[(x, y)].symbol();
            for _ in sym.chars() {
                xs.push(x);
            }
            row.push_str(sym);
        }
        if let Some(i) = row.find(text) {
            let ci = row[..i].chars().count();
            return xs.get(ci).map(|x| (*x, y));
        }
    }
    None
}

/// The buffer's text, one line per row.
pub fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// A reason code the fixtures name by its text; a typo is a bug in the
/// fixture, not a case to tolerate.
fn reason(text: &str) -> ReasonCode {
    ReasonCode::parse(text).unwrap_or_else(|| panic!("unknown reason code {text:?}"))
}

/// A run whose evidence makes a timeline of `rows` rows: alerts (a third
/// of them resolved) and log queries, each with 120 recorded buckets.
pub fn timeline_run(run_id: i64, rows: usize) -> Vec<EngineEvent> {
    use NodeId::*;
    use diagraph::vocab::buckets::TimeBuckets;
    let mut b = RunBuilder::new(run_id, "why is svc-3 failing?");
    b.node(Planner, Outcome::Completed, "completed", Executor);
    b.enter(Executor, Some("completed"));
    let start = chrono::DateTime::parse_from_rfc3339("2026-07-08T22:00:00Z")
        .unwrap()
        .to_utc();
    for i in 0..rows {
        let id = b.tool("query_logs", &format!("svc-{i}"), LOG, 2);
        let mut inv = match &b.events.last().unwrap().kind {
            EventKind::ToolInvoked { invocation } => (**invocation).clone(),
            _ => unreachable!(),
        };
        b.events.pop();
        if i % 2 == 0 {
            let state = if i % 3 == 0 { "resolved" } else { "firing" };
            inv.tool_name = "query_metrics".into();
            inv.retrieval_details.evidence_refs = vec![EvidenceRef {
                raw_path: "$.alerts[0]".into(),
                text: format!(
                    "alertname=Alert{i} service=svc-{i} severity=critical state={state} value=1 active_for=30m since={} summary=s",
                    (start + chrono::Duration::minutes(i as i64 % 60))
                        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                ),
            }];
        } else {
            let mut g = TimeBuckets::tiling(start, start + chrono::Duration::minutes(90));
            for (k, c) in g.counts.iter_mut().enumerate() {
                *c = ((k * 7 + i * 13) % 40) as u64;
            }
            inv.retrieval_details.buckets = Some(g);
        }
        inv.id = id;
        b.push(EventKind::ToolInvoked {
            invocation: Arc::new(inv),
        });
    }
    b.finish(Executor, Outcome::Completed, "completed", Gatekeeper);
    b.events.clone()
}
