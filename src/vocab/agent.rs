//! Agents and their conversation: the four model roles and the earlier
//! turns of a session that the Planner and Executor see.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentRole {
    Planner,
    Executor,
    Verifier,
    Composer,
}

impl AgentRole {
    pub const ALL: [AgentRole; 4] = [
        AgentRole::Planner,
        AgentRole::Executor,
        AgentRole::Verifier,
        AgentRole::Composer,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AgentRole::Planner => "planner",
            AgentRole::Executor => "executor",
            AgentRole::Verifier => "verifier",
            AgentRole::Composer => "composer",
        }
    }

    pub fn parse(s: &str) -> Option<AgentRole> {
        AgentRole::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for AgentRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// One earlier question/answer of the session (Planner and Executor input).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryTurn {
    pub run_id: i64,
    pub question: String,
    pub answer: String,
}
