//! Session and retry budgets (rule T9): an outage must not multiply what a session spends.

/// Retry throttling across turns, after gRPC's retry throttling: a token bucket that every
/// retryable failure drains by one and every accepted answer refills by `token_ratio`.
/// Fallbacks are allowed only while the bucket holds more than half of `max_tokens`, so a
/// sustained outage stops costing two LLM calls per turn after a few turns.
#[derive(Clone, Debug)]
pub struct RetryBudget {
    tokens: f64,
    max_tokens: f64,
    token_ratio: f64,
}

impl RetryBudget {
    /// Default bucket size, as in gRPC's examples.
    pub const DEFAULT_MAX_TOKENS: f64 = 10.0;
    /// Default refill per accepted answer. gRPC uses 0.1 for one backend; here a fallback that
    /// answers while the primary is down refills what the primary's failure drained, so a healthy
    /// fallback stays available, while an outage of both routes (two failures per turn) still
    /// throttles fallbacks after three turns.
    pub const DEFAULT_TOKEN_RATIO: f64 = 1.0;

    /// A full bucket. Non-finite or negative arguments are the caller's to reject.
    pub fn new(max_tokens: f64, token_ratio: f64) -> Self {
        RetryBudget {
            tokens: max_tokens,
            max_tokens,
            token_ratio,
        }
    }

    /// Whether a fallback may start now.
    pub fn allows_retry(&self) -> bool {
        self.tokens > self.max_tokens / 2.0
    }

    /// A retryable failure drains one token.
    pub fn on_failure(&mut self) {
        self.tokens = (self.tokens - 1.0).max(0.0);
    }

    /// An accepted answer refills a fraction of a token.
    pub fn on_success(&mut self) {
        self.tokens = (self.tokens + self.token_ratio).min(self.max_tokens);
    }

    /// Tokens left, for stats and tests.
    pub fn tokens(&self) -> f64 {
        self.tokens
    }
}

impl Default for RetryBudget {
    fn default() -> Self {
        RetryBudget::new(Self::DEFAULT_MAX_TOKENS, Self::DEFAULT_TOKEN_RATIO)
    }
}

/// A hard cap on LLM calls in one session: once spent, turns go straight to recovery.
#[derive(Clone, Debug, Default)]
pub struct SessionBudget {
    max_attempts: Option<u32>,
    used: u32,
}

impl SessionBudget {
    /// `None` means no cap.
    pub fn new(max_attempts: Option<u32>) -> Self {
        SessionBudget {
            max_attempts,
            used: 0,
        }
    }

    /// Takes one attempt from the budget; false when it is spent.
    pub fn try_take(&mut self) -> bool {
        match self.max_attempts {
            Some(max) if self.used >= max => false,
            _ => {
                self.used = self.used.saturating_add(1);
                true
            }
        }
    }

    /// Whether one more attempt may start.
    pub fn has_room(&self) -> bool {
        self.max_attempts.map_or(true, |max| self.used < max)
    }

    /// Attempts started so far.
    pub fn used(&self) -> u32 {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_budget_throttles_below_half_and_refills_on_success() {
        let mut budget = RetryBudget::new(4.0, 0.5);
        assert!(budget.allows_retry());
        budget.on_failure();
        assert!(budget.allows_retry(), "3 > 2");
        budget.on_failure();
        assert!(!budget.allows_retry(), "2 is not above half of 4");
        budget.on_success();
        assert!(budget.allows_retry(), "2.5 > 2");
        for _ in 0..10 {
            budget.on_success();
        }
        assert_eq!(budget.tokens(), 4.0, "never above the maximum");
        for _ in 0..10 {
            budget.on_failure();
        }
        assert_eq!(budget.tokens(), 0.0, "never below zero");
    }

    #[test]
    fn session_budget_counts_and_stops() {
        let mut budget = SessionBudget::new(Some(2));
        assert!(budget.try_take());
        assert!(budget.try_take());
        assert!(!budget.try_take());
        assert_eq!(budget.used(), 2);
        let mut unlimited = SessionBudget::new(None);
        for _ in 0..100 {
            assert!(unlimited.try_take());
        }
    }
}
