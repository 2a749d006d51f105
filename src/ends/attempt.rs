//! Every end known of one attempt, for `gantry status`: recorded on the Job by an engine,
//! stated by the pods still there (priced from their nodes), and read back from the Job
//! controller's Events for pods no Gantry saw end — the last said to be partial.

use std::collections::HashMap;

use serde::Serialize;

use super::cost::NodeFacts;
use super::from_events::{created_pods, infer};
use crate::k8s::status::{AttemptSummary, EventSummary, PodSummary};
use crate::vocabulary::ends::{PodEnd, preemptions};

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptEnds {
    /// Oldest first.
    pub pod_ends: Vec<PodEnd>,
    pub preemptions: usize,
    /// Some ends were read back from the cluster's Events (no Gantry saw them happen): their
    /// times and costs are not known, and Events older than the cluster keeps (1 h by default)
    /// are gone.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// Pods the Job made that are gone with no end known.
    #[serde(skip_serializing_if = "is_zero")]
    pub unexplained: usize,
    /// What its pods' time cost: the sum of their ends' costs, in US dollars; null where one of
    /// them is not known (or none ended yet).
    pub cost: Option<f64>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

pub fn of_attempt(
    attempt: &AttemptSummary,
    pods: &[PodSummary],
    events: &[EventSummary],
    nodes: &HashMap<String, NodeFacts>,
) -> AttemptEnds {
    let mut ends = attempt.recorded_ends.clone();
    for pod in pods {
        let Some(fate) = &pod.fate else { continue };
        if ends.iter().any(|e| e.pod == pod.name) {
            continue;
        }
        let sharing = super::sharing(pods, pod);
        let mut end = pod.end(fate.clone());
        end.cost = pod
            .node
            .as_ref()
            .and_then(|n| nodes.get(n))
            .and_then(|f| f.cost(f.share(&pod.requests, sharing), fate.ran_seconds));
        ends.push(end);
    }
    let inferred = infer(attempt, &created_pods(events, &attempt.name), pods, &ends);
    let partial = !inferred.ends.is_empty() || inferred.unexplained > 0;
    ends.extend(inferred.ends);
    ends.sort_by_key(|e| (e.at.is_none(), e.at));
    let cost = if ends.is_empty() {
        None
    } else {
        ends.iter()
            .map(|e| e.cost)
            .sum::<Option<f64>>()
            .map(crate::pricing::format::round_usd)
    };
    AttemptEnds {
        cost,
        preemptions: preemptions(&ends),
        pod_ends: ends,
        partial,
        unexplained: inferred.unexplained,
    }
}
