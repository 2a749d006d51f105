//! What `gantry status` says the cluster and the run cost so far, from the meter
//! (`crate::meter`) with no watch of its own: the nodes alive now count from their creation; a
//! node that came and went is known only to an engine that watched it. So the cluster's figure is
//! a lower bound (partial), and the run's carries on from what the recording engine kept on the
//! run's attempts — exact from there while that engine (the recoverer's Lease holder) is still
//! recording it and the nodes are those it recorded with, since it watches what this command
//! cannot.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::job::JobStatus;
use crate::meter::ledger::RECORD_EVERY;
use crate::meter::{Figure, Meter, NodeSeen, NodeSpan, PoolDisks, RunCost, RunSpan, Stretch};
use crate::pricing::Catalogue;

/// The cluster's nodes as `gantry status` read them, priced.
pub struct Nodes {
    spans: Vec<NodeSpan>,
    created: Option<Timestamp>,
}

impl Nodes {
    /// The nodes alive now (`seen`, listed at `now`), priced with the pools of `summary`.
    pub fn of(summary: &crate::gke::ClusterSummary, seen: &[NodeSeen], now: Timestamp) -> Nodes {
        let disks = PoolDisks::of(summary);
        let spans = seen
            .iter()
            .map(|n| NodeSpan {
                name: n.name.clone(),
                per_hour: n.per_hour(&disks),
                from: n.created.unwrap_or(now),
                to: None,
            })
            .collect();
        Nodes {
            spans,
            created: summary.create_time,
        }
    }

    fn meter<'a>(&'a self, watched: &'a [Stretch]) -> Meter<'a> {
        Meter {
            spans: &self.spans,
            fee_per_hour: Catalogue::embedded().cluster_fee_per_hour(),
            cluster_created: self.created,
            watched,
        }
    }

    /// What the cluster cost since its creation: a lower bound, as no one here watched.
    pub fn cluster_so_far(&self, now: Timestamp) -> Option<Figure> {
        Some(self.meter(&[]).between(self.created?, now))
    }

    /// What the newest attempt's run cost until it ended, or until `now`.
    pub fn run_cost(&self, job: &JobStatus, now: Timestamp) -> Option<RunCost> {
        let newest = &job.current()?.summary;
        let run = RunSpan::of(newest, job.attempts.iter().map(|a| &a.summary))?;
        let watched = watched_by_the_recorder(job, &run, &self.spans, now);
        Some(run.cost(&self.meter(&watched), now))
    }
}

/// The time since the run's figure was recorded counts as watched while the engine that records
/// it goes on (it holds the recoverer's Lease, and its record is fresh), as long as the nodes
/// alive now are those it saw then: it records again soon after a node comes or goes.
fn watched_by_the_recorder(
    job: &JobStatus,
    run: &RunSpan,
    spans: &[NodeSpan],
    now: Timestamp,
) -> Vec<Stretch> {
    let Some(recorded) = run.recorded else {
        return Vec::new();
    };
    let fresh = SignedDuration::try_from(RECORD_EVERY.saturating_mul(2)).unwrap_or_default()
        + SignedDuration::from_secs(30);
    let same_nodes = u32::try_from(spans.len()).ok() == recorded.nodes
        && spans.iter().all(|s| s.from <= recorded.as_of);
    if job.recoverer.is_some()
        && !job.recoverer_silent
        && now.duration_since(recorded.as_of) <= fresh
        && same_nodes
    {
        vec![Stretch {
            from: recorded.as_of,
            to: None,
        }]
    } else {
        Vec::new()
    }
}

/// "run cost  $1.37 since it started 2h ago", "at least …", or why it is not known.
pub fn run_line(cost: &Result<crate::meter::RunCost, String>, now: Timestamp) -> String {
    match cost {
        Ok(c) => {
            let ended = if now.duration_since(c.as_of).as_secs() > 0 {
                format!(
                    ", ended {} ago",
                    crate::ui::widgets::age(Some(c.as_of), now)
                )
            } else {
                String::new()
            };
            format!(
                "run cost  {} since it started {} ago{ended}",
                crate::meter::words(c.usd, c.partial),
                crate::ui::widgets::age(Some(c.since), now)
            )
        }
        Err(why) => format!("run cost  {why}"),
    }
}

/// The run's cost as `--json` adds it to `job`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunCostJson {
    /// US dollars; `null` when unknown.
    pub cost_so_far: Option<f64>,
    /// A lower bound: some of the run's time, nobody watched the nodes.
    pub cost_so_far_partial: bool,
    /// When the run started, and as of when the figure is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_since: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_as_of: Option<Timestamp>,
    /// As of when an engine recorded the figure this one carries on from (`gantry.dev/cost`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_recorded_as_of: Option<Timestamp>,
    /// Why `costSoFar` is `null`, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_unknown: Option<String>,
}

impl RunCostJson {
    pub fn of(cost: Result<&RunCost, &str>) -> RunCostJson {
        match cost {
            Ok(c) => RunCostJson {
                cost_so_far: c.usd.map(crate::pricing::format::round_usd),
                cost_so_far_partial: c.partial,
                cost_since: Some(c.since),
                cost_as_of: Some(c.as_of),
                cost_recorded_as_of: c.recorded_as_of,
                cost_unknown: c.usd.is_none().then(|| UNPRICED.to_string()),
            },
            Err(why) => RunCostJson {
                cost_so_far: None,
                cost_so_far_partial: false,
                cost_since: None,
                cost_as_of: None,
                cost_recorded_as_of: None,
                cost_unknown: Some(why.to_string()),
            },
        }
    }
}

/// Why a figure is unknown when a node has no price.
pub const UNPRICED: &str = "a node's machine type, GPU or disk has no price in the snapshot";
