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
mod answer_rules_engine;
mod binding_excerpt_conditions;
mod binding_excerpts_zh;
mod executor_rules_engine;
mod fallback_markers;
mod gate_gaps;
mod gatekeeper_adversarial;
mod gatekeeper_classes;
mod gatekeeper_excerpts;
mod gatekeeper_props;
mod layering;
mod lifecycle;
mod parsers_props;
mod prompts;
mod routes;
mod run_failures;
mod scenarios;
mod seed_acceptance;
mod seed_evidence_safety;
mod seed_retries;
mod statement_grounded;
mod statement_links;
mod statement_links_and_counts;
mod statement_names;
mod statement_paraphrase;
mod statement_polarity;
mod statement_quote_props;
mod statement_values_and_scope;
