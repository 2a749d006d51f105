//! When a run leaves its spot pool for the pool's on-demand fallback (`[job.recovery]
//! spot-fallback = "on-demand"`): its pods have waited `spot-wait` for spot capacity (a zone
//! out of it, or a node the autoscaler asked for that never came), or the pool was preempted
//! more than `spot-max-preemptions` times in the last hour. Decided by the recoverer alone,
//! once per run, never while a recovery or a person's retry is under way; carried out as a
//! recovery onto the fallback (`Command::FallBack`).

use std::time::Duration;

use super::Model;
use crate::config::ClusterConfig;
use crate::engine::Command;
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

impl Model {
    /// Whether the newest attempt of a run leaves its spot pool now, and how.
    pub fn fallback_for(
        &mut self,
        s: &SpotFallback,
        retry_asked: bool,
        now: jiff::Timestamp,
    ) -> Option<Command> {
        if !self.recovery.mine() || self.recovery.recovering.is_some() || retry_asked {
            return None;
        }
        let attempt = self.jobs.newest()?;
        if attempt.status.is_finished()
            || attempt.deleting
            || self.recovery.acted_on.contains(&attempt.name)
            || attempt.node_pool.as_deref() == Some(s.fallback.as_str())
        {
            return None;
        }
        let run = attempt.run.clone().unwrap_or_else(Run::unrecorded);
        let run_key = if run.id.is_empty() {
            attempt.name.clone()
        } else {
            run.id.clone()
        };
        if self.recovery.fell_back.contains(&run_key) || run.recoveries >= s.max_recoveries {
            return None;
        }
        let why = self
            .starved(attempt, s, now)
            .or_else(|| self.preempted_too_often(&run, s, now))?;
        let existing = self
            .cluster
            .summary
            .as_ref()
            .and_then(|c| c.node_pools.iter().find(|p| p.name == s.fallback))
            .map(|p| p.node_count);
        let name = attempt.name.clone();
        let command = Command::FallBack {
            attempt: name.clone(),
            pool: s.pool.clone(),
            why,
            plan: crate::gke::fallback::words(&s.cluster, &s.pool, &s.location, existing),
            next: run.attempt + 1,
            most: run.most_attempts(s.max_recoveries),
        };
        self.recovery.acted_on.insert(name);
        self.recovery.fell_back.insert(run_key);
        self.recovery.recovering = Some(command.describe());
        Some(command)
    }

    /// A pod of `attempt` that has waited `spot-wait` or longer for spot capacity: why, in words.
    fn starved(
        &self,
        attempt: &AttemptSummary,
        s: &SpotFallback,
        now: jiff::Timestamp,
    ) -> Option<String> {
        self.jobs
            .pods_of(&attempt.name)
            .into_iter()
            .find_map(|pod| {
                let waiting = self.waits.of(&pod.name)?;
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
        &self,
        run: &Run,
        s: &SpotFallback,
        now: jiff::Timestamp,
    ) -> Option<String> {
        let since = now.checked_sub(PREEMPTIONS_WINDOW).ok()?;
        let on_spot = self.jobs.attempts().into_iter().filter(|a| {
            a.node_pool.as_deref() != Some(s.fallback.as_str())
                && a.run.as_ref().is_some_and(|r| r.id == run.id)
        });
        let preempted: usize = on_spot
            .map(|a| {
                self.ends_of(a)
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
}

/// `2m 30s`, as durations are said elsewhere.
fn said(d: Duration) -> String {
    human_duration(i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
#[path = "fallback_tests.rs"]
mod tests;
