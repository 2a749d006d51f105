//! Idle money: a RUNNING cluster with nodes and no attempt going costs the same as a busy one.
//! After the config's `idle-reminder` the status line says so with the hourly cost; with
//! `scale-to-zero-when-idle` the engine then sets the node pools to zero nodes. One pure decision
//! of the model, the settings and the time, drawn by viewers and acted on by the engine alike.

use std::time::Duration;

use jiff::Timestamp;

use super::Model;
use crate::gke::ClusterStatus;
use crate::gke::cost::RunningCost;
use crate::pricing::Estimate;

/// What the config and the command line say about idling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleSettings {
    pub reminder: Duration,
    pub scale_to_zero: bool,
    /// Read-only never scales anything.
    pub read_only: bool,
}

impl IdleSettings {
    pub fn of(config: &crate::config::Config, read_only: bool) -> Self {
        Self {
            reminder: config.idle_reminder(),
            scale_to_zero: config.scale_to_zero_when_idle,
            read_only,
        }
    }
}

/// What idling calls for now.
#[derive(Debug, Clone, PartialEq)]
pub enum Idle {
    /// Not RUNNING, nothing to pay for but the fee, an attempt going, or not idle long enough.
    No,
    /// Idle this long, costing this much an hour: say so.
    Remind {
        idle_for: Duration,
        per_hour: Estimate,
    },
    /// As `Remind`, and the node pools are to go to zero nodes.
    ScaleToZero {
        idle_for: Duration,
        per_hour: Estimate,
    },
}

impl Idle {
    /// The status line's words: "idle 42m, no attempt running: the cluster costs ≈ $0.28/h".
    pub fn reminder(&self) -> Option<String> {
        let (idle_for, per_hour) = match self {
            Idle::No => return None,
            Idle::Remind { idle_for, per_hour } | Idle::ScaleToZero { idle_for, per_hour } => {
                (idle_for, per_hour)
            }
        };
        let cost = match per_hour.usd() {
            Some(usd) => format!("≈ {}/h", crate::pricing::format::usd(usd)),
            None => "price unknown".to_string(),
        };
        let idle = crate::k8s::age::human_duration(i64::try_from(idle_for.as_secs()).unwrap_or(0));
        let then = if matches!(self, Idle::ScaleToZero { .. }) {
            ": scaling the nodes to zero"
        } else {
            ""
        };
        Some(format!(
            "idle {idle}, no attempt running: the cluster costs {cost}{then}"
        ))
    }
}

/// Since when the cluster has had nothing to do: its creation or the end of its newest attempt,
/// whichever came later. None while it is not RUNNING with nodes, while an attempt is going, and
/// before the Job watchers have said what attempts there are.
pub fn idle_since(model: &Model) -> Option<Timestamp> {
    let cluster = &model.cluster;
    let summary = cluster.summary.as_ref()?;
    let running = summary.status == ClusterStatus::Running && cluster.busy.is_none();
    if !running || !cluster.managed() || summary.node_count == 0 || !model.connected {
        return None;
    }
    if model.jobs.active_attempt().is_some() {
        return None;
    }
    let created = summary.create_time?;
    let last_end = model
        .jobs
        .attempts()
        .into_iter()
        .filter(|a| !a.deleting)
        .filter_map(|a| a.finished_at.or(a.start_time).or(a.created))
        .max();
    Some(last_end.map_or(created, |end| end.max(created)))
}

/// Whether to remind, or to scale to zero, at `now`.
pub fn decide(model: &Model, settings: &IdleSettings, now: Timestamp) -> Idle {
    let Some(since) = idle_since(model) else {
        return Idle::No;
    };
    let idle_for = Duration::try_from(now.duration_since(since)).unwrap_or_default();
    if idle_for < settings.reminder {
        return Idle::No;
    }
    let Some(summary) = model.cluster.summary.as_ref() else {
        return Idle::No;
    };
    let per_hour = RunningCost::of(summary).per_hour;
    if settings.scale_to_zero && !settings.read_only {
        Idle::ScaleToZero { idle_for, per_hour }
    } else {
        Idle::Remind { idle_for, per_hour }
    }
}

#[cfg(test)]
#[path = "idle_tests.rs"]
mod tests;
