//! Extracting the one JSON object a model answer must contain.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Model output larger than this is rejected before parsing: no contract
/// needs it, and it bounds parser work on hostile input.
pub const MAX_OUTPUT_BYTES: usize = 512 * 1024;

/// Seed 000 `executor_output_parse_status.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParseStatus {
    Valid,
    Missing,
    Malformed,
}

/// Why a model answer is not a valid contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{status:?}: {detail}")]
pub struct ParseFailure {
    pub status: ParseStatus,
    pub detail: String,
}

impl ParseFailure {
    pub fn missing(detail: impl Into<String>) -> Self {
        ParseFailure {
            status: ParseStatus::Missing,
            detail: detail.into(),
        }
    }
    pub fn malformed(detail: impl Into<String>) -> Self {
        ParseFailure {
            status: ParseStatus::Malformed,
            detail: detail.into(),
        }
    }
}

/// Accepts exactly one JSON object, either as the whole (trimmed) text or
/// inside a single markdown code fence (```json ... ``` or ``` ... ```).
/// Prose around a bare object, two objects, arrays and scalars are all
/// malformed.
pub fn extract_json_object(text: &str) -> Result<Map<String, Value>, ParseFailure> {
    if text.len() > MAX_OUTPUT_BYTES {
        return Err(ParseFailure::malformed(format!(
            "output is {} bytes, over the {} byte limit",
            text.len(),
            MAX_OUTPUT_BYTES
        )));
    }
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(ParseFailure::missing("output is empty"));
    }
    let body = unfence(trimmed)?;
    let value: Value = serde_json::from_str(body)
        .map_err(|e| ParseFailure::malformed(format!("not valid JSON: {e}")))?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(ParseFailure::malformed(format!(
            "JSON root is {}, expected an object",
            kind(&other)
        ))),
    }
}

fn unfence(text: &str) -> Result<&str, ParseFailure> {
    if !text.starts_with("```") {
        return Ok(text);
    }
    let after_open = &text[3..];
    let Some(newline) = after_open.find('\n') else {
        return Err(ParseFailure::malformed("unterminated code fence"));
    };
    let info = after_open[..newline].trim();
    if !(info.is_empty() || info.eq_ignore_ascii_case("json")) {
        return Err(ParseFailure::malformed(format!(
            "code fence language {info:?} is not json"
        )));
    }
    let inner = &after_open[newline + 1..];
    let Some(close) = inner.rfind("```") else {
        return Err(ParseFailure::malformed("unterminated code fence"));
    };
    if !inner[close + 3..].trim().is_empty() {
        return Err(ParseFailure::malformed("text after the code fence"));
    }
    let body = &inner[..close];
    if body.contains("```") {
        return Err(ParseFailure::malformed("more than one code fence"));
    }
    Ok(body.trim())
}

pub(crate) use crate::text::json_kind as kind;

/// Field readers that report wrong types as `ParseFailure`s, so that each
/// contract parser reads like its seed table.
pub(crate) struct Fields<'a> {
    pub map: &'a Map<String, Value>,
    pub ctx: &'a str,
}

impl<'a> Fields<'a> {
    pub fn new(map: &'a Map<String, Value>, ctx: &'a str) -> Self {
        Fields { map, ctx }
    }

    fn wrong(&self, key: &str, want: &str, got: &Value) -> ParseFailure {
        ParseFailure::malformed(format!(
            "{}.{key} must be {want}, got {}",
            self.ctx,
            kind(got)
        ))
    }

    pub fn req_str(&self, key: &str) -> Result<String, ParseFailure> {
        match self.map.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(self.wrong(key, "a string", other)),
            None => Err(ParseFailure::malformed(format!(
                "{}.{key} is missing",
                self.ctx
            ))),
        }
    }

    /// Absent or null reads as empty; anything but a string is an error.
    pub fn opt_str(&self, key: &str) -> Result<String, ParseFailure> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(self.wrong(key, "a string", other)),
        }
    }

    pub fn opt_nullable_str(&self, key: &str) -> Result<Option<String>, ParseFailure> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() || s.trim() == "null" => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.wrong(key, "a string or null", other)),
        }
    }

    pub fn req_array(&self, key: &str) -> Result<&'a Vec<Value>, ParseFailure> {
        match self.map.get(key) {
            Some(Value::Array(a)) => Ok(a),
            Some(other) => Err(self.wrong(key, "an array", other)),
            None => Err(ParseFailure::malformed(format!(
                "{}.{key} is missing",
                self.ctx
            ))),
        }
    }

    /// Absent or null reads as empty.
    pub fn opt_array(&self, key: &str) -> Result<&'a [Value], ParseFailure> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(other) => Err(self.wrong(key, "an array", other)),
        }
    }

    pub fn opt_string_list(&self, key: &str) -> Result<Vec<String>, ParseFailure> {
        self.opt_array(key)?
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.clone()),
                other => Err(ParseFailure::malformed(format!(
                    "{}.{key}[{i}] must be a string, got {}",
                    self.ctx,
                    kind(other)
                ))),
            })
            .collect()
    }

    pub fn opt_f64(&self, key: &str) -> Result<Option<f64>, ParseFailure> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(other) => Err(self.wrong(key, "a number", other)),
        }
    }

    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>, ParseFailure> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong(key, "a boolean", other)),
        }
    }
}

/// Reads each element of an array as an object.
pub(crate) fn objects<'a>(
    items: &'a [Value],
    ctx: &str,
) -> Result<Vec<&'a Map<String, Value>>, ParseFailure> {
    items
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Object(m) => Ok(m),
            other => Err(ParseFailure::malformed(format!(
                "{ctx}[{i}] must be an object, got {}",
                kind(other)
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_object_is_accepted() {
        assert!(extract_json_object(r#"  {"a": 1} "#).is_ok());
    }

    #[test]
    fn fenced_object_is_accepted() {
        assert!(extract_json_object("```json\n{\"a\": 1}\n```").is_ok());
        assert!(extract_json_object("```\n{\"a\": 1}\n```\n").is_ok());
    }

    #[test]
    fn empty_is_missing() {
        assert_eq!(
            extract_json_object("  \n").unwrap_err().status,
            ParseStatus::Missing
        );
    }

    #[test]
    fn prose_truncation_and_non_objects_are_malformed() {
        for bad in [
            "Here is the plan: {\"a\": 1}",
            "{\"a\": 1",
            "[1, 2]",
            "42",
            "\"text\"",
            "{\"a\":1}{\"b\":2}",
            "```json\n{\"a\":1}\n```\n```json\n{\"b\":1}\n```",
            "```python\n{\"a\":1}\n```",
            "```json\n{\"a\":1}",
        ] {
            assert_eq!(
                extract_json_object(bad).unwrap_err().status,
                ParseStatus::Malformed,
                "{bad}"
            );
        }
    }

    #[test]
    fn huge_input_is_rejected_without_parsing() {
        let huge = format!("{{\"a\": \"{}\"}}", "x".repeat(MAX_OUTPUT_BYTES));
        assert_eq!(
            extract_json_object(&huge).unwrap_err().status,
            ParseStatus::Malformed
        );
    }
}
