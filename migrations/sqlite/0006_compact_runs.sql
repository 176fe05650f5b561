-- diagraph schema v6 (SQLite). Keep in step with
-- migrations/mysql/0006_compact_runs.sql.
-- Large texts (run_event.payload, agent_step.model_input/model_output,
-- tool_invocation.output_preview/retrieval_details,
-- diagnosis_run.answer/self_evaluation/sources) may now hold a zstd frame instead of
-- plain text; SQLite keeps such values as BLOBs in the same columns.
-- orchestration_trace is no longer written: the run's RunFinished event
-- carries it (older rows keep theirs).
--
-- Listing runs reads only this index: a row of diagnosis_run keeps the
-- list's columns behind its large texts, so reading them from the table
-- would read every listed run's overflow pages.
CREATE INDEX idx_run_list ON diagnosis_run (agent_flow, id, status, session_id,
    effective_verdict, degraded, total_duration_ms, total_token_count, created_at,
    rerun_of, feedback, query);
-- A run's cost is summed from this index, not from the step rows and
-- their prompts.
CREATE INDEX idx_step_cost ON agent_step (run_id, cost_usd);
