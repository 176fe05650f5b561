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

/// The recorded counts per bucket are the exact counts of the matching
/// lines' times (µs since the epoch): every bucket, and nothing off the
/// grid.
pub fn assert_buckets_exact(out: &ToolOutput, matching_us: &[i64]) {
    let b = out.buckets.as_ref().expect("counts per bucket recorded");
    assert!(b.is_sound(), "{b:?}");
    for (i, n) in b.counts.iter().enumerate() {
        let lo = b.bucket_start_us(i);
        let hi = lo + b.step_us();
        let want = matching_us.iter().filter(|t| **t >= lo && **t < hi).count() as u64;
        assert_eq!(*n, want, "bucket {i} from {lo} µs");
    }
    assert_eq!(
        b.total(),
        matching_us.len() as u64,
        "every match in a bucket"
    );
    assert_eq!(out.body["total"], matching_us.len() as u64);
}
