-- diagraph schema v2 (SQLite). Keep in step with
-- migrations/mysql/0002_run_sources_failure.sql.
-- sources: JSON {tools: {tool: backend}, pack: {path, content_hash},
--   pack_warnings: [...], models: {role: model}}: what served the run.
-- failure_class: the class of failure_reason (connection, timeout,
--   unauthorized, ..., cancelled, interrupted, store), so a script can
--   branch on it without parsing the message.
ALTER TABLE diagnosis_run ADD COLUMN sources TEXT;
ALTER TABLE diagnosis_run ADD COLUMN failure_class TEXT;
