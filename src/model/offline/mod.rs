//! The offline model: deterministic, rule-based, no network.
//!
//! OWNER: offline-model helper.

use super::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelErrorKind};
use async_trait::async_trait;

#[derive(Debug, Clone, Default)]
pub struct OfflineModel;

impl OfflineModel {
    pub fn new() -> Self {
        OfflineModel
    }
}

#[async_trait]
impl ChatModel for OfflineModel {
    fn name(&self) -> String {
        "offline (rule-based)".into()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        Err(ModelError::new(
            ModelErrorKind::Config,
            format!("offline {} not implemented yet", request.role),
        ))
    }
}
