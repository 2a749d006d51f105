//! How often GKE is asked again: a refused request (429 and 5xx) is retried with the crate's
//! back-off ([`crate::backoff`]), a running operation is polled from 1 s growing to 5 s. Both are
//! values so tests and the simulator can shrink them.

use std::time::Duration;

use crate::backoff::{Backoff, scale};

/// How a request refused with 429 or 5xx (or not answered at all) is retried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestRetry {
    /// Wait before the first retry (before jitter).
    pub initial: Duration,
    /// The longest wait between two attempts.
    pub max: Duration,
    /// Attempts in all, the first included; the last error is returned after them.
    pub attempts: u32,
}

impl Default for RequestRetry {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(500),
            max: Duration::from_secs(16),
            attempts: 8,
        }
    }
}

impl RequestRetry {
    /// Waits scaled by `factor` (0.001 turns the default's seconds into milliseconds).
    pub fn scaled(factor: f64) -> Self {
        let d = Self::default();
        Self {
            initial: scale(d.initial, factor),
            max: scale(d.max, factor),
            attempts: d.attempts,
        }
    }

    /// The waits between attempts, starting afresh.
    pub fn backoff(&self) -> Backoff {
        Backoff::new(self.initial, self.max)
    }
}

/// How often a running operation is polled: from `initial`, growing by half each poll, to `max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PollPolicy {
    pub initial: Duration,
    pub max: Duration,
}

impl Default for PollPolicy {
    fn default() -> Self {
        Self {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(5),
        }
    }
}

impl PollPolicy {
    /// Intervals scaled by `factor`, for a simulator running faster than GKE.
    pub fn scaled(factor: f64) -> Self {
        let d = Self::default();
        Self {
            initial: scale(d.initial, factor),
            max: scale(d.max, factor),
        }
    }

    /// The interval after `current`.
    pub fn next(&self, current: Duration) -> Duration {
        current.mul_f64(1.5).clamp(self.initial, self.max)
    }
}

/// Whether an HTTP status is worth another attempt.
pub fn retryable_status(code: u16) -> bool {
    matches!(code, 408 | 429 | 500 | 502 | 503 | 504)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_grows_from_one_to_five_seconds() {
        let p = PollPolicy::default();
        let mut d = p.initial;
        let mut seen = vec![d];
        for _ in 0..6 {
            d = p.next(d);
            seen.push(d);
        }
        assert_eq!(seen[0], Duration::from_secs(1));
        assert!(seen.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(seen.last(), Some(&Duration::from_secs(5)));
    }

    #[test]
    fn retry_waits_are_jittered_and_capped() {
        let r = RequestRetry::default();
        let mut backoff = r.backoff();
        for _ in 1..20 {
            let w = backoff.next_delay();
            assert!(w <= r.max, "{w:?}");
            assert!(w >= (r.initial / 2).min(r.max / 2), "{w:?}");
        }
        assert!(retryable_status(429) && retryable_status(503) && !retryable_status(404));
        assert_eq!(
            RequestRetry::scaled(0.001).initial,
            Duration::from_micros(500)
        );
    }
}
