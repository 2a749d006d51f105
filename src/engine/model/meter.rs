//! The engine's meter (`crate::meter`): what the cluster and the run truly cost, from the nodes'
//! lives this engine saw, for the cluster pane, `gantry watch`, notifications and budget guards;
//! and when the engine that records (the recoverer's Lease holder) writes the run's figure on its
//! newest attempt: every `ledger::RECORD_EVERY`, on a new attempt, when it ends, and soon after
//! a node came or went (`ledger::RECORD_AFTER_A_CHANGE`).

use jiff::Timestamp;

use super::Model;
use super::node_lives::NodeLives;
use crate::meter::ledger::{self, Entry};
use crate::meter::{Figure, Meter, NodeSpan, RunCost, RunSpan};
use crate::pricing::Catalogue;

#[derive(Debug, Default)]
pub struct Metering {
    pub nodes: NodeLives,
    /// The attempt this engine last recorded the run's figure on, and when.
    last_recorded: Option<(String, Timestamp)>,
    /// The attempt whose end this engine recorded the figure at.
    end_recorded: Option<String>,
    /// The nodes' changes (`NodeLives::changes`) the last record knew.
    changes_recorded: u64,
}

impl Model {
    /// The meter over the nodes this engine saw: None on a cluster Gantry does not manage, and
    /// until the nodes have been listed.
    fn meter_spans(&self) -> Option<Vec<NodeSpan>> {
        let managed = self.cluster.target.as_ref().is_some_and(|t| t.managed);
        (managed && self.meter.nodes.listed()).then(|| self.meter.nodes.spans())
    }

    fn with_meter<T>(&self, f: impl FnOnce(&Meter) -> T) -> Option<T> {
        let spans = self.meter_spans()?;
        let meter = Meter {
            spans: &spans,
            fee_per_hour: Catalogue::embedded().cluster_fee_per_hour(),
            cluster_created: self.cluster.summary.as_ref().and_then(|s| s.create_time),
            watched: self.meter.nodes.watched(),
        };
        Some(f(&meter))
    }

    /// What the cluster cost from its creation to `now`; None where it is not known (no
    /// cluster, not Gantry's, the nodes not listed yet).
    pub fn cluster_cost_so_far(&self, now: Timestamp) -> Option<Figure> {
        let created = self.cluster.summary.as_ref()?.create_time?;
        self.with_meter(|m| m.between(created, now))
    }

    /// What the newest attempt's run cost from its start until it ended or `now`.
    pub fn run_cost(&self, now: Timestamp) -> Option<RunCost> {
        let run = self.run_span()?;
        self.with_meter(|m| run.cost(m, now))
    }

    /// The run's cost so far in US dollars and whether that is a lower bound (`partial`); None
    /// when unknown (no run, a price the snapshot lacks, not Gantry's cluster, nodes not listed
    /// yet) — never 0 for unknown.
    pub fn run_cost_so_far(&self, now: Timestamp) -> Option<(f64, bool)> {
        self.run_cost(now)
            .and_then(|c| c.usd.map(|usd| (usd, c.partial)))
    }

    fn run_span(&self) -> Option<RunSpan> {
        let newest = self.jobs.newest()?;
        RunSpan::of(newest, self.jobs.attempts())
    }

    /// The run's figure to record on its newest attempt now, if this engine records and it is
    /// due: never while the Node watch is away (what it would write would undercount for good).
    pub fn cost_to_record(&mut self, now: Timestamp) -> Option<Entry> {
        if !self.recovery.mine() || !self.meter.nodes.watching() {
            return None;
        }
        let run = self.run_span()?;
        let cost = self.run_cost(now)?;
        let recorded_on_it = self
            .jobs
            .newest()
            .and_then(|a| a.recorded_cost)
            .is_some_and(|r| r.as_of >= cost.as_of);
        let ended = run.until.is_some();
        let changes = self.meter.nodes.changes();
        let since = |when: &Timestamp, wait: std::time::Duration| {
            now.duration_since(*when) >= jiff::SignedDuration::try_from(wait).unwrap_or_default()
        };
        let due = match &self.meter.last_recorded {
            Some((job, _)) if *job != run.newest => true,
            Some(_) if ended => self.meter.end_recorded.as_ref() != Some(&run.newest),
            Some((_, when)) if changes != self.meter.changes_recorded => {
                since(when, ledger::RECORD_AFTER_A_CHANGE)
            }
            Some((_, when)) => since(when, ledger::RECORD_EVERY),
            None => true,
        };
        if recorded_on_it {
            // Recorded as of now or later already (by another engine, or this one read back).
            let other = self.meter.last_recorded.as_ref();
            if other.is_none_or(|(job, _)| *job != run.newest) {
                self.meter.last_recorded = Some((run.newest.clone(), now));
            }
            self.meter.changes_recorded = changes;
            return None;
        }
        if !due {
            return None;
        }
        self.meter.last_recorded = Some((run.newest.clone(), now));
        self.meter.changes_recorded = changes;
        if ended {
            self.meter.end_recorded = Some(run.newest.clone());
        }
        Some(Entry {
            job: run.newest,
            cost: cost.recorded(u32::try_from(self.meter.nodes.alive()).ok()),
        })
    }
}

#[cfg(test)]
#[path = "meter_tests.rs"]
mod tests;
