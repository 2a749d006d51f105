//! When a run leaves its spot pool for the pool's on-demand fallback (`[job.recovery]
//! spot-fallback = "on-demand"`): its pods have waited `spot-wait` for spot capacity (a zone
//! out of it, or a node the autoscaler asked for that never came), or the pool was preempted
//! more than `spot-max-preemptions` times in the last hour. Decided by the recoverer alone,
//! once per run, never while a recovery or a person's retry is under way; carried out as a
//! recovery onto the fallback (`Command::FallBack`).

use std::collections::HashSet;
use std::time::Duration;

use super::{Decisions, Doing, Settings};
use crate::config::ClusterConfig;
use crate::engine::Command;
use crate::engine::clock::Now;
use crate::engine::world::World;
use crate::k8s::age::human_duration;
use crate::k8s::run::Run;
use crate::k8s::status::AttemptSummary;
use crate::vocabulary::ends::Class;
use crate::waiting::Cause;

/// A preemption counts against the pool for this long.
const PREEMPTIONS_WINDOW: Duration = Duration::from_secs(60 * 60);

/// What the recoverer needs to know of the fallback, from the config.
#[derive(Debug, Clone, PartialEq)]
pub struct SpotFallback {
    /// The spot pool the Job runs on.
    pub pool: String,
    /// Its on-demand fallback's name.
    pub fallback: String,
    pub wait: Duration,
    pub max_preemptions: u32,
    pub max_recoveries: u32,
    /// The cluster as the config describes it, and where: the fallback said in the plan's words.
    pub cluster: ClusterConfig,
    pub location: String,
}

impl SpotFallback {
    /// What the recoverer needs of `[job.recovery] spot-fallback`: None when it is off, the
    /// cluster is not one Gantry manages, or the pool the Job runs on is not spot.
    pub fn of(session: &crate::engine::Session) -> Option<SpotFallback> {
        let recovery = &session.config.job.recovery;
        if recovery.spot_fallback == crate::config::SpotFallback::Off {
            return None;
        }
        let crate::engine::session::Backend::Gke { target, .. } = &session.backend else {
            return None;
        };
        let cluster = &session.config.cluster;
        let wants_gpus = session.config.job.resources.gpus.is_some_and(|g| g > 0);
        let pool = crate::gke::fallback::spot_pool_of(cluster, wants_gpus)?;
        Some(SpotFallback {
            fallback: crate::gke::fallback::name_for(&pool),
            pool,
            wait: recovery.spot_wait(),
            max_preemptions: recovery.spot_max_preemptions,
            max_recoveries: recovery.max_recoveries,
            cluster: cluster.clone(),
            location: target.location.clone(),
        })
    }
}

/// The runs this engine moved to a fallback pool: once per run.
#[derive(Debug, Default)]
pub struct Fallback {
    fell_back: HashSet<String>,
}

impl super::Policy for Fallback {
    fn principal(&self) -> &'static str {
        "recovery"
    }

    /// Whether the newest attempt of a run leaves its spot pool now, and how.
    fn decide(&mut self, world: &World, doing: &Doing, settings: &Settings, now: Now) -> Decisions {
        let Some(s) = &settings.spot_fallback else {
            return Decisions::default();
        };
        if !world.is_recoverer() || doing.recovering.is_some() || doing.retry_asked {
            return Decisions::default();
        }
        let Some(attempt) = world.jobs.newest() else {
            return Decisions::default();
        };
        if attempt.status.is_finished()
            || attempt.deleting
            || doing.ended.contains(&attempt.name)
            || attempt.node_pool.as_deref() == Some(s.fallback.as_str())
        {
            return Decisions::default();
        }
        let run = attempt.run.clone().unwrap_or_else(Run::unrecorded);
        let run_key = if run.id.is_empty() {
            attempt.name.clone()
        } else {
            run.id.clone()
        };
        if self.fell_back.contains(&run_key) || run.recoveries >= s.max_recoveries {
            return Decisions::default();
        }
        let Some(why) = starved(world, attempt, s, now.wall)
            .or_else(|| preempted_too_often(world, &run, s, now.wall))
        else {
            return Decisions::default();
        };
        let existing = world
            .cluster
            .summary
            .as_ref()
            .and_then(|c| c.node_pools.iter().find(|p| p.name == s.fallback))
            .map(|p| p.node_count);
        self.fell_back.insert(run_key);
        Decisions::run(Command::FallBack {
            attempt: attempt.name.clone(),
            pool: s.pool.clone(),
            why,
            plan: crate::gke::fallback::words(&s.cluster, &s.pool, &s.location, existing),
            next: run.attempt + 1,
            most: run.most_attempts(s.max_recoveries),
        })
    }
}

/// A pod of `attempt` that has waited `spot-wait` or longer for spot capacity: why, in words.
fn starved(
    world: &World,
    attempt: &AttemptSummary,
    s: &SpotFallback,
    now: jiff::Timestamp,
) -> Option<String> {
    world
        .jobs
        .pods_of(&attempt.name)
        .into_iter()
        .find_map(|pod| {
            let waiting = world.waits.of(&pod.name)?;
            let lack = match &waiting.cause {
                Cause::Stockout { zone } => format!("stockout in {zone}"),
                Cause::ScalingUp { .. } => "the node asked for has not come".to_string(),
                _ => return None,
            };
            let waited = Duration::try_from(now.duration_since(waiting.since?)).ok()?;
            (waited >= s.wait).then(|| {
                format!(
                    "{} has had no spot capacity for {} ({lack}; spot-wait = {})",
                    s.pool,
                    said(waited),
                    said(s.wait)
                )
            })
        })
}

/// More preemptions of the run on the spot pool in the last hour than it allows: why.
fn preempted_too_often(
    world: &World,
    run: &Run,
    s: &SpotFallback,
    now: jiff::Timestamp,
) -> Option<String> {
    let since = now.checked_sub(PREEMPTIONS_WINDOW).ok()?;
    let on_spot = world.jobs.attempts().into_iter().filter(|a| {
        a.node_pool.as_deref() != Some(s.fallback.as_str())
            && a.run.as_ref().is_some_and(|r| r.id == run.id)
    });
    let preempted: usize = on_spot
        .map(|a| {
            world
                .ends_of(a)
                .iter()
                .filter(|e| e.class == Class::Preempted && e.at.is_some_and(|t| t >= since))
                .count()
        })
        .sum();
    (preempted > usize::try_from(s.max_preemptions).unwrap_or(usize::MAX)).then(|| {
        format!(
            "{} was preempted {preempted} times in the last hour (spot-max-preemptions = {})",
            s.pool, s.max_preemptions
        )
    })
}

/// `2m 30s`, as durations are said elsewhere.
fn said(d: Duration) -> String {
    human_duration(i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
#[path = "fallback_tests.rs"]
mod tests;
