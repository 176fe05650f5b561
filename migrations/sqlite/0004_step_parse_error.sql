-- diagraph schema v4 (SQLite). Keep in step with
-- migrations/mysql/0004_step_parse_error.sql.
-- Why a model answer was rejected as its role's contract (the parse
-- error), beside the raw answer in model_output. NULL: the answer was
-- used, or there was no answer to parse.
ALTER TABLE agent_step ADD COLUMN parse_error TEXT;
