//! The JSON contracts between the graph and its agents, and their parsers.
//! The prompts in `prompts/` tell the models the same contracts.
//!
//! Model output is untrusted input. Every parser takes raw text, accepts
//! exactly one JSON object (optionally inside one markdown code fence) and
//! returns either the typed contract or a [`ParseFailure`] that the node
//! turns into `INVALID_OUTPUT`. No parser panics, whatever the bytes.

mod composer;
mod executor;
mod gatekeeper;
mod json;
mod planner;
mod verifier;

pub use composer::*;
pub use executor::*;
pub use gatekeeper::*;
pub use json::{ParseFailure, ParseStatus, extract_json_object, reasoning_around_json};
pub use planner::*;
pub use verifier::*;

use serde::{Deserialize, Serialize};
use std::fmt;

/// A diagnosis verdict, ordered REJECT < LOW_CONFID < PASS so that
/// `min(model, ceiling)` is the effective verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Verdict {
    #[serde(rename = "REJECT")]
    Reject,
    #[serde(rename = "LOW_CONFID")]
    LowConfid,
    #[serde(rename = "PASS")]
    Pass,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Reject => "REJECT",
            Verdict::LowConfid => "LOW_CONFID",
            Verdict::Pass => "PASS",
        }
    }

    pub fn parse(s: &str) -> Option<Verdict> {
        match s.trim() {
            "PASS" => Some(Verdict::Pass),
            "LOW_CONFID" => Some(Verdict::LowConfid),
            "REJECT" => Some(Verdict::Reject),
            _ => None,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// Language of the question; every user-facing template exists in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    #[default]
    En,
    Zh,
}

impl Lang {
    /// Chinese when the question contains Han characters, English otherwise.
    pub fn detect(text: &str) -> Lang {
        let han = text
            .chars()
            .filter(|c| matches!(*c as u32, 0x4E00..=0x9FFF | 0x3400..=0x4DBF))
            .count();
        if han > 0 { Lang::Zh } else { Lang::En }
    }
}
