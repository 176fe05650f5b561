//! The offline Planner: entities -> skill choice -> concrete tool queries.
//!
//! Broad questions get the service's alerts, its ERROR and WARN logs,
//! keyword log searches for the named symptoms, one knowledge lookup and
//! the selected skill. Narrow questions (`entities::NarrowTarget`) get
//! exactly the one query that confirms them. In EVIDENCE_GAP_ONLY mode only
//! queries aimed at the gap facts' entities are planned, and none that
//! already ran.

use crate::model::offline::depend;
use crate::model::offline::entities::{self, Entities, NarrowTarget};
use crate::model::offline::relevance;
use crate::model::offline::text::{content_tokens, tokens};
use crate::text::clean;
use crate::vocab::catalog::{DomainInfo, SkillInfo};
use crate::vocab::contracts::{Lang, PlannedQuery, PlannerPlan, Subjects};
use crate::vocab::dto::{PlannerInput, PlannerRetryView};
use crate::vocab::level::{self, Level};
use crate::vocab::time::{self, Window};
use crate::vocab::tool::ToolSpec;
use crate::vocab::tool::{LOOKUP_KNOWLEDGE, QUERY_LOGS, QUERY_METRICS, READ_SKILL, summarize_args};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Most queries a first-round plan asks for (the Executor's budget is 12).
const MAX_QUERIES: usize = 10;
/// Most queries an evidence-gap round asks for.
const MAX_GAP_QUERIES: usize = 4;

/// Written into `reasoning` so the offline Executor knows the plan is narrow.
pub const NARROW_MARK_EN: &str = "narrow question: one exact query, no widening";
pub const NARROW_MARK_ZH: &str = "窄范围问题：只执行一个精确查询，不扩大范围";

/// Which tools exist and which argument names each accepts.
pub struct ToolSet<'a> {
    tools: &'a [Arc<ToolSpec>],
}

impl<'a> ToolSet<'a> {
    pub fn new(tools: &'a [Arc<ToolSpec>]) -> Self {
        ToolSet { tools }
    }

    /// An empty list means "not told": assume the standard tools.
    pub fn has(&self, tool: &str) -> bool {
        self.tools.is_empty() || self.tools.iter().any(|t| t.name == tool)
    }

    /// The arguments the tool accepts, when its schema lists them.
    fn params(&self, tool: &str) -> Option<Vec<String>> {
        let brief = self.tools.iter().find(|t| t.name == tool)?;
        let props = brief.parameters.get("properties")?.as_object()?;
        Some(props.keys().cloned().collect())
    }

    /// A query with only the arguments the tool accepts; None when the tool
    /// is unavailable or the query would lose every argument it needs.
    pub fn query(
        &self,
        tool: &str,
        args: &[(&str, Value)],
        purpose: String,
    ) -> Option<PlannedQuery> {
        if !self.has(tool) {
            return None;
        }
        let params = self.params(tool);
        let mut arguments = Map::new();
        for (k, v) in args {
            if params.as_ref().is_none_or(|p| p.iter().any(|n| n == k)) {
                arguments.insert((*k).to_string(), v.clone());
            }
        }
        if !args.is_empty() && arguments.is_empty() {
            return None;
        }
        Some(PlannedQuery {
            tool: tool.to_string(),
            arguments,
            purpose,
        })
    }
}

/// The stable identity of a query, for "already ran" and dedup checks.
pub fn query_key(tool: &str, arguments: &Value) -> String {
    format!("{tool} {}", summarize_args(arguments))
}

pub fn plan(input: &PlannerInput) -> PlannerPlan {
    let mut e = entities::extract_at(&input.question, &input.known_services, input.now);
    let said = with_aliases(&mut e, &input.question, &input.aliases);
    if let Some(retry) = &input.retry_context {
        return gap_plan(input, retry);
    }
    let tools = ToolSet::new(&input.available_tools);
    let zh = input.lang == Lang::Zh;
    let (skill, skill_reason) = select_skill(&input.question, &e, &input.skill_catalog, zh);
    let narrow = entities::narrow_target(&input.question, &e);
    let procedure: &[String] = skill
        .as_deref()
        .and_then(|name| input.skill_catalog.iter().find(|s| s.name == name))
        .map_or(&[], |s| s.procedure.as_slice());
    let mut steps: Vec<String> = Vec::new();
    let queries = match &narrow {
        Some(t) => narrow_queries(t, &e, &tools),
        None => {
            // The selected skill's procedure first, step by step; then
            // the broad defaults fill what it left out.
            let mut out: Vec<PlannedQuery> = Vec::new();
            let mut seen = BTreeSet::new();
            for (i, step) in procedure.iter().enumerate() {
                let qs = skill_step_queries(step, &e, &input.known_services, &tools);
                let calls: Vec<String> = qs
                    .iter()
                    .filter(|q| {
                        seen.insert(query_key(&q.tool, &Value::Object(q.arguments.clone())))
                    })
                    .map(|q| {
                        out.push(q.clone());
                        step_text(q, zh)
                    })
                    .collect();
                let step = clean(step, 160);
                steps.push(match (calls.is_empty(), zh) {
                    (true, false) => format!("Skill step {}: {step}", i + 1),
                    (true, true) => format!("技能步骤 {}：{step}", i + 1),
                    (false, false) => {
                        format!("Skill step {}: {step} -> {}", i + 1, calls.join("; "))
                    }
                    (false, true) => format!("技能步骤 {}：{step} -> {}", i + 1, calls.join("；")),
                });
            }
            let from_skill = out.len();
            // A procedure read here need not be fetched again.
            let fetch_skill = skill.as_deref().filter(|_| procedure.is_empty());
            for q in broad_queries(input, &e, &tools, fetch_skill) {
                if seen.insert(query_key(&q.tool, &Value::Object(q.arguments.clone()))) {
                    out.push(q);
                }
            }
            out.truncate(MAX_QUERIES);
            steps.extend(out.iter().skip(from_skill).map(|q| step_text(q, zh)));
            out
        }
    };
    if narrow.is_some() {
        steps.extend(queries.iter().map(|q| step_text(q, zh)));
    }
    if steps.is_empty() {
        steps.push(if zh {
            "没有可用的查询工具：直接说明缺少证据".into()
        } else {
            "No query tool is available: report the missing evidence".into()
        });
    }
    steps.push(if zh {
        "仅根据工具返回的证据给出结论，并逐条绑定证据".into()
    } else {
        "State only what the returned evidence shows, binding each claim to its refs".into()
    });
    PlannerPlan {
        selected_skill: skill,
        selection_reason: skill_reason,
        plan: steps,
        reasoning: reasoning(&e, narrow.as_ref(), zh),
        queries,
        subjects: subjects(&input.question, &e, &said),
    }
}

/// The question's subjects as the offline Planner reads them: the
/// services, alerts and keywords its entity rules found, host-like names,
/// the infrastructure components it names, the window and the levels.
fn subjects(question: &str, e: &Entities, said: &[&(String, Vec<String>)]) -> Subjects {
    // a service the question named by an alias is subject under that name
    let mut services: Vec<String> = said.iter().map(|(a, _)| a.clone()).collect();
    services.extend(
        e.services
            .iter()
            .filter(|s| {
                !said
                    .iter()
                    .any(|(_, t)| t.iter().any(|t| t.eq_ignore_ascii_case(s)))
            })
            .cloned(),
    );
    let components: Vec<String> = tokens(question)
        .into_iter()
        .filter(|w| entities::infra_component(w).is_some())
        .filter(|w| {
            !e.services
                .iter()
                .any(|s| s.to_lowercase().contains(w.as_str()))
        })
        .collect();
    Subjects {
        services,
        hosts: entities::hosts(question, &e.services),
        components,
        alerts: e.alerts.clone(),
        keywords: e.keywords.clone(),
        window: e.window.map(|w| w.describe()),
        levels: e.levels.iter().map(|l| l.as_str().to_string()).collect(),
    }
}

/// An alias the question uses stands for the held names it lists: those
/// are the services asked about (the alias is how the question said it).
/// Returns the (alias, targets) the question used.
fn with_aliases<'a>(
    e: &mut Entities,
    question: &str,
    aliases: &'a [(String, Vec<String>)],
) -> Vec<&'a (String, Vec<String>)> {
    let mut said_any = Vec::new();
    let lower = question.to_lowercase();
    for entry in aliases {
        let (alias, targets) = entry;
        let a = alias.to_lowercase();
        let said = if !a.is_ascii() {
            lower.contains(&a)
        } else {
            crate::model::offline::text::contains_word(&lower, &a)
        };
        if !said {
            continue;
        }
        // the alias itself is not a service the sources hold
        e.services.retain(|s| !s.eq_ignore_ascii_case(alias));
        for t in targets {
            if !e.services.iter().any(|s| s.eq_ignore_ascii_case(t)) {
                e.services.push(t.clone());
            }
        }
        said_any.push(entry);
    }
    said_any
}

fn reasoning(e: &Entities, narrow: Option<&NarrowTarget>, zh: bool) -> String {
    let list = |v: &[String]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(", ")
        }
    };
    let symptoms: Vec<String> = e.symptoms.iter().map(|s| s.id.to_string()).collect();
    let window = e.window.map_or("-".to_string(), |w| w.describe());
    let scope = match (narrow, zh) {
        (Some(_), true) => NARROW_MARK_ZH,
        (Some(_), false) => NARROW_MARK_EN,
        (None, true) => "宽范围问题：告警、错误/警告日志、关键词日志、知识库",
        (None, false) => "broad question: alerts, ERROR/WARN logs, keyword logs, knowledge",
    };
    if zh {
        format!(
            "服务: {}; 告警: {}; 症状: {}; 关键词: {}; 时间窗口: {}; {scope}",
            list(&e.services),
            list(&e.alerts),
            list(&symptoms),
            list(&e.keywords),
            window
        )
    } else {
        format!(
            "services: {}; alerts: {}; symptoms: {}; keywords: {}; window: {}; {scope}",
            list(&e.services),
            list(&e.alerts),
            list(&symptoms),
            list(&e.keywords),
            window
        )
    }
}

fn step_text(q: &PlannedQuery, zh: bool) -> String {
    let args = summarize_args(&Value::Object(q.arguments.clone()));
    if zh {
        format!("调用 {} ({args})：{}", q.tool, q.purpose)
    } else {
        format!("Call {} ({args}): {}", q.tool, q.purpose)
    }
}

fn with_window(mut args: Vec<(&'static str, Value)>, e: &Entities) -> Vec<(&'static str, Value)> {
    match e.window {
        Some(Window::Last { minutes }) => args.push(("window_minutes", json!(minutes))),
        Some(Window::Range { since, until }) => {
            args.push(("since", json!(time::fmt(&since))));
            if let Some(u) = until {
                args.push(("until", json!(time::fmt(&u))));
            }
        }
        None => {}
    }
    args
}

fn narrow_queries(t: &NarrowTarget, e: &Entities, tools: &ToolSet) -> Vec<PlannedQuery> {
    let q = match t {
        NarrowTarget::Alert { alertname, service } => {
            let mut args = vec![("alertname", json!(alertname))];
            if let Some(s) = service {
                args.push(("service", json!(s)));
            }
            tools.query(QUERY_METRICS, &args, format!("confirm alert {alertname}"))
        }
        NarrowTarget::ServiceAlerts { service, firing } => {
            let mut args = vec![("service", json!(service))];
            if *firing {
                args.push(("state", json!("firing")));
            }
            tools.query(QUERY_METRICS, &args, format!("confirm alerts on {service}"))
        }
        NarrowTarget::Logs {
            service,
            keyword,
            levels,
        } => {
            let mut args = Vec::new();
            if let Some(s) = service {
                args.push(("service", json!(s)));
            }
            // "timeout errors" names a failure, not a level: with a keyword
            // only a level named for itself (warnings, fatal) narrows.
            let levels = match keyword {
                Some(_) if *levels == Level::Error.and_above() => vec![],
                Some(_) => levels.clone(),
                None if levels.is_empty() => Level::Error.and_above(),
                None => levels.clone(),
            };
            if let Some(k) = keyword {
                args.push(("keyword", json!(k)));
            }
            if !levels.is_empty() {
                args.push(("level", json!(level::filter_arg(&levels))));
            }
            tools.query(
                QUERY_LOGS,
                &with_window(args, e),
                "confirm the log lines asked about".into(),
            )
        }
    };
    q.into_iter().collect()
}

fn broad_queries(
    input: &PlannerInput,
    e: &Entities,
    tools: &ToolSet,
    skill: Option<&str>,
) -> Vec<PlannedQuery> {
    let mut out: Vec<PlannedQuery> = Vec::new();
    let services: Vec<&String> = e.services.iter().take(3).collect();
    // "What to check when TargetDown fires?": the runbook, and whether
    // that alert fires here; not every error of every service.
    if services.is_empty() && entities::asks_guidance(&input.question) {
        for a in e.alerts.iter().take(2) {
            out.extend(tools.query(
                QUERY_METRICS,
                &[("alertname", json!(a))],
                format!("alert {a}"),
            ));
        }
        // Something checkable beside the runbook: what fires now.
        if e.alerts.is_empty() {
            out.extend(tools.query(
                QUERY_METRICS,
                &[("state", json!("firing"))],
                "all firing alerts".into(),
            ));
        }
        let terms = knowledge_terms(&input.question, e);
        out.extend(tools.query(
            LOOKUP_KNOWLEDGE,
            &[("query", json!(terms))],
            "runbook guidance asked for".into(),
        ));
        if let Some(name) = skill {
            out.extend(tools.query(
                READ_SKILL,
                &[("name", json!(name))],
                "diagnosis procedure".into(),
            ));
        }
        return out;
    }
    for s in &services {
        out.extend(tools.query(
            QUERY_METRICS,
            &[("service", json!(s))],
            format!("alerts on {s}"),
        ));
    }
    if services.is_empty() {
        out.extend(tools.query(
            QUERY_METRICS,
            &[("state", json!("firing"))],
            "all firing alerts".into(),
        ));
    }
    for a in e.alerts.iter().take(2) {
        out.extend(tools.query(
            QUERY_METRICS,
            &[("alertname", json!(a))],
            format!("alert {a}"),
        ));
    }
    let errors = level::filter_arg(&Level::Error.and_above());
    for s in &services {
        let args = with_window(vec![("service", json!(s)), ("level", json!(errors))], e);
        out.extend(tools.query(QUERY_LOGS, &args, format!("{errors} logs of {s}")));
    }
    if services.is_empty() {
        let args = with_window(vec![("level", json!(errors))], e);
        out.extend(tools.query(QUERY_LOGS, &args, format!("{errors} logs of all services")));
    }
    let scope = if services.len() == 1 {
        services.first().copied()
    } else {
        None
    };
    let mut keywords: Vec<String> = e.keywords.clone();
    for s in &e.symptoms {
        keywords.extend(s.log_keywords.iter().map(|k| k.to_string()));
    }
    // Without a literal keyword or a symptom, the question's own words
    // are what its lines would say, at whatever level they were logged.
    if keywords.is_empty() {
        // by stem, so `deleted` finds `Deleting`
        keywords.extend(
            relevance::question_words(&input.question, &e.services)
                .iter()
                .take(3)
                .map(|w| relevance::stem(w)),
        );
    }
    let mut seen = BTreeSet::new();
    for k in keywords
        .into_iter()
        .filter(|k| seen.insert(k.to_lowercase()))
        .take(3)
    {
        let mut args = vec![("keyword", json!(k))];
        if let Some(s) = scope {
            args.push(("service", json!(s)));
        }
        out.extend(tools.query(
            QUERY_LOGS,
            &with_window(args, e),
            format!("log lines mentioning \"{k}\""),
        ));
    }
    // A host is found in the records that name it, at every level.
    for h in entities::hosts(&input.question, &e.services).iter().take(2) {
        out.extend(tools.query(
            QUERY_LOGS,
            &with_window(vec![("keyword", json!(h))], e),
            format!("log lines naming host {h}"),
        ));
    }
    // A question that names no level is about every level: what the
    // service (or, in a window, every service) logged, rare lines included.
    if e.levels.is_empty() && (scope.is_some() || e.window.is_some()) {
        let mut args = Vec::new();
        if let Some(s) = scope {
            args.push(("service", json!(s)));
        }
        let whose = scope.map_or("every service".to_string(), |s| s.to_string());
        out.extend(tools.query(
            QUERY_LOGS,
            &with_window(args, e),
            format!("logs of {whose} at every level"),
        ));
    }
    for s in &services {
        let args = with_window(vec![("service", json!(s)), ("level", json!("WARN"))], e);
        out.extend(tools.query(QUERY_LOGS, &args, format!("WARN logs of {s}")));
    }
    if services.is_empty() && e.levels.contains(&Level::Warn) {
        let args = with_window(vec![("level", json!("WARN"))], e);
        out.extend(tools.query(QUERY_LOGS, &args, "WARN logs of all services".into()));
    }
    let terms = knowledge_terms(&input.question, e);
    let mut kargs = vec![("query", json!(terms))];
    if let Some(d) = select_domain(&terms, &input.available_knowledge_domains) {
        kargs.push(("domain", json!(d)));
    }
    out.extend(tools.query(
        LOOKUP_KNOWLEDGE,
        &kargs,
        "runbook guidance for the symptom".into(),
    ));
    if let Some(name) = skill {
        out.extend(tools.query(
            READ_SKILL,
            &[("name", json!(name))],
            "diagnosis procedure".into(),
        ));
    }
    out.truncate(MAX_QUERIES);
    out
}

/// Words of a procedure step that name the dependencies of the service:
/// those steps are followed by the evidence-gap hop, not planned blind.
const DEPENDENCY_WORDS: &[&str] = &[
    "callers",
    "services it calls",
    "service it calls",
    "follow the upstream",
    "follow the downstream",
    "next hop",
    "its dependencies",
    "dependencies of",
    "依赖服务",
    "上游服务",
    "下游服务",
    "调用方",
    "下一跳",
];

/// The queries one step of a skill's procedure asks for, aimed at the
/// question's service: its logs (with the step's levels and quoted
/// keywords), its alerts, or a knowledge lookup for the step's subject.
fn skill_step_queries(
    step: &str,
    q: &Entities,
    known: &[String],
    tools: &ToolSet,
) -> Vec<PlannedQuery> {
    let lower = step.to_lowercase();
    if DEPENDENCY_WORDS.iter().any(|w| lower.contains(w)) {
        return vec![];
    }
    let e = entities::extract(step, known);
    let service = q.services.first();
    let purpose = format!("skill step: {}", clean(step, 80));
    let mut out = Vec::new();
    let knowledge = [
        "knowledge",
        "runbook",
        "documentation",
        "docs",
        "知识库",
        "手册",
        "文档",
    ]
    .iter()
    .any(|w| lower.contains(w));
    // A lookup for another service's handling ("gateway 5xx handling" when
    // the question is about payment-service) would put that service's
    // runbook steps into this answer: the procedure is followed for the
    // question's service.
    let others_only = !q.services.is_empty()
        && !e.services.is_empty()
        && !e
            .services
            .iter()
            .any(|s| q.services.iter().any(|x| x.eq_ignore_ascii_case(s)));
    if knowledge && others_only {
        return out;
    }
    if knowledge {
        let words: Vec<String> = content_tokens(step)
            .into_iter()
            .filter(|w| !SKILL_VERBS.contains(&w.as_str()))
            .collect();
        if !words.is_empty() {
            out.extend(tools.query(
                LOOKUP_KNOWLEDGE,
                &[("query", json!(clean(&words.join(" "), 200)))],
                purpose.clone(),
            ));
        }
        return out;
    }
    if e.mentions_alerts {
        let args = match service {
            Some(s) => vec![("service", json!(s))],
            None => vec![("state", json!("firing"))],
        };
        out.extend(tools.query(QUERY_METRICS, &args, purpose.clone()));
    }
    if e.mentions_logs {
        let mut args = Vec::new();
        if let Some(s) = service {
            args.push(("service", json!(s)));
        }
        if !e.levels.is_empty() {
            args.push(("level", json!(level::filter_arg(&e.levels))));
        }
        if let Some(k) = e.keywords.first() {
            args.push(("keyword", json!(k)));
        }
        if !args.is_empty() {
            out.extend(tools.query(QUERY_LOGS, &with_window(args, q), purpose.clone()));
        }
    }
    out
}

/// Words of a procedure step that say what to do, not what about.
const SKILL_VERBS: &[&str] = &[
    "look",
    "knowledge",
    "base",
    "runbook",
    "runbooks",
    "query",
    "read",
    "find",
    "docs",
    "documentation",
    "search",
    "for",
    "and",
    "cause",
    "causes",
    "found",
];

/// English search terms for the knowledge index: alert names, symptom
/// terms and keywords; the question itself when nothing was recognised.
fn knowledge_terms(question: &str, e: &Entities) -> String {
    let mut parts: Vec<String> = e.alerts.clone();
    // "errors" finds every runbook: only with something more specific.
    parts.extend(
        e.symptoms
            .iter()
            .filter(|s| s.id != "errors")
            .map(|s| s.knowledge.to_string()),
    );
    parts.extend(e.keywords.iter().cloned());
    if parts.is_empty() {
        // The question's own meaningful words, minus the service names that
        // runbooks rarely mention.
        let services: Vec<String> = e.services.iter().flat_map(|s| tokens(s)).collect();
        let words: Vec<String> = content_tokens(question)
            .into_iter()
            .filter(|w| !services.contains(w))
            .collect();
        return clean(
            &if words.is_empty() {
                question.to_string()
            } else {
                words.join(" ")
            },
            200,
        );
    }
    clean(&parts.join(" "), 200)
}

fn select_domain(terms: &str, domains: &[DomainInfo]) -> Option<String> {
    let want = content_tokens(terms);
    let mut scored: Vec<(usize, &DomainInfo)> = domains
        .iter()
        .map(|d| {
            let have = content_tokens(&format!(
                "{} {} {}",
                d.domain, d.description, d.when_to_retrieve
            ));
            (want.intersection(&have).count(), d)
        })
        .collect();
    scored.sort_by_key(|s| std::cmp::Reverse(s.0));
    match scored.as_slice() {
        [(best, d), rest @ ..] if *best >= 2 && rest.first().is_none_or(|r| r.0 < *best) => {
            Some(d.domain.clone())
        }
        _ => None,
    }
}

/// The catalog skill sharing the most meaningful words with the question
/// (and with the English terms of its symptoms); ties go to catalog order.
pub fn select_skill(
    question: &str,
    e: &Entities,
    catalog: &[SkillInfo],
    zh: bool,
) -> (Option<String>, String) {
    let mut want = content_tokens(question);
    for s in &e.symptoms {
        want.extend(content_tokens(s.knowledge));
    }
    for a in &e.alerts {
        want.extend(content_tokens(&split_camel(a)));
    }
    let mut best: Option<(usize, &SkillInfo, Vec<String>)> = None;
    for skill in catalog {
        let have = content_tokens(&format!(
            "{} {}",
            skill.name.replace(['-', '_'], " "),
            skill.description
        ));
        let shared: Vec<String> = want.intersection(&have).cloned().collect();
        if !shared.is_empty() && best.as_ref().is_none_or(|b| shared.len() > b.0) {
            best = Some((shared.len(), skill, shared));
        }
    }
    match best {
        Some((_, skill, shared)) => {
            let words = shared.join(", ");
            let reason = if zh {
                format!("问题与技能 {} 的描述共享关键词：{words}", skill.name)
            } else {
                format!(
                    "the question shares these words with skill {}: {words}",
                    skill.name
                )
            };
            (Some(skill.name.clone()), reason)
        }
        None if catalog.is_empty() => (
            None,
            if zh {
                "技能目录为空，不使用技能".into()
            } else {
                "the skill catalog is empty; no skill used".into()
            },
        ),
        None => (
            None,
            if zh {
                "没有技能的名称或描述与问题相符，不使用技能".into()
            } else {
                "no skill's name or description matches the question; no skill used".into()
            },
        ),
    }
}

/// `HighCPUUsage` -> `High CPU Usage`.
pub fn split_camel(w: &str) -> String {
    let chars: Vec<char> = w.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).and_then(|p| chars.get(p));
        let next = chars.get(i + 1);
        let boundary = c.is_ascii_uppercase()
            && prev.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
            });
        if boundary {
            out.push(' ');
        }
        out.push(*c);
    }
    out
}

fn gap_plan(input: &PlannerInput, retry: &PlannerRetryView) -> PlannerPlan {
    let zh = input.lang == Lang::Zh;
    let tools = ToolSet::new(&input.available_tools);
    let done: BTreeSet<String> = retry
        .completed_queries
        .iter()
        .map(|q| query_key(&q.tool, &q.arguments))
        .collect();
    let mut seen = done.clone();
    let mut queries = Vec::new();
    // Services some query already asked about by name.
    let asked: BTreeSet<String> = retry
        .completed_queries
        .iter()
        .filter_map(|q| q.arguments.get("service")?.as_str())
        .map(str::to_lowercase)
        .collect();
    for gap in &retry.evidence_gaps {
        let mut e = entities::extract(&gap.fact, &input.known_services);
        // A dependency the fact blames but the sources do not list is
        // still asked about: "no service named X" is an answer too.
        for dep in depend::mentions(&gap.fact, "") {
            if !e.services.iter().any(|s| s.eq_ignore_ascii_case(&dep)) {
                e.services.push(dep);
            }
        }
        // Services nobody asked about yet come first: they are the gap.
        e.services
            .sort_by_key(|s| asked.contains(&s.to_lowercase()));
        for q in gap_candidates(&e, &tools, &gap.fact) {
            if seen.insert(query_key(&q.tool, &Value::Object(q.arguments.clone()))) {
                queries.push(q);
            }
        }
    }
    queries.truncate(MAX_GAP_QUERIES);
    let mut plan: Vec<String> = queries.iter().map(|q| step_text(q, zh)).collect();
    if plan.is_empty() {
        plan.push(if zh {
            "证据缺口没有新的可执行查询（候选查询都已执行过或无法定位实体）：不再查询，保留已核验结论".into()
        } else {
            "No new query can close the evidence gaps (every candidate already ran or names no entity): run nothing and keep the verified claims".into()
        });
    }
    let reasoning = if zh {
        format!(
            "EVIDENCE_GAP_ONLY：{} 个证据缺口，{} 个已完成查询被跳过，计划 {} 个增量查询",
            retry.evidence_gaps.len(),
            done.len(),
            queries.len()
        )
    } else {
        format!(
            "EVIDENCE_GAP_ONLY: {} evidence gap(s), {} completed quer(ies) skipped, {} incremental quer(ies) planned",
            retry.evidence_gaps.len(),
            done.len(),
            queries.len()
        )
    };
    PlannerPlan {
        subjects: Subjects::default(),
        selected_skill: None,
        selection_reason: if zh {
            "补证据轮次只针对证据缺口，不选择技能".into()
        } else {
            "evidence-gap round: only the gaps are queried, no skill".into()
        },
        plan,
        reasoning,
        queries,
    }
}

/// Candidate queries for one gap fact, most specific first.
fn gap_candidates(e: &Entities, tools: &ToolSet, fact: &str) -> Vec<PlannedQuery> {
    let mut out = Vec::new();
    let purpose = format!("evidence gap: {}", clean(fact, 80));
    let service = e.services.first();
    // The first service's own alerts, errors and warnings before
    // anything else.
    if let Some(s) = service {
        out.extend(tools.query(QUERY_METRICS, &[("service", json!(s))], purpose.clone()));
        for levels in [level::filter_arg(&Level::Error.and_above()), "WARN".into()] {
            out.extend(tools.query(
                QUERY_LOGS,
                &[("service", json!(s)), ("level", json!(levels))],
                purpose.clone(),
            ));
        }
    }
    // A quoted pattern (`… after *: GET /*`) is a template, not words a
    // log line contains.
    let mut keywords: Vec<String> = e
        .keywords
        .iter()
        .filter(|k| !k.contains('*'))
        .cloned()
        .collect();
    for s in &e.symptoms {
        keywords.extend(s.log_keywords.iter().map(|k| k.to_string()));
    }
    for k in keywords.iter().take(2) {
        let mut args = vec![("keyword", json!(k))];
        if let Some(s) = service {
            args.push(("service", json!(s)));
        }
        out.extend(tools.query(QUERY_LOGS, &args, purpose.clone()));
    }
    // An alert the fact names, where it fires (the service's own were
    // asked above).
    for a in e.alerts.iter().take(2) {
        out.extend(tools.query(QUERY_METRICS, &[("alertname", json!(a))], purpose.clone()));
    }
    for s in e.services.iter().take(2) {
        out.extend(tools.query(QUERY_METRICS, &[("service", json!(s))], purpose.clone()));
        for levels in [level::filter_arg(&Level::Error.and_above()), "WARN".into()] {
            out.extend(tools.query(
                QUERY_LOGS,
                &[("service", json!(s)), ("level", json!(levels))],
                purpose.clone(),
            ));
        }
        out.extend(tools.query(QUERY_LOGS, &[("service", json!(s))], purpose.clone()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_split() {
        assert_eq!(split_camel("HighCPUUsage"), "High CPU Usage");
        assert_eq!(split_camel("etcdNoLeader"), "etcd No Leader");
    }
}
