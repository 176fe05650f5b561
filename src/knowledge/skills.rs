//! Skills: `skills/<name>/SKILL.md` with front matter (name, description)
//! and a body that is the diagnosis procedure.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub body: String,
    /// Path relative to the pack directory.
    pub source: String,
}
