//! Idle money: a RUNNING cluster with nodes and no attempt going costs the same as a busy one.
//! After the config's `idle-reminder` the status line says so with the hourly cost, and it is
//! news once per idle spell; with `scale-to-zero-when-idle` the recoverer then sets the node
//! pools to zero nodes. One pure decision of the world, the settings and the time ([`decide`]),
//! drawn by viewers and acted on by the policy ([`Idle`]) alike.

use std::time::Duration;

use jiff::Timestamp;

use super::{Decisions, Doing, Settings};
use crate::engine::clock::Now;
use crate::engine::notice::Notice;
use crate::engine::world::World;
use crate::gke::ClusterStatus;
use crate::gke::cost::RunningCost;
use crate::pricing::Estimate;
use crate::vocabulary::{Kind, Severity};

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
pub enum Idling {
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

impl Idling {
    /// The status line's words: "idle 42m, no attempt running: the cluster costs ≈ $0.28/h".
    pub fn reminder(&self) -> Option<String> {
        let (idle_for, per_hour) = match self {
            Idling::No => return None,
            Idling::Remind { idle_for, per_hour } | Idling::ScaleToZero { idle_for, per_hour } => {
                (idle_for, per_hour)
            }
        };
        let cost = match per_hour.usd() {
            Some(usd) => format!("≈ {}/h", crate::pricing::format::usd(usd)),
            None => "price unknown".to_string(),
        };
        let idle = crate::k8s::age::human_duration(i64::try_from(idle_for.as_secs()).unwrap_or(0));
        let then = if matches!(self, Idling::ScaleToZero { .. }) {
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
pub fn idle_since(model: &World) -> Option<Timestamp> {
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
pub fn decide(model: &World, settings: &IdleSettings, now: Timestamp) -> Idling {
    let Some(since) = idle_since(model) else {
        return Idling::No;
    };
    let idle_for = Duration::try_from(now.duration_since(since)).unwrap_or_default();
    if idle_for < settings.reminder {
        return Idling::No;
    }
    let Some(summary) = model.cluster.summary.as_ref() else {
        return Idling::No;
    };
    let per_hour = RunningCost::of(summary).per_hour;
    if settings.scale_to_zero && !settings.read_only {
        Idling::ScaleToZero { idle_for, per_hour }
    } else {
        Idling::Remind { idle_for, per_hour }
    }
}

/// What the idle policy told and did: the idle spell told (by when it began), and whether the
/// pools were sent to zero in it (not again until the cluster has been busy in between, so a
/// refused resize is not asked for at every batch).
#[derive(Debug, Default)]
pub struct Idle {
    told: Option<Timestamp>,
    scaled: bool,
}

impl super::Policy for Idle {
    fn principal(&self) -> &'static str {
        "idle"
    }

    fn decide(&mut self, world: &World, doing: &Doing, settings: &Settings, now: Now) -> Decisions {
        let idling = decide(world, &settings.idle, now.wall);
        let mut decided = Decisions::default();
        decided.notices.extend(self.news(world, &idling));
        match idling {
            // Not while an operation (the create that made the cluster) is still being
            // followed to its end: a later batch (its end) decides again.
            Idling::ScaleToZero { .. }
                if !self.scaled && !doing.operating && world.is_recoverer() =>
            {
                self.scaled = true;
                decided
                    .commands
                    .push(crate::engine::Command::ScaleNodePools(
                        crate::gke::resize::Scale::ToZero,
                    ));
            }
            Idling::ScaleToZero { .. } | Idling::Remind { .. } => {}
            Idling::No => self.scaled = false,
        }
        decided
    }
}

impl Idle {
    /// The idle spell, told once.
    fn news(&mut self, world: &World, idling: &Idling) -> Option<Notice> {
        let Some(text) = idling.reminder() else {
            self.told = None;
            return None;
        };
        let since = idle_since(world)?;
        if self.told == Some(since) {
            return None;
        }
        self.told = Some(since);
        let notice = Notice::new(Kind::Idle, Severity::Warning, world.cluster_name(), text)
            .as_news(format!("idle/{}", since.as_second()))
            .with_detail("idleSince", since.to_string());
        Some(match idling {
            Idling::Remind { per_hour, .. } | Idling::ScaleToZero { per_hour, .. } => {
                match per_hour.usd() {
                    Some(usd) => notice.with_detail("perHour", usd),
                    None => notice,
                }
            }
            Idling::No => notice,
        })
    }
}

#[cfg(test)]
#[path = "idle_tests.rs"]
mod tests;
