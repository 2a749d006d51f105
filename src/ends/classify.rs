//! The end of a pod that is gone (deleted, or missing from a relist), from what was last seen
//! of it and of its attempt ([`gone`]). Structured fields only: a message is shown, never read.
//! A pod's end read from its object while it is there is `k8s::fate`'s.

use jiff::Timestamp;

use crate::k8s::status::PodSummary;
use crate::vocabulary::ends::{Class, Fate, seconds_between};
use crate::waiting::Cause;

/// What is known of a pod that is gone, beyond the pod itself.
#[derive(Debug, Clone, Default)]
pub struct GoneContext<'a> {
    /// Why its attempt failed, if it did (`DeadlineExceeded`, `BackoffLimitExceeded`,
    /// `PodFailurePolicy`).
    pub attempt_failed: Option<&'a str>,
    /// Who deleted it or its attempt through Gantry.
    pub deleted_by: Option<&'a str>,
    /// Gantry stopped its attempt (suspended it): how, in words (`ends::stopped_by_gantry`).
    pub stopped: Option<&'static str>,
    /// Why it waited, if it never ran.
    pub waiting: Option<&'a Cause>,
    /// When it was seen gone.
    pub now: Option<Timestamp>,
}

/// The end of a pod that is gone (deleted, or missing from a relist): what it had ended as, if
/// it had; else why it went.
pub fn gone(last: &PodSummary, ctx: &GoneContext<'_>) -> Fate {
    if let Some(fate) = &last.fate
        && fate.class != Class::ConfigError
    {
        return fate.clone();
    }
    let at = ctx.now;
    let ran_seconds = match (last.running_since, at) {
        (Some(from), Some(to)) => seconds_between(from, to),
        _ => 0,
    };
    let fate = |class, detail: String| Fate {
        class,
        detail,
        at,
        ran_seconds,
    };
    if ctx.attempt_failed == Some("DeadlineExceeded") {
        return fate(
            Class::Deadline,
            "its attempt's activeDeadlineSeconds passed".into(),
        );
    }
    if let Some(by) = ctx.deleted_by {
        return fate(Class::Deleted, format!("deleted by {by}"));
    }
    if let Some(how) = ctx.stopped {
        return fate(Class::Deleted, how.to_string());
    }
    if let Some(f) = &last.fate {
        return f.clone();
    }
    if last.running_since.is_none()
        && let Some(cause) = ctx.waiting.filter(|c| is_capacity(c))
    {
        return fate(
            Class::Capacity,
            format!("never ran: no node could be made for it ({})", cause.name()),
        );
    }
    match ctx.attempt_failed {
        Some(reason) => fate(
            Class::Deleted,
            format!("stopped by the Job controller when its attempt failed ({reason})"),
        ),
        None => fate(Class::Deleted, "deleted outside Gantry".into()),
    }
}

/// Waiting causes that mean no node could be made for the pod.
fn is_capacity(cause: &Cause) -> bool {
    matches!(
        cause,
        Cause::ScalingUp { .. }
            | Cause::NoPool { .. }
            | Cause::PoolAtMax { .. }
            | Cause::Quota { .. }
            | Cause::Stockout { .. }
    )
}
