//! Per-run tool invocation: permissions, dedup, timing, recording.
//!
//! OWNER: engine helper.

pub struct ToolInvoker;
