//! The full-screen workbench (ARCHITECTURE.md, "tui").
//!
//! Elm architecture: [`state::AppState`] is a fold over engine events and
//! UI messages, [`update::update`] is the only place that changes it, and
//! [`view::view`] draws it without side effects. [`runtime`] owns the
//! terminal and the one `select!` loop that merges input, engine events and
//! the frame deadline; live runs, replays and demos all feed it the same
//! messages.

pub mod keymap;
pub mod runtime;
pub mod state;
pub mod theme;
pub mod update;
pub mod view;

pub use runtime::{Launch, TuiContext, TuiError, run};
