//! A run's cost kept on its newest attempt, in the annotation `gantry.dev/cost`
//! (`{"version":1,"usd":…,"asOf":…,"since":…,"partial":…,"nodes":…}`), so any Gantry — another machine's,
//! one started later, `gantry status` — carries on from it instead of from nothing. Only the
//! engine that holds the recoverer's Lease writes it (through the gate, so never a read-only
//! one), every [`RECORD_EVERY`], on a new attempt, when an attempt ends, and soon after a node
//! came or went ([`RECORD_AFTER_A_CHANGE`]). It writes with the Job's
//! `resourceVersion` (optimistic concurrency), reading again when another write came first,
//! and never over a figure recorded as of a later time.

use std::time::Duration;

use crate::k8s::labels::COST;
use crate::vocabulary::cost::Recorded;
/// How often the recording engine writes the figure while a run goes on.
pub const RECORD_EVERY: Duration = Duration::from_secs(120);
/// How soon after a node came or went (a resize, the autoscaler, a scale to zero) the figure is
/// written again, at the soonest: a reader carrying on from it with the nodes alive now (`gantry
/// status`) is then right again.
pub const RECORD_AFTER_A_CHANGE: Duration = Duration::from_secs(10);

/// The figure recorded on a Job, if any in a format this Gantry reads.
pub fn read(
    job_annotations: Option<&std::collections::BTreeMap<String, String>>,
) -> Option<Recorded> {
    Recorded::parse(job_annotations?.get(COST)?)
}

/// A figure to record on an attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The run's newest attempt (a Job).
    pub job: String,
    pub cost: Recorded,
}

/// Records `cost` on the Job `job`. Whether it was written (false: the Job is gone, or holds a
/// figure as of the same time or later).
pub async fn record(
    client: &kube::Client,
    namespace: &str,
    job: &str,
    cost: &Recorded,
) -> Result<bool, String> {
    let text = serde_json::to_string(cost).map_err(|e| e.to_string())?;
    let written = crate::k8s::annotate::update(
        client,
        namespace,
        job,
        COST,
        "recording the run's cost",
        |annotations| {
            let newer = read(annotations).is_some_and(|r| r.as_of >= cost.as_of);
            (!newer).then(|| (text.clone(), ()))
        },
    )
    .await?;
    Ok(written.is_some())
}
