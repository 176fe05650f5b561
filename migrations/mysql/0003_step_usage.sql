-- diagraph schema v3 (MySQL 8 / MariaDB 10.11). Keep in step with
-- migrations/sqlite/0003_step_usage.sql. One statement, so a crash cannot
-- leave half of it applied.
ALTER TABLE agent_step
    ADD COLUMN prompt_tokens BIGINT NULL,
    ADD COLUMN completion_tokens BIGINT NULL,
    ADD COLUMN reasoning_tokens BIGINT NULL,
    ADD COLUMN cached_tokens BIGINT NULL,
    ADD COLUMN cost_usd DOUBLE NULL;
