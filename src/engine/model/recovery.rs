//! Recovery nobody has to start. When a rank of a multi-pod Indexed attempt is preempted, the
//! others wait in a collective for it until they time out: the run is restarted whole (its
//! attempt ended, the next made with the same spec). A single pod is replaced by the cloud
//! (the Job's `podFailurePolicy`), but a run is still bounded: past `max-recoveries`, it ends
//! as failed and says why. Only the engine that holds the recoverer's Lease decides, once per
//! attempt; a person's retry and a recovery are never both made.

use std::collections::HashSet;

use super::Model;
use crate::engine::Command;
use crate::engine::notice::Notice;
use crate::k8s::lease::Holder;
use crate::k8s::run::Run;
use crate::vocabulary::ends::Class;
use crate::vocabulary::{Kind, Severity};

/// How old a preemption a new recoverer still acts on (see `missed_preemptions`).
const MISSED_WITHIN_SECONDS: i64 = 60;

#[derive(Debug, Default)]
pub struct Recovery {
    /// Who holds the recoverer's Lease (None: nobody, or not known yet).
    pub holder: Option<Holder>,
    /// A recovery this engine asked for that has not ended (its command's words).
    pub recovering: Option<String>,
    /// Attempts whose run this engine ended or restarted: never twice.
    pub(super) acted_on: HashSet<String>,
    /// Runs this engine moved to an on-demand fallback pool: once per run.
    pub(super) fell_back: HashSet<String>,
}

impl Recovery {
    /// Whether this engine is the recoverer.
    pub fn mine(&self) -> bool {
        self.holder.as_ref().is_some_and(|h| h.mine)
    }
}

/// A rank (or the pod) of an attempt was preempted.
#[derive(Debug, Clone, PartialEq)]
pub struct Preempted {
    pub attempt: String,
    /// Its completion index in an Indexed attempt.
    pub index: Option<u32>,
}

impl Model {
    /// Who holds the Lease now; what to tell when this engine takes it or loses it.
    pub(super) fn recoverer(&mut self, holder: Option<Holder>) -> Option<Notice> {
        let was_mine = self.recovery.mine();
        self.recovery.holder = holder;
        let text = match (was_mine, self.recovery.mine()) {
            (false, true) => "this engine is the recoverer now (it holds the Lease)".to_string(),
            (true, false) => match &self.recovery.holder {
                Some(h) => format!("{} is the recoverer now", h.identity),
                None => "this engine is no longer the recoverer".to_string(),
            },
            _ => return None,
        };
        Some(Notice::new(
            Kind::Recoverer,
            Severity::Info,
            "recoverer",
            text,
        ))
    }

    /// On becoming the recoverer: the newest attempt's preemptions of the last minute, which a
    /// recoverer that died (its Lease ran out 15–20 s later) may have seen and not acted on.
    /// Older ones are left alone: the run has carried on without a restart since.
    pub(super) fn missed_preemptions(&self, now: jiff::Timestamp) -> Vec<Preempted> {
        if !self.recovery.mine() {
            return Vec::new();
        }
        let Some(attempt) = self.jobs.newest() else {
            return Vec::new();
        };
        if attempt.status.is_finished() || attempt.deleting {
            return Vec::new();
        }
        self.ends_of(attempt)
            .into_iter()
            .filter(|e| e.class == Class::Preempted)
            .filter(|e| {
                e.at.is_some_and(|at| (now - at).get_seconds() <= MISSED_WITHIN_SECONDS)
            })
            .map(|e| Preempted {
                attempt: attempt.name.clone(),
                index: e.index,
            })
            .collect()
    }

    /// What the recoverer does about a preemption, if anything: restart the gang, or end a run
    /// that ran out of recoveries. `retry_asked`: a person's retry is on its way.
    pub fn recovery_for(&mut self, p: &Preempted, max: u32, retry_asked: bool) -> Option<Command> {
        if !self.recovery.mine()
            || self.recovery.recovering.is_some()
            || retry_asked
            || self.recovery.acted_on.contains(&p.attempt)
        {
            return None;
        }
        let attempt = self.jobs.attempts.items.get(&p.attempt)?;
        let newest = self.jobs.newest().map(|n| n.name.as_str()) == Some(p.attempt.as_str());
        if !newest || attempt.status.is_finished() || attempt.deleting {
            return None;
        }
        let run = attempt.run.clone().unwrap_or_else(Run::unrecorded);
        let gang = p.index.is_some() && attempt.completions.unwrap_or(1) > 1;
        let command = if gang {
            let rank = p.index.unwrap_or(0);
            restart_or_end(
                &p.attempt,
                &run,
                format!("rank {rank} of {} preempted", p.attempt),
                max,
            )
        } else {
            // The cloud replaced the pod; the run is bounded all the same.
            let preempted = self
                .ends_of(attempt)
                .iter()
                .filter(|e| e.class == Class::Preempted)
                .count();
            if preempted <= usize::try_from(max).unwrap_or(usize::MAX) {
                return None;
            }
            Command::EndRun {
                attempt: p.attempt.clone(),
                why: format!(
                    "{preempted} preemptions of {}, more than max-recoveries ({max})",
                    p.attempt
                ),
            }
        };
        self.acting(&p.attempt, &command);
        Some(command)
    }

    /// The recoverer acts on `attempt`: never again on it, and a restart is under way until
    /// its command ends.
    pub(super) fn acting(&mut self, attempt: &str, command: &Command) {
        self.recovery.acted_on.insert(attempt.to_string());
        if matches!(command, Command::Recover { .. }) {
            self.recovery.recovering = Some(command.describe());
        }
    }

    /// A one-shot command ended: the recovery it was, if any, is over.
    pub(super) fn recovery_done(&mut self, what: &str) {
        if self.recovery.recovering.as_deref() == Some(what) {
            self.recovery.recovering = None;
        }
    }
}

/// The next attempt of the run at `attempt`, or the run's end once it has had `max` recoveries.
pub(super) fn restart_or_end(attempt: &str, run: &Run, why: String, max: u32) -> Command {
    if run.recoveries >= max {
        Command::EndRun {
            attempt: attempt.to_string(),
            why: format!(
                "{why} after {} recoveries (max-recoveries = {max})",
                run.recoveries
            ),
        }
    } else {
        Command::Recover {
            attempt: attempt.to_string(),
            why,
            next: run.attempt + 1,
            most: run.most_attempts(max),
        }
    }
}

#[cfg(test)]
#[path = "recovery_tests.rs"]
mod tests;
