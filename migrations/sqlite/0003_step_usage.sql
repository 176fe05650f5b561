-- diagraph schema v3 (SQLite). Keep in step with
-- migrations/mysql/0003_step_usage.sql.
-- The usage of each model call: prompt and completion tokens, reasoning
-- and cached tokens when the server reported them, and the cost in USD
-- from the model's price table (NULL: unknown). A run's usage is the sum
-- of its steps'.
ALTER TABLE agent_step ADD COLUMN prompt_tokens INTEGER;
ALTER TABLE agent_step ADD COLUMN completion_tokens INTEGER;
ALTER TABLE agent_step ADD COLUMN reasoning_tokens INTEGER;
ALTER TABLE agent_step ADD COLUMN cached_tokens INTEGER;
ALTER TABLE agent_step ADD COLUMN cost_usd REAL;
