//! The engine loop.
//!
//! OWNER: engine helper.

use super::{Engine, EngineError, RunOutcome, RunRequest};

impl Engine {
    pub async fn run(&self, request: RunRequest) -> Result<RunOutcome, EngineError> {
        let _ = request;
        unimplemented!("engine loop is being built")
    }
}
