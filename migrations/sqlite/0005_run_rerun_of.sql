-- diagraph schema v5 (SQLite). Keep in step with
-- migrations/mysql/0005_run_rerun_of.sql.
-- The stored run this run re-executed (`diagraph rerun RUN_ID`) from its
-- recorded model answers and tool results. NULL: an ordinary run.
ALTER TABLE diagnosis_run ADD COLUMN rerun_of INTEGER;
