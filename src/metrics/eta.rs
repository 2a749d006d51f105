//! The time a run has left, from how fast its progress went over the last few minutes: recent
//! enough to follow a run that speeds up after its warm-up or slows down when evaluation
//! starts, long enough not to swing with every step. Times come in as seconds from any fixed
//! origin, so it is pure and the tests need no clock.

use std::collections::VecDeque;

/// Progress older than this is left out of the rate.
pub const WINDOW_SECS: f64 = 300.0;
/// A share of the run that progress may go back by without the run having started again.
pub const SETBACK: f64 = 0.01;
/// Observations kept within the window (one every `WINDOW_SECS / KEPT` seconds).
const KEPT: usize = 30;

#[derive(Debug, Clone, Default)]
pub struct Eta {
    /// (time, fraction done), oldest first, spaced out.
    kept: VecDeque<(f64, f64)>,
    latest: Option<(f64, f64)>,
}

impl Eta {
    pub fn new() -> Self {
        Self::default()
    }

    /// Progress `fraction` (`0.0..=1.0`, as [`super::Progress::fraction`] gives it) at time `at`
    /// in seconds. Progress going back by more than [`SETBACK`] means the run started again:
    /// the rate starts over; less is ranks of one run reporting a step apart, and is passed
    /// over.
    pub fn observe(&mut self, at: f64, fraction: f64) {
        if !(at.is_finite() && fraction.is_finite()) {
            return;
        }
        if let Some((t, f)) = self.latest {
            if fraction < f - SETBACK || at < t {
                self.kept.clear();
            } else if fraction < f {
                return;
            }
        }
        self.latest = Some((at, fraction));
        let spaced = self
            .kept
            .back()
            .is_none_or(|(t, _)| at - t >= WINDOW_SECS / KEPT as f64);
        if spaced {
            self.kept.push_back((at, fraction));
        }
        while self.kept.len() > 1
            && self
                .kept
                .front()
                .is_some_and(|(t, _)| *t < at - WINDOW_SECS)
        {
            self.kept.pop_front();
        }
    }

    /// Fraction of the run done per second, over the window.
    pub fn rate(&self) -> Option<f64> {
        let (t0, f0) = *self.kept.front()?;
        let (t1, f1) = self.latest?;
        let rate = (f1 - f0) / (t1 - t0);
        (t1 > t0 && rate > 0.0 && rate.is_finite()).then_some(rate)
    }

    /// Seconds left at the current rate; `0` once done, `None` before there is a rate.
    pub fn remaining(&self) -> Option<f64> {
        let (_, done) = self.latest?;
        if done >= 1.0 {
            return Some(0.0);
        }
        Some((1.0 - done) / self.rate()?)
    }
}

/// `45s`, `3m20s`, `1h02m`, `2d03h`: an ETA as a Job pane shows it.
pub fn format_secs(secs: f64) -> String {
    let s = if secs.is_finite() {
        secs.max(0.0).round() as u64
    } else {
        u64::MAX
    };
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86_400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ if s < 100 * 86_400 => format!("{}d{:02}h", s / 86_400, s % 86_400 / 3600),
        _ => "?".to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_steady_run_has_the_time_left_at_its_rate() {
        let mut eta = Eta::new();
        for i in 0..=60 {
            eta.observe(f64::from(i), f64::from(i) / 600.0);
        }
        assert!((eta.remaining().unwrap() - 540.0).abs() < 1e-6);
    }

    #[test]
    fn the_rate_follows_the_last_minutes_not_the_warm_up() {
        let mut eta = Eta::new();
        eta.observe(0.0, 0.0);
        eta.observe(600.0, 0.01);
        for i in 1..=60 {
            eta.observe(600.0 + f64::from(i) * 10.0, 0.01 + f64::from(i) * 0.001);
        }
        let rate = eta.rate().unwrap();
        assert!((rate - 0.0001).abs() < 1e-9, "{rate}");
    }

    #[test]
    fn progress_going_back_starts_the_rate_over() {
        let mut eta = Eta::new();
        eta.observe(0.0, 0.0);
        eta.observe(100.0, 0.5);
        eta.observe(110.0, 0.0);
        assert_eq!(eta.rate(), None);
        eta.observe(120.0, 0.1);
        assert!((eta.remaining().unwrap() - 90.0).abs() < 1e-9);
    }

    #[test]
    fn no_rate_without_progress_and_none_left_when_done() {
        let mut eta = Eta::new();
        assert_eq!(eta.remaining(), None);
        eta.observe(0.0, 0.2);
        eta.observe(50.0, 0.2);
        assert_eq!(eta.remaining(), None);
        eta.observe(60.0, 1.0);
        assert_eq!(eta.remaining(), Some(0.0));
    }

    #[test]
    fn eta_reads_in_two_units_at_most() {
        assert_eq!(format_secs(45.4), "45s");
        assert_eq!(format_secs(200.0), "3m20s");
        assert_eq!(format_secs(3720.0), "1h02m");
        assert_eq!(format_secs(183_600.0), "2d03h");
        assert_eq!(format_secs(f64::INFINITY), "?");
    }
}
