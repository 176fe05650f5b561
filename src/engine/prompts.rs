//! Agent prompts: `prompts/{planner,executor,verifier,composer}.md`,
//! shipped inside the binary and overridable with `--prompts DIR`.
//!
//! The input DTO is sent once, as compact JSON in the user message: the
//! system prompt keeps only the instructions, and each `{{input}}` in it
//! becomes a pointer to that message. Sending the DTO in both made every
//! request about a sixth longer, and the user message is where untrusted
//! text (the question, history) belongs. The version of a prompt is a
//! content hash, recorded in self_evaluation.

use crate::model::Message;
use crate::vocab::agent::AgentRole;
use crate::vocab::dto::AgentInput;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub text: String,
    /// `sha256:` + first 16 hex digits of the text's hash.
    pub version: String,
    /// The text split at each `{{input}}`, so rendering is one sized copy.
    pieces: Vec<String>,
    /// The system message: the text with each `{{input}}` pointing at the
    /// user message, made once.
    system: String,
}

const INPUT_PLACEHOLDER: &str = "{{input}}";
/// Replaced by the lexicon's connective vocabulary when a prompt is loaded.
const CONNECTIVES_PLACEHOLDER: &str = "{{connectives}}";
/// What `{{input}}` reads as in the system message.
pub const INPUT_POINTER: &str = "(the JSON object in the user message)";

impl Prompt {
    pub fn new(text: impl Into<String>) -> Prompt {
        let text: String = text.into();
        // the Composer is shown the closed vocabulary its statements may use
        let text = if text.contains(CONNECTIVES_PLACEHOLDER) {
            text.replace(
                CONNECTIVES_PLACEHOLDER,
                &crate::evidence::lexicon::lexicon().connective_vocabulary(),
            )
        } else {
            text
        };
        let digest = Sha256::digest(text.as_bytes());
        let version = format!("sha256:{}", &hex::encode(digest)[..16]);
        let pieces = text.split(INPUT_PLACEHOLDER).map(str::to_string).collect();
        let system = text.replace(INPUT_PLACEHOLDER, INPUT_POINTER);
        Prompt {
            text,
            version,
            pieces,
            system,
        }
    }

    /// The text with every `{{input}}` replaced by `dto`.
    pub fn render(&self, dto: &str) -> String {
        let fixed: usize = self.pieces.iter().map(String::len).sum();
        let mut out = String::with_capacity(fixed + dto.len() * (self.pieces.len() - 1));
        for (i, piece) in self.pieces.iter().enumerate() {
            if i > 0 {
                out.push_str(dto);
            }
            out.push_str(piece);
        }
        out
    }
}

#[derive(Debug, Clone)]
pub struct Prompts {
    by_role: BTreeMap<AgentRole, Prompt>,
    /// Made once: every run's self_evaluation records it.
    versions: Arc<BTreeMap<String, String>>,
}

#[derive(Debug, thiserror::Error)]
#[error("prompt {path}: {message}")]
pub struct PromptError {
    pub path: String,
    pub message: String,
}

impl Default for Prompts {
    fn default() -> Self {
        Self::shipped()
    }
}

impl Prompts {
    pub fn shipped() -> Prompts {
        let mut by_role = BTreeMap::new();
        by_role.insert(
            AgentRole::Planner,
            Prompt::new(include_str!("../../prompts/planner.md")),
        );
        by_role.insert(
            AgentRole::Executor,
            Prompt::new(include_str!("../../prompts/executor.md")),
        );
        by_role.insert(
            AgentRole::Verifier,
            Prompt::new(include_str!("../../prompts/verifier.md")),
        );
        by_role.insert(
            AgentRole::Composer,
            Prompt::new(include_str!("../../prompts/composer.md")),
        );
        Prompts::from_roles(by_role)
    }

    /// Loads `<dir>/<role>.md` for every role; a missing file is an error
    /// (a partial override would silently mix prompt versions).
    pub fn from_dir(dir: &Path) -> Result<Prompts, PromptError> {
        let mut by_role = BTreeMap::new();
        for role in AgentRole::ALL {
            let path = dir.join(format!("{}.md", role.as_str()));
            let text = std::fs::read_to_string(&path).map_err(|e| PromptError {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
            by_role.insert(role, Prompt::new(text));
        }
        Ok(Prompts::from_roles(by_role))
    }

    pub fn get(&self, role: AgentRole) -> &Prompt {
        // Both constructors fill every role.
        &self.by_role[&role]
    }

    fn from_roles(by_role: BTreeMap<AgentRole, Prompt>) -> Prompts {
        let versions = by_role
            .iter()
            .map(|(r, p)| (r.as_str().to_string(), p.version.clone()))
            .collect();
        Prompts {
            by_role,
            versions: Arc::new(versions),
        }
    }

    /// `{planner: "sha256:...", ...}` for self_evaluation.
    pub fn versions(&self) -> Arc<BTreeMap<String, String>> {
        Arc::clone(&self.versions)
    }

    /// The system prompt, then the DTO as the user turn (the only copy).
    pub fn render(&self, input: &AgentInput) -> Vec<Message> {
        vec![
            Message::System {
                content: self.get(input.role()).system.clone(),
            },
            Message::User {
                content: input.to_json(),
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_replaces_every_placeholder_and_keeps_text_without_one() {
        let p = Prompt::new("a {{input}} b {{input}}");
        assert_eq!(p.render("X"), "a X b X");
        let plain = Prompt::new("no placeholder here");
        assert_eq!(plain.render("X"), "no placeholder here");
        assert_eq!(Prompt::new("{{input}}").render(""), "");
    }
}
