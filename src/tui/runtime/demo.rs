//! Demo scenarios. TEMPORARY: the scenario loader is not on main yet; this
//! placeholder reports that instead of pretending. Replaced on merge.

use super::TuiContext;
use crate::engine::{Engine, RunRequest};
use crate::tui::state::DemoEntry;
use std::path::Path;

const MISSING: &str = "scenario support is not in this build yet";

pub fn list(_dir: &Path) -> Vec<DemoEntry> {
    vec![]
}

pub fn load_entry(path: &Path) -> DemoEntry {
    DemoEntry {
        path: path.to_path_buf(),
        name: path.display().to_string(),
        description: String::new(),
        question: String::new(),
        error: Some(MISSING.into()),
    }
}

pub fn prepare(_ctx: &TuiContext, _path: &Path) -> Result<(Engine, RunRequest), String> {
    Err(MISSING.into())
}
