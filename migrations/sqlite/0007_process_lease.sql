-- diagraph schema v7 (SQLite). Keep in step with
-- migrations/mysql/0007_process_lease.sql.
-- A server process sharing the database renews its lease here while it
-- lives (owner_token as in diagnosis_run.owner_token). A RUNNING run whose
-- owner's lease has expired is ended FAILED (interrupted) by any live
-- server: its owner died without ending it.
CREATE TABLE process_lease (
    owner_token TEXT NOT NULL PRIMARY KEY,
    expires_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
