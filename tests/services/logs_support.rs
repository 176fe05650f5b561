//! What the `query_logs` backend tests (Elasticsearch, Loki) share: a call
//! with JSON arguments and the shop incident's window.

use diagraph::tools::{Tool, ToolError, ToolOutput};
use serde_json::{Map, Value, json};

pub async fn call(t: &impl Tool, args: Value) -> Result<ToolOutput, ToolError> {
    let map: Map<String, Value> = serde_json::from_value(args).unwrap();
    t.call(&map).await
}

/// The hours around the shop incident.
pub fn window() -> Value {
    json!({"since": "2026-07-08T22:00:00Z", "until": "2026-07-08T23:59:00Z"})
}

/// `a` with the fields of `extra` set.
pub fn with(mut a: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        a[k] = v.clone();
    }
    a
}
