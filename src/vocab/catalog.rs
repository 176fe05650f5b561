//! What the Planner may know about the sources: knowledge domains, the
//! skill catalog and the known services.

use super::prerendered::Prerendered;
use serde::{Deserialize, Serialize};

/// One knowledge domain, as the Planner's domain map and the
/// knowledge_domain table see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainInfo {
    pub domain: String,
    pub description: String,
    pub when_to_retrieve: String,
    pub document_count: usize,
}

/// One entry of the skill catalog the Planner sees: name, description and
/// the steps of its procedure, so the Planner can plan from the skill it
/// selects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillInfo {
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub procedure: Vec<String>,
}

/// What the Planner may know about the tool backend, serialised once for
/// every Planner input of the engine.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub domains: Prerendered<Vec<DomainInfo>>,
    pub skills: Prerendered<Vec<SkillInfo>>,
    pub services: Prerendered<Vec<String>>,
    /// The sources' fixed "now" (a pack's `now`, else its newest
    /// timestamp); None when they are live and the clock is now.
    pub reference_time: Option<chrono::DateTime<chrono::Utc>>,
}

impl Catalog {
    pub fn new(domains: Vec<DomainInfo>, skills: Vec<SkillInfo>, services: Vec<String>) -> Self {
        Catalog {
            domains: domains.into(),
            skills: skills.into(),
            services: services.into(),
            reference_time: None,
        }
    }

    /// The same catalog read as of `now` (a recorded incident's time).
    pub fn at(mut self, now: chrono::DateTime<chrono::Utc>) -> Self {
        self.reference_time = Some(now);
        self
    }
}
