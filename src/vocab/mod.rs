//! The ground floor: the shared vocabulary every other module speaks.
//!
//! Node ids and outcomes, the agent contracts and their parsers, the agent
//! input DTOs, engine events, the verdict and run-end types, tool
//! invocations and evidence refs, the orchestration trace and the
//! persistence port. Nothing here imports another module of the crate
//! except `text`, so `engine`, `model`, `tools`, `knowledge` and `store`
//! can all build on it without importing each other.

pub mod agent;
pub mod answer;
pub mod buckets;
pub mod catalog;
pub mod contracts;
pub mod dto;
pub mod evaluation;
pub mod events;
pub mod graph;
pub mod level;
pub mod prerendered;
pub mod record;
pub mod run;
pub mod run_trace;
pub mod time;
pub mod tool;
pub mod trace;
pub mod usage;
