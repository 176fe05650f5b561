-- diagraph schema v5 (MySQL 8 / MariaDB 10.11). Keep in step with
-- migrations/sqlite/0005_run_rerun_of.sql.
-- The stored run this run re-executed (`diagraph rerun RUN_ID`) from its
-- recorded model answers and tool results. NULL: an ordinary run.
ALTER TABLE diagnosis_run ADD COLUMN rerun_of BIGINT NULL;
