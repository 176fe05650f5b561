//! The engine crate of tests: the pure router, node contracts (Gatekeeper,
//! parsers, prompts), and whole runs on the scripted model over the
//! in-memory recorder (scenarios, seed acceptance, fallbacks, lifecycle).
//! Also the architecture check of `src/` (`layering`): no import cycles
//! between top-level modules, the ground floor imports nothing above it,
//! and only `tui`, `cli` and the binary use the terminal crates.
//!
//! One test crate with modules builds and links the library once instead
//! of once per file; shared helpers live in `tests/helpers`.

// A test (or a helper of one) fails by unwrapping or panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod gatekeeper_run;
#[path = "../helpers/mod.rs"]
mod helpers;
mod runs;

mod answer_classes;
mod answer_props;
mod fallback_markers;
mod gate_gaps;
mod gate_holes;
mod gate_holes2;
mod gate_holes_cause;
mod gate_holes_excerpts;
mod gate_holes_names;
mod gate_holes_props;
mod gate_holes_states;
mod gate_holes_words;
mod gatekeeper_adversarial;
mod gatekeeper_classes;
mod gatekeeper_excerpts;
mod gatekeeper_props;
mod layering;
mod lifecycle;
mod parsers_props;
mod prompts;
mod redteam;
mod redteam_excerpts;
mod redteam_executor;
mod routes;
mod run_failures;
mod scenarios;
mod seed_acceptance;
mod seed_evidence_safety;
mod seed_retries;
mod statement_grounded;
