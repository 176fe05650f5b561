//! The Planner node: projects the run state into [`PlannerInput`] (query,
//! history, skill and domain catalog, retry view; never another agent's
//! output), calls the model and parses `planner_plan`.

use crate::engine::ctx::{NodeResult, RunCtx, Unhandled};
use crate::engine::nodes::evidence_retry;
use crate::engine::subjects;
use crate::vocab::contracts::parse_planner_plan;
use crate::vocab::dto::{AgentInput, PlannerInput, PlannerMode};
use crate::vocab::graph::Outcome;

pub(crate) fn build_input(ctx: &RunCtx<'_>) -> PlannerInput {
    let s = &ctx.state;
    let catalog = &ctx.engine.catalog;
    PlannerInput {
        question: s.question.clone(),
        lang: s.lang,
        mode: s.planner_mode,
        history: s.history.clone(),
        available_knowledge_domains: catalog.domains.clone(),
        skill_catalog: catalog.skills.clone(),
        known_services: catalog.services.clone(),
        aliases: catalog.names.aliases.clone(),
        now: Some(catalog.reference_time.unwrap_or_else(chrono::Utc::now)),
        available_tools: ctx
            .engine
            .tools
            .spec_list(&ctx.engine.config.tool_permissions),
        retry_context: match s.planner_mode {
            PlannerMode::EvidenceGapOnly => {
                s.retry_context.as_ref().map(evidence_retry::planner_view)
            }
            PlannerMode::Normal => None,
        },
    }
}

pub(crate) async fn run(ctx: &mut RunCtx<'_>, attempt: u32) -> Result<NodeResult, Unhandled> {
    // Rebuilt from unchanged state, so a technical retry sends the same input.
    let input = AgentInput::from(build_input(ctx));
    let parsed = ctx
        .call_json_agent(attempt, input, "planner_plan", parse_planner_plan)
        .await?;
    match parsed {
        Ok(plan) => {
            let detail = match &plan.selected_skill {
                Some(skill) => format!("skill {skill}, {} step(s)", plan.plan.len()),
                None => format!("no skill, {} step(s)", plan.plan.len()),
            };
            ctx.state
                .planned_tools
                .extend(plan.queries.iter().map(|q| q.tool.clone()));
            // The question's subjects come from the first plan; a gap
            // round asks about the same question.
            if ctx.state.planner_mode == PlannerMode::Normal {
                let held = &ctx.engine.catalog.names;
                let mut subjects = subjects::resolve(&plan.subjects, held);
                if subjects.is_empty() {
                    subjects = subjects::from_question(&ctx.state.question, held);
                }
                ctx.state.subjects = subjects;
            }
            ctx.state.planner_plan = Some(plan);
            Ok(NodeResult {
                outcome: Outcome::Completed,
                detail,
            })
        }
        Err(failure) => Ok(failure),
    }
}
