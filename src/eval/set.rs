//! The evaluation set file (a public format): an
//! optional top-level `pack`, then `[[case]]` entries with `id`,
//! `question`, `kind` (open | narrow | negative), `expect_any` (phrases;
//! empty for negatives), optional `pack`, `lang` and `forbid` (phrases no
//! verified finding of the case may contain: an over-claim when one does).
//!
//! Packs are paths relative to the set file's directory. Everything is
//! checked before any case runs: a bad set is one clear error, never a
//! half-run evaluation.

use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseKind {
    /// An open question ("why is X failing?"): recall is scored.
    Open,
    /// A narrow question (one alert, one service's logs): recall is scored.
    Narrow,
    /// A question whose honest answer is that nothing was found: over-claims
    /// are scored, recall is not.
    Negative,
}

impl CaseKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CaseKind::Open => "open",
            CaseKind::Narrow => "narrow",
            CaseKind::Negative => "negative",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub id: String,
    pub question: String,
    pub kind: CaseKind,
    #[serde(default)]
    pub expect_any: Vec<String>,
    #[serde(default)]
    pub forbid: Vec<String>,
    #[serde(default)]
    pub pack: Option<PathBuf>,
    #[serde(default)]
    pub lang: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSet {
    #[serde(default)]
    pack: Option<PathBuf>,
    #[serde(default)]
    case: Vec<Case>,
}

/// A checked evaluation set: every case with its pack resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalSet {
    pub path: PathBuf,
    /// Each case and the pack directory that serves it (None: the
    /// configured sources).
    pub cases: Vec<(Case, Option<PathBuf>)>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SetError {
    #[error("evaluation set {path}: {message}")]
    Invalid { path: String, message: String },
}

impl EvalSet {
    pub fn load(path: &Path) -> Result<EvalSet, SetError> {
        let text = std::fs::read_to_string(path).map_err(|e| SetError::Invalid {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        EvalSet::parse(path, &text)
    }

    /// `path` is where the text came from: packs resolve against its
    /// directory.
    pub fn parse(path: &Path, text: &str) -> Result<EvalSet, SetError> {
        let bad = |message: String| SetError::Invalid {
            path: path.display().to_string(),
            message,
        };
        let raw: RawSet =
            toml::from_str(text).map_err(|e| bad(crate::text::one_line(&e.to_string())))?;
        if raw.case.is_empty() {
            return Err(bad("no [[case]] entries".into()));
        }
        let base = path.parent().unwrap_or(Path::new("."));
        let mut seen = std::collections::BTreeSet::new();
        let mut cases = Vec::with_capacity(raw.case.len());
        for (i, c) in raw.case.into_iter().enumerate() {
            let at = format!("case {} ({:?})", i + 1, crate::text::clean(&c.id, 60));
            if c.id.trim().is_empty() {
                return Err(bad(format!("case {}: empty id", i + 1)));
            }
            if !seen.insert(c.id.clone()) {
                return Err(bad(format!("{at}: duplicate id")));
            }
            if c.question.trim().is_empty() {
                return Err(bad(format!("{at}: empty question")));
            }
            if c.expect_any
                .iter()
                .chain(&c.forbid)
                .any(|p| p.trim().is_empty())
            {
                return Err(bad(format!("{at}: an empty phrase matches everything")));
            }
            match c.kind {
                CaseKind::Negative if !c.expect_any.is_empty() => {
                    return Err(bad(format!(
                        "{at}: a negative case expects nothing (expect_any must be empty; use forbid for what it must not claim)"
                    )));
                }
                CaseKind::Open | CaseKind::Narrow if c.expect_any.is_empty() => {
                    return Err(bad(format!(
                        "{at}: expect_any is empty, so its recall cannot be scored (or make it kind = \"negative\")"
                    )));
                }
                _ => {}
            }
            let pack = c.pack.as_ref().or(raw.pack.as_ref()).map(|p| base.join(p));
            cases.push((c, pack));
        }
        Ok(EvalSet {
            path: path.to_path_buf(),
            cases,
        })
    }

    /// The distinct packs the cases name, in first-use order.
    pub fn packs(&self) -> Vec<Option<PathBuf>> {
        let mut out: Vec<Option<PathBuf>> = Vec::new();
        for (_, p) in &self.cases {
            if !out.contains(p) {
                out.push(p.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<EvalSet, SetError> {
        EvalSet::parse(Path::new("/evals/set.toml"), text)
    }

    #[test]
    fn resolves_packs_against_the_file() {
        let set = parse(
            r#"
pack = "packs/a"
[[case]]
id = "one"
question = "why?"
kind = "open"
expect_any = ["pool"]
[[case]]
id = "two"
question = "any X?"
kind = "negative"
pack = "/abs/b"
lang = "en"
forbid = ["OutOfMemoryError"]
"#,
        )
        .unwrap();
        assert_eq!(set.cases.len(), 2);
        assert_eq!(set.cases[0].1, Some(PathBuf::from("/evals/packs/a")));
        assert_eq!(set.cases[1].1, Some(PathBuf::from("/abs/b")));
        assert_eq!(set.packs().len(), 2);
        assert_eq!(set.cases[1].0.kind, CaseKind::Negative);
    }

    #[test]
    fn rejects_malformed_sets_with_a_reason() {
        for (text, why) in [
            ("", "no [[case]]"),
            (
                "[[case]]\nid = 'a'\nquestion = 'q'\nkind = 'maybe'\n",
                "kind",
            ),
            (
                "[[case]]\nid = 'a'\nquestion = 'q'\nkind = 'open'\n",
                "expect_any is empty",
            ),
            (
                "[[case]]\nid = 'a'\nquestion = ' '\nkind = 'negative'\n",
                "empty question",
            ),
            (
                "[[case]]\nid = 'a'\nquestion = 'q'\nkind = 'negative'\nexpect_any = ['x']\n",
                "expects nothing",
            ),
            (
                "[[case]]\nid = 'a'\nquestion = 'q'\nkind = 'open'\nexpect_any = ['']\n",
                "empty phrase",
            ),
            (
                "[[case]]\nid = 'a'\nquestion = 'q'\nkind = 'negative'\n[[case]]\nid = 'a'\nquestion = 'q'\nkind = 'negative'\n",
                "duplicate id",
            ),
            (
                "[[case]]\nid = 'a'\nquestion = 'q'\nkind = 'negative'\nexpected = []\n",
                "unknown field",
            ),
            ("[[case]\nid = 'a'", "set.toml"),
            (
                "pack = 3\n[[case]]\nid = 'a'\nquestion = 'q'\nkind = 'negative'\n",
                "pack",
            ),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(why), "{text:?}: {err}");
            assert!(!err.contains('\n'), "one line: {err}");
        }
        let missing = EvalSet::load(Path::new("/nonexistent/set.toml")).unwrap_err();
        assert!(missing.to_string().contains("/nonexistent/set.toml"));
    }
}
