//! What a run cost: what the cluster cost from the run's start (its first attempt's creation)
//! until it ended (its newest attempt finished) or now — every node and the fee, since the
//! cluster was kept for the run, time between attempts included. Carried on from the figure an
//! engine recorded on its attempts (`ledger`): recorded up to `asOf`, metered after.

use jiff::Timestamp;
use serde::Serialize;

use super::{Figure, Meter};
use crate::k8s::status::AttemptSummary;
use crate::vocabulary::cost::{Recorded, VERSION};

/// A run as far as its cost goes.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpan {
    /// `GANTRY_RUN_ID` (empty for an attempt made before runs were recorded).
    pub id: String,
    /// Its newest attempt, where its figure is recorded.
    pub newest: String,
    /// When it started.
    pub since: Timestamp,
    /// Whether `since` is its true start: false when its first attempts are gone and nothing was
    /// recorded (the figure is then partial).
    pub start_known: bool,
    /// When it ended (None: it goes on).
    pub until: Option<Timestamp>,
    /// The latest figure recorded on any of its attempts.
    pub recorded: Option<Recorded>,
}

/// What a run cost from `since` to `as_of`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunCost {
    /// US dollars (None: a price is unknown).
    pub usd: Option<f64>,
    /// A lower bound: some of the time, nobody watched the nodes.
    pub partial: bool,
    pub since: Timestamp,
    pub as_of: Timestamp,
    /// The `asOf` of the recorded figure it carries on from, if any.
    pub recorded_as_of: Option<Timestamp>,
}

impl RunSpan {
    /// The run of `newest` among `attempts` (every attempt of the training Job, `newest` may be
    /// among them). None before it is created.
    pub fn of<'a>(
        newest: &AttemptSummary,
        attempts: impl IntoIterator<Item = &'a AttemptSummary>,
    ) -> Option<RunSpan> {
        let id = newest.run.as_ref().map(|r| r.id.clone());
        let same_run = |a: &AttemptSummary| match &id {
            Some(id) => a.run.as_ref().is_some_and(|r| &r.id == id),
            None => a.name == newest.name,
        };
        let mut run: Vec<&AttemptSummary> = attempts
            .into_iter()
            .filter(|a| same_run(a) && a.name != newest.name)
            .collect();
        run.push(newest);
        let recorded = run
            .iter()
            .filter_map(|a| a.recorded_cost)
            .max_by_key(|r| r.as_of);
        let first = run
            .iter()
            .filter(|a| a.created.is_some())
            .min_by_key(|a| a.created)?;
        let (since, start_known) = match &recorded {
            Some(r) => (r.since, true),
            None => (
                first.created?,
                first.run.as_ref().is_none_or(|r| r.attempt <= 1),
            ),
        };
        let until = newest
            .status
            .is_finished()
            .then(|| newest.finished_at.or(newest.completion_time))
            .flatten();
        Some(RunSpan {
            id: id.unwrap_or_default(),
            newest: newest.name.clone(),
            since,
            start_known,
            until,
            recorded,
        })
    }

    /// What it cost until it ended, or until `now` while it goes on: what was recorded, and
    /// what the meter says of the time after.
    pub fn cost(&self, meter: &Meter, now: Timestamp) -> RunCost {
        let until = self.until.map_or(now, |u| u.min(now));
        let (figure, as_of) = match &self.recorded {
            Some(r) if r.as_of >= until => (
                Figure {
                    usd: r.usd,
                    partial: r.partial,
                },
                r.as_of,
            ),
            Some(r) => {
                let before = Figure {
                    usd: r.usd,
                    partial: r.partial,
                };
                (before.plus(meter.between(r.as_of, until)), until)
            }
            None => {
                let mut figure = meter.between(self.since, until);
                figure.partial |= !self.start_known;
                (figure, until)
            }
        };
        RunCost {
            usd: figure.usd,
            partial: figure.partial,
            since: self.since,
            as_of,
            recorded_as_of: self.recorded.map(|r| r.as_of),
        }
    }
}

impl RunCost {
    /// As the annotation keeps it, with the nodes alive at `as_of` when they are known.
    pub fn recorded(&self, nodes: Option<u32>) -> Recorded {
        Recorded {
            version: VERSION,
            usd: self.usd,
            as_of: self.as_of,
            since: self.since,
            partial: self.partial,
            nodes,
        }
    }
}
