//! `planner_plan`, plus the optional structured `queries` that tell the
//! Executor exactly which tool calls the plan means, and the question's
//! `subjects` (what it asks about), which code resolves against the names
//! the sources hold. `plan` stays a list of step strings, the form every
//! Planner prompt asks for; `queries` and `subjects` are optional so a
//! plan written without them still parses.

use super::json::{Fields, Json, ParseFailure, extract_json_object, objects};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct PlannerPlan {
    pub selected_skill: Option<String>,
    pub selection_reason: String,
    pub plan: Vec<String>,
    pub reasoning: String,
    /// Concrete tool queries for the Executor. Optional in the contract: an
    /// LLM may only give step text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<PlannedQuery>,
    /// What the question asks about, as the question names it. Optional
    /// in the contract: absent reads as empty.
    #[serde(default, skip_serializing_if = "Subjects::is_empty")]
    pub subjects: Subjects,
}

/// The question's subjects as the Planner read them: names as the question
/// writes them (code resolves them against what the sources hold), the
/// window and the levels asked about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Subjects {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// Infrastructure or software components (a database, a daemon, a
    /// protocol) that may be served under another name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alerts: Vec<String>,
    /// Words or phrases a log message about the question would contain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// The time window as the question states it, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<String>,
}

impl Subjects {
    pub fn is_empty(&self) -> bool {
        self.services.is_empty()
            && self.hosts.is_empty()
            && self.components.is_empty()
            && self.alerts.is_empty()
            && self.keywords.is_empty()
            && self.window.is_none()
            && self.levels.is_empty()
    }

    /// The named subjects (not window or levels), each with its kind.
    pub fn named(&self) -> impl Iterator<Item = (SubjectKind, &str)> {
        [
            (SubjectKind::Service, &self.services),
            (SubjectKind::Host, &self.hosts),
            (SubjectKind::Component, &self.components),
            (SubjectKind::Alert, &self.alerts),
            (SubjectKind::Keyword, &self.keywords),
        ]
        .into_iter()
        .flat_map(|(k, list)| list.iter().map(move |s| (k, s.as_str())))
    }
}

/// What kind of thing a subject is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubjectKind {
    Service,
    Host,
    Component,
    Alert,
    Keyword,
}

/// Most names one subject list keeps; a plan listing more is still read.
const MAX_SUBJECTS: usize = 12;
/// Longest name kept; longer is not a name.
const MAX_SUBJECT_CHARS: usize = 120;

/// `subjects`: absent or null is empty; each list a list of strings (a
/// single string reads as a list of one); empty entries dropped.
fn parse_subjects(f: &Fields<'_, '_>) -> Result<Subjects, ParseFailure> {
    let map = match f.map.get("subjects") {
        None | Some(Json::Null) => return Ok(Subjects::default()),
        Some(Json::Object(o)) => o,
        Some(other) => {
            return Err(ParseFailure::malformed(format!(
                "planner_plan.subjects must be an object, got {}",
                super::json::kind(other)
            )));
        }
    };
    let list = |key: &str| -> Result<Vec<String>, ParseFailure> {
        let items: Vec<String> = match map.get(key) {
            None | Some(Json::Null) => vec![],
            Some(Json::String(s)) => vec![s.to_string()],
            Some(Json::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Json::String(s) => Ok(s.to_string()),
                    other => Err(ParseFailure::malformed(format!(
                        "planner_plan.subjects.{key}[{i}] must be a string, got {}",
                        super::json::kind(other)
                    ))),
                })
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(ParseFailure::malformed(format!(
                    "planner_plan.subjects.{key} must be a list of strings, got {}",
                    super::json::kind(other)
                )));
            }
        };
        let mut out: Vec<String> = Vec::new();
        for s in items {
            let s = crate::text::clean(&s, MAX_SUBJECT_CHARS);
            if !s.is_empty() && !out.iter().any(|o| o.eq_ignore_ascii_case(&s)) {
                out.push(s);
            }
        }
        out.truncate(MAX_SUBJECTS);
        Ok(out)
    };
    let sf = Fields::new(map, "planner_plan.subjects");
    let window = sf
        .opt_nullable_str("window")?
        .map(|w| crate::text::clean(&w, MAX_SUBJECT_CHARS))
        .filter(|w| !w.is_empty());
    Ok(Subjects {
        services: list("services")?,
        hosts: list("hosts")?,
        components: list("components")?,
        alerts: list("alerts")?,
        keywords: list("keywords")?,
        window,
        levels: list("levels")?,
    })
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedQuery {
    pub tool: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// Why this query is in the plan (entity or gap it addresses).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub purpose: String,
}

pub fn parse_planner_plan(text: &str) -> Result<PlannerPlan, ParseFailure> {
    let map = extract_json_object(text)?;
    let f = Fields::new(&map, "planner_plan");
    let plan_items = f.req_array("plan")?;
    let mut plan = Vec::with_capacity(plan_items.len());
    for (i, item) in plan_items.iter().enumerate() {
        match item {
            Json::String(s) if !s.trim().is_empty() => plan.push(s.to_string()),
            Json::String(_) => {
                return Err(ParseFailure::malformed(format!(
                    "planner_plan.plan[{i}] is empty"
                )));
            }
            // Some models write steps as objects; keep their text.
            Json::Object(o) => match o.get("step").or_else(|| o.get("description")) {
                Some(Json::String(s)) => plan.push(s.to_string()),
                _ => {
                    return Err(ParseFailure::malformed(format!(
                        "planner_plan.plan[{i}] is an object without a step text"
                    )));
                }
            },
            other => {
                return Err(ParseFailure::malformed(format!(
                    "planner_plan.plan[{i}] must be a string, got {}",
                    super::json::kind(other)
                )));
            }
        }
    }
    if plan.is_empty() {
        return Err(ParseFailure::malformed("planner_plan.plan is empty"));
    }
    let mut queries = Vec::new();
    for (i, q) in objects(f.opt_array("queries")?, "planner_plan.queries")?
        .into_iter()
        .enumerate()
    {
        let qf = Fields::new(q, "planner_plan.queries[]");
        let tool = qf.req_str("tool")?;
        let arguments = match q.get("arguments") {
            None | Some(Json::Null) => Map::new(),
            Some(Json::Object(m)) => m.to_map(),
            Some(_) => {
                return Err(ParseFailure::malformed(format!(
                    "planner_plan.queries[{i}].arguments must be an object"
                )));
            }
        };
        queries.push(PlannedQuery {
            tool,
            arguments,
            purpose: qf.opt_str("purpose")?,
        });
    }
    Ok(PlannerPlan {
        selected_skill: f.opt_nullable_str("selected_skill")?,
        selection_reason: f.opt_str("selection_reason")?,
        plan,
        reasoning: f.opt_str("reasoning")?,
        queries,
        subjects: parse_subjects(&f)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_plan_without_a_skill() {
        let p = parse_planner_plan(
            r#"{"selected_skill": null, "selection_reason": "none fits",
                "plan": ["check alerts", "check logs"], "reasoning": "r"}"#,
        )
        .unwrap();
        assert_eq!(p.plan.len(), 2);
        assert_eq!(p.selected_skill, None);
    }

    #[test]
    fn rejects_wrong_types() {
        for bad in [
            r#"{"plan": "check"}"#,
            r#"{"plan": []}"#,
            r#"{"plan": [1]}"#,
            r#"{"plan": ["a"], "selected_skill": 3}"#,
            r#"{"plan": ["a"], "queries": [{"tool": 1}]}"#,
            r#"{"plan": ["a"], "queries": [{"tool": "x", "arguments": []}]}"#,
            r#"{"selected_skill": "x"}"#,
            r#"{"plan": ["a"], "subjects": "sshd"}"#,
            r#"{"plan": ["a"], "subjects": ["sshd"]}"#,
            r#"{"plan": ["a"], "subjects": {"services": 3}}"#,
            r#"{"plan": ["a"], "subjects": {"hosts": [{"name": "db1"}]}}"#,
            r#"{"plan": ["a"], "subjects": {"keywords": [null]}}"#,
            r#"{"plan": ["a"], "subjects": {"window": 30}}"#,
        ] {
            assert!(parse_planner_plan(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn subjects_are_optional_and_read_leniently_where_unambiguous() {
        let old = parse_planner_plan(r#"{"plan": ["a"]}"#).unwrap();
        assert!(old.subjects.is_empty());
        let p = parse_planner_plan(
            r#"{"plan": ["a"], "subjects": {"services": "sshd", "hosts": ["db-1", "", "DB-1"],
                "keywords": ["Failed password"], "window": "last 30 minutes",
                "levels": ["ERROR"], "unknown_key": 1}}"#,
        )
        .unwrap();
        assert_eq!(p.subjects.services, vec!["sshd"]);
        assert_eq!(
            p.subjects.hosts,
            vec!["db-1"],
            "empty and repeated names dropped"
        );
        assert_eq!(p.subjects.window.as_deref(), Some("last 30 minutes"));
        let named: Vec<_> = p.subjects.named().collect();
        assert_eq!(named.len(), 3);
        // the serialised plan reads back the same
        let back = parse_planner_plan(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
        // null subjects and a control character in a name
        let p = parse_planner_plan(
            "{\"plan\": [\"a\"], \"subjects\": {\"services\": [\"a\\u001b[31mb\"], \"window\": null}}",
        )
        .unwrap();
        assert!(!p.subjects.services[0].contains('\u{1b}'));
    }
}
