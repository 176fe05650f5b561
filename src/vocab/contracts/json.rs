//! Extracting the one JSON object a model answer must contain.

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// Model output larger than this is rejected before parsing: no contract
/// needs it, and it bounds parser work on hostile input.
pub const MAX_OUTPUT_BYTES: usize = 512 * 1024;

/// Whether a model answer held a usable contract: the `status` of
/// `executor_output_parse_status` in self_evaluation.
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

/// A JSON document as contract parsers read it: strings borrow from the
/// model's text where they can, objects keep their entries in a plain list.
/// A parser reads each field once, so building a hashed
/// `serde_json::Map` for every object of every answer was wasted work.
#[derive(Debug, Clone, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Object<'a>),
}

/// A JSON object's entries in document order. A repeated key reads as its
/// last value, as `serde_json::Map` would have it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object<'a> {
    entries: Vec<(Cow<'a, str>, Json<'a>)>,
}

impl<'a> Object<'a> {
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// The object as an owned `serde_json` map (for the parts of a contract
    /// kept as free-form JSON).
    pub fn to_map(&self) -> Map<String, Value> {
        let mut map = Map::with_capacity(self.entries.len());
        for (k, v) in &self.entries {
            map.insert(k.to_string(), v.to_value());
        }
        map
    }
}

impl Json<'_> {
    pub fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Number(n.clone()),
            Json::String(s) => Value::String(s.to_string()),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Object(o) => Value::Object(o.to_map()),
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Number(n) => n.as_i64(),
            _ => None,
        }
    }
}

/// The kind of a JSON value, for error messages ("got an array").
pub(crate) fn kind(v: &Json<'_>) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Json<'de>, E> {
        // JSON text has no NaN or infinity; null keeps the type total.
        Ok(serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(v)))
    }

    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
        while let Some(Key(key)) = map.next_key()? {
            entries.push((key, map.next_value()?));
        }
        Ok(Json::Object(Object { entries }))
    }
}

/// An object key, borrowed from the text when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Accepts exactly one JSON object in a model answer. Reasoning around it
/// is allowed and ignored: `<think>…</think>` (or `<thinking>`) blocks, a
/// reasoning prefix that ends in a bare `</think>`, prose and code fences
/// before or after the object. Two JSON objects, an object cut off before
/// its end, an array of objects and no object at all are malformed; an
/// answer that is empty (or reasoning only) is missing.
pub fn extract_json_object(text: &str) -> Result<Object<'_>, ParseFailure> {
    let (body, _) = locate_json_object(text)?;
    let value: Json<'_> = serde_json::from_str(body)
        .map_err(|e| ParseFailure::malformed(format!("not valid JSON: {e}")))?;
    match value {
        Json::Object(map) => Ok(map),
        other => Err(ParseFailure::malformed(format!(
            "JSON root is {}, expected an object",
            kind(&other)
        ))),
    }
}

/// The reasoning text around the one JSON object of a model answer (think
/// blocks, prose, code fences), for the step's record; empty when the
/// answer is the bare object. When the answer holds no single object, the
/// whole visible text is the reasoning.
pub fn reasoning_around_json(text: &str) -> String {
    if is_bare_object(text) {
        return String::new();
    }
    match locate_json_object(text) {
        Ok((_, reasoning)) => reasoning,
        Err(_) => String::new(),
    }
}

/// The trimmed text starts with `{`, ends with `}` and has no think tag:
/// the common case, where no scanning is needed.
fn is_bare_object(text: &str) -> bool {
    let t = text.trim();
    t.starts_with('{') && t.ends_with('}') && !has_think_tag(t)
}

fn has_think_tag(text: &str) -> bool {
    text.contains("<think") || text.contains("</think") || text.contains("<THINK")
}

/// The slice holding the one JSON object, and the reasoning around it.
fn locate_json_object(text: &str) -> Result<(&str, String), ParseFailure> {
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
    if is_bare_object(trimmed) && serde_json::from_str::<IgnoredAny>(trimmed).is_ok() {
        return Ok((trimmed, String::new()));
    }
    let (visible, mut thoughts) = split_think(trimmed);
    if visible.iter().all(|(_, part)| part.trim().is_empty()) {
        return Err(ParseFailure::missing(if thoughts.is_empty() {
            "output is empty".to_string()
        } else {
            "the output is reasoning only, with no answer after it".to_string()
        }));
    }
    let mut found: Option<(usize, usize, usize)> = None;
    let mut others = 0usize;
    for (index, (offset, part)) in visible.iter().enumerate() {
        let mut i = 0;
        while let Some(rel) = part[i..].find(['{', '[']) {
            let start = i + rel;
            let open = part.as_bytes()[start];
            let mut stream =
                serde_json::Deserializer::from_str(&part[start..]).into_iter::<IgnoredAny>();
            match stream.next() {
                Some(Ok(_)) => {
                    let end = start + stream.byte_offset();
                    let holds_object = open == b'{' || part[start..end].contains('{');
                    if !holds_object {
                        i = end;
                        continue;
                    }
                    if open == b'[' || found.is_some() {
                        others += 1;
                    } else {
                        found = Some((index, start, end));
                    }
                    if others > 0 {
                        return Err(ParseFailure::malformed(if open == b'[' {
                            "the output holds a JSON array of objects; exactly one JSON \
                             object is allowed"
                        } else {
                            "the output holds more than one JSON object; exactly one is \
                             allowed"
                        }));
                    }
                    i = end;
                }
                Some(Err(e)) if e.is_eof() => {
                    return Err(ParseFailure::malformed(format!(
                        "a JSON object is cut off before its end (at byte {})",
                        offset + start
                    )));
                }
                // A brace in prose: not the start of a JSON value.
                _ => i = start + 1,
            }
        }
    }
    let Some((index, start, end)) = found else {
        return Err(ParseFailure::malformed("no JSON object in the output"));
    };
    let part = visible[index].1;
    let mut prose = String::new();
    for (k, (_, p)) in visible.iter().enumerate() {
        if k == index {
            prose.push_str(&part[..start]);
            prose.push('\n');
            prose.push_str(&part[end..]);
        } else {
            prose.push_str(p);
        }
        prose.push('\n');
    }
    let prose = strip_fence_markers(&prose);
    if !prose.is_empty() {
        thoughts.push(prose);
    }
    Ok((&part[start..end], thoughts.join("\n\n")))
}

/// Splits `<think>…</think>` blocks (also `<thinking>`) from the rest.
/// Returns the visible parts with their byte offsets, and the thoughts.
/// A `</think>` with no opening tag closes a reasoning prefix (some
/// servers strip the opening tag); an unclosed `<think>` runs to the end.
fn split_think(text: &str) -> (Vec<(usize, &str)>, Vec<String>) {
    if !has_think_tag(text) {
        return (vec![(0, text)], vec![]);
    }
    let lower = text.to_ascii_lowercase();
    let mut visible = Vec::new();
    let mut thoughts = Vec::new();
    let mut pos = 0;
    loop {
        let open = lower[pos..].find("<think").map(|r| pos + r);
        let close = lower[pos..].find("</think").map(|r| pos + r);
        match (open, close) {
            // A bare closing tag before any opening one: a reasoning prefix.
            (o, Some(c)) if o.is_none_or(|o| c < o) => {
                let thought = text[pos..c].trim();
                if !thought.is_empty() {
                    thoughts.push(thought.to_string());
                }
                pos = tag_end(&lower, c);
            }
            (Some(o), _) => {
                visible.push((pos, &text[pos..o]));
                let inner = tag_end(&lower, o);
                match lower[inner..].find("</think").map(|r| inner + r) {
                    Some(c) => {
                        let thought = text[inner..c].trim();
                        if !thought.is_empty() {
                            thoughts.push(thought.to_string());
                        }
                        pos = tag_end(&lower, c);
                    }
                    None => {
                        let thought = text[inner..].trim();
                        if !thought.is_empty() {
                            thoughts.push(thought.to_string());
                        }
                        pos = text.len();
                    }
                }
            }
            (None, _) => {
                visible.push((pos, &text[pos..]));
                break;
            }
        }
        if pos >= text.len() {
            break;
        }
    }
    (visible, thoughts)
}

/// The byte after the `>` that closes the tag starting at `at` (the end of
/// the text when there is none).
fn tag_end(lower: &str, at: usize) -> usize {
    lower[at..].find('>').map_or(lower.len(), |r| at + r + 1)
}

/// Prose around the object with code-fence lines (```json, ```) removed.
/// Runs of blank lines become one.
fn strip_fence_markers(prose: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    for line in prose.lines().map(str::trim_end) {
        if line.trim_start().starts_with("```") {
            continue;
        }
        if line.is_empty() && lines.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        lines.push(line);
    }
    lines.join("\n").trim().to_string()
}

/// Field readers that report wrong types as `ParseFailure`s, so that each
/// contract parser reads like a table of its fields and their types.
pub(crate) struct Fields<'o, 'a> {
    pub map: &'o Object<'a>,
    pub ctx: &'o str,
}

impl<'o, 'a> Fields<'o, 'a> {
    pub fn new(map: &'o Object<'a>, ctx: &'o str) -> Self {
        Fields { map, ctx }
    }

    fn wrong(&self, key: &str, want: &str, got: &Json<'_>) -> ParseFailure {
        ParseFailure::malformed(format!(
            "{}.{key} must be {want}, got {}",
            self.ctx,
            kind(got)
        ))
    }

    pub fn req_str(&self, key: &str) -> Result<String, ParseFailure> {
        match self.map.get(key) {
            Some(Json::String(s)) => Ok(s.to_string()),
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
            None | Some(Json::Null) => Ok(String::new()),
            Some(Json::String(s)) => Ok(s.to_string()),
            Some(other) => Err(self.wrong(key, "a string", other)),
        }
    }

    pub fn opt_nullable_str(&self, key: &str) -> Result<Option<String>, ParseFailure> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(s)) if s.trim().is_empty() || s.trim() == "null" => Ok(None),
            Some(Json::String(s)) => Ok(Some(s.to_string())),
            Some(other) => Err(self.wrong(key, "a string or null", other)),
        }
    }

    pub fn req_array(&self, key: &str) -> Result<&'o [Json<'a>], ParseFailure> {
        match self.map.get(key) {
            Some(Json::Array(a)) => Ok(a),
            Some(other) => Err(self.wrong(key, "an array", other)),
            None => Err(ParseFailure::malformed(format!(
                "{}.{key} is missing",
                self.ctx
            ))),
        }
    }

    /// Absent or null reads as empty.
    pub fn opt_array(&self, key: &str) -> Result<&'o [Json<'a>], ParseFailure> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(&[]),
            Some(Json::Array(a)) => Ok(a),
            Some(other) => Err(self.wrong(key, "an array", other)),
        }
    }

    pub fn opt_string_list(&self, key: &str) -> Result<Vec<String>, ParseFailure> {
        self.opt_array(key)?
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Json::String(s) => Ok(s.to_string()),
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
            None | Some(Json::Null) => Ok(None),
            Some(Json::Number(n)) => Ok(n.as_f64()),
            Some(other) => Err(self.wrong(key, "a number", other)),
        }
    }

    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>, ParseFailure> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong(key, "a boolean", other)),
        }
    }
}

/// Reads each element of an array as an object.
pub(crate) fn objects<'o, 'a>(
    items: &'o [Json<'a>],
    ctx: &str,
) -> Result<Vec<&'o Object<'a>>, ParseFailure> {
    items
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Json::Object(m) => Ok(m),
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
    fn repeated_keys_read_as_the_last_value_and_escapes_are_decoded() {
        let o = extract_json_object(
            r#"{"a": 1, "b": "x\"y\u00e9", "a": [true, null, -2.5, {"k": "v"}]}"#,
        )
        .unwrap();
        assert!(matches!(o.get("a"), Some(Json::Array(items)) if items.len() == 4));
        assert_eq!(o.get("b"), Some(&Json::String("x\"y\u{e9}".into())));
        assert_eq!(
            o.to_map()["a"],
            serde_json::json!([true, null, -2.5, {"k": "v"}])
        );
        assert!(o.contains_key("b") && !o.contains_key("c"));
    }

    #[test]
    fn empty_is_missing() {
        assert_eq!(
            extract_json_object("  \n").unwrap_err().status,
            ParseStatus::Missing
        );
    }

    #[test]
    fn truncation_two_objects_and_non_objects_are_malformed() {
        for bad in [
            "{\"a\": 1",
            "Here is the plan: {\"a\": 1, \"b\": [",
            "[1, 2]",
            "[{\"a\": 1}]",
            "42",
            "\"text\"",
            "{\"a\":1}{\"b\":2}",
            "{\"a\":1}\nand also {\"b\":2}",
            "```json\n{\"a\":1}\n```\n```json\n{\"b\":1}\n```",
            "```json\n{\"a\":1",
            "no json here {at all}",
            "<think>{\"draft\": 1}</think> {\"a\": 1} {\"b\": 2}",
        ] {
            assert_eq!(
                extract_json_object(bad).unwrap_err().status,
                ParseStatus::Malformed,
                "{bad}"
            );
        }
    }

    #[test]
    fn reasoning_prose_and_fences_around_one_object_are_stripped() {
        for (text, reasoning) in [
            (
                "<think>\nThe user wants {x}.\n</think>\n{\"a\": 1}",
                "The user wants {x}.",
            ),
            (
                "Let me think {about it}.\n</think>\n\n{\"a\": 1}",
                "Let me think {about it}.",
            ),
            (
                "Here is the plan:\n```json\n{\"a\": 1}\n```\nDone.",
                "Here is the plan:\n\nDone.",
            ),
            ("<THINK>a</THINK>```\n{\"a\": 1}\n```", "a"),
            (
                "<thinking>draft {\"a\": 0}</thinking>{\"a\": 1}",
                "draft {\"a\": 0}",
            ),
            ("  {\"a\": 1} ", ""),
        ] {
            let o = extract_json_object(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(o.get("a"), Some(&Json::Number(1.into())), "{text}");
            assert_eq!(reasoning_around_json(text), reasoning, "{text}");
        }
    }

    #[test]
    fn reasoning_only_is_missing() {
        for text in ["<think>I will answer later", "<think>x</think>  ", "  \n"] {
            assert_eq!(
                extract_json_object(text).unwrap_err().status,
                ParseStatus::Missing,
                "{text}"
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
