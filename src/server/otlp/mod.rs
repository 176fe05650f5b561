//! OpenTelemetry: every run as a tree of spans in the GenAI semantic
//! conventions ([`spans`]), exported live over OTLP/HTTP when an endpoint
//! is configured ([`export`]) or written as OTLP/JSON for a stored run
//! (`diagraph export RUN_ID --format otlp-json`). Both build the spans
//! with [`run_request`] from what the store holds, so they carry the same
//! spans with the same ids.

pub mod export;
pub mod spans;

pub use export::{ExportingRecorder, OtlpExporter};
pub use spans::{run_request, run_spans};

use crate::store::{Store, StoreError};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;

/// The spans of a stored run: what the live export sends and the file
/// export writes.
pub async fn stored_run_spans(store: &Store, run_id: i64) -> Result<Vec<Span>, StoreError> {
    let trace = store.run_trace(run_id).await?;
    // A journal that no longer reads still leaves the rows to export.
    let events = match store.load_events(run_id).await {
        Ok(events) => events,
        Err(e) => {
            tracing::warn!(run_id, error = %e, "exporting run without its journal");
            Vec::new()
        }
    };
    Ok(run_spans(&trace, &events))
}

/// The export request of a stored run.
pub async fn stored_run_request(
    store: &Store,
    run_id: i64,
) -> Result<ExportTraceServiceRequest, StoreError> {
    Ok(spans::export_request(
        stored_run_spans(store, run_id).await?,
    ))
}

/// OTLP/JSON of an export request on one line (the format of the
/// Collector's file exporter, one request per line).
pub fn to_json_line(request: &ExportTraceServiceRequest) -> String {
    // The generated types serialise without maps keyed by non-strings or
    // non-finite floats, so this cannot fail.
    let mut line = serde_json::to_string(request).unwrap_or_default();
    line.push('\n');
    line
}
