//! Reconnection back-off for watches and log streams: doubling with jitter, capped, reset after
//! a success. Short at first, because the common failure is a dropped connection, not an outage.

use std::time::Duration;

use rand::Rng;

#[derive(Debug, Clone)]
pub struct Backoff {
    min: Duration,
    max: Duration,
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new(Duration::from_millis(100), Duration::from_secs(10))
    }
}

impl Backoff {
    pub fn new(min: Duration, max: Duration) -> Self {
        Self {
            min,
            max: max.max(min),
            next: min,
        }
    }

    /// The next wait: the current step with up to 50% jitter; the step doubles up to the cap.
    pub fn next_delay(&mut self) -> Duration {
        let base = self.next;
        self.next = (self.next * 2).min(self.max);
        let jitter = rand::rng().random_range(0.0..0.5);
        base.mul_f64(1.0 + jitter).min(self.max)
    }

    pub fn reset(&mut self) {
        self.next = self.min;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_to_the_cap_and_resets() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_millis(1000));
        let waits: Vec<Duration> = (0..8).map(|_| b.next_delay()).collect();
        assert!(waits[0] >= Duration::from_millis(100) && waits[0] <= Duration::from_millis(150));
        assert!(waits.iter().all(|w| *w <= Duration::from_millis(1000)));
        assert!(waits[7] >= Duration::from_millis(1000));
        b.reset();
        assert!(b.next_delay() <= Duration::from_millis(150));
    }
}
