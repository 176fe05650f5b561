//! Feedback on a run, and the case library it feeds (seed 004 section 5).
//!
//! A run marked useful becomes a case_library row, but unlike the seed's
//! copy of the whole answer, the root cause and solution come from what
//! the run *verified*: the claims the Verifier found directly supported
//! (root_cause claims first, else observations) with their verified
//! evidence, and the recommended actions. Model prose never reaches the
//! case. Marking the same run useful again returns the existing case;
//! marking it not_useful withdraws the automatic case.

use crate::store::connect::query_error;
use crate::store::db::{InsertId, RowExt, now_ms, random_hex, with_pool};
use crate::store::{Store, StoreError};
use crate::text::clean;
use serde_json::Value;

const RUN: &str =
    "SELECT id, session_id, status, query, self_evaluation FROM diagnosis_run WHERE id = ?";
const SET_FEEDBACK: &str = "UPDATE diagnosis_run SET feedback = ?, updated_at = ? WHERE id = ?";
const FIND_CASE: &str = "SELECT case_id FROM case_library WHERE run_id = ?";
const INSERT_CASE: &str = "INSERT INTO case_library (case_id, run_id, diagnosis_id, source_type, \
     fault_category, title, root_cause, solution, created_by, created_at) \
     VALUES (?, ?, ?, 'AUTO', ?, ?, ?, ?, 'system', ?)";
const DELETE_CASE: &str = "DELETE FROM case_library WHERE run_id = ? AND source_type = 'AUTO'";
const CASE: &str = "SELECT case_id, run_id, diagnosis_id, source_type, fault_category, title, \
     root_cause, solution, created_by FROM case_library WHERE case_id = ?";

/// A case_library row.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CaseRecord {
    pub case_id: String,
    pub run_id: i64,
    pub diagnosis_id: String,
    pub source_type: String,
    pub fault_category: String,
    pub title: String,
    pub root_cause: String,
    pub solution: String,
    pub created_by: String,
}

/// What a case is made of, before it has ids.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseDraft {
    pub fault_category: String,
    pub root_cause: String,
    pub solution: String,
}

/// A claim the run verified, with its verified evidence texts.
struct VerifiedClaim {
    claim_type: String,
    text: String,
    evidence: Vec<String>,
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Directly evidenced, non-negative claims from `verifier_evaluation`:
/// `allowed_claims` when the engine stored them, else `facts_checked`
/// joined with the Gatekeeper's passing bindings (or the Executor output)
/// by claim id.
fn verified_claims(ve: &Value) -> Vec<VerifiedClaim> {
    let allowed = arr(ve, "allowed_claims");
    if !allowed.is_empty() {
        return allowed
            .iter()
            .filter(|c| s(c, "verification") == "direct_evidence")
            .filter(|c| {
                !c.get("is_negative")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
            })
            .filter(|c| s(c, "claim_type") != "negative_observation")
            .map(|c| VerifiedClaim {
                claim_type: s(c, "claim_type").to_string(),
                text: s(c, "claim_text").to_string(),
                evidence: arr(c, "evidence")
                    .iter()
                    .map(|e| s(e, "matched_text").to_string())
                    .filter(|t| !t.is_empty())
                    .collect(),
            })
            .filter(|c| !c.text.trim().is_empty())
            .collect();
    }
    let passing: Vec<&Value> = ve
        .get("gatekeeper_result")
        .map(|g| arr(g, "checked_bindings"))
        .unwrap_or(&[])
        .iter()
        .filter(|b| s(b, "status") == "pass")
        .collect();
    let executor_claims = ve
        .get("executor_structured_output")
        .map(|o| arr(o, "claims"))
        .unwrap_or(&[]);
    arr(ve, "facts_checked")
        .iter()
        .filter(|f| s(f, "verification") == "direct_evidence")
        .filter_map(|f| {
            let id = s(f, "claim_id");
            let bindings: Vec<&&Value> = passing
                .iter()
                .filter(|b| !id.is_empty() && s(b, "claim_id") == id)
                .collect();
            let claim = executor_claims
                .iter()
                .find(|c| !id.is_empty() && s(c, "claim_id") == id);
            let claim_type = bindings
                .first()
                .map(|b| s(b, "claim_type"))
                .filter(|t| !t.is_empty())
                .or_else(|| claim.map(|c| s(c, "claim_type")))
                .unwrap_or("observation")
                .to_string();
            let text = claim
                .map(|c| s(c, "claim_text"))
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| s(f, "fact"))
                .to_string();
            let evidence = bindings
                .iter()
                .map(|b| s(b, "matched_text").to_string())
                .filter(|t| !t.is_empty())
                .collect();
            (claim_type != "negative_observation" && !text.trim().is_empty()).then_some(
                VerifiedClaim {
                    claim_type,
                    text,
                    evidence,
                },
            )
        })
        .collect()
}

fn recommended_actions(ve: &Value) -> Vec<String> {
    let own = arr(ve, "recommended_actions");
    let actions = if own.is_empty() {
        ve.get("executor_structured_output")
            .map(|o| arr(o, "recommended_actions"))
            .unwrap_or(&[])
    } else {
        own
    };
    actions
        .iter()
        .filter_map(|a| match a {
            Value::String(t) => Some(t.clone()),
            other => {
                let text = s(other, "action_text");
                let reason = s(other, "reason");
                match (text.is_empty(), reason.is_empty()) {
                    (true, _) => None,
                    (false, true) => Some(text.to_string()),
                    (false, false) => Some(format!("{text} ({reason})")),
                }
            }
        })
        .filter(|t| !t.trim().is_empty())
        .collect()
}

/// Keyword groups for the fault category, most specific first.
const CATEGORIES: [(&str, &[&str]); 7] = [
    (
        "DATABASE",
        &[
            "database",
            "connection pool",
            "hikari",
            "sql",
            "deadlock",
            "jdbc",
            "数据库",
            "连接池",
        ],
    ),
    (
        "MEMORY",
        &[
            "memory",
            "oom",
            "heap",
            "garbage collect",
            "gc pause",
            "内存",
        ],
    ),
    ("CPU", &["cpu", "load average", "throttl"]),
    ("DISK", &["disk", "inode", "filesystem", "磁盘"]),
    (
        "NETWORK",
        &[
            "network",
            "dns",
            "connection refused",
            "connection reset",
            "packet",
            "网络",
        ],
    ),
    (
        "DEPLOYMENT",
        &[
            "deploy",
            "release",
            "rollout",
            "rollback",
            "config change",
            "发布",
            "配置",
        ],
    ),
    (
        "DEPENDENCY",
        &[
            "timeout",
            "timed out",
            "downstream",
            "upstream",
            "latency",
            "超时",
        ],
    ),
];

/// The fault category a text's keywords point at (claims and the alert
/// names in their evidence); GENERAL when none does. The category with the
/// most keyword hits wins; ties go to the more specific one.
pub fn fault_category(text: &str) -> &'static str {
    let lower = text.to_lowercase();
    let mut best = ("GENERAL", 0);
    for (category, words) in CATEGORIES {
        let hits = words.iter().filter(|w| lower.contains(*w)).count();
        if hits > best.1 {
            best = (category, hits);
        }
    }
    best.0
}

/// The case a useful run yields, None when it verified no claim.
pub fn case_from_evaluation(self_evaluation: &Value) -> Option<CaseDraft> {
    let ve = self_evaluation.get("verifier_evaluation")?;
    let claims = verified_claims(ve);
    let root: Vec<&VerifiedClaim> = {
        let rc: Vec<&VerifiedClaim> = claims
            .iter()
            .filter(|c| c.claim_type == "root_cause")
            .collect();
        if rc.is_empty() {
            claims.iter().collect()
        } else {
            rc
        }
    };
    if root.is_empty() {
        return None;
    }
    let root_cause = root
        .iter()
        .map(|c| {
            let evidence: Vec<String> = c.evidence.iter().take(3).map(|e| clean(e, 240)).collect();
            if evidence.is_empty() {
                format!("- {}", c.text.trim())
            } else {
                format!("- {} [evidence: {}]", c.text.trim(), evidence.join(" | "))
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let solution = recommended_actions(ve)
        .iter()
        .map(|a| format!("- {}", a.trim()))
        .collect::<Vec<_>>()
        .join("\n");
    let keywords: String = root
        .iter()
        .flat_map(|c| std::iter::once(c.text.as_str()).chain(c.evidence.iter().map(String::as_str)))
        .collect::<Vec<_>>()
        .join("\n");
    Some(CaseDraft {
        fault_category: fault_category(&keywords).to_string(),
        root_cause,
        solution,
    })
}

impl Store {
    /// Records `useful` / `not_useful` on the run. Useful returns the case
    /// id (new or existing), or None when the run verified nothing a case
    /// could be made of.
    pub async fn record_feedback(
        &self,
        run_id: i64,
        useful: bool,
    ) -> Result<Option<String>, StoreError> {
        let label = if useful { "useful" } else { "not_useful" };
        let now = now_ms();
        with_pool!(&self.db, p => {
            let mut tx = p.begin().await.map_err(query_error)?;
            let Some(run) = sqlx::query(RUN).bind(run_id).fetch_optional(&mut *tx).await.map_err(query_error)? else {
                return Err(StoreError::UnknownRun(run_id));
            };
            if run.text("status").map_err(query_error)? == "RUNNING" {
                return Err(StoreError::Query(format!("run {run_id} is still running; give feedback once it finished")));
            }
            sqlx::query(SET_FEEDBACK).bind(label).bind(now).bind(run_id)
                .execute(&mut *tx).await.map_err(query_error)?;
            if !useful {
                sqlx::query(DELETE_CASE).bind(run_id).execute(&mut *tx).await.map_err(query_error)?;
                tx.commit().await.map_err(query_error)?;
                return Ok(None);
            }
            let existing = sqlx::query(FIND_CASE).bind(run_id).fetch_optional(&mut *tx).await
                .and_then(|r| r.map(|r| r.text("case_id")).transpose()).map_err(query_error)?;
            if existing.is_some() {
                tx.commit().await.map_err(query_error)?;
                return Ok(existing);
            }
            let eval = run.opt_text("self_evaluation").map_err(query_error)?
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .unwrap_or(Value::Null);
            let Some(draft) = case_from_evaluation(&eval) else {
                tx.commit().await.map_err(query_error)?;
                return Ok(None);
            };
            let case_id = format!("case-{}", random_hex(12));
            let title = clean(&run.text("query").map_err(query_error)?, 100);
            let session = run.text("session_id").map_err(query_error)?;
            let inserted = sqlx::query(INSERT_CASE)
                .bind(&case_id).bind(run_id).bind(&session).bind(&draft.fault_category)
                .bind(&title).bind(&draft.root_cause).bind(&draft.solution).bind(now)
                .execute(&mut *tx).await;
            match inserted {
                Ok(r) => {
                    let _ = r.insert_id();
                    tx.commit().await.map_err(query_error)?;
                    Ok(Some(case_id))
                }
                // Another process made the case first: return theirs.
                Err(sqlx::Error::Database(d)) if d.is_unique_violation() => {
                    drop(tx);
                    let found = sqlx::query(FIND_CASE).bind(run_id).fetch_optional(p).await
                        .and_then(|r| r.map(|r| r.text("case_id")).transpose()).map_err(query_error)?;
                    Ok(found)
                }
                Err(e) => Err(query_error(e)),
            }
        })
    }

    /// One case_library row by its case id.
    pub async fn case(&self, case_id: &str) -> Result<Option<CaseRecord>, StoreError> {
        with_pool!(&self.db, p => {
            let row = sqlx::query(CASE).bind(case_id).fetch_optional(p).await.map_err(query_error)?;
            row.map(|r| -> Result<CaseRecord, sqlx::Error> {
                Ok(CaseRecord {
                    case_id: r.text("case_id")?,
                    run_id: r.int("run_id")?,
                    diagnosis_id: r.text("diagnosis_id")?,
                    source_type: r.text("source_type")?,
                    fault_category: r.text("fault_category")?,
                    title: r.text("title")?,
                    root_cause: r.text("root_cause")?,
                    solution: r.text("solution")?,
                    created_by: r.text("created_by")?,
                })
            }).transpose().map_err(query_error)
        })
    }
}
