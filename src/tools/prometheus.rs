//! query_metrics over the Prometheus HTTP API.
//!
//! OWNER: providers helper.
