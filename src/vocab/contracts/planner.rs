//! `planner_plan`, plus the optional structured `queries` that tell the
//! Executor exactly which tool calls the plan means. `plan` stays a list of
//! step strings, the form every Planner prompt asks for.

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
        ] {
            assert!(parse_planner_plan(bad).is_err(), "{bad}");
        }
    }
}
