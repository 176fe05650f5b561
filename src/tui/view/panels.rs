//! The verdict panel, the final answer and the question input.
//!
//! A verdict the ceiling lowered is drawn in the `verdict_capped` role with
//! an explicit "capped" label, so it reads as capped without colour too.
//! An answer that came from a fallback is marked "degraded" the same way.

use super::{pane_block, verdict_span};
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
}

impl VerdictPane<'_> {
    pub fn lines(&self) -> Vec<Line<'static>> {
        let t = self.theme;
        let v = &self.view.verdict;
        let label = |s: &str| Span::styled(format!("{s:<15}"), t.style(Role::Muted));
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
        vec![
            Line::from(vec![
                label("model verdict"),
                verdict_span(v.model_verdict, t),
            ]),
            Line::from(vec![label("ceiling"), verdict_span(v.ceiling, t)]),
            Line::from(effective),
            Line::from(vec![
                label("groundedness"),
                Span::styled(
                    v.groundedness_score
                        .map(|g| format!("{g:.2}"))
                        .unwrap_or_else(|| "—".into()),
                    t.style(Role::Text),
                ),
            ]),
            Line::from(vec![
                label("evidence retry"),
                Span::styled(v.evidence_retry_count.to_string(), t.style(Role::Text)),
            ]),
            Line::from(vec![label("gatekeeper"), self.gatekeeper_summary()]),
            Line::from(vec![
                label("model calls"),
                Span::styled(
                    format!(
                        "{} ({} failed) · {} tokens",
                        self.view.model_calls, self.view.model_errors, self.view.tokens
                    ),
                    t.style(Role::Text),
                ),
            ]),
        ]
    }

    fn gatekeeper_summary(&self) -> Span<'static> {
        let t = self.theme;
        match &self.view.gatekeeper {
            None => Span::styled("—", t.style(Role::Muted)),
            Some(g) => {
                let pass = g.verified_binding_count();
                let text = format!(
                    "{}/{} · {}/{} bindings pass",
                    sanitize_line(&g.status),
                    sanitize_line(&g.severity),
                    pass,
                    g.checked_bindings.len()
                );
                let role = if pass < g.checked_bindings.len() {
                    Role::BindingFailed
                } else {
                    Role::BindingPass
                };
                Span::styled(text, t.style(role))
            }
        }
    }
}

impl Widget for VerdictPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = pane_block(" Verdict ", self.focused, self.theme);
        Paragraph::new(self.lines()).block(block).render(area, buf);
    }
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
                // A replay shows exactly what the live run showed here.
                let status = if v.is_running() {
                    "running…"
                } else {
                    "no answer yet"
                };
                lines.push(Line::styled(status, t.style(Role::Muted)));
                pack_warnings(&mut lines, v, t);
            }
        }
        Text::from(lines)
    }
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
        let inner_w = area.width.saturating_sub(2).max(1);
        let text = self.text();
        // Clamp the scroll to the wrapped height so G lands on the end.
        let wrapped: usize = text
            .lines
            .iter()
            .map(|l| (l.width() as u16).div_ceil(inner_w).max(1) as usize)
            .sum();
        let max = (wrapped as u16).saturating_sub(area.height.saturating_sub(2));
        Paragraph::new(text)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((self.state.sel.answer_scroll.min(max), 0))
            .render(area, buf);
    }
}

/// The question input, or the scenario description in demo mode.
pub fn render_input(state: &AppState, area: Rect, frame: &mut Frame) {
    let t = &state.theme;
    let focused = state.focus == Pane::Input;
    if state.mode == Mode::Demo && !focused {
        if let Some(demo) = &state.demo {
            let block = pane_block(format!(" Demo · {} ", sanitize_line(&demo.name)), false, t);
            Paragraph::new(sanitize_line(&demo.description))
                .style(t.style(Role::Muted))
                .block(block)
                .render(area, frame.buffer_mut());
            return;
        }
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
