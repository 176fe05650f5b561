//! The verifier node: an adapter around a `ChatModel`.
//!
//! OWNER: engine helper.
