-- diagraph schema v2 (MySQL 8 / MariaDB 10.11). Keep in step with
-- migrations/sqlite/0002_run_sources_failure.sql. One statement, so a
-- crash cannot leave half of it applied.
ALTER TABLE diagnosis_run
    ADD COLUMN sources LONGTEXT NULL,
    ADD COLUMN failure_class VARCHAR(32) NULL;
