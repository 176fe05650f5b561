//! `query_logs` over the pack's `logs.jsonl`: the pack's [`LogTable`]
//! answers, with the arguments, figures and refs every backend shares
//! (`tools::logs`). Relative windows end at the pack's reference time.

use crate::tools::logs::{Found, LogQuery, answer, query_logs_spec};
use crate::tools::pack::Pack;
use crate::tools::{Tool, ToolError, ToolOutput};
use crate::vocab::tool::{ToolSpec, UNKNOWN_SERVICE_NOTE};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use std::sync::Arc;

pub use crate::tools::logs::{DEFAULT_LIMIT, MAX_LIMIT, log_ref_text};

/// Tables smaller than this are queried on the calling task.
const INLINE_RECORDS: usize = 20_000;

pub struct QueryLogs {
    pack: Arc<Pack>,
    /// The pack's reference time, found once.
    now: DateTime<Utc>,
}

impl QueryLogs {
    pub fn new(pack: Arc<Pack>) -> QueryLogs {
        let now = pack.now();
        QueryLogs { pack, now }
    }
}

/// The no-evidence message of a query over `table`: nothing matched, and
/// whether the named service has no lines at all.
pub fn nothing_matched(q: &LogQuery, has_service: impl Fn(&str) -> bool) -> String {
    let mut msg = String::from("no log line matched these filters");
    if let Some(s) = &q.service
        && !has_service(s)
    {
        msg.push_str("; the pack has no log lines at all for this service");
    }
    msg
}

#[async_trait]
impl Tool for QueryLogs {
    fn spec(&self) -> ToolSpec {
        query_logs_spec()
    }

    fn backend(&self) -> String {
        self.pack.backend()
    }

    fn pack(&self) -> Option<&Arc<Pack>> {
        Some(&self.pack)
    }

    async fn call(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
        let partial = self.pack.health.logs.check()?.map(str::to_string);
        let q = LogQuery::parse(args, self.now)?;
        // A scan of a large pack is blocking file reads: off the async
        // workers. A small one is quicker done in place.
        let found: Found = if self.pack.logs.len() < INLINE_RECORDS {
            self.pack.logs.query(&q)?
        } else {
            let pack = Arc::clone(&self.pack);
            let query = q.clone();
            tokio::task::spawn_blocking(move || pack.logs.query(&query))
                .await
                .map_err(|e| ToolError::Backend(format!("the log query stopped: {e}")))??
        };
        let nothing = match &q.service {
            Some(s) if !self.pack.knows_service(s) => {
                format!("no log line matched these filters; {UNKNOWN_SERVICE_NOTE}")
            }
            _ => nothing_matched(&q, |s| self.pack.logs.has_service(s)),
        };
        answer(found, args, &nothing, partial)
    }
}
