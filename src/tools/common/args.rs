//! Reading a tool call's arguments.
//!
//! Tool arguments come from a model; anything unexpected is an
//! `InvalidArguments` that tells the model what is allowed. Texts made
//! from them (a query summary, an error) are made plain and bounded with
//! [`crate::text::clean`] like any other untrusted text.

use super::time::parse_time;
use crate::text::clean;
use crate::tools::ToolError;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

/// The arguments as `k=v` text for a no_evidence message: model-supplied,
/// so made plain and bounded like any other untrusted text.
pub fn query_summary(args: &Map<String, Value>) -> String {
    clean(
        &crate::vocab::tool::summarize_args(&Value::Object(args.clone())),
        300,
    )
}

/// Arguments of one tool call, checked against the keys it accepts.
pub struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    pub fn new(map: &'a Map<String, Value>, allowed: &[&str]) -> Result<Self, ToolError> {
        if let Some(bad) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(ToolError::InvalidArguments(format!(
                "unknown argument '{}'; allowed: {}",
                clean(bad, 40),
                allowed.join(", ")
            )));
        }
        Ok(Args { map })
    }

    /// A non-empty string; null, "" and absent are all `None`.
    pub fn string(&self, key: &str) -> Result<Option<String>, ToolError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(ToolError::InvalidArguments(format!(
                "'{key}' must be a string"
            ))),
        }
    }

    pub fn required_string(&self, key: &str) -> Result<String, ToolError> {
        self.string(key)?
            .ok_or_else(|| ToolError::InvalidArguments(format!("'{key}' is required")))
    }

    /// A non-negative integer, given as a number or a numeric string.
    pub fn uint(&self, key: &str) -> Result<Option<u64>, ToolError> {
        let bad = || ToolError::InvalidArguments(format!("'{key}' must be a non-negative integer"));
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
                (Some(u), _) => Ok(Some(u)),
                (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 && f < 1e15 => Ok(Some(f as u64)),
                _ => Err(bad()),
            },
            Some(Value::String(s)) => s.trim().parse::<u64>().map(Some).map_err(|_| bad()),
            Some(_) => Err(bad()),
        }
    }

    pub fn time(&self, key: &str) -> Result<Option<DateTime<Utc>>, ToolError> {
        match self.string(key)? {
            None => Ok(None),
            Some(s) => parse_time(&s).map(Some).ok_or_else(|| {
                ToolError::InvalidArguments(format!(
                    "'{key}' must be an RFC 3339 time such as 2026-07-08T23:00:00Z"
                ))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_reject_unknown_keys_and_bad_types() {
        let m: Map<String, Value> = serde_json::from_str(r#"{"limit": "7", "x": 1}"#).unwrap();
        assert!(Args::new(&m, &["limit"]).is_err());
        let a = Args::new(&m, &["limit", "x"]).unwrap();
        assert_eq!(a.uint("limit").unwrap(), Some(7));
        assert!(a.time("x").is_err());
    }
}
