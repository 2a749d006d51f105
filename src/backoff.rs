//! The one back-off: how long to wait before trying again, for every retry in Gantry (a GKE
//! request refused with 429 or 5xx, a watch or a log stream that dropped). The step doubles from
//! `initial` up to `max` and resets after a success; each wait is a random point in the upper
//! half of its step, so clients refused together spread out instead of coming back together.
//! Short at first, because the common failure is a dropped connection, not an outage.

use std::time::Duration;

use rand::Rng;

#[derive(Debug, Clone, PartialEq)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    step: Duration,
}

impl Default for Backoff {
    /// For reconnecting a watch or a log stream: 0.1 s, doubling to 10 s.
    fn default() -> Self {
        Self::new(Duration::from_millis(100), Duration::from_secs(10))
    }
}

impl Backoff {
    pub fn new(initial: Duration, max: Duration) -> Self {
        Self {
            initial,
            max: max.max(initial),
            step: initial,
        }
    }

    /// The next wait: the current step with jitter; the step then doubles, up to the cap.
    pub fn next_delay(&mut self) -> Duration {
        let step = self.step;
        self.step = self.step.saturating_mul(2).min(self.max);
        step.mul_f64(rand::rng().random_range(0.5..=1.0))
    }

    /// After a success: the next wait is short again.
    pub fn reset(&mut self) {
        self.step = self.initial;
    }
}

impl Iterator for Backoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        Some(self.next_delay())
    }
}

impl kube::runtime::utils::Backoff for Backoff {
    fn reset(&mut self) {
        Backoff::reset(self);
    }
}

/// `d` scaled by `factor` (0.001 turns seconds into milliseconds), for a simulator running faster
/// than the real thing; `d` itself for a factor that is not a finite number of 0 or more.
pub fn scale(d: Duration, factor: f64) -> Duration {
    if factor.is_finite() && factor >= 0.0 {
        d.mul_f64(factor)
    } else {
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_to_the_cap_with_jitter_and_reset() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_millis(1000));
        let waits: Vec<Duration> = (0..8).map(|_| b.next_delay()).collect();
        assert!(waits[0] >= Duration::from_millis(50) && waits[0] <= Duration::from_millis(100));
        assert!(waits[1] >= Duration::from_millis(100) && waits[1] <= Duration::from_millis(200));
        assert!(waits.iter().all(|w| *w <= Duration::from_millis(1000)));
        assert!(waits[7] >= Duration::from_millis(500));
        b.reset();
        assert!(b.next_delay() <= Duration::from_millis(100));
    }

    #[test]
    fn scaling_shrinks_and_refuses_nonsense() {
        assert_eq!(
            scale(Duration::from_millis(500), 0.001),
            Duration::from_micros(500)
        );
        assert_eq!(
            scale(Duration::from_secs(1), f64::NAN),
            Duration::from_secs(1)
        );
        assert_eq!(scale(Duration::from_secs(1), -1.0), Duration::from_secs(1));
    }
}
