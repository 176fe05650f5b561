//! Leases of processes that share a database: a server renews its own
//! every third of its length, and at each renewal ends the RUNNING runs of
//! owners whose lease has expired (they died without ending them: killed,
//! or their machine went away), the way a run found dead at connect is
//! ended (`owner::mark_failed`: FAILED, `interrupted`, its events kept).
//!
//! Unlike the check at connect, this needs no /proc: it works across
//! hosts, and while the surviving servers keep running.

use crate::store::connect::query_error;
use crate::store::db::{RowExt, begin_write, now_ms, to_i64, with_pool};
use crate::store::{Store, StoreError};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a server's lease lasts without renewal. Its runs are ended
/// at most this long plus a renewal period after it died.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(15);

/// Expired leases with no run left to end are deleted after this long.
const FORGET_AFTER_MS: i64 = 24 * 3_600_000;

const EXPIRED_RUNS: &str = "SELECT r.id, r.owner_token FROM diagnosis_run r \
     JOIN process_lease l ON l.owner_token = r.owner_token \
     WHERE r.status = 'RUNNING' AND l.expires_at < ? AND r.owner_token <> ? ORDER BY r.id";
const FORGET: &str = "DELETE FROM process_lease WHERE expires_at < ?";
const UPDATE: &str =
    "UPDATE process_lease SET expires_at = ?, updated_at = ? WHERE owner_token = ?";
const INSERT_TAIL: &str = " process_lease (owner_token, expires_at, updated_at) VALUES (?, ?, ?)";

/// Stops renewing this process's lease when dropped.
pub struct LeaseHolder {
    stop: CancellationToken,
}

impl Drop for LeaseHolder {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Store {
    /// Renews this process's lease (`lease` long) until the holder is
    /// dropped, ending the runs of expired owners at each renewal. A
    /// failed renewal or sweep is retried at the next one.
    pub fn hold_lease(&self, lease: Duration) -> LeaseHolder {
        let stop = CancellationToken::new();
        let store = self.clone();
        let token = stop.clone();
        let period = (lease / 3).max(Duration::from_millis(50));
        tokio::spawn(async move {
            loop {
                if let Err(e) = store.renew_lease(lease).await {
                    tracing::warn!(error = %e, "lease not renewed; retrying");
                }
                match store.end_runs_of_expired_owners().await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(runs = n, "ended runs whose process lease expired"),
                    Err(e) => tracing::warn!(error = %e, "runs of expired leases not swept"),
                }
                tokio::select! {
                    () = token.cancelled() => break,
                    () = tokio::time::sleep(period) => {}
                }
            }
        });
        LeaseHolder { stop }
    }

    async fn renew_lease(&self, lease: Duration) -> Result<(), StoreError> {
        let now = now_ms();
        let expires = now.saturating_add(to_i64(lease.as_millis()));
        let token = self.owner.token();
        let insert = format!("{}{INSERT_TAIL}", self.db.insert_ignore());
        with_pool!(&self.db, p => async {
            let mut tx = begin_write(p).await?;
            sqlx::query(sqlx::AssertSqlSafe(insert))
                .bind(&token).bind(expires).bind(now)
                .execute(&mut *tx).await?;
            sqlx::query(UPDATE).bind(expires).bind(now).bind(&token)
                .execute(&mut *tx).await?;
            tx.commit().await
        }.await)
        .map_err(query_error)
    }

    /// Ends the RUNNING runs whose owner's lease has expired. Returns how
    /// many this call ended (another server may end some first).
    pub async fn end_runs_of_expired_owners(&self) -> Result<u64, StoreError> {
        let now = now_ms();
        let rows: Vec<(i64, String)> = with_pool!(&self.db, p => {
            sqlx::query(EXPIRED_RUNS).bind(now).bind(self.owner.token())
                .fetch_all(p).await
                .and_then(|rows| rows.iter()
                    .map(|r| Ok((r.int("id")?, r.text("owner_token")?)))
                    .collect::<Result<Vec<_>, sqlx::Error>>())
                .map_err(query_error)?
        });
        let mut ended = 0;
        for (run_id, owner) in rows {
            let reason = format!(
                "interrupted: the process that ran it ({owner}) stopped renewing its lease before the run finished"
            );
            ended += super::owner::mark_failed(&self.db, run_id, &reason).await?;
        }
        // Leases long expired whose runs are all ended are of no more use.
        with_pool!(&self.db, p => sqlx::query(FORGET)
            .bind(now.saturating_sub(FORGET_AFTER_MS))
            .execute(p).await.map(|_| ()))
        .map_err(query_error)?;
        Ok(ended)
    }
}
