//! The deterministic Fallback and the user-facing templates, in English and
//! Chinese (seed 000 section 8, seed 003 section 5).
//!
//! OWNER: deterministic-nodes helper.
