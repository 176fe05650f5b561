//! Themes: TOML files in `themes/` that map semantic roles to styles.
//!
//! Widgets ask for a [`Role`] and never name a colour, so a theme file is
//! the only place colours live. The shipped themes are embedded, so the
//! binary works without its source tree; `--theme` also accepts a path.
//! A theme that leaves a role out inherits it from the dark theme.

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

macro_rules! roles {
    ($($variant:ident => $name:literal),* $(,)?) => {
        /// A semantic style role.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Role { $($variant),* }

        impl Role {
            pub const ALL: &'static [Role] = &[$(Role::$variant),*];
            pub fn name(self) -> &'static str {
                match self { $(Role::$variant => $name),* }
            }
        }
    };
}

roles! {
    Text => "text",
    Muted => "muted",
    Border => "border",
    FocusedBorder => "focused_border",
    Title => "title",
    Selected => "selected",
    NodeCurrent => "node_current",
    NodeVisited => "node_visited",
    NodeIdle => "node_idle",
    EdgeTaken => "edge_taken",
    EdgePending => "edge_pending",
    EdgeIdle => "edge_idle",
    VerdictPass => "verdict_pass",
    VerdictLow => "verdict_low",
    VerdictReject => "verdict_reject",
    VerdictCapped => "verdict_capped",
    BindingPass => "binding_pass",
    BindingFailed => "binding_failed",
    EvidenceSupported => "evidence_supported",
    EvidenceNone => "evidence_none",
    EvidenceDeduped => "evidence_deduped",
    EvidenceFailed => "evidence_failed",
    Degraded => "degraded",
    Warning => "warning",
    Error => "error",
    StatusBar => "status_bar",
    KeyHint => "key_hint",
    Popup => "popup",
    JsonKey => "json_key",
    JsonString => "json_string",
    JsonNumber => "json_number",
    JsonLiteral => "json_literal",
    JsonPunct => "json_punct",
}

pub const DARK: &str = include_str!("../../themes/dark.toml");
pub const LIGHT: &str = include_str!("../../themes/light.toml");
pub const HIGH_CONTRAST: &str = include_str!("../../themes/high-contrast.toml");

/// Names of the embedded themes, for `--theme NAME`.
pub const BUILTIN: [(&str, &str); 3] = [
    ("dark", DARK),
    ("light", LIGHT),
    ("high-contrast", HIGH_CONTRAST),
];

/// The built-in theme names, for messages: "dark, light, high-contrast".
pub fn builtin_names() -> String {
    BUILTIN
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    #[error("unknown theme {0:?}: not one of {names} and not a readable theme file ({1})", names = builtin_names())]
    NotFound(String, String),
    #[error("theme {name}: {problem}")]
    Invalid { name: String, problem: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    styles: BTreeMap<Role, Style>,
}

#[derive(Debug, Deserialize)]
struct ThemeFile {
    name: Option<String>,
    roles: BTreeMap<String, RoleSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleSpec {
    fg: Option<String>,
    bg: Option<String>,
    #[serde(default)]
    modifiers: Vec<String>,
}

impl Theme {
    pub fn style(&self, role: Role) -> Style {
        self.styles.get(&role).copied().unwrap_or_default()
    }

    /// A built-in theme name or a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<Theme, ThemeError> {
        if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Theme::parse(name, text);
        }
        let text = std::fs::read_to_string(Path::new(name_or_path))
            .map_err(|e| ThemeError::NotFound(name_or_path.into(), e.to_string()))?;
        Theme::parse(name_or_path, &text)
    }

    pub fn parse(name: &str, text: &str) -> Result<Theme, ThemeError> {
        let invalid = |problem: String| ThemeError::Invalid {
            name: name.into(),
            problem,
        };
        let file: ThemeFile = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let mut styles = if name == "dark" {
            BTreeMap::new()
        } else {
            Theme::dark().styles
        };
        for (key, spec) in &file.roles {
            let role = Role::ALL
                .iter()
                .copied()
                .find(|r| r.name() == key)
                .ok_or_else(|| invalid(format!("unknown role {key:?}")))?;
            styles.insert(role, spec.to_style().map_err(invalid)?);
        }
        Ok(Theme {
            name: file.name.unwrap_or_else(|| name.to_string()),
            styles,
        })
    }

    /// The fallback theme. The embedded dark theme is checked by a test, so
    /// a parse failure here is a build defect; it degrades to no styling.
    pub fn dark() -> Theme {
        let parsed: Result<ThemeFile, _> = toml::from_str(DARK);
        let mut styles = BTreeMap::new();
        if let Ok(file) = parsed {
            for (key, spec) in &file.roles {
                if let (Some(role), Ok(style)) = (
                    Role::ALL.iter().copied().find(|r| r.name() == key),
                    spec.to_style(),
                ) {
                    styles.insert(role, style);
                }
            }
        }
        Theme {
            name: "dark".into(),
            styles,
        }
    }

    /// Roles the theme file did not define (after inheritance).
    pub fn missing_roles(&self) -> Vec<Role> {
        Role::ALL
            .iter()
            .copied()
            .filter(|r| !self.styles.contains_key(r))
            .collect()
    }
}

impl RoleSpec {
    fn to_style(&self) -> Result<Style, String> {
        let mut style = Style::default();
        if let Some(fg) = &self.fg {
            style = style.fg(Color::from_str(fg).map_err(|_| format!("bad colour {fg:?}"))?);
        }
        if let Some(bg) = &self.bg {
            style = style.bg(Color::from_str(bg).map_err(|_| format!("bad colour {bg:?}"))?);
        }
        for m in &self.modifiers {
            let flag = Modifier::from_name(&m.to_ascii_uppercase())
                .ok_or_else(|| format!("bad modifier {m:?}"))?;
            style = style.add_modifier(flag);
        }
        Ok(style)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_themes_define_every_role() {
        for (name, text) in BUILTIN {
            // Parse each file on its own, without inheritance, so a theme
            // that forgets a role is caught here.
            let file: ThemeFile = toml::from_str(text).unwrap();
            for role in Role::ALL {
                assert!(
                    file.roles.contains_key(role.name()),
                    "{name} lacks {}",
                    role.name()
                );
            }
            let theme = Theme::load(name).unwrap();
            assert!(theme.missing_roles().is_empty());
        }
    }

    #[test]
    fn meaning_carrying_roles_differ() {
        for (name, _) in BUILTIN {
            let t = Theme::load(name).unwrap();
            assert_ne!(
                t.style(Role::VerdictPass),
                t.style(Role::VerdictReject),
                "{name}"
            );
            assert_ne!(
                t.style(Role::VerdictPass),
                t.style(Role::VerdictCapped),
                "{name}"
            );
            assert_ne!(
                t.style(Role::BindingPass),
                t.style(Role::BindingFailed),
                "{name}"
            );
        }
    }

    #[test]
    fn rejects_unknown_roles_and_colours() {
        assert!(Theme::parse("x", "[roles]\nnope = { fg = \"red\" }").is_err());
        assert!(Theme::parse("x", "[roles]\ntext = { fg = \"notacolour\" }").is_err());
        assert!(Theme::load("/nonexistent/theme.toml").is_err());
    }
}
