//! What the cluster and the run truly cost (`crate::meter`), from the nodes' lives this engine
//! saw: for the cluster pane, `gantry watch`, messages and the budget guard. When the run's
//! figure is recorded on its attempt is the cost ledger's (`policies::ledgers`).

use jiff::Timestamp;

use super::World;
use crate::meter::{Figure, Meter, NodeSpan, RunCost, RunSpan};
use crate::pricing::Catalogue;

impl World {
    /// The meter over the nodes this engine saw: None on a cluster Gantry does not manage, and
    /// until the nodes have been listed.
    fn meter_spans(&self) -> Option<Vec<NodeSpan>> {
        let managed = self.cluster.target.as_ref().is_some_and(|t| t.managed);
        (managed && self.nodes.listed()).then(|| self.nodes.spans())
    }

    fn with_meter<T>(&self, f: impl FnOnce(&Meter) -> T) -> Option<T> {
        let spans = self.meter_spans()?;
        let meter = Meter {
            spans: &spans,
            fee_per_hour: Catalogue::embedded().cluster_fee_per_hour(),
            cluster_created: self.cluster.summary.as_ref().and_then(|s| s.create_time),
            watched: self.nodes.watched(),
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

    pub fn run_span(&self) -> Option<RunSpan> {
        let newest = self.jobs.newest()?;
        RunSpan::of(newest, self.jobs.attempts())
    }
}

#[cfg(test)]
#[path = "meter_tests.rs"]
mod tests;
