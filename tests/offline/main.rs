//! The offline crate of tests: the rule-based offline model (its roles,
//! checks, a hand-driven pipeline on the real pack tools and Gatekeeper,
//! and full engine runs), and packs (loading, tools, properties, a pack
//! built from real public material).
//!
//! Shared helpers live in `tests/helpers`; `support` and `realdata` are
//! this crate's own.

// A test (or a helper of one) fails by unwrapping or panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../helpers/mod.rs"]
mod helpers;
mod loghub;
mod realdata;
mod support;

mod brain;
mod brain_hops;
mod brain_noise;
mod brain_subjects;
mod checks;
mod e2e;
mod log_buckets;
mod log_files;
mod log_index;
mod log_windows;
mod pack_load;
mod pack_props;
mod pack_realdata;
mod pack_scale;
mod pack_sources;
mod pack_tools;
mod real_tools;
mod roles;
