//! Recovery nobody has to start. When a rank of a multi-pod Indexed attempt is preempted, the
//! others wait in a collective for it until they time out: the run is restarted whole (its
//! attempt ended by suspending it, the next made with the same spec). A single pod is replaced
//! by the cloud (the Job's `podFailurePolicy`), but a run is still bounded: past
//! `max-recoveries`, it ends as failed and says why. Only the holder of the recoverer's Lease
//! decides, once per attempt; a person's retry and a recovery are never both made.
//!
//! A preemption is acted on when it happened while this engine held the Lease, or at most a
//! minute before it took it (a recoverer that died — its Lease ran out 15–20 s later — may have
//! seen it and not acted). Older ones are left alone: the run has carried on without a restart.

use jiff::{SignedDuration, Timestamp};

use super::{Decisions, Doing, Settings};
use crate::engine::Command;
use crate::engine::clock::Now;
use crate::engine::world::World;
use crate::k8s::run::Run;
use crate::vocabulary::attempt::EndedBy;
use crate::vocabulary::ends::{Class, PodEnd};

/// How long before it took the Lease a preemption is still this engine's to act on.
const MISSED_WITHIN: SignedDuration = SignedDuration::from_secs(60);

#[derive(Debug, Default)]
pub struct Recovery {
    /// Since when this engine holds the Lease.
    holder_since: Option<Timestamp>,
}

impl super::Policy for Recovery {
    fn principal(&self) -> &'static str {
        "recovery"
    }

    fn decide(&mut self, world: &World, doing: &Doing, settings: &Settings, now: Now) -> Decisions {
        if !world.is_recoverer() {
            self.holder_since = None;
            return Decisions::default();
        }
        let since = *self.holder_since.get_or_insert(now.wall);
        let Some(attempt) = world.jobs.newest() else {
            return Decisions::default();
        };
        if attempt.status.is_finished() || attempt.deleting || doing.busy_with(&attempt.name) {
            return Decisions::default();
        }
        let ends = world.ends_of(attempt);
        let preempted: Vec<&PodEnd> = ends
            .iter()
            .filter(|e| e.class == Class::Preempted)
            .collect();
        let run = attempt.run.clone().unwrap_or_else(Run::unrecorded);
        let max = settings.max_recoveries;
        let gang = attempt.completions.unwrap_or(1) > 1;
        if gang {
            let recent = preempted.iter().find(|e| {
                e.index.is_some()
                    && e.at
                        .is_none_or(|at| at >= since.checked_sub(MISSED_WITHIN).unwrap_or(since))
            });
            let Some(end) = recent else {
                return Decisions::default();
            };
            let rank = end.index.unwrap_or(0);
            let why = format!("rank {rank} of {} preempted", attempt.name);
            let command = restart_or_end(&attempt.name, &run, why, max, EndedBy::Preempted);
            return Decisions::run(command);
        }
        // The cloud replaced the pod; the run is bounded all the same.
        if preempted.len() <= usize::try_from(max).unwrap_or(usize::MAX) {
            return Decisions::default();
        }
        Decisions::run(Command::EndRun {
            attempt: attempt.name.clone(),
            why: format!(
                "{} preemptions of {}, more than max-recoveries ({max})",
                preempted.len(),
                attempt.name
            ),
            ended_by: EndedBy::MaxRecoveries,
        })
    }
}

/// The next attempt of the run at `attempt` (ended `by` what happened), or the run's end once
/// it has had `max` recoveries.
pub fn restart_or_end(attempt: &str, run: &Run, why: String, max: u32, by: EndedBy) -> Command {
    if run.recoveries >= max {
        Command::EndRun {
            attempt: attempt.to_string(),
            why: format!(
                "{why} after {} recoveries (max-recoveries = {max})",
                run.recoveries
            ),
            ended_by: EndedBy::MaxRecoveries,
        }
    } else {
        Command::Recover {
            attempt: attempt.to_string(),
            why,
            ended_by: by,
            next: run.attempt + 1,
            most: run.most_attempts(max),
        }
    }
}

#[cfg(test)]
#[path = "recovery_tests.rs"]
mod tests;
