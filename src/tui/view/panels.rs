//! The verdict panel, the final answer and the question input.
//!
//! A verdict the ceiling lowered is drawn in the `verdict_capped` role with
//! an explicit "capped" label, so it reads as capped without colour too.
//! An answer that came from a fallback is marked "degraded" the same way.

use super::{chrome, pane_block, verdict_span};
use crate::text::{sanitize_line, sanitize_multiline};
use crate::tui::state::{AppState, Mode, Pane, RunView};
use crate::tui::theme::{Role, Theme};
use crate::vocab::graph::ReasonCode;
use crate::vocab::run::RunStatus;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Paragraph, Widget, Wrap};

pub struct VerdictPane<'a> {
    pub view: &'a RunView,
    pub theme: &'a Theme,
    pub focused: bool,
    pub scroll: u16,
}

/// Label column of the verdict pane.
const LABEL_W: usize = 11;

impl VerdictPane<'_> {
    pub fn lines(&self) -> Vec<Line<'static>> {
        let t = self.theme;
        let v = &self.view.verdict;
        let label = |s: &str| Span::styled(format!("{s:<LABEL_W$}"), t.style(Role::Muted));
        let mut effective = vec![label("effective")];
        if v.is_capped() {
            let shown = v.effective_verdict.map(|e| e.as_str()).unwrap_or("—");
            effective.push(Span::styled(
                format!("{shown} ▼ capped"),
                t.style(Role::VerdictCapped),
            ));
        } else {
            effective.push(verdict_span(v.effective_verdict, t));
        }
        if self.view.finished.is_some()
            && crate::report::pass_without_findings(
                v.effective_verdict,
                self.view.gatekeeper.as_deref(),
            )
        {
            effective.push(Span::styled(
                format!(" · {}", crate::report::NO_FINDINGS),
                t.style(Role::VerdictLow),
            ));
        }
        let mut lines = vec![
            Line::from(vec![label("model"), verdict_span(v.model_verdict, t)]),
            Line::from(vec![label("ceiling"), verdict_span(v.ceiling, t)]),
        ];
        // Why the ceiling is what it is, right under it.
        for why in ceiling_reasons(self.view) {
            lines.push(Line::from(vec![
                label("why"),
                Span::styled(why, t.style(Role::Error)),
            ]));
        }
        lines.push(Line::from(effective));
        lines.extend(self.gatekeeper_lines());
        lines.extend([
            Line::from(vec![
                label("grounded"),
                Span::styled(
                    v.groundedness_score
                        .map(|g| format!("{g:.2}"))
                        .unwrap_or_else(|| "—".into()),
                    t.style(Role::Text),
                ),
                Span::styled(
                    format!(" · evidence retries {}", v.evidence_retry_count),
                    t.style(Role::Muted),
                ),
            ]),
            Line::from(vec![
                label("usage"),
                Span::styled(
                    format!(
                        "{} calls ({} failed) · {} tok",
                        self.view.model_calls, self.view.model_errors, self.view.tokens
                    ),
                    t.style(Role::Text),
                ),
            ]),
        ]);
        // Priced models: the cost and the split, each on a line of its own
        // so both fit the narrow pane.
        if let Some(cost) = self.view.usage.cost_usd {
            let u = &self.view.usage;
            lines.push(Line::from(vec![
                label("cost"),
                Span::styled(crate::vocab::usage::cost_text(cost), t.style(Role::Text)),
            ]));
            lines.push(Line::from(vec![
                label("split"),
                Span::styled(
                    format!("{} in / {} out", u.prompt_tokens, u.completion_tokens),
                    t.style(Role::Text),
                ),
            ]));
        }
        lines
    }

    /// The Gatekeeper's status, its bindings, and why the ceiling is what
    /// it is when the bindings alone do not say (a claim-level error, or a
    /// planned tool that failed on every call).
    fn gatekeeper_lines(&self) -> Vec<Line<'static>> {
        let t = self.theme;
        let label = |s: &str| Span::styled(format!("{s:<LABEL_W$}"), t.style(Role::Muted));
        let Some(g) = &self.view.gatekeeper else {
            return vec![Line::from(vec![
                label("gatekeeper"),
                Span::styled("—", t.style(Role::Muted)),
            ])];
        };
        let pass = g.verified_binding_count();
        let total = g.checked_bindings.len();
        let gate_role = if g.status == "pass" {
            Role::BindingPass
        } else {
            Role::BindingFailed
        };
        let mut lines = vec![
            Line::from(vec![
                label("gatekeeper"),
                Span::styled(
                    format!(
                        "{}/{}",
                        sanitize_line(&g.status),
                        sanitize_line(&g.severity)
                    ),
                    t.style(gate_role),
                ),
            ]),
            Line::from(vec![
                label("bindings"),
                Span::styled(
                    format!("{pass}/{total} pass"),
                    t.style(if pass < total {
                        Role::BindingFailed
                    } else {
                        Role::BindingPass
                    }),
                ),
            ]),
        ];
        // The hypotheses' and actions' bindings: a line of their own, never
        // in the count above.
        let (pass, total) = super::tables::bindings::passed(&g.unverified_bindings);
        if total > 0 {
            lines.push(Line::from(vec![
                label("unverified"),
                Span::styled(
                    format!("{pass}/{total} pass (hypotheses/actions)"),
                    t.style(if pass < total {
                        Role::BindingFailed
                    } else {
                        Role::Muted
                    }),
                ),
            ]));
        }
        lines
    }
}

/// Why the ceiling is below PASS when the bindings alone do not say, in
/// the engine's own words: the Gatekeeper's claim-level errors and the
/// failed rules no binding shows, or the planned tools that failed on
/// every call. Empty when the ceiling is PASS or unknown.
pub fn ceiling_reasons(view: &RunView) -> Vec<String> {
    use crate::vocab::contracts::Verdict;
    let below = matches!(
        view.verdict.ceiling,
        Some(Verdict::LowConfid | Verdict::Reject)
    );
    let Some(g) = view.gatekeeper.as_ref().filter(|_| below) else {
        return Vec::new();
    };
    let mut out: Vec<String> = g.errors.iter().map(|e| sanitize_line(e)).collect();
    for rule in &g.failed_rules {
        // A rule a binding failed is shown with that binding already.
        let of_binding = g
            .checked_bindings
            .iter()
            .chain(&g.unverified_bindings)
            .any(|b| b.failed_rule.as_deref() == Some(rule.as_str()));
        let rule = sanitize_line(rule);
        if !of_binding && !out.iter().any(|o| o.contains(&rule)) {
            out.push(format!("failed rule {rule}"));
        }
    }
    if out.is_empty() {
        // The Gatekeeper passed: the cap came from tools that could not
        // be read at all.
        let mut failed: Vec<String> = Vec::new();
        for inv in view.invocations.iter().filter(|i| i.failure().is_some()) {
            let name = sanitize_line(&inv.tool_name);
            let all_failed = view
                .invocations
                .iter()
                .filter(|i| i.tool_name == inv.tool_name)
                .all(|i| i.failure().is_some());
            if all_failed && !failed.contains(&name) {
                failed.push(name);
            }
        }
        if !failed.is_empty() {
            out.push(format!("every call failed: {}", failed.join(", ")));
        }
    }
    out
}

impl VerdictPane<'_> {
    /// How far the pane drawn at `area` can scroll.
    pub fn max_scroll(&self, area: Rect) -> u16 {
        text_max_scroll(&self.lines(), area)
    }
}

/// Highest useful scroll of `lines` wrapped in a bordered pane at `area`.
fn text_max_scroll(lines: &[Line], area: Rect) -> u16 {
    let inner_w = area.width.saturating_sub(2).max(1);
    wrapped_height(lines, inner_w).saturating_sub(area.height.saturating_sub(2))
}

impl Widget for VerdictPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let lines = self.lines();
        let max = text_max_scroll(&lines, area);
        // Lines below the pane's end are announced, never dropped unseen.
        let title = if self.scroll.min(max) < max {
            " Verdict · ↓ more "
        } else {
            " Verdict "
        };
        let block = pane_block(title, self.focused, self.theme);
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((self.scroll.min(max), 0))
            .render(area, buf);
    }
}

/// Rows `lines` take word-wrapped at `width`, counted by the wrapping the
/// paragraph draws with: a scroll clamped by it reaches the last line
/// (a count by width alone falls short where words move to the next row).
pub fn wrapped_height(lines: &[Line], width: u16) -> u16 {
    let rows = Paragraph::new(lines.to_vec())
        .wrap(Wrap { trim: false })
        .line_count(width.max(1));
    u16::try_from(rows).unwrap_or(u16::MAX)
}

pub struct AnswerPane<'a> {
    pub state: &'a AppState,
    pub focused: bool,
}

impl AnswerPane<'_> {
    pub fn text(&self) -> Text<'static> {
        let s = self.state;
        let t = &s.theme;
        let v = s.view();
        let mut lines: Vec<Line<'static>> = Vec::new();
        if let Some(err) = &s.shown.error {
            lines.push(Line::styled(
                format!("error: {}", sanitize_line(err)),
                t.style(Role::Error),
            ));
        }
        match &v.finished {
            Some(fin) => {
                if fin.degraded {
                    let reason = v.last_reason.map_or("", ReasonCode::as_str);
                    lines.push(Line::from(Span::styled(
                        format!(" DEGRADED · fallback ({reason}) "),
                        t.style(Role::Degraded),
                    )));
                }
                if let Some(f) = &fin.failure {
                    let status = match (fin.status, fin.degraded) {
                        (RunStatus::Success, true) => "DEGRADED",
                        (s, _) => s.as_str(),
                    };
                    lines.push(Line::styled(
                        format!("{status} ({}): {}", f.class, sanitize_line(&f.message)),
                        t.style(Role::Error),
                    ));
                }
                // A run that ended without an answer still says what it
                // could not check (a finished answer carries its own list).
                if fin.status != RunStatus::Success {
                    for inv in v.invocations.iter() {
                        if let Some(f) = inv.failure() {
                            lines.push(Line::styled(
                                format!(
                                    "could not check: {} #{}: {}",
                                    sanitize_line(&inv.tool_name),
                                    inv.id,
                                    sanitize_line(&f.message)
                                ),
                                t.style(Role::Error),
                            ));
                        }
                    }
                }
                for l in sanitize_multiline(&fin.answer).lines() {
                    lines.push(Line::styled(l.to_string(), t.style(Role::Text)));
                }
                pack_warnings(&mut lines, v, t);
            }
            None => {
                if let Some(demo) = s.demo.as_ref().filter(|_| s.mode == Mode::Demo) {
                    lines.push(Line::styled(
                        format!("demo: {}", sanitize_line(&demo.name)),
                        t.style(Role::Title),
                    ));
                    for l in sanitize_multiline(&demo.description).lines() {
                        lines.push(Line::styled(l.to_string(), t.style(Role::Muted)));
                    }
                }
                if !v.question.is_empty() {
                    lines.push(Line::styled(
                        format!("Q: {}", sanitize_line(&v.question)),
                        t.style(Role::Text),
                    ));
                }
                // A replay shows exactly what the live run showed here;
                // a live run shows its spinner and the node's own clock.
                match s.node_elapsed() {
                    Some((node, _)) if s.gate_wait_ms().is_some() => {
                        let wait = s.gate_wait_ms().unwrap_or_default();
                        lines.push(Line::from(vec![
                            Span::styled("▶ ", t.style(Role::NodeCurrent)),
                            Span::styled(
                                format!("next: {node} · {}", chrome::waiting_label(s, wait)),
                                t.style(Role::Text),
                            ),
                        ]));
                    }
                    Some((node, ms)) => {
                        lines.push(Line::from(vec![
                            Span::styled("▶ ", t.style(Role::NodeCurrent)),
                            Span::styled(
                                format!("running {node} · {}", super::tables::fmt_ms(ms)),
                                t.style(Role::Text),
                            ),
                        ]));
                    }
                    None => {
                        let status = if v.is_running() {
                            "running…"
                        } else {
                            "no answer yet"
                        };
                        lines.push(Line::styled(status, t.style(Role::Muted)));
                    }
                }
                streaming_lines(&mut lines, v, t);
                pack_warnings(&mut lines, v, t);
            }
        }
        Text::from(lines)
    }
}

/// Lines of a streamed answer the pane shows at most: the newest ones.
const STREAMING_LINES: usize = 16;

/// The answer the running node's model is streaming, as far as it has
/// arrived: its reasoning muted, then its text; the newest lines when
/// it is long.
fn streaming_lines(lines: &mut Vec<Line<'static>>, v: &RunView, t: &Theme) {
    let Some(text) = &v.streaming else {
        return;
    };
    let mut body: Vec<Line<'static>> = Vec::new();
    for l in sanitize_multiline(&text.reasoning).lines() {
        body.push(Line::styled(format!("· {l}"), t.style(Role::Muted)));
    }
    for l in sanitize_multiline(&text.content).lines() {
        body.push(Line::styled(l.to_string(), t.style(Role::Text)));
    }
    let role = text.role.map_or("model", |r| r.as_str());
    lines.push(Line::styled(
        format!(
            "{role} is writing ({} characters so far):",
            text.reasoning.chars().count() + text.content.chars().count()
        ),
        t.style(Role::Muted),
    ));
    let skip = body.len().saturating_sub(STREAMING_LINES);
    if skip > 0 {
        lines.push(Line::styled(
            format!("… {skip} earlier line(s)"),
            t.style(Role::Muted),
        ));
    }
    lines.extend(body.into_iter().skip(skip));
}

/// Pack warnings shown with the answer: the first few, then a count.
fn pack_warnings(lines: &mut Vec<Line<'static>>, v: &RunView, t: &Theme) {
    const SHOWN: usize = 3;
    let warnings = &v.sources.pack_warnings;
    for w in warnings.iter().take(SHOWN) {
        lines.push(Line::styled(
            format!("pack warning: {}", sanitize_line(w)),
            t.style(Role::Degraded),
        ));
    }
    if warnings.len() > SHOWN {
        lines.push(Line::styled(
            format!(
                "… {} more pack warnings (diagraph trace shows them all)",
                warnings.len() - SHOWN
            ),
            t.style(Role::Muted),
        ));
    }
}

impl AnswerPane<'_> {
    /// How far the pane drawn at `area` can scroll.
    pub fn max_scroll(&self, area: Rect) -> u16 {
        text_max_scroll(&self.text().lines, area)
    }
}

impl Widget for AnswerPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = &self.state.theme;
        let degraded = self
            .state
            .view()
            .finished
            .as_ref()
            .is_some_and(|f| f.degraded);
        let title = if degraded {
            " Answer (degraded) "
        } else {
            " Answer "
        };
        let block = pane_block(title, self.focused, t);
        let text = self.text();
        // Clamp the scroll to the wrapped height so G lands on the end.
        let max = text_max_scroll(&text.lines, area);
        // A streaming answer keeps its newest text in sight.
        let scroll = if self.state.view().streaming.is_some() {
            max
        } else {
            self.state.sel.answer_scroll.min(max)
        };
        Paragraph::new(text)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .render(area, buf);
    }
}

/// The question input, or the scenario description in demo mode.
pub fn render_input(state: &AppState, area: Rect, frame: &mut Frame) {
    let t = &state.theme;
    let focused = state.focus == Pane::Input;
    if state.mode == Mode::Demo
        && !focused
        && let Some(demo) = &state.demo
    {
        let block = pane_block(format!(" Demo · {} ", sanitize_line(&demo.name)), false, t);
        Paragraph::new(sanitize_line(&demo.description))
            .style(t.style(Role::Muted))
            .block(block)
            .render(area, frame.buffer_mut());
        return;
    }
    let mut hint = " Question (i) ".to_string();
    if !state.history.is_empty() {
        hint.push_str(&format!("· ↑↓ history ({}) ", state.history.len()));
    }
    hint.push_str(if state.step_live {
        "· step mode ON (ctrl-s) "
    } else {
        "· step mode off (ctrl-s) "
    });
    let block = pane_block(hint, focused, t);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(&state.input, inner);
}

/// " (P in / C out · $cost)" when the calls reported a split and a cost;
/// empty for models that report neither (the offline and scripted ones).
pub(crate) fn usage_detail(u: &crate::vocab::usage::Usage) -> String {
    match u.cost_usd {
        Some(c) => format!(
            " ({} in / {} out · {})",
            u.prompt_tokens,
            u.completion_tokens,
            crate::vocab::usage::cost_text(c)
        ),
        None => String::new(),
    }
}
