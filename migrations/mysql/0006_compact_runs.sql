-- diagraph schema v6 (MySQL 8 / MariaDB 10.11). Keep in step with
-- migrations/sqlite/0006_compact_runs.sql.
-- Large texts may now hold a zstd frame instead of plain text, so their
-- columns hold bytes; texts already stored are kept byte for byte (UTF-8).
-- orchestration_trace is no longer written: the run's RunFinished event
-- carries it (older rows keep theirs).
ALTER TABLE run_event MODIFY payload LONGBLOB NOT NULL;
ALTER TABLE agent_step MODIFY model_input LONGBLOB NOT NULL, MODIFY model_output LONGBLOB NOT NULL;
ALTER TABLE tool_invocation MODIFY output_preview LONGBLOB NOT NULL,
    MODIFY retrieval_details LONGBLOB NOT NULL;
ALTER TABLE diagnosis_run MODIFY answer LONGBLOB NOT NULL, MODIFY self_evaluation LONGBLOB NULL,
    MODIFY sources LONGBLOB NULL;
-- Listing runs walks this index newest first; a run's cost is summed from
-- the step index, not from the step rows and their prompts.
CREATE INDEX idx_run_list ON diagnosis_run (agent_flow, id);
CREATE INDEX idx_step_cost ON agent_step (run_id, cost_usd);
