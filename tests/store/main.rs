//! The store crate of tests: one suite of checks run on SQLite (a fresh
//! file per test) and on a real MySQL/MariaDB server (a fresh database per
//! test), each backend's own cases, and the database going away mid-run
//! (a private MariaDB server killed and restarted).
//!
//! Shared helpers live in `tests/helpers`; `suite` and `mysql_db` are this
//! crate's own (`benches/store.rs` reuses them).

// A test (or a helper of one) fails by unwrapping or panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../helpers/mod.rs"]
mod helpers;
mod mysql_db;
#[macro_use]
mod suite;

mod mysql;
mod outage;
mod rerun;
mod sqlite;
