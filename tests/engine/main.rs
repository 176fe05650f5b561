//! The engine crate of tests: the pure router, node contracts (Gatekeeper,
//! parsers, prompts), and whole runs on the scripted model over the
//! in-memory recorder (scenarios, seed acceptance, fallbacks, lifecycle).
//! Also the layering check of `src/` (`layering`).
//!
//! One test crate with modules builds and links the library once instead
//! of once per file; shared helpers live in `tests/helpers`.

// A test (or a helper of one) fails by unwrapping or panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../helpers/mod.rs"]
mod helpers;
mod runs;

mod fallback_markers;
mod gatekeeper_adversarial;
mod gatekeeper_props;
mod lifecycle;
mod parsers_props;
mod prompts;
mod routes;
mod scenarios;
mod seed_acceptance;
