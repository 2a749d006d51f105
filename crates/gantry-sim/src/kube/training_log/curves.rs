//! The numbers of a plausible run: a loss decaying exponentially with noise, an accuracy rising
//! to a plateau, a learning rate warming up then decaying, a gradient norm with the odd spike.
//! The attempt (the pod's ordinal in its Job) sets the run's shape, the rank only its noise, so
//! attempts differ visibly and ranks a little; each step's noise comes from its own seeded
//! generator, so the same step always gives the same numbers.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// How the learning rate falls after its warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decay {
    /// Hugging Face's default scheduler.
    Linear,
    Cosine,
}

/// One training step's numbers. `loss` and `grad_norm` are NaN once the run has diverged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub loss: f64,
    pub accuracy: f64,
    pub lr: f64,
    pub grad_norm: f64,
}

#[derive(Debug, Clone)]
pub struct Curves {
    total_steps: u64,
    warmup: u64,
    peak_lr: f64,
    decay: Decay,
    start_loss: f64,
    floor: f64,
    rate: f64,
    top_accuracy: f64,
    noise_seed: u64,
    diverge_at: Option<u64>,
}

/// splitmix64: spreads nearby seeds (ordinal 0, 1, 2) far apart.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Curves {
    pub fn new(
        total_steps: u64,
        peak_lr: f64,
        decay: Decay,
        ordinal: u64,
        rank: u64,
        diverge_at: Option<u64>,
    ) -> Self {
        let attempt = mix(ordinal);
        let mut shape = SmallRng::seed_from_u64(attempt);
        let total_steps = total_steps.max(1);
        Self {
            total_steps,
            warmup: (total_steps / 20).max(1),
            peak_lr,
            decay,
            start_loss: 2.30 + shape.random_range(-0.05..0.05),
            floor: 0.22 + shape.random_range(0.0..0.12),
            rate: 4.0 * shape.random_range(0.85..1.15),
            top_accuracy: 0.90 + shape.random_range(0.0..0.07),
            noise_seed: mix(attempt ^ mix(rank.wrapping_add(1))),
            diverge_at,
        }
    }

    pub fn diverged(&self, step: u64) -> bool {
        self.diverge_at.is_some_and(|at| step >= at)
    }

    /// The numbers logged at `step` (1-based).
    pub fn at(&self, step: u64) -> Point {
        let mut noise = self.noise(step, 0);
        let mut n = || noise.random_range(-1.0..1.0) + noise.random_range(-1.0..1.0);
        let loss = self.clean_loss(step) * (1.0 + 0.04 * n()) + 0.015 * n();
        let accuracy = self.clean_accuracy(step) + 0.01 * n();
        let spike = if noise_u(&mut self.noise(step, 1)) > 0.97 {
            3.0
        } else {
            1.0
        };
        let grad_norm =
            (0.35 + 1.8 * (-3.0 * self.progress(step)).exp()) * (1.0 + 0.1 * n()) * spike;
        if self.diverged(step) {
            return Point {
                loss: f64::NAN,
                accuracy: 0.1 + 0.01 * n().abs(),
                lr: self.lr(step),
                grad_norm: f64::NAN,
            };
        }
        Point {
            loss: loss.max(0.01),
            accuracy: accuracy.clamp(0.0, 0.999),
            lr: self.lr(step),
            grad_norm: grad_norm.max(0.01),
        }
    }

    /// The evaluation after `step`: a loss a little above training's, an accuracy a little
    /// below, with less noise (a whole validation set is averaged).
    pub fn eval(&self, step: u64) -> (f64, f64) {
        if self.diverged(step) {
            return (f64::NAN, 0.1);
        }
        let mut noise = self.noise(step, 2);
        let mut n = || noise.random_range(-1.0..1.0);
        let loss = self.clean_loss(step) * 1.05 + 0.005 * n();
        let accuracy = (self.clean_accuracy(step) * 0.98 + 0.004 * n()).clamp(0.0, 0.999);
        (loss, accuracy)
    }

    /// The learning rate after `step` steps: linear warm-up over the first 5%, then decay.
    pub fn lr(&self, step: u64) -> f64 {
        if step <= self.warmup {
            return self.peak_lr * step as f64 / self.warmup as f64;
        }
        let span = self.total_steps.saturating_sub(self.warmup).max(1);
        let q = ((step - self.warmup) as f64 / span as f64).min(1.0);
        match self.decay {
            Decay::Linear => self.peak_lr * (1.0 - q),
            Decay::Cosine => self.peak_lr * 0.5 * (1.0 + (std::f64::consts::PI * q).cos()),
        }
    }

    fn progress(&self, step: u64) -> f64 {
        step as f64 / self.total_steps as f64
    }

    fn clean_loss(&self, step: u64) -> f64 {
        self.floor + (self.start_loss - self.floor) * (-self.rate * self.progress(step)).exp()
    }

    fn clean_accuracy(&self, step: u64) -> f64 {
        0.1 + (self.top_accuracy - 0.1) * (1.0 - (-1.3 * self.rate * self.progress(step)).exp())
    }

    fn noise(&self, step: u64, stream: u64) -> SmallRng {
        SmallRng::seed_from_u64(mix(self.noise_seed ^ mix(step) ^ stream))
    }
}

fn noise_u(rng: &mut SmallRng) -> f64 {
    rng.random_range(0.0..1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curves(rank: u64, ordinal: u64) -> Curves {
        Curves::new(1000, 5e-5, Decay::Cosine, ordinal, rank, None)
    }

    #[test]
    fn the_loss_falls_and_the_accuracy_rises() {
        let c = curves(0, 0);
        let mean = |from: u64, f: &dyn Fn(Point) -> f64| {
            (from..from + 50).map(|s| f(c.at(s))).sum::<f64>() / 50.0
        };
        assert!(mean(1, &|p| p.loss) > 2.0 * mean(900, &|p| p.loss));
        assert!(mean(900, &|p| p.accuracy) > 0.8);
        assert!(mean(1, &|p| p.accuracy) < 0.3);
    }

    #[test]
    fn the_learning_rate_warms_up_then_decays_to_nothing() {
        let c = curves(0, 0);
        assert!(c.lr(1) < c.lr(50));
        assert_eq!(c.lr(50), 5e-5);
        assert!(c.lr(500) < c.lr(100));
        assert!(c.lr(1000) < 1e-12);
        let linear = Curves::new(1000, 5e-5, Decay::Linear, 0, 0, None);
        assert!((linear.lr(525) - 2.5e-5).abs() < 1e-12);
    }

    #[test]
    fn the_same_rank_and_attempt_give_the_same_numbers_and_others_differ() {
        assert_eq!(curves(0, 0).at(10), curves(0, 0).at(10));
        assert_ne!(curves(1, 0).at(10), curves(0, 0).at(10));
        assert_ne!(curves(0, 1).at(10), curves(0, 0).at(10));
        let (a, b) = (curves(0, 0).at(500).loss, curves(1, 0).at(500).loss);
        assert!((a - b).abs() < 0.2 * a, "{a} {b}");
    }

    #[test]
    fn from_the_divergence_step_on_the_loss_is_nan() {
        let c = Curves::new(100, 1e-3, Decay::Cosine, 0, 0, Some(40));
        assert!(c.at(39).loss.is_finite());
        assert!(c.at(40).loss.is_nan());
        assert!(c.at(99).grad_norm.is_nan());
        assert!(c.eval(50).0.is_nan());
    }
}
