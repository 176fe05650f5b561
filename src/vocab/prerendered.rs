//! [`Prerendered`]: a value serialised once and embedded as that JSON text
//! from then on.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::sync::Arc;

/// A part of an input DTO that is the same for every run (the catalog, the
/// tool schemas): serialised once when built and embedded as that JSON text
/// from then on, while code still reads the typed value through `Deref`.
/// Serialising these parts was most of the work of rendering the Planner's
/// prompt.
#[derive(Clone)]
pub struct Prerendered<T> {
    value: Arc<T>,
    json: Arc<RawValue>,
}

impl<T: Serialize> Prerendered<T> {
    pub fn new(value: T) -> Self {
        // Plain data serialises without error; `null` keeps the type total.
        let text = serde_json::to_string(&value).unwrap_or_else(|_| "null".to_string());
        let json = RawValue::from_string(text)
            .map(Arc::from)
            .unwrap_or_else(|_| Arc::from(RawValue::NULL.to_owned()));
        Prerendered {
            value: Arc::new(value),
            json,
        }
    }
}

impl<T: Serialize + Default> Default for Prerendered<T> {
    fn default() -> Self {
        Prerendered::new(T::default())
    }
}

impl<T> std::ops::Deref for Prerendered<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: PartialEq> PartialEq for Prerendered<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Prerendered<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

impl<T> Serialize for Prerendered<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de> + Serialize> Deserialize<'de> for Prerendered<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Prerendered::new)
    }
}

impl<T: Serialize> From<T> for Prerendered<T> {
    fn from(value: T) -> Self {
        Prerendered::new(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn embeds_exactly_what_the_value_serialises_to() {
        let value: BTreeMap<&str, Vec<&str>> = [("a", vec!["x\"y", "é\n"]), ("b", vec![])]
            .into_iter()
            .collect();
        let direct = serde_json::to_string(&serde_json::json!({"k": value, "n": 1})).unwrap();
        let pre = serde_json::to_string(
            &serde_json::json!({"k": serde_json::to_value(Prerendered::new(value.clone())).unwrap(), "n": 1}),
        )
        .unwrap();
        assert_eq!(direct, pre);
        let p = Prerendered::new(value.clone());
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            serde_json::to_string(&value).unwrap()
        );
        assert_eq!(p.len(), 2, "reads through Deref");
        let back: Prerendered<BTreeMap<String, Vec<String>>> =
            serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back["a"], ["x\"y", "é\n"]);
    }
}
