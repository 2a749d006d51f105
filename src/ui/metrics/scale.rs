//! Numbers for a chart a person reads: axis ticks at round values (1, 2 or 5 times a power of
//! ten), values printed short, and the smoothing a training curve needs to show its trend
//! through the noise of each batch.

/// Bounds and ticks covering `lo..=hi` with at most `most` ticks, at multiples of a round step;
/// the bounds are the first and last tick. With room for fewer than four, round ticks would
/// squash the curve into a corner of a short chart: the two ends of the range then, barely
/// padded. Padding never takes a range of values that are all zero or more below zero (a
/// learning rate, an accuracy, a loss are never negative).
pub fn ticks(lo: f64, hi: f64, most: usize) -> Vec<f64> {
    let below = |pad: f64| {
        if lo >= 0.0 {
            (lo - pad).max(0.0)
        } else {
            lo - pad
        }
    };
    if most < 4 && lo.is_finite() && hi.is_finite() && hi > lo {
        let pad = (hi - lo) * 0.05;
        return vec![below(pad), hi + pad];
    }
    let most = most.max(2);
    let (lo, hi) = if !(lo.is_finite() && hi.is_finite()) {
        (0.0, 1.0)
    } else if hi - lo <= f64::EPSILON * lo.abs().max(1.0) {
        // A flat line: a band around it.
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (below(pad), hi + pad)
    } else {
        (lo, hi)
    };
    let raw = (hi - lo) / (most - 1) as f64;
    let mut step = round_step(raw);
    loop {
        let first = (lo / step).floor() * step;
        let last = (hi / step).ceil() * step;
        let count = ((last - first) / step).round() as usize + 1;
        if count <= most || !step.is_finite() {
            return (0..count.min(most.max(2)))
                .map(|i| clean(first + i as f64 * step))
                .collect();
        }
        step = round_step(step * 1.5);
    }
}

/// The smallest of 1, 2, 5 × 10^k that is at least `raw`.
fn round_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * power)
}

/// `0.30000000000000004` as `0.3`: a tick is printed from its shortest form.
fn clean(v: f64) -> f64 {
    format!("{v:.12e}").parse().unwrap_or(v)
}

/// A value in at most about eight characters: `0.2345`, `12.35`, `1,204`, `3e-4`, `1.2e+09`,
/// `NaN`.
pub fn value(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e6).contains(&a) {
        let s = format!("{v:.1e}");
        // `3.0e-4` reads as `3e-4`.
        return s.replace(".0e", "e");
    }
    if a >= 1000.0 && v.fract() == 0.0 {
        return thousands(v as i64);
    }
    let digits = if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else if a >= 1.0 {
        3
    } else {
        4
    };
    let s = format!("{v:.digits$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" { "0".into() } else { s }
}

/// An x value (a step, an epoch): whole steps with separators, epochs with a decimal.
pub fn x_value(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        thousands(x as i64)
    } else {
        value(x)
    }
}

fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Exponential moving average with TensorBoard's debiasing (the first points are not pulled
/// towards zero), weight 0.6 of the past.
pub fn smooth(points: &mut [(f64, f64)]) {
    const WEIGHT: f64 = 0.6;
    let mut last = 0.0;
    let mut debias = 1.0;
    for p in points.iter_mut() {
        last = last * WEIGHT + (1.0 - WEIGHT) * p.1;
        debias *= WEIGHT;
        p.1 = last / (1.0 - debias);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_values_that_cover_the_range() {
        let t = ticks(0.13, 2.31, 5);
        assert!(t.len() <= 5 && t.len() >= 2, "{t:?}");
        assert!(t[0] <= 0.13 && *t.last().unwrap() >= 2.31, "{t:?}");
        let step = t[1] - t[0];
        assert!([0.5, 1.0].iter().any(|s| (s - step).abs() < 1e-12), "{t:?}");
    }

    #[test]
    fn ticks_of_a_small_learning_rate_are_printed_short() {
        let t = ticks(1e-5, 3e-4, 4);
        assert!(t.len() <= 4, "{t:?}");
        let labels: Vec<String> = t.iter().map(|v| value(*v)).collect();
        assert!(labels.iter().all(|l| l.len() <= 8), "{labels:?}");
    }

    #[test]
    fn a_short_chart_is_labelled_at_the_ends_of_its_range() {
        let t = ticks(0.7, 2.9, 2);
        assert_eq!(t.len(), 2);
        assert!(
            t[0] < 0.7 && t[0] > 0.5 && t[1] > 2.9 && t[1] < 3.1,
            "{t:?}"
        );
    }

    #[test]
    fn a_flat_line_gets_a_band_around_it() {
        let t = ticks(2.0, 2.0, 3);
        assert!(t[0] < 2.0 && *t.last().unwrap() > 2.0, "{t:?}");
        let t = ticks(0.0, 0.0, 3);
        assert!(t[0] <= 0.0 && *t.last().unwrap() > 0.0, "{t:?}");
        let t = ticks(-1.0, -1.0, 3);
        assert!(t[0] < -1.0 && *t.last().unwrap() > -1.0, "{t:?}");
    }

    #[test]
    fn values_never_below_zero_are_not_padded_below_zero() {
        for most in [2, 3, 5] {
            let t = ticks(1e-6, 3e-4, most);
            assert!(t[0] >= 0.0, "{most}: {t:?}");
            let t = ticks(0.0, 0.0, most);
            assert!(t[0] >= 0.0, "{most}: {t:?}");
        }
        let t = ticks(-0.5, 0.5, 2);
        assert!(t[0] < -0.5, "{t:?}");
    }

    #[test]
    fn values_are_short_and_exact_enough() {
        assert_eq!(value(0.23456), "0.2346");
        assert_eq!(value(12.3456), "12.35");
        assert_eq!(value(1204.0), "1,204");
        assert_eq!(value(3e-4), "3e-4");
        assert_eq!(value(f64::NAN), "NaN");
        assert_eq!(value(f64::INFINITY), "inf");
        assert_eq!(value(2.0), "2");
        assert_eq!(value(-0.00001), "-1e-5");
        assert_eq!(x_value(12000.0), "12,000");
        assert_eq!(x_value(0.5), "0.5");
    }

    #[test]
    fn smoothing_follows_the_trend_and_starts_at_the_first_value() {
        let mut p: Vec<(f64, f64)> = (0..10)
            .map(|i| (i as f64, if i % 2 == 0 { 1.0 } else { 3.0 }))
            .collect();
        smooth(&mut p);
        assert_eq!(p[0].1, 1.0);
        assert!(p[9].1 > 1.5 && p[9].1 < 2.5, "{p:?}");
    }
}
