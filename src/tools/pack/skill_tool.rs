//! `read_skill`: the body of one skill, for the Executor to follow.
//! A skill is guidance, not evidence, so it returns no evidence refs.

use crate::text::clean;
use crate::tools::common::Args;
use crate::tools::pack::Pack;
use crate::tools::{Tool, ToolError, ToolOutput};
use crate::vocab::tool::{EvidenceStatus, READ_SKILL, ToolSpec};
use async_trait::async_trait;
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub struct ReadSkill {
    pub(super) pack: Arc<Pack>,
}

#[async_trait]
impl Tool for ReadSkill {
    fn spec(&self) -> ToolSpec {
        let names: Vec<&str> = self.pack.skills.iter().map(|s| s.name.as_str()).collect();
        ToolSpec {
            name: READ_SKILL.into(),
            description: "Read the procedure of a diagnosis skill from the catalog. Guidance only, not evidence.".into(),
            evidence_arrays: vec![],
            parameters: json!({
                "type": "object",
                "properties": {"name": {"type": "string", "enum": names}},
                "required": ["name"],
                "additionalProperties": false
            }),
        }
    }

    fn backend(&self) -> String {
        self.pack.backend()
    }

    fn pack(&self) -> Option<&Arc<Pack>> {
        Some(&self.pack)
    }

    async fn call(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
        let a = Args::new(args, &["name"])?;
        let name = a.required_string("name")?;
        if let Some((_, why)) = self
            .pack
            .health
            .unreadable_skills
            .iter()
            .find(|(dir, _)| dir.eq_ignore_ascii_case(&name))
        {
            return Err(ToolError::Unreadable(why.clone()));
        }
        let Some(skill) = self
            .pack
            .skills
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(&name))
        else {
            let known: Vec<&str> = self.pack.skills.iter().map(|s| s.name.as_str()).collect();
            return Err(ToolError::InvalidArguments(format!(
                "no skill named '{}'; skills: {}",
                clean(&name, 60),
                known.join(", ")
            )));
        };
        Ok(ToolOutput {
            body: json!({"skill": {"name": skill.name, "description": skill.description, "body": skill.body}}),
            evidence_status: EvidenceStatus::Supported,
            evidence_refs: vec![],
            retrieved_domains: vec![],
            partial: None,
            buckets: None,
        })
    }
}
