//! Simulated time: every delay the simulated cloud takes is multiplied by `--time-scale`.

use std::time::Duration;

/// Scales simulated delays. 1.0 is realistic; 0.01 makes a run a hundred times faster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clock {
    scale: f64,
}

impl Clock {
    pub fn new(scale: f64) -> Self {
        let scale = if scale.is_finite() && scale >= 0.0 {
            scale
        } else {
            1.0
        };
        Self { scale }
    }

    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The wall-clock duration of a simulated delay.
    pub fn scaled(&self, simulated: Duration) -> Duration {
        simulated.mul_f64(self.scale)
    }

    pub fn scaled_secs(&self, simulated_secs: f64) -> Duration {
        Duration::from_secs_f64((simulated_secs * self.scale).max(0.0))
    }

    pub async fn sleep(&self, simulated: Duration) {
        let wall = self.scaled(simulated);
        if !wall.is_zero() {
            tokio::time::sleep(wall).await;
        }
    }

    pub async fn sleep_secs(&self, simulated_secs: f64) {
        self.sleep(Duration::from_secs_f64(simulated_secs.max(0.0)))
            .await;
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new(1.0)
    }
}

/// Now as RFC 3339 with seconds precision, the way Kubernetes serialises `metav1.Time`.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Now as RFC 3339 with nanoseconds, the way the kubelet stamps log lines and GKE stamps times.
pub fn rfc3339_nanos(ts: jiff::Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%S.%9fZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_delays() {
        let clock = Clock::new(0.01);
        assert_eq!(
            clock.scaled(Duration::from_secs(100)),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn rejects_nonsense_scale() {
        assert_eq!(Clock::new(f64::NAN).scale(), 1.0);
        assert_eq!(Clock::new(-2.0).scale(), 1.0);
    }
}
