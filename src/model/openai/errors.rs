//! Error classification for the OpenAI-compatible provider.
//!
//! Retryable: timeout, 429, 5xx (and 408), connection failures, protocol
//! breaks. Non-retryable: 401/403 (key), other 4xx (request), bad config.
//! The graph decides whether to retry; this module only names the class.
//!
//! Every message that leaves here passes through [`redact`], so a server
//! that echoes the key back cannot put it into a step, a log or the screen.

use crate::model::{ModelError, ModelErrorKind};
use serde_json::Value;
use std::time::Duration;

/// The class of a non-2xx status (429 is handled by the caller's back-off
/// before it gets here).
pub fn status_kind(status: u16) -> ModelErrorKind {
    match status {
        429 => ModelErrorKind::RateLimited,
        408 => ModelErrorKind::Timeout,
        // Lock conflicts and "too early" are transient (OpenAI's own
        // clients retry 409).
        409 | 425 => ModelErrorKind::ServerError,
        401 | 403 => ModelErrorKind::Unauthorized,
        500..=599 => ModelErrorKind::ServerError,
        400..=499 => ModelErrorKind::BadRequest,
        _ => ModelErrorKind::Protocol,
    }
}

/// Error codes that mean the account's quota or credit is spent: OpenAI's
/// `insufficient_quota` (sent with HTTP 429), DeepSeek's insufficient
/// balance (402), DashScope's `Arrearage`, and the like.
const QUOTA_CODES: &[&str] = &[
    "insufficient_quota",
    "quota_exceeded",
    "billing_hard_limit_reached",
    "insufficient_balance",
    "arrearage",
    "payment_required",
];

/// Whether an error answer says the quota or credit is exhausted, which no
/// back-off cures (a 429 that is only a rate limit is not).
pub fn is_quota(status: u16, error: Option<&Value>) -> bool {
    if status == 402 {
        return true;
    }
    let Some(err) = error else {
        return false;
    };
    let field = |k: &str| {
        err.get(k)
            .and_then(Value::as_str)
            .map(str::to_ascii_lowercase)
            .unwrap_or_default()
    };
    let (code, kind, message) = (field("code"), field("type"), field("message"));
    QUOTA_CODES.contains(&code.as_str())
        || QUOTA_CODES.contains(&kind.as_str())
        || message.contains("exceeded your current quota")
        || message.contains("insufficient balance")
}

/// A non-2xx answer as a classified error with the provider's own message.
pub fn status_error(status: u16, body: &[u8]) -> ModelError {
    let error = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("error").cloned());
    let kind = if is_quota(status, error.as_ref()) {
        ModelErrorKind::Quota
    } else {
        status_kind(status)
    };
    let detail = error
        .as_ref()
        .map(error_text)
        .unwrap_or_else(|| snippet(body, 200));
    let hint = match kind {
        ModelErrorKind::Unauthorized => " (check the API key variable named by model.api_key_env)",
        ModelErrorKind::BadRequest if status == 404 => " (check model.base_url and model.model)",
        ModelErrorKind::Quota => " (the account's quota or credit is exhausted; not retried)",
        _ => "",
    };
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    };
    ModelError::new(kind, format!("HTTP {status}{detail}{hint}"))
}

/// `error` as OpenAI shapes it (`{message, type, code}`) or a bare string.
pub fn error_text(err: &Value) -> String {
    let text = match err {
        Value::String(s) => s.clone(),
        Value::Object(o) => {
            let msg = o.get("message").and_then(Value::as_str).unwrap_or("");
            let code = o
                .get("code")
                .or_else(|| o.get("type"))
                .map(|c| match c {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .filter(|c| !c.is_empty() && c != "null");
            match code {
                Some(c) if !msg.is_empty() => format!("{msg} [{c}]"),
                Some(c) => c,
                None => msg.to_string(),
            }
        }
        other => other.to_string(),
    };
    clean(&text, 200)
}

/// A transport failure (no HTTP status) as a classified error.
pub fn transport_error(err: &reqwest::Error, base_url: &str, timeout: Duration) -> ModelError {
    if err.is_timeout() {
        return ModelError::new(
            ModelErrorKind::Timeout,
            format!(
                "no response from {base_url} within {} ms",
                timeout.as_millis()
            ),
        );
    }
    let cause = root_cause(err);
    if err.is_connect() {
        return ModelError::new(
            ModelErrorKind::Connection,
            format!("cannot connect to {base_url}: {cause}"),
        );
    }
    if err.is_builder() {
        return ModelError::new(
            ModelErrorKind::Config,
            format!("cannot build a request for {base_url}: {cause}"),
        );
    }
    // Reset mid-response, truncated body, broken TLS session: all transient.
    ModelError::new(
        ModelErrorKind::Connection,
        format!("connection to {base_url} failed: {cause}"),
    )
}

use crate::text::{clean, root_cause};

pub fn snippet(body: &[u8], max: usize) -> String {
    clean(&String::from_utf8_lossy(body), max)
}

/// Removes the key (and any long fragment of it) from a message.
pub fn redact(message: &str, key: Option<&str>) -> String {
    match key.map(str::trim).filter(|k| k.len() >= 4) {
        Some(k) => message.replace(k, "***"),
        None => message.to_string(),
    }
}

/// `Retry-After` in seconds (integer or fractional); HTTP dates are ignored.
pub fn retry_after(value: Option<&str>) -> Option<Duration> {
    let secs: f64 = value?.trim().parse().ok()?;
    if secs.is_finite() && secs >= 0.0 {
        Some(Duration::from_secs_f64(secs.min(3600.0)))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_classes() {
        use ModelErrorKind::*;
        for (s, k) in [
            (400, BadRequest),
            (401, Unauthorized),
            (403, Unauthorized),
            (404, BadRequest),
            (422, BadRequest),
            (408, Timeout),
            (429, RateLimited),
            (500, ServerError),
            (503, ServerError),
            (302, Protocol),
            (409, ServerError),
        ] {
            assert_eq!(status_kind(s), k, "{s}");
        }
    }

    #[test]
    fn provider_messages_are_cleaned_and_redacted() {
        let e = status_error(
            401,
            br#"{"error":{"message":"Incorrect API key provided: sk-secret-123\u001b[31m","type":"invalid_request_error","code":"invalid_api_key"}}"#,
        );
        assert!(!e.message.contains('\u{1b}'));
        let m = redact(&e.message, Some("sk-secret-123"));
        assert!(!m.contains("sk-secret-123") && m.contains("***"), "{m}");
        assert!(m.contains("invalid_api_key"));
    }

    #[test]
    fn quota_exhaustion_is_its_own_class_with_the_providers_words() {
        for (status, body) in [
            (429, &br#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#[..]),
            (402, br#"{"error":{"message":"Insufficient Balance","type":"unknown_error"}}"#),
            (400, br#"{"error":{"message":"Access denied, please make sure your account is in good standing.","code":"Arrearage"}}"#),
        ] {
            let e = status_error(status, body);
            assert_eq!(e.kind, ModelErrorKind::Quota, "{status}: {e}");
            assert!(!e.is_retryable());
            assert!(e.message.contains(&format!("HTTP {status}")), "{e}");
        }
        let e = status_error(
            429,
            br#"{"error":{"message":"You exceeded your current quota"}}"#,
        );
        assert!(e.message.contains("You exceeded your current quota"), "{e}");
        // A plain rate limit stays retryable.
        let e = status_error(429, br#"{"error":{"message":"Rate limit reached for requests","code":"rate_limit_exceeded"}}"#);
        assert_eq!(e.kind, ModelErrorKind::RateLimited);
    }

    #[test]
    fn retry_after_parsing() {
        assert_eq!(retry_after(Some("2")), Some(Duration::from_secs(2)));
        assert_eq!(retry_after(Some("0.5")), Some(Duration::from_millis(500)));
        assert_eq!(retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT")), None);
        assert_eq!(retry_after(Some("-1")), None);
        assert_eq!(retry_after(None), None);
    }
}
