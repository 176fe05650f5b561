//! The services crate of tests: what diagraph talks to and how it is
//! started. The OpenAI-compatible provider against an in-process
//! chat-completions server (alone, and driving whole engine runs), the
//! Prometheus backend against a real `prometheus` (alone, and in a run),
//! the binary's command line, and the configuration layers.
//!
//! Shared helpers live in `tests/helpers`; `openai_mock`, `fake_llm` and
//! `prometheus_server` are this crate's own.

// A test (or a helper of one) fails by unwrapping or panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod fake_llm;
#[path = "../helpers/mod.rs"]
mod helpers;
mod openai_mock;
mod prometheus_server;

mod cli;
mod config;
mod faults;
mod openai_engine;
mod openai_provider;
mod prometheus_backend;
mod prometheus_engine;
