//! One file per node. Agent nodes (planner, executor, verifier, composer)
//! are adapters around a `ChatModel`; the others are plain code. Nodes
//! never route: they return an outcome and the router decides.

pub mod allowed;
pub mod answer;
pub mod composer;
pub mod evidence_retry;
pub mod executor;
pub mod fallback;
pub mod gatekeeper;
pub mod planner;
pub mod verified_input;
pub mod verifier;
