//! Demo scenarios: list the shipped scenario files for the picker, and
//! prepare a scenario's engine and request for a step-mode run.

use super::TuiContext;
use crate::engine::{Engine, RunRequest};
use crate::scenario::Scenario;
use crate::tui::state::DemoEntry;
use std::path::{Path, PathBuf};

/// Every scenario file in `dir`, sorted by file name; files that do not
/// load are listed with their error so the picker can say why.
pub fn list(dir: &Path) -> Vec<DemoEntry> {
    Scenario::list(dir)
        .into_iter()
        .map(|(path, loaded)| match loaded {
            Ok(s) => entry(&s),
            Err(e) => DemoEntry {
                name: path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                path,
                description: String::new(),
                question: String::new(),
                error: Some(e.to_string()),
            },
        })
        .collect()
}

pub fn entry(s: &Scenario) -> DemoEntry {
    DemoEntry {
        path: s.path.clone(),
        name: s.name.clone(),
        description: s.description.clone(),
        question: s.question.clone(),
        error: None,
    }
}

/// Finds a scenario given as a path, a file stem (`01_pass`) or a
/// scenario name, looking in `dir` when it is not a path.
pub fn resolve(dir: &Path, given: &Path) -> PathBuf {
    if given.exists() {
        return given.to_path_buf();
    }
    let text = given.to_string_lossy();
    for candidate in [dir.join(given), dir.join(format!("{text}.toml"))] {
        if candidate.is_file() {
            return candidate;
        }
    }
    Scenario::list(dir)
        .into_iter()
        .find(|(p, s)| {
            p.file_stem()
                .is_some_and(|stem| stem.to_string_lossy().ends_with(&*text))
                || s.as_ref().is_ok_and(|s| s.name == text)
        })
        .map(|(p, _)| p)
        .unwrap_or_else(|| given.to_path_buf())
}

/// Loads one scenario file as a picker entry (for `diagraph demo FILE`).
pub fn load_entry(path: &Path) -> DemoEntry {
    match Scenario::load(path) {
        Ok(s) => entry(&s),
        Err(e) => DemoEntry {
            path: path.to_path_buf(),
            name: path.display().to_string(),
            description: String::new(),
            question: String::new(),
            error: Some(e.to_string()),
        },
    }
}

/// The scenario's engine (base engine's recorder and rules, the scenario's
/// pack and scripted model) and its request.
pub fn prepare(ctx: &TuiContext, path: &Path) -> Result<(Engine, RunRequest), String> {
    let scenario = Scenario::load(path).map_err(|e| e.to_string())?;
    let engine = scenario
        .engine(&ctx.engine, ctx.fallthrough.clone())
        .map_err(|e| e.to_string())?;
    Ok((engine, scenario.request()))
}
