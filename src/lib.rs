//! diagraph: a terminal workbench for evidence-gated incident diagnosis.
//!
//! ARCHITECTURE.md's code map lists the modules from the ground floor up
//! and what each owns. Nothing outside `tui` (and the binary) knows it has
//! a terminal.

pub mod cli;
pub mod config;
pub mod engine;
pub mod eval;
pub mod evidence;
pub mod knowledge;
pub mod model;
pub mod report;
pub mod scenario;
pub mod server;
pub mod store;
pub mod text;
pub mod tools;
pub mod tui;
pub mod vocab;
