//! Typed run state.
//!
//! OWNER: engine helper.
