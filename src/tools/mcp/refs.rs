//! An MCP tool result as evidence: the items a binding may cite as
//! `$.items[i]`, each with a text made by code from the item.
//!
//! Which items: the elements of the first top-level
//! array of `structuredContent`, or of the JSON in the text content when
//! there is no structured content; else that JSON object itself as
//! `$.items[0]`; else one item per non-empty line of text. The body the
//! model reads holds the same items under `items`, so a ref's path points
//! at what the model saw. A server that marks its result `isError` gave no
//! evidence: that is a failed invocation with the server's message.

use crate::text::{clean, one_line};
use crate::tools::{ToolError, ToolOutput};
use crate::vocab::tool::{EvidenceRef, EvidenceStatus};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

/// Items read from one result; the rest are counted and reported as a
/// partial read, never dropped silently.
pub const MAX_ITEMS: usize = 200;
/// Characters of one ref's text.
pub const MAX_REF_CHARS: usize = 1000;
/// Characters of the server's message on a failed call.
const MAX_ERROR_CHARS: usize = 300;
/// Depth of nested objects flattened into a ref's text.
const MAX_DEPTH: usize = 4;

/// `result` of calling `tool` (the name the Executor used) with `query`
/// (a summary of its arguments) as the output the model and the
/// Gatekeeper see.
pub fn to_output(tool: &str, query: &str, result: CallToolResult) -> Result<ToolOutput, ToolError> {
    if result.is_error == Some(true) {
        let message = text_blocks(&result.content).join(" ");
        let message = clean(&message, MAX_ERROR_CHARS);
        return Err(ToolError::Backend(if message.is_empty() {
            "the MCP server reported an error without a message".into()
        } else {
            format!("the MCP server reported an error: {message}")
        }));
    }
    let items = items(&result);
    if items.is_empty() {
        return Ok(ToolOutput::no_evidence(
            tool,
            query,
            "the MCP tool returned no content",
        ));
    }
    let total = items.len();
    let kept: Vec<Value> = items.into_iter().take(MAX_ITEMS).collect();
    let evidence_refs = kept
        .iter()
        .enumerate()
        .map(|(i, item)| EvidenceRef {
            raw_path: format!("$.items[{i}]"),
            text: item_text(item),
        })
        .collect();
    let partial = (total > kept.len())
        .then(|| format!("only the first {} of {total} items were read", kept.len()));
    Ok(ToolOutput {
        body: json!({ "items": kept, "total": total }),
        evidence_status: EvidenceStatus::Supported,
        evidence_refs,
        retrieved_domains: vec![],
        partial,
        buckets: None,
    })
}

/// The citable items of a result, in order.
fn items(result: &CallToolResult) -> Vec<Value> {
    if let Some(structured) = &result.structured_content {
        return json_items(structured);
    }
    let texts = text_blocks(&result.content);
    // JSON text content: one block that is a JSON object or array.
    if let [only] = texts.as_slice()
        && let Ok(value @ (Value::Object(_) | Value::Array(_))) =
            serde_json::from_str::<Value>(only.trim())
    {
        return json_items(&value);
    }
    texts
        .iter()
        .flat_map(|t| t.lines())
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| Value::String(line.to_string()))
        .collect()
}

/// The first top-level array's elements, else the value itself.
fn json_items(value: &Value) -> Vec<Value> {
    match value {
        Value::Null => Vec::new(),
        Value::Array(items) => items.clone(),
        Value::Object(map) => match map.values().find_map(Value::as_array) {
            Some(items) => items.clone(),
            None if map.is_empty() => Vec::new(),
            None => vec![value.clone()],
        },
        scalar => vec![scalar.clone()],
    }
}

/// The text of every text block and embedded text resource.
fn text_blocks(content: &[ContentBlock]) -> Vec<&str> {
    content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            ContentBlock::Resource(r) => match &r.resource {
                rmcp::model::ResourceContents::TextResourceContents { text, .. } => {
                    Some(text.as_str())
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The evidence text of one item, made by code: a string as itself, a
/// scalar as its JSON, an object as `key=value` pairs in its own order
/// (nested keys joined with `.`, arrays of scalars joined with `,`), on
/// one line, without control or escape characters, bounded.
pub fn item_text(item: &Value) -> String {
    let mut pairs = Vec::new();
    match item {
        Value::Object(map) => flatten(map, "", 0, &mut pairs),
        other => pairs.push(scalar(other)),
    }
    clean(&pairs.join(" "), MAX_REF_CHARS)
}

fn flatten(map: &Map<String, Value>, prefix: &str, depth: usize, out: &mut Vec<String>) {
    for (key, value) in map {
        let key = format!("{prefix}{}", one_line(key));
        match value {
            Value::Object(inner) if depth < MAX_DEPTH => {
                flatten(inner, &format!("{key}."), depth + 1, out)
            }
            Value::Null => {}
            other => out.push(format!("{key}={}", scalar(other))),
        }
    }
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            items.iter().map(scalar).collect::<Vec<_>>().join(",")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(content: Vec<ContentBlock>, structured: Option<Value>) -> CallToolResult {
        let mut r = CallToolResult::success(content);
        r.structured_content = structured;
        r
    }

    fn refs(out: &ToolOutput) -> Vec<(&str, &str)> {
        out.evidence_refs
            .iter()
            .map(|r| (r.raw_path.as_str(), r.text.as_str()))
            .collect()
    }

    #[test]
    fn the_first_array_of_structured_content_gives_the_items() {
        let structured = json!({"count": 2, "pods": [
            {"name": "payment-7f", "status": {"phase": "CrashLoopBackOff"}, "restarts": 14},
            {"name": "payment-8a", "status": {"phase": "Running"}, "labels": ["a", "b"]}
        ], "other": [1]});
        let out = to_output("k8s__pods", "ns=shop", result(vec![], Some(structured))).unwrap();
        assert_eq!(
            refs(&out),
            [
                (
                    "$.items[0]",
                    "name=payment-7f status.phase=CrashLoopBackOff restarts=14"
                ),
                (
                    "$.items[1]",
                    "name=payment-8a status.phase=Running labels=a,b"
                ),
            ]
        );
        assert_eq!(out.body["items"][1]["name"], "payment-8a");
        assert_eq!(out.evidence_status, EvidenceStatus::Supported);
    }

    #[test]
    fn an_object_without_an_array_is_one_item_and_json_text_counts_as_structured() {
        let weather = r#"{"temperature":36,"conditions":"Light rain","humidity":82}"#;
        let out = to_output(
            "w__get",
            "",
            result(vec![ContentBlock::text(weather)], None),
        )
        .unwrap();
        assert_eq!(
            refs(&out),
            [(
                "$.items[0]",
                "temperature=36 conditions=Light rain humidity=82"
            )]
        );
        let list = r#"[{"a": 1}, "two", 3]"#;
        let out = to_output("x__y", "", result(vec![ContentBlock::text(list)], None)).unwrap();
        assert_eq!(
            refs(&out),
            [
                ("$.items[0]", "a=1"),
                ("$.items[1]", "two"),
                ("$.items[2]", "3")
            ]
        );
    }

    #[test]
    fn text_gives_one_item_per_non_empty_line_without_escapes() {
        let text = "Echo: payment-service timeout\n\n  second\x1b[31m line \r\n";
        let out = to_output(
            "e__echo",
            "",
            result(
                vec![ContentBlock::text(text), ContentBlock::text("third")],
                None,
            ),
        )
        .unwrap();
        assert_eq!(
            refs(&out),
            [
                ("$.items[0]", "Echo: payment-service timeout"),
                ("$.items[1]", "second line"),
                ("$.items[2]", "third"),
            ]
        );
        // Text that only looks like JSON in part stays text.
        let out = to_output(
            "e__echo",
            "",
            result(vec![ContentBlock::text("{not json")], None),
        )
        .unwrap();
        assert_eq!(refs(&out), [("$.items[0]", "{not json")]);
    }

    #[test]
    fn nothing_is_no_evidence_and_an_error_result_is_a_failure() {
        for empty in [
            result(vec![], None),
            result(vec![ContentBlock::text(" \n ")], None),
            result(vec![], Some(json!({}))),
            result(vec![], Some(json!({"items": []}))),
            result(vec![ContentBlock::text("ignored")], Some(Value::Null)),
        ] {
            let out = to_output("e__echo", "q=1", empty).unwrap();
            assert_eq!(out.evidence_status, EvidenceStatus::NoEvidence);
            assert_eq!(refs(&out)[0].0, "$.no_evidence");
        }
        let mut failed = result(vec![ContentBlock::text("no such\nnamespace")], None);
        failed.is_error = Some(true);
        let e = to_output("k__x", "", failed).unwrap_err();
        assert_eq!(
            e.to_string(),
            "backend error: the MCP server reported an error: no such namespace"
        );
    }

    #[test]
    fn many_items_are_a_partial_read_and_long_texts_are_cut() {
        let many: Vec<Value> = (0..(MAX_ITEMS + 5)).map(|i| json!(i)).collect();
        let out = to_output("x__y", "", result(vec![], Some(json!({ "rows": many })))).unwrap();
        assert_eq!(out.evidence_refs.len(), MAX_ITEMS);
        assert_eq!(out.body["total"], MAX_ITEMS + 5);
        assert!(out.partial.unwrap().contains("first 200 of 205"));
        let long = "x".repeat(MAX_REF_CHARS * 2);
        let cut = item_text(&json!(long));
        assert_eq!(cut.chars().count(), MAX_REF_CHARS + 1);
        assert!(cut.ends_with('…'));
        // Deep nesting stops flattening instead of recursing without end.
        let mut deep = json!(1);
        for _ in 0..50 {
            deep = json!({ "k": deep });
        }
        assert!(item_text(&deep).starts_with("k.k.k.k.k="));
    }
}
