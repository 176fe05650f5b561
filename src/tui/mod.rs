//! The full-screen workbench (DESIGN section 7).
//!
//! OWNER: TUI helper.
