//! What the operator must hear about at once: a metric that becomes NaN or infinite (the run
//! has diverged and every later number is noise) and a loss that jumps tenfold from one report
//! to the next (a spike that often comes before the divergence).

use std::fmt;

/// A loss this many times its previous value is a jump.
pub const JUMP_FACTOR: f64 = 10.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AlertKind {
    /// The value is NaN or infinite (it was finite, or nothing, before).
    NonFinite { value: f64 },
    /// A loss went from `from` to `to`, at least [`JUMP_FACTOR`] times as much.
    Jump { from: f64, to: f64 },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Alert {
    pub metric: String,
    pub pod: String,
    /// The step (or the x the stream had instead) where it happened.
    pub step: f64,
    pub kind: AlertKind,
}

/// Whether a metric's new value is an alert, given its previous value (`None` when this is the
/// first). A value that stays non-finite is not told again; a jump counts only for losses.
pub fn check(metric: &str, previous: Option<f64>, value: f64) -> Option<AlertKind> {
    if !value.is_finite() {
        return previous
            .is_none_or(f64::is_finite)
            .then_some(AlertKind::NonFinite { value });
    }
    let from = previous.filter(|p| p.is_finite() && *p > 0.0)?;
    (value >= from * JUMP_FACTOR && is_loss(metric)).then_some(AlertKind::Jump { from, to: value })
}

/// `loss`, `train_loss`, `eval/loss`, `val_loss_epoch`, `Loss`, `lm loss`, `valLoss`; not a
/// loss scale (`loss_scale`, `loss scale`), which mixed precision halves and doubles.
pub(crate) fn is_loss(metric: &str) -> bool {
    let mut parts = metric
        .split([' ', '/', '.', '_', '-', '(', ')'])
        .filter(|p| !p.is_empty())
        .map(str::to_ascii_lowercase);
    parts.clone().any(|p| p.ends_with("loss")) && !parts.any(|p| p.starts_with("scale"))
}

impl fmt::Display for Alert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Alert {
            metric,
            pod,
            step,
            kind,
        } = self;
        match kind {
            AlertKind::NonFinite { value } => {
                write!(f, "{metric} became {value} at step {step} on {pod}")
            }
            AlertKind::Jump { from, to } => {
                write!(
                    f,
                    "{metric} jumped from {from} to {to} at step {step} on {pod}"
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_metric_turning_nan_or_infinite_is_told_once() {
        assert_eq!(
            check("grad_norm", Some(1.0), f64::INFINITY),
            Some(AlertKind::NonFinite {
                value: f64::INFINITY
            })
        );
        assert!(matches!(
            check("loss", None, f64::NAN),
            Some(AlertKind::NonFinite { .. })
        ));
        assert_eq!(check("loss", Some(f64::NAN), f64::NAN), None);
        assert_eq!(check("loss", Some(f64::NAN), 1.0), None);
    }

    #[test]
    fn a_loss_jumping_tenfold_is_told_and_other_metrics_may_jump() {
        assert_eq!(
            check("train/loss", Some(0.25), 2.5),
            Some(AlertKind::Jump {
                from: 0.25,
                to: 2.5
            })
        );
        assert_eq!(check("val_loss", Some(0.25), 2.4), None);
        assert_eq!(check("learning_rate", Some(1e-6), 1e-4), None);
        assert_eq!(check("loss", Some(0.0), 5.0), None);
        assert_eq!(check("loss", Some(-1.0), 5.0), None);
    }

    #[test]
    fn an_alert_reads_as_a_sentence_naming_metric_step_and_pod() {
        let alert = Alert {
            metric: "loss".into(),
            pod: "train-2-abcde".into(),
            step: 1200.0,
            kind: AlertKind::NonFinite { value: f64::NAN },
        };
        assert_eq!(
            alert.to_string(),
            "loss became NaN at step 1200 on train-2-abcde"
        );
    }
}
