//! Ending a run: the orchestration trace, self_evaluation, the run row and
//! RunFinished; and on an unhandled failure, best-effort persistence of the
//! events so far with bounded exponential back-off.

use crate::engine::ctx::{RunCtx, Unhandled};
use crate::engine::unchecked;
use crate::engine::{EngineError, RunOutcome};
use crate::vocab::evaluation::{SelfEvaluation, TRACEABILITY_VERSION, VerifierEvaluation};
use crate::vocab::events::EventKind;
use crate::vocab::graph::ReasonCode;
use crate::vocab::record::{RecordError, RunFinish};
use crate::vocab::run::{FailedSource, Failure, RunEnd, RunStatus};
use crate::vocab::trace::{build_trace, stopped_trace};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

impl RunCtx<'_> {
    pub(super) async fn finish_success(mut self) -> Result<RunOutcome, EngineError> {
        let answer = match self.state.final_answer.clone() {
            Some(a) => a,
            // The loop only reaches END through the Composer or the
            // Fallback, both of which set the answer.
            None => {
                return self
                    .finish_failed(Unhandled::Internal("END reached without an answer".into()))
                    .await;
            }
        };
        // Whatever node wrote the answer, code says what it could not check.
        let answer = unchecked::append_section(
            answer,
            self.state.lang,
            &self.state.failures,
            &self.state.invocations,
        );
        let mut end = self.end(RunStatus::Success, answer, None);
        if end.degraded {
            end.failure = unchecked::root_cause(&self.state.failures);
        }
        let evaluation = Arc::new(self.self_evaluation());
        let finish = self.run_finish(&end, &evaluation);
        if let Err(e) = self.engine.recorder.finish_run(&finish).await {
            // The answer is composed: a store hiccup on the last write must
            // not turn the run's work into a FAILED row. Retry the same
            // final write; if the store stays down, hand the answer back
            // so the caller can still show it.
            if let Err(store) = self.persist_with_backoff(Some(&finish)).await {
                return Err(EngineError::Unpersisted {
                    run_id: self.state.run_id,
                    reason: format!("answer composed but not recorded: {e}"),
                    store,
                    answer: Some(end.answer),
                });
            }
        }
        self.emitter.push(EventKind::RunFinished(end.clone())).await;
        if let Err(e) = self.emitter.persist_pending().await {
            // The run row is final; only the journal tail is missing.
            if let Err(store) = self.persist_with_backoff(None).await {
                return Err(EngineError::Unpersisted {
                    run_id: self.state.run_id,
                    reason: format!("journal tail not recorded: {e}"),
                    store,
                    answer: Some(end.answer),
                });
            }
        }
        Ok(self.outcome(end, evaluation))
    }

    pub(super) async fn finish_failed(
        mut self,
        failure: Unhandled,
    ) -> Result<RunOutcome, EngineError> {
        let status = match failure {
            Unhandled::Cancelled => RunStatus::Cancelled,
            _ => RunStatus::Failed,
        };
        let failure = failure.failure();
        let reason = failure.message.clone();
        let end = self.end(status, String::new(), Some(failure));
        self.emitter.push(EventKind::RunFinished(end.clone())).await;
        let evaluation = Arc::new(self.self_evaluation());
        let finish = self.run_finish(&end, &evaluation);
        if let Err(store) = self.persist_with_backoff(Some(&finish)).await {
            return Err(EngineError::Unpersisted {
                run_id: self.state.run_id,
                reason,
                store,
                answer: None,
            });
        }
        Ok(self.outcome(end, evaluation))
    }

    /// Journals the pending events and then (if given) writes the run row,
    /// retrying with exponential back-off until the recovery timeout.
    async fn persist_with_backoff(
        &mut self,
        finish: Option<&RunFinish>,
    ) -> Result<(), RecordError> {
        let deadline = Instant::now() + self.engine.config.store_recovery_timeout;
        let mut delay = FIRST_BACKOFF;
        loop {
            let attempt = async {
                self.emitter.persist_pending().await?;
                if let Some(f) = finish {
                    self.engine.recorder.finish_run(f).await?;
                }
                Ok::<(), RecordError>(())
            }
            .await;
            match attempt {
                Ok(()) => return Ok(()),
                Err(e) if Instant::now() + delay > deadline => return Err(e),
                Err(_) => {
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    /// How the run ended, with the trace of the node events so far. A run
    /// stopped by a person ends on `cancelled`, whatever node it was in.
    fn end(&self, status: RunStatus, answer: String, failure: Option<Failure>) -> RunEnd {
        let s = &self.state;
        let trace = match status {
            RunStatus::Cancelled => stopped_trace(
                &s.node_events,
                s.in_progress,
                s.evidence_retry_count,
                ReasonCode::Cancelled,
            ),
            _ => build_trace(&s.node_events, s.evidence_retry_count),
        };
        RunEnd {
            status,
            degraded: trace.degraded,
            answer,
            effective_verdict: self.state.effective_verdict,
            trace,
            failure,
        }
    }

    /// The run row; it shares the one `evaluation` the outcome returns.
    fn run_finish(&self, end: &RunEnd, evaluation: &Arc<SelfEvaluation>) -> RunFinish {
        let s = &self.state;
        RunFinish {
            run_id: s.run_id,
            end: end.clone(),
            duration_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            token_count: s.counters.tokens,
            step_count: s.counters.agent_steps,
            tool_call_count: s.counters.tool_calls,
            self_evaluation: Some(Arc::clone(evaluation)),
        }
    }

    /// `self_evaluation.verifier_evaluation`: the verdict saved is the
    /// effective one, next to the model verdict and the ceiling.
    fn self_evaluation(&self) -> SelfEvaluation {
        let s = &self.state;
        let v = s.verifier_output.as_ref();
        SelfEvaluation {
            verifier_evaluation: VerifierEvaluation {
                verdict: s.effective_verdict,
                model_verdict: s.model_verdict,
                verdict_ceiling: s.ceiling,
                groundedness_score: v.map(|v| v.groundedness_score),
                critical_fact_count: v.map(|v| v.critical_fact_count),
                facts_checked: v.map(|v| v.facts_checked.clone()),
                rationale: v.map(|v| v.rationale.clone()),
                round: s.evidence_retry_count + 1,
                traceability_version: TRACEABILITY_VERSION.to_string(),
                executor_output_parse_status: s.executor_parse_status.clone(),
                executor_structured_output: s.executor_output.clone(),
                gatekeeper_result: s.gatekeeper_result.clone(),
                verified_binding_count: s.verified_binding_count,
                composer_output: s.composer_output.clone(),
                prompt_versions: self.engine.prompts.versions(),
                rule_set_version: self.engine.rules.rule_set_version.clone(),
            },
        }
    }

    fn outcome(self, end: RunEnd, self_evaluation: Arc<SelfEvaluation>) -> RunOutcome {
        RunOutcome {
            run_id: self.state.run_id,
            session_id: self.state.session_id.clone(),
            verdicts: self.state.verdict_snapshot(),
            end,
            self_evaluation,
            failed_sources: FailedSource::list(self.state.invocations.iter().map(|i| &**i)),
            sources: self.sources,
            events: self.emitter.into_events(),
        }
    }
}
