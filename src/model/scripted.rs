//! The scripted provider: replays a scenario's responses per (role, call
//! order); uncovered calls fall through to the offline model.
//!
//! OWNER: engine helper.
