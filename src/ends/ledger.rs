//! The ends kept on the Job itself, in the annotation `gantry.dev/pod-ends` (a JSON list, the
//! newest [`KEPT`]), so any Gantry — another machine's, or one started after the run — reads
//! what an engine saw. Several engines may watch one Job: each adds only the pods not recorded
//! yet, and writes with the Job's `resourceVersion` (optimistic concurrency), reading again
//! when another engine wrote first. A read-only engine never writes (the gate refuses it).

use crate::k8s::labels::POD_ENDS;
use crate::vocabulary::ends::PodEnd;

/// The most ends one Job keeps (the oldest go first).
pub const KEPT: usize = 50;

/// The ends recorded on a Job, oldest first; none when there are none or the annotation is not
/// Gantry's list (it is then rewritten whole by the next record).
pub fn read(job_annotations: Option<&std::collections::BTreeMap<String, String>>) -> Vec<PodEnd> {
    job_annotations
        .and_then(|a| a.get(POD_ENDS))
        .map(|text| PodEnd::parse_recorded(text))
        .unwrap_or_default()
}

/// `recorded` with the ends of `new` whose pods it lacks, the newest [`KEPT`]; None when every
/// pod of `new` is recorded already.
pub fn merge(mut recorded: Vec<PodEnd>, new: &[PodEnd]) -> Option<Vec<PodEnd>> {
    let before = recorded.len();
    for end in new {
        if !recorded.iter().any(|r| r.pod == end.pod) {
            recorded.push(end.clone());
        }
    }
    if recorded.len() == before {
        return None;
    }
    recorded.sort_by_key(|e| e.at);
    let excess = recorded.len().saturating_sub(KEPT);
    recorded.drain(..excess);
    Some(recorded)
}

/// Adds `new` to the Job's recorded ends. How many were added (0: all were there already, or
/// the Job is gone).
pub async fn record(
    client: &kube::Client,
    namespace: &str,
    job: &str,
    new: &[PodEnd],
) -> Result<usize, String> {
    let added = crate::k8s::annotate::update(
        client,
        namespace,
        job,
        POD_ENDS,
        "recording pod ends",
        |annotations| {
            let recorded = read(annotations);
            let before = recorded.len();
            let merged = merge(recorded, new)?;
            let added = merged.len().saturating_sub(before).max(1);
            let text = serde_json::to_string(&merged).ok()?;
            Some((text, added))
        },
    )
    .await?;
    Ok(added.unwrap_or(0))
}

/// An end an engine saw happen, to be priced (it knows the node) and recorded on its attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The attempt (Job) it belongs to.
    pub job: String,
    pub end: PodEnd,
    /// What the pod asked of its node.
    pub requests: crate::vocabulary::Requests,
    /// Pods of the same attempt on that node (those that asked for nothing share it evenly).
    pub sharing: usize,
}
