//! The set of tools a run can reach, by name.
//!
//! Each tool's spec is taken once at registration and shared from then on:
//! specs are fixed for a tool's lifetime, and rebuilding or copying their
//! JSON schemas on every Planner input and Executor turn was a measurable
//! share of a run.

use super::{Tool, ToolSpec};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, (Arc<dyn Tool>, Arc<ToolSpec>)>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces a tool under its spec name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let spec = Arc::new(tool.spec());
        self.tools.insert(spec.name.clone(), (tool, spec));
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name).map(|(tool, _)| tool)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// Specs of the named tools that exist, in the given order.
    pub fn specs_for(&self, names: &[String]) -> Vec<Arc<ToolSpec>> {
        names
            .iter()
            .filter_map(|n| self.tools.get(n))
            .map(|(_, spec)| Arc::clone(spec))
            .collect()
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}
