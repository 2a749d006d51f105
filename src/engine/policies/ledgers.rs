//! The run's record, kept on its Jobs so that every Gantry — another machine's, one started
//! later, `gantry status` — reads what this engine saw: the pods' ends (`gantry.dev/pod-ends`,
//! recorded by every engine that may write, each adding only what is not there) and the run's
//! cost (`gantry.dev/cost`, recorded by the Lease holder on the newest attempt every
//! `RECORD_EVERY`, on a new attempt, when it ends, and soon after a node came or went). Both
//! are writes to the Jobs, so they pass the gate (never from a read-only engine) and are audited.

use std::collections::HashSet;

use jiff::Timestamp;

use super::{Decisions, Doing, Settings};
use crate::engine::Command;
use crate::engine::clock::Now;
use crate::engine::world::World;
use crate::meter::ledger::{self, Entry};

/// The ends this engine asked to record (by pod): each once.
#[derive(Debug, Default)]
pub struct EndsLedger {
    asked: HashSet<String>,
}

impl super::Policy for EndsLedger {
    fn principal(&self) -> &'static str {
        "ends"
    }

    fn decide(
        &mut self,
        world: &World,
        _doing: &Doing,
        settings: &Settings,
        _now: Now,
    ) -> Decisions {
        if !settings.may_act {
            return Decisions::default();
        }
        let recorded = |job: &str, pod: &str| {
            world
                .jobs
                .attempts
                .get(job)
                .is_some_and(|a| a.recorded_ends.iter().any(|e| e.pod == pod))
        };
        let new: Vec<crate::ends::ledger::Entry> = world
            .ends
            .seen()
            // The set first: once asked, an end costs one lookup a round, not a walk of its
            // attempt's recorded list (thousands of ends, each round).
            .filter(|e| !self.asked.contains(&e.end.pod) && !recorded(&e.job, &e.end.pod))
            .cloned()
            .collect();
        if new.is_empty() {
            return Decisions::default();
        }
        self.asked.extend(new.iter().map(|e| e.end.pod.clone()));
        Decisions::run(Command::RecordEnds(new))
    }
}

/// When the run's figure was last recorded, and on what.
#[derive(Debug, Default)]
pub struct CostLedger {
    /// The attempt this engine last recorded the run's figure on, and when.
    last_recorded: Option<(String, Timestamp)>,
    /// The attempt whose end this engine recorded the figure at.
    end_recorded: Option<String>,
    /// The nodes' changes (`NodeLives::changes`) the last record knew.
    changes_recorded: u64,
}

impl super::Policy for CostLedger {
    fn principal(&self) -> &'static str {
        "cost"
    }

    /// The run's figure to record on its newest attempt now, if this engine records and it is
    /// due: never while the Node watch is away (what it would write would undercount for good).
    fn decide(
        &mut self,
        world: &World,
        _doing: &Doing,
        _settings: &Settings,
        now: Now,
    ) -> Decisions {
        match self.due(world, now.wall) {
            Some(entry) => Decisions::run(Command::RecordCost(entry)),
            None => Decisions::default(),
        }
    }
}

impl CostLedger {
    fn due(&mut self, world: &World, now: Timestamp) -> Option<Entry> {
        if !world.is_recoverer() || !world.nodes.watching() {
            return None;
        }
        let run = world.run_span()?;
        let cost = world.run_cost(now)?;
        let recorded_on_it = world
            .jobs
            .newest()
            .and_then(|a| a.recorded_cost)
            .is_some_and(|r| r.as_of >= cost.as_of);
        let ended = run.until.is_some();
        let changes = world.nodes.changes();
        let since = |when: &Timestamp, wait: std::time::Duration| {
            now.duration_since(*when) >= jiff::SignedDuration::try_from(wait).unwrap_or_default()
        };
        let due = match &self.last_recorded {
            Some((job, _)) if *job != run.newest => true,
            Some(_) if ended => self.end_recorded.as_ref() != Some(&run.newest),
            Some((_, when)) if changes != self.changes_recorded => {
                since(when, ledger::RECORD_AFTER_A_CHANGE)
            }
            Some((_, when)) => since(when, ledger::RECORD_EVERY),
            None => true,
        };
        if recorded_on_it {
            // Recorded as of now or later already (by another engine, or this one read back).
            if self
                .last_recorded
                .as_ref()
                .is_none_or(|(job, _)| *job != run.newest)
            {
                self.last_recorded = Some((run.newest.clone(), now));
            }
            self.changes_recorded = changes;
            return None;
        }
        if !due {
            return None;
        }
        self.last_recorded = Some((run.newest.clone(), now));
        self.changes_recorded = changes;
        if ended {
            self.end_recorded = Some(run.newest.clone());
        }
        Some(Entry {
            job: run.newest,
            cost: cost.recorded(u32::try_from(world.nodes.alive()).ok()),
        })
    }
}

#[cfg(test)]
#[path = "ledgers_tests.rs"]
mod tests;
