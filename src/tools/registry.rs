//! The set of tools a run can reach, by name.
//!
//! Each tool's spec is taken once at registration and shared from then on:
//! specs are fixed for a tool's lifetime, and rebuilding or copying their
//! JSON schemas on every Planner input and Executor turn was a measurable
//! share of a run. For the same reason the list the Planner is shown is
//! serialised once per permission set.

use crate::tools::{Tool, ToolError};
use crate::vocab::prerendered::Prerendered;
use crate::vocab::tool::ToolSpec;
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The specs of a permission set, as the Planner sees them.
pub type SpecList = Prerendered<Vec<Arc<ToolSpec>>>;

/// A configured source that could not be set up (an MCP server that did
/// not start): it offers no tools, and every run records it as a failed
/// invocation so the run says what it could not check.
#[derive(Debug, Clone, PartialEq)]
pub struct UnavailableSource {
    /// The name the failed invocation carries, e.g. `k8s__*`.
    pub tool: String,
    /// What should have answered, as a tool's `backend()` says it.
    pub backend: String,
    pub error: ToolError,
}

/// Sources that were down when the tools were set up and are tried again
/// at the start of each run (MCP servers that did not start).
#[async_trait]
pub trait RetriedSources: Send + Sync {
    /// Tries again the sources that are due (each bounded by its timeout):
    /// the tools of those up now, and those still down.
    async fn retry(&self) -> RetryOutcome;
}

/// What [`RetriedSources::retry`] found.
#[derive(Default)]
pub struct RetryOutcome {
    pub tools: Vec<Arc<dyn Tool>>,
    pub unavailable: Vec<UnavailableSource>,
}

#[derive(Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, (Arc<dyn Tool>, Arc<ToolSpec>)>,
    unavailable: Vec<UnavailableSource>,
    retried: Vec<Arc<dyn RetriedSources>>,
    /// [`ToolRegistry::spec_list`] results by permission set.
    spec_lists: Mutex<Vec<(Vec<String>, SpecList)>>,
}

impl Clone for ToolRegistry {
    fn clone(&self) -> Self {
        ToolRegistry {
            tools: self.tools.clone(),
            unavailable: self.unavailable.clone(),
            retried: self.retried.clone(),
            spec_lists: Mutex::default(),
        }
    }
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces a tool under its spec name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let spec = Arc::new(tool.spec());
        self.tools.insert(spec.name.clone(), (tool, spec));
        self.spec_lists
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Records a source that offers no tools because it could not be set
    /// up.
    pub fn register_unavailable(&mut self, source: UnavailableSource) {
        self.unavailable.push(source);
    }

    /// Records sources that were down at set-up, for each run to try
    /// again ([`ToolRegistry::for_run`]).
    pub fn register_retried(&mut self, sources: Arc<dyn RetriedSources>) {
        self.retried.push(sources);
    }

    /// The sources that could not be set up, in registration order. A
    /// retried source is among them only in the registry
    /// [`ToolRegistry::for_run`] made.
    pub fn unavailable(&self) -> &[UnavailableSource] {
        &self.unavailable
    }

    /// The retried sources, to carry into another registry.
    pub fn retried(&self) -> &[Arc<dyn RetriedSources>] {
        &self.retried
    }

    /// The registry one run uses: this one when no source is retried,
    /// else this one with the retried sources tried again (within their
    /// timeouts), the tools of those now up added and those still down
    /// unavailable. Also returns the names of the tools added.
    pub async fn for_run(self: &Arc<Self>) -> (Arc<ToolRegistry>, Vec<String>) {
        if self.retried.is_empty() {
            return (Arc::clone(self), Vec::new());
        }
        let mut registry = ToolRegistry {
            tools: self.tools.clone(),
            unavailable: self.unavailable.clone(),
            retried: Vec::new(),
            spec_lists: Mutex::default(),
        };
        let mut added = Vec::new();
        for sources in &self.retried {
            let outcome = sources.retry().await;
            for tool in outcome.tools {
                let name = tool.spec().name;
                if !registry.tools.contains_key(&name) {
                    registry.register(tool);
                    added.push(name);
                }
            }
            registry.unavailable.extend(outcome.unavailable);
        }
        (Arc::new(registry), added)
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name).map(|(tool, _)| tool)
    }

    /// The spec a tool was registered with.
    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.get(name).map(|(_, spec)| spec.as_ref())
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

    /// [`ToolRegistry::specs_for`], serialised once per distinct `names`.
    pub fn spec_list(&self, names: &[String]) -> SpecList {
        let mut lists = self.spec_lists.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, list)) = lists.iter().find(|(n, _)| n.as_slice() == names) {
            return list.clone();
        }
        let list = SpecList::new(self.specs_for(names));
        lists.push((names.to_vec(), list.clone()));
        list
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolOutput;
    use async_trait::async_trait;
    use serde_json::{Map, Value, json};

    struct Named(&'static str, &'static str);

    #[async_trait]
    impl Tool for Named {
        fn spec(&self) -> ToolSpec {
            ToolSpec {
                name: self.0.into(),
                description: self.1.into(),
                evidence_arrays: vec![],
                parameters: json!({"type": "object"}),
            }
        }
        async fn call(&self, _: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
            Err(ToolError::Backend("unused".into()))
        }
    }

    #[test]
    fn spec_list_follows_the_permission_order_and_a_later_registration() {
        let mut reg = ToolRegistry::new();
        reg.register(Arc::new(Named("a", "first")));
        reg.register(Arc::new(Named("b", "second")));
        let names = vec!["b".to_string(), "a".to_string(), "missing".to_string()];
        let list = reg.spec_list(&names);
        let shown: Vec<&str> = list.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(shown, ["b", "a"]);
        assert_eq!(
            serde_json::to_value(&list).unwrap(),
            serde_json::to_value(reg.specs_for(&names)).unwrap()
        );
        reg.register(Arc::new(Named("a", "replaced")));
        let again = reg.spec_list(&names);
        assert_eq!(again[1].description, "replaced");
        assert!(serde_json::to_string(&again).unwrap().contains("replaced"));
    }
}
