//! `[tui]`: how the workbench uses the terminal.

use super::ConfigError;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TuiConfig {
    /// Capture the mouse (click to focus and select, the wheel scrolls).
    /// Off, the terminal keeps its own text selection.
    pub mouse: bool,
}

impl Default for TuiConfig {
    fn default() -> Self {
        TuiConfig { mouse: true }
    }
}

/// A yes/no setting from the environment: true/false, 1/0, yes/no, on/off.
pub(super) fn parse_switch(v: &str, source_name: &str) -> Result<bool, ConfigError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(ConfigError::BadValue {
            source_name: source_name.into(),
            message: format!("{:?} is not true or false", v.trim()),
        }),
    }
}
