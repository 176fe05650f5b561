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
    /// The names the sources hold, which a question's subjects resolve
    /// against.
    pub names: std::sync::Arc<HeldNames>,
}

/// The names the sources hold: what a question's subject can be found as.
/// Live backends that cannot list their names leave lists empty; a name
/// missing here is then looked for by query, not declared absent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HeldNames {
    /// Services, and programs or syslog tags where logs name those.
    pub services: Vec<String>,
    /// Alert names.
    pub alerts: Vec<String>,
    /// Values of the alerts' other labels (instance, job, host...).
    pub labels: Vec<String>,
    /// The pack's `[aliases]`: a name -> the held names it stands for.
    pub aliases: Vec<(String, Vec<String>)>,
}

impl Catalog {
    pub fn new(domains: Vec<DomainInfo>, skills: Vec<SkillInfo>, services: Vec<String>) -> Self {
        Catalog {
            domains: domains.into(),
            skills: skills.into(),
            services: services.into(),
            reference_time: None,
            names: Default::default(),
        }
    }

    /// The same catalog with the names its sources hold.
    pub fn with_names(mut self, names: HeldNames) -> Self {
        self.names = std::sync::Arc::new(names);
        self
    }

    /// The same catalog read as of `now` (a recorded incident's time).
    pub fn at(mut self, now: chrono::DateTime<chrono::Utc>) -> Self {
        self.reference_time = Some(now);
        self
    }
}
