//! The offline Executor: the tool-call protocol and the final
//! executor_evidence_v2 snapshot.
//!
//! Turn 1 calls the planned queries (all at once, within `max_tool_calls`).
//! Turn 2 may look up runbooks for firing alerts the first turn found (broad
//! questions only). Then, or at once when no tools are offered, it answers
//! with claims built only from the refs those calls returned. In an
//! EVIDENCE_GAP_ONLY round the answer is the full snapshot: the prior
//! verified claims unchanged, then the new ones.

use crate::model::offline::OfflineOptions;
use crate::model::offline::claims::{self, Draft};
use crate::model::offline::entities;
use crate::model::offline::evidence::{self, Collected};
use crate::model::offline::planner::{self, query_key};
use crate::model::{ChatRequest, ChatResponse, FinishReason, Message, ToolCall};
use crate::vocab::contracts::{EXECUTOR_ANSWER_VERSION, ExecutorEvidence, PlannedQuery};
use crate::vocab::dto::{ExecutorInput, PlannerInput, PlannerMode};
use crate::vocab::level::Level;
use crate::vocab::tool::{LOOKUP_KNOWLEDGE, QUERY_LOGS, QUERY_METRICS};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Runbook lookups for alerts found in turn 1.
const MAX_FOLLOW_UPS: usize = 2;
/// Next steps an answer carries, over all rounds.
const MAX_ACTIONS: usize = 4;

pub fn respond(
    input: &ExecutorInput,
    request: &ChatRequest,
    options: &OfflineOptions,
) -> ChatResponse {
    let results = request.tool_results();
    let turns = request
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Assistant { tool_calls, .. } if !tool_calls.is_empty()))
        .count()
        .max(usize::from(!results.is_empty()));
    let offered: Vec<&str> = request
        .callable_tools()
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    let budget = (input.max_tool_calls as usize).saturating_sub(results.len());
    let narrow = is_narrow(input);
    if !offered.is_empty() && budget > 0 {
        let calls = match turns {
            0 => first_calls(input, request, &offered),
            1 => {
                let mut calls = level_follow_ups(&results, &offered);
                if !narrow {
                    calls.extend(follow_ups(&results, input, &offered));
                }
                calls
            }
            _ => vec![],
        };
        let calls: Vec<PlannedQuery> = calls.into_iter().take(budget).collect();
        if !calls.is_empty() {
            return tool_calls(calls, turns);
        }
    }
    ChatResponse::text(final_text(input, &results, narrow, options))
}

/// Narrow when the offline planner said so, or when the question reads
/// narrow on its own (an LLM planner gives no such marker).
fn is_narrow(input: &ExecutorInput) -> bool {
    if input
        .planner_plan
        .reasoning
        .contains(planner::NARROW_MARK_EN)
        || input
            .planner_plan
            .reasoning
            .contains(planner::NARROW_MARK_ZH)
    {
        return true;
    }
    let e = entities::extract(&input.question, &[]);
    entities::narrow_target(&input.question, &e).is_some()
}

fn tool_calls(calls: Vec<PlannedQuery>, turn: usize) -> ChatResponse {
    ChatResponse {
        content: None,
        tool_calls: calls
            .into_iter()
            .enumerate()
            .map(|(i, q)| ToolCall {
                id: format!("offline-{}-{}", turn + 1, i + 1),
                name: q.tool,
                arguments: Value::Object(q.arguments).to_string(),
            })
            .collect(),
        finish_reason: FinishReason::ToolCalls,
        ..Default::default()
    }
}

/// The plan's queries; when the plan has none (an LLM planner may give only
/// step text) and this is a first round, the offline planner's own queries
/// for the question. Queries that already ran or use tools not offered are
/// dropped.
fn first_calls(
    input: &ExecutorInput,
    request: &ChatRequest,
    offered: &[&str],
) -> Vec<PlannedQuery> {
    let mut queries = input.planner_plan.queries.clone();
    if queries.is_empty() && input.retry_context.is_none() {
        let derived = PlannerInput {
            question: input.question.clone(),
            lang: input.lang,
            mode: PlannerMode::Normal,
            history: vec![],
            available_knowledge_domains: Default::default(),
            skill_catalog: Default::default(),
            known_services: Default::default(),
            aliases: Default::default(),
            now: None,
            available_tools: request.tools.clone().into(),
            retry_context: None,
        };
        queries = planner::plan(&derived).queries;
        if let Some(skill) = &input.selected_skill {
            queries.push(PlannedQuery {
                tool: crate::vocab::tool::READ_SKILL.into(),
                arguments: json!({ "name": skill })
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                purpose: String::new(),
            });
        }
    }
    let done: BTreeSet<String> = input
        .retry_context
        .iter()
        .flat_map(|r| r.completed_queries.iter())
        .map(|q| query_key(&q.tool, &q.arguments))
        .collect();
    let mut seen = done;
    queries
        .into_iter()
        .filter(|q| offered.contains(&q.tool.as_str()))
        .filter(|q| seen.insert(query_key(&q.tool, &Value::Object(q.arguments.clone()))))
        .collect()
}

/// Log queries for several levels return the newest lines only, so a few
/// FATAL lines among many ERROR ones can be left out of the sample. For a
/// query cut at its limit whose sample lacks its most severe level, ask
/// for that level alone.
fn level_follow_ups(results: &[Value], offered: &[&str]) -> Vec<PlannedQuery> {
    if !offered.contains(&QUERY_LOGS) {
        return vec![];
    }
    let asked: BTreeSet<String> = results
        .iter()
        .filter_map(|r| {
            let tool = r.get("tool").and_then(Value::as_str)?;
            Some(query_key(tool, r.get("arguments")?))
        })
        .collect();
    let mut out: Vec<PlannedQuery> = Vec::new();
    for r in results {
        if r.get("tool").and_then(Value::as_str) != Some(QUERY_LOGS)
            || r.pointer("/result/truncated").and_then(Value::as_bool) != Some(true)
        {
            continue;
        }
        let Some(args) = r.get("arguments").and_then(Value::as_object) else {
            continue;
        };
        let levels: Vec<Level> = args
            .get("level")
            .and_then(Value::as_str)
            .unwrap_or("")
            .split(',')
            .filter_map(Level::parse)
            .collect();
        let Some(worst) = levels.iter().max().copied() else {
            continue;
        };
        if levels.len() < 2 {
            continue;
        }
        let sampled = r
            .pointer("/result/logs")
            .and_then(Value::as_array)
            .is_some_and(|logs| {
                logs.iter().any(|l| {
                    l.get("level")
                        .and_then(Value::as_str)
                        .and_then(Level::parse)
                        == Some(worst)
                })
            });
        if sampled {
            continue;
        }
        let mut arguments = args.clone();
        arguments.insert("level".into(), json!(worst.as_str()));
        let key = query_key(QUERY_LOGS, &Value::Object(arguments.clone()));
        if asked.contains(&key)
            || out
                .iter()
                .any(|q| query_key(&q.tool, &Value::Object(q.arguments.clone())) == key)
        {
            continue;
        }
        out.push(PlannedQuery {
            tool: QUERY_LOGS.into(),
            arguments,
            purpose: String::new(),
        });
        if out.len() >= MAX_FOLLOW_UPS {
            break;
        }
    }
    out
}

/// Runbook lookups for what turn 1 found: the firing alerts and the top
/// repeated error pattern that no knowledge query has named yet. Runbooks
/// are found by the evidence, not only by the question's words.
fn follow_ups(results: &[Value], input: &ExecutorInput, offered: &[&str]) -> Vec<PlannedQuery> {
    if !offered.contains(&LOOKUP_KNOWLEDGE) {
        return vec![];
    }
    let c = evidence::collect(results, &BTreeSet::new());
    // Knowledge queries of this round and of the rounds before it.
    let prior = input
        .retry_context
        .iter()
        .flat_map(|r| r.completed_queries.iter())
        .filter(|q| q.tool == LOOKUP_KNOWLEDGE)
        .filter_map(|q| q.arguments.get("query").and_then(Value::as_str));
    let asked: Vec<String> = results
        .iter()
        .filter(|r| r.get("tool").and_then(Value::as_str) == Some(LOOKUP_KNOWLEDGE))
        .filter_map(|r| r.pointer("/arguments/query").and_then(Value::as_str))
        .chain(prior)
        .map(str::to_lowercase)
        .collect();
    let mut out: Vec<PlannedQuery> = Vec::new();
    // The evidence's own top error pattern first: its runbook is the one
    // about the cause.
    if let Some(terms) = top_error_terms(&c)
        && !asked.iter().any(|q| *q == terms.to_lowercase())
    {
        out.push(PlannedQuery {
            tool: LOOKUP_KNOWLEDGE.into(),
            arguments: json!({ "query": terms })
                .as_object()
                .cloned()
                .unwrap_or_default(),
            purpose: String::new(),
        });
    }
    for a in c
        .alerts
        .iter()
        .filter(|a| a.state == "firing" && a.src.tool == QUERY_METRICS)
    {
        let name = a.alertname.clone();
        if name.is_empty()
            || asked.iter().any(|q| {
                q.contains(&name.to_lowercase())
                    || q.contains(&planner::split_camel(&name).to_lowercase())
            })
            || out
                .iter()
                .any(|q| q.arguments.get("query") == Some(&json!(planner::split_camel(&name))))
        {
            continue;
        }
        out.push(PlannedQuery {
            tool: LOOKUP_KNOWLEDGE.into(),
            // "HighCPUUsage" -> "High CPU Usage": runbooks are prose.
            arguments: json!({ "query": planner::split_camel(&name) })
                .as_object()
                .cloned()
                .unwrap_or_default(),
            purpose: String::new(),
        });
        if out.len() >= MAX_FOLLOW_UPS {
            break;
        }
    }
    out
}

/// The words of the largest repeated ERROR-or-worse pattern, for a
/// runbook search: `HikariPool-* - Connection is not available, request
/// timed out after *.` -> `HikariPool Connection not available request
/// timed out`.
fn top_error_terms(c: &Collected) -> Option<String> {
    let groups = evidence::group_logs(&c.logs);
    let g = groups.iter().find(|g| {
        g.first()
            .is_some_and(|f| evidence::is_error_level(&f.level))
            && evidence::group_count(g) >= 2
    })?;
    let words: Vec<String> = crate::model::offline::text::tokens(&g.first()?.template)
        .into_iter()
        .filter(|w| w.len() >= 3 && !crate::model::offline::text::is_stopword(w))
        .take(8)
        .collect();
    (words.len() >= 2).then(|| words.join(" "))
}

fn final_text(
    input: &ExecutorInput,
    results: &[Value],
    narrow: bool,
    options: &OfflineOptions,
) -> String {
    let prior = input
        .retry_context
        .as_ref()
        .map(|r| r.prior_verified_output.clone())
        .unwrap_or_default();
    // Items the prior claims already bind are not claimed twice.
    let skip: BTreeSet<(i64, String)> = prior
        .claims
        .iter()
        .flat_map(|c| c.evidence_bindings.iter())
        .filter_map(|b| Some((b.source_invocation_id?, b.raw_path.clone()?)))
        .collect();
    let collected: Collected = evidence::collect(results, &skip);
    let Draft {
        claims: new_claims,
        hypotheses,
        actions,
        missing,
    } = claims::build(
        &collected,
        &input.question,
        narrow,
        input.lang,
        options,
        &claims::AskedAbout::new(&input.planner_plan),
    );
    let mut out = ExecutorEvidence {
        answer_version: EXECUTOR_ANSWER_VERSION.into(),
        ..prior
    };
    let mut next = out
        .claims
        .iter()
        .filter_map(|c| c.claim_id.strip_prefix("claim-")?.parse::<usize>().ok())
        .max()
        .unwrap_or(0)
        .max(out.claims.len());
    for mut c in new_claims {
        next += 1;
        c.claim_id = format!("claim-{next}");
        out.claims.push(c);
    }
    for h in hypotheses {
        if !out
            .hypotheses
            .iter()
            .any(|x| x.hypothesis_text == h.hypothesis_text)
        {
            out.hypotheses.push(h);
        }
    }
    // An evidence-gap round's steps are about the cause it reached: they
    // lead. Few steps, the best first.
    let prior_actions = std::mem::take(&mut out.recommended_actions);
    for a in actions.into_iter().chain(prior_actions) {
        if out.recommended_actions.len() < MAX_ACTIONS
            && !out
                .recommended_actions
                .iter()
                .any(|x| x.action_text == a.action_text)
        {
            out.recommended_actions.push(a);
        }
    }
    for m in missing {
        if !out.missing_info.contains(&m) {
            out.missing_info.push(m);
        }
    }
    if input.retry_context.is_some() && results.is_empty() {
        let note = if input.lang == crate::vocab::contracts::Lang::Zh {
            "补证据轮次没有可执行的新查询，证据缺口仍未补齐"
        } else {
            "The evidence-gap round had no new query to run; the gaps remain open"
        };
        if !out.missing_info.iter().any(|m| m == note) {
            out.missing_info.push(note.into());
        }
    }
    serde_json::to_string(&out).unwrap_or_else(|_| {
        format!("{{\"answer_version\":\"{EXECUTOR_ANSWER_VERSION}\",\"claims\":[],\"hypotheses\":[],\"recommended_actions\":[],\"missing_info\":[]}}")
    })
}
