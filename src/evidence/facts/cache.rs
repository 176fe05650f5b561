//! A run's parsed texts, shared by the Gatekeeper and the answer check.

use super::FactText;

/// The [`FactText`]s of one run, by their source text: the Gatekeeper
/// parses each ref it checks once, and the answer check reads the same
/// texts (the verified evidence is the refs' text) back from here instead
/// of parsing them again. Equal texts give equal `FactText`s, so a hit
/// changes no result.
#[derive(Debug, Clone, Default)]
pub struct FactCache(std::collections::HashMap<String, std::sync::Arc<FactText>>);

impl FactCache {
    /// The `FactText` of `text`, parsed on first use.
    pub fn get(&mut self, text: &str) -> std::sync::Arc<FactText> {
        if let Some(f) = self.0.get(text) {
            return std::sync::Arc::clone(f);
        }
        let f = std::sync::Arc::new(FactText::new(text));
        self.0.insert(text.to_string(), std::sync::Arc::clone(&f));
        f
    }
}
