//! Token usage and cost of model calls: per call (a step), summed per run.

use serde::{Deserialize, Serialize};

/// Token usage of one model call as the server reported it, and its cost
/// from the model's price table; or the sum over a run's calls. Reasoning
/// and cached tokens are parts of completion and prompt tokens, present
/// only when the server reported them; the cost only when the model has a
/// price. Absent figures serialise as null, never as 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
    #[serde(default)]
    pub cached_tokens: Option<u64>,
    /// USD.
    #[serde(default)]
    pub cost_usd: Option<f64>,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// Adds another call's usage: known figures add up, an absent one
    /// stays absent only while every call lacked it.
    pub fn add(&mut self, other: &Usage) {
        fn sum<T: std::ops::Add<Output = T> + Copy>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            }
        }
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.reasoning_tokens = sum(self.reasoning_tokens, other.reasoning_tokens);
        self.cached_tokens = sum(self.cached_tokens, other.cached_tokens);
        self.cost_usd = sum(self.cost_usd, other.cost_usd);
    }

    /// "1.2k tok · $0.0031" for panes and lists; the cost only when known.
    pub fn short(&self) -> String {
        let tokens = match self.total() {
            t if t >= 10_000 => format!("{}k tok", t / 1000),
            t if t >= 1000 => format!("{:.1}k tok", t as f64 / 1000.0),
            t => format!("{t} tok"),
        };
        match self.cost_usd {
            Some(c) => format!("{tokens} · {}", cost_text(c)),
            None => tokens,
        }
    }
}

/// A cost in USD with enough digits to tell small calls apart.
pub fn cost_text(usd: f64) -> String {
    if usd >= 1.0 {
        format!("${usd:.2}")
    } else {
        format!("${usd:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_keep_absent_figures_absent_and_serialise_as_null() {
        let mut run = Usage::default();
        run.add(&Usage {
            prompt_tokens: 100,
            completion_tokens: 20,
            cost_usd: Some(0.001),
            ..Usage::default()
        });
        run.add(&Usage {
            prompt_tokens: 50,
            completion_tokens: 10,
            reasoning_tokens: Some(8),
            cost_usd: Some(0.0005),
            ..Usage::default()
        });
        assert_eq!((run.prompt_tokens, run.completion_tokens), (150, 30));
        assert_eq!(run.reasoning_tokens, Some(8));
        assert_eq!(run.cached_tokens, None);
        assert!((run.cost_usd.unwrap() - 0.0015).abs() < 1e-12);
        let v = serde_json::to_value(run).unwrap();
        assert!(v["cached_tokens"].is_null());
        assert_eq!(run.short(), "180 tok · $0.0015");
        assert_eq!(Usage::default().short(), "0 tok");
    }
}
