//! The services crate of tests: what diagraph talks to and how it is
//! started. The OpenAI-compatible provider against an in-process
//! chat-completions server (alone, and driving whole engine runs), the
//! Prometheus backend against a real `prometheus` (alone, and in a run),
//! the binary's command line, the configuration layers, and diagraph as a
//! service: the HTTP API (`server_api`, `server_process` with SIGTERM and
//! two processes on one MySQL), the TUI following a server (`server_tui`)
//! and the OpenTelemetry export (`otlp`).
//!
//! Shared helpers live in `tests/helpers`; `openai_mock`, `fake_llm`,
//! `prometheus_server`, `server_support`, `sandbox` (the binary in a
//! private directory) and `broken_server` are this crate's own, and
//! `mysql_db` is the store suite's fresh-database helper.

// A test (or a helper of one) fails by unwrapping or panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod aimock;
mod broken_server;
mod es_fake;
mod fake_llm;
mod fault_proxy;
#[path = "../helpers/mod.rs"]
mod helpers;
mod logs_support;
mod loki_fake;
mod mcp_support;
#[path = "../store/mysql_db.rs"]
mod mysql_db;
mod openai_mock;
mod prometheus_server;
mod sandbox;
mod server_support;

mod cli;
mod config;
mod es_backend;
mod faults;
mod faults_sources;
mod faults_storage;
mod faults_store;
mod llm_quirks;
mod loki_backend;
mod mcp_client;
mod mcp_http;
mod mcp_serve;
mod mcp_server;
mod openai_engine;
mod openai_provider;
mod openai_streaming;
mod otlp;
mod prometheus_backend;
mod prometheus_engine;
mod prometheus_series;
mod prometheus_victoria;
mod report;
mod server_api;
mod server_process;
mod server_tui;
