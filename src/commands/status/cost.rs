//! What `gantry status` says the cluster and the run cost so far, from the meter
//! (`crate::meter`) with no watch of its own: the nodes alive now count from their creation; a
//! node that came and went is known only to an engine that watched it. So the cluster's figure is
//! a lower bound (partial), and the run's carries on from what the recording engine kept on the
//! run's attempts — exact from there while that engine (the recoverer's Lease holder) is still
//! recording it, since it watches what this command cannot.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use crate::k8s::JobStatus;
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
        let watched = watched_by_the_recorder(job, &run, now);
        Some(run.cost(&self.meter(&watched), now))
    }
}

/// Whether an engine is recording the run's figure as it goes (it holds the recoverer's Lease,
/// and its figure is fresh): what it watches since then is counted as watched.
fn watched_by_the_recorder(job: &JobStatus, run: &RunSpan, now: Timestamp) -> Vec<Stretch> {
    let from = run.recorded.map_or(run.since, |r| r.as_of);
    let fresh = SignedDuration::try_from(RECORD_EVERY.saturating_mul(2)).unwrap_or_default()
        + SignedDuration::from_secs(30);
    if job.recoverer.is_some() && now.duration_since(from) <= fresh {
        vec![Stretch { from, to: None }]
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
    /// Why `costSoFar` is `null`, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_unknown: Option<String>,
}

impl RunCostJson {
    pub fn of(cost: Result<&RunCost, &str>) -> RunCostJson {
        match cost {
            Ok(c) => RunCostJson {
                cost_so_far: c.usd.map(crate::meter::round_usd),
                cost_so_far_partial: c.partial,
                cost_since: Some(c.since),
                cost_as_of: Some(c.as_of),
                cost_unknown: c.usd.is_none().then(|| UNPRICED.to_string()),
            },
            Err(why) => RunCostJson {
                cost_so_far: None,
                cost_so_far_partial: false,
                cost_since: None,
                cost_as_of: None,
                cost_unknown: Some(why.to_string()),
            },
        }
    }
}

/// Why a figure is unknown when a node has no price.
pub const UNPRICED: &str = "a node's machine type, GPU or disk has no price in the snapshot";
