//! Per-role models with fallbacks: `[model.roles]` names the model that
//! serves a role, `[model.fallbacks]` the models tried in order when that
//! model fails in a retryable way (timeout, rate limit, 5xx, connection).
//! A non-retryable failure (key, bad request, exhausted quota) is the
//! answer: another model would not make the request right.
//!
//! A fallback that answered says so in the response (`served_by` and a
//! note), so the step records which model served it.

use crate::config::{ModelConfig, Provider};
use crate::model::openai::OpenAiModel;
use crate::model::{
    ChatModel, ChatRequest, ChatResponse, DeltaPart, DeltaSink, ModelError, ModelErrorKind,
};
use crate::vocab::agent::AgentRole;
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A model and its display name.
#[derive(Clone)]
pub struct Named {
    pub name: String,
    pub model: Arc<dyn ChatModel>,
}

pub struct RoutedModel {
    default: Arc<dyn ChatModel>,
    roles: BTreeMap<AgentRole, Named>,
    fallbacks: BTreeMap<AgentRole, Vec<Named>>,
}

impl RoutedModel {
    pub fn new(default: Arc<dyn ChatModel>) -> RoutedModel {
        RoutedModel {
            default,
            roles: BTreeMap::new(),
            fallbacks: BTreeMap::new(),
        }
    }

    pub fn with_role(mut self, role: AgentRole, model: Named) -> RoutedModel {
        self.roles.insert(role, model);
        self
    }

    pub fn with_fallbacks(mut self, role: AgentRole, models: Vec<Named>) -> RoutedModel {
        self.fallbacks.insert(role, models);
        self
    }

    fn primary(&self, role: AgentRole) -> &Arc<dyn ChatModel> {
        self.roles.get(&role).map_or(&self.default, |n| &n.model)
    }
}

#[async_trait]
impl ChatModel for RoutedModel {
    fn name(&self) -> String {
        if self.roles.is_empty() && self.fallbacks.is_empty() {
            return self.default.name();
        }
        format!("{} (per role)", self.default.name())
    }

    fn model_for(&self, role: AgentRole) -> String {
        let primary = match self.roles.get(&role) {
            Some(n) => format!("{}: {}", n.name, n.model.model_for(role)),
            None => self.default.model_for(role),
        };
        match self.fallbacks.get(&role).filter(|f| !f.is_empty()) {
            Some(f) => {
                let names: Vec<&str> = f.iter().map(|n| n.name.as_str()).collect();
                format!("{primary}; fallbacks: {}", names.join(", "))
            }
            None => primary,
        }
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.answer(request, None).await
    }

    async fn chat_streaming(
        &self,
        request: &ChatRequest,
        deltas: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        self.answer(request, Some(deltas)).await
    }
}

/// One call of `model`, streaming when a sink is given.
async fn call(
    model: &dyn ChatModel,
    request: &ChatRequest,
    deltas: Option<DeltaSink<'_>>,
) -> Result<ChatResponse, ModelError> {
    match deltas {
        Some(d) => model.chat_streaming(request, d).await,
        None => model.chat(request).await,
    }
}

impl RoutedModel {
    /// The role's model, then its fallbacks while the failure is retryable.
    async fn answer(
        &self,
        request: &ChatRequest,
        deltas: Option<DeltaSink<'_>>,
    ) -> Result<ChatResponse, ModelError> {
        let role = request.role();
        let mut failure = match call(self.primary(role).as_ref(), request, deltas).await {
            Ok(r) => return Ok(r),
            Err(e) => e,
        };
        let mut tried = 0usize;
        for fallback in self.fallbacks.get(&role).into_iter().flatten() {
            if !failure.is_retryable() {
                break;
            }
            tried += 1;
            // A live view may hold part of the failed model's answer: say
            // where the next text comes from.
            if let Some(d) = deltas {
                d(
                    DeltaPart::Content,
                    &format!(
                        "\n[{}; the fallback model {} answers]\n",
                        failure.kind.as_str(),
                        fallback.name
                    ),
                );
            }
            match call(fallback.model.as_ref(), request, deltas).await {
                Ok(mut r) => {
                    r.notes.push(format!(
                        "served by fallback model {} after: {}",
                        fallback.name,
                        crate::text::clean(&failure.to_string(), 200)
                    ));
                    r.served_by = Some(fallback.name.clone());
                    return Ok(r);
                }
                Err(e) => failure = e,
            }
        }
        if tried > 0 {
            failure.message = format!("{} ({tried} fallback model(s) failed too)", failure.message);
        }
        Err(failure)
    }
}

/// The model of one configuration section: the offline model or an
/// OpenAI-compatible endpoint.
fn section_model(
    m: &ModelConfig,
    offline: &Arc<dyn ChatModel>,
) -> Result<Arc<dyn ChatModel>, ModelError> {
    Ok(match m.provider {
        Provider::Offline => offline.clone(),
        Provider::OpenAi => Arc::new(OpenAiModel::from_config(m)?),
    })
}

/// The model the `[model]` configuration describes: `[model]` alone, or
/// routed per role with fallbacks when `[model.roles]` or
/// `[model.fallbacks]` name models. Only the named models in use are
/// built (a key is read for those only).
pub fn from_config(
    config: &ModelConfig,
    offline: Arc<dyn ChatModel>,
) -> Result<Arc<dyn ChatModel>, ModelError> {
    let default = section_model(config, &offline)?;
    if config.roles.is_empty() && config.fallbacks.is_empty() {
        return Ok(default);
    }
    let mut built: BTreeMap<&str, Named> = BTreeMap::new();
    let mut named = |name: &str| -> Result<Named, ModelError> {
        if let Some(n) = built.get(name) {
            return Ok(n.clone());
        }
        let section = config.models.get(name).ok_or_else(|| {
            ModelError::new(
                ModelErrorKind::Config,
                format!("model {name:?} is not defined under [model.models]"),
            )
        })?;
        let model = section_model(section, &offline).map_err(|mut e| {
            e.message = format!("[model.models.{name}]: {}", e.message);
            e
        })?;
        let n = Named {
            name: name.to_string(),
            model,
        };
        if let Some((key, _)) = config.models.get_key_value(name) {
            built.insert(key.as_str(), n.clone());
        }
        Ok(n)
    };
    let role_of = |r: &str| {
        AgentRole::parse(r).ok_or_else(|| {
            ModelError::new(
                ModelErrorKind::Config,
                format!("{r:?} is not an agent role"),
            )
        })
    };
    let mut routed = RoutedModel::new(default);
    for (role, name) in &config.roles {
        routed = routed.with_role(role_of(role)?, named(name)?);
    }
    for (role, names) in &config.fallbacks {
        let models = names
            .iter()
            .map(|n| named(n))
            .collect::<Result<Vec<_>, _>>()?;
        routed = routed.with_fallbacks(role_of(role)?, models);
    }
    Ok(Arc::new(routed))
}
