//! Why a pod is not running, in one line, and what to do about it. The most common wait in GPU
//! training is a pod that stays `Pending` or `ContainerCreating`: no GPU node yet, a pool at its
//! autoscaling maximum, a quota of 0, a zone out of that accelerator, a selector or a taint
//! nothing matches, an image that is not there or not allowed. The causes are read from the
//! pod (its phase, its container's waiting reason and message), the events about it (the
//! scheduler's `FailedScheduling`, the cluster autoscaler's `TriggeredScaleUp`,
//! `NotTriggerScaleUp` and `FailedScaleUp`, the kubelet's `Pulling` and `Failed`) and, on GKE,
//! the cluster's node pools; on a kubeconfig context (no GKE API) from the pod and its events
//! alone, and said to be so. Every cause is a variant of [`Cause`] with its fields; when several
//! apply the most telling one wins (an image that cannot be pulled before a pool at its
//! maximum, before a node being made), and the diagnosis changes as the cause does.

mod read;
mod text;

#[cfg(test)]
mod tests;

use jiff::Timestamp;
use serde::Serialize;

use crate::gke::summary::PoolSummary;
use crate::k8s::status::{EventSummary, PodSummary};

/// What holds a pod back.
#[derive(Debug, Clone, PartialEq)]
pub enum Cause {
    /// The autoscaler asked for a node of `pool` (`from` → `to` nodes) at `asked`.
    ScalingUp {
        pool: String,
        from: u32,
        to: u32,
        asked: Option<Timestamp>,
    },
    /// No pool has the resource the pod asks for (`nvidia.com/gpu`).
    NoPool { resource: String },
    /// The pool that would fit the pod is at its most nodes.
    PoolAtMax { pool: String, max: u32 },
    /// GKE could not make a node: a quota (`GPUS_ALL_REGIONS`, `NVIDIA_T4_GPUS`) is spent.
    Quota { quota: String },
    /// The zone has no capacity for the pool's machines now (`ZONE_RESOURCE_POOL_EXHAUSTED`).
    Stockout { zone: String },
    /// The pod's node selector matches no node (and no pool).
    Selector { selector: String },
    /// The nodes carry a taint the pod does not tolerate.
    Taint { taint: String },
    /// The node it would run on is going away, or there is none now: a spot VM reclaimed
    /// (`cloud.google.com/impending-node-termination`), a node not ready or drained, a pool
    /// whose nodes are being made again. Not the pod's to fix: `taint` is the one that said so,
    /// empty when no node was there at all.
    NodeGoing { taint: String },
    /// The image is not in the registry (`ErrImagePull`, tried `tries` times).
    ImageNotFound { image: String, tries: u32 },
    /// The registry refused the node (403): its service account may not read the image.
    ImageForbidden { image: String },
    /// On a node, its container being made: pulling `image` (when the kubelet said so).
    Creating { image: Option<String> },
    /// Something else, as Kubernetes said it.
    Unknown { reason: String, message: String },
}

impl Cause {
    /// The name scripts see (`gantry status --json`, notices).
    pub fn name(&self) -> &'static str {
        match self {
            Cause::ScalingUp { .. } => "scaling-up",
            Cause::NoPool { .. } => "no-pool",
            Cause::PoolAtMax { .. } => "pool-at-max",
            Cause::Quota { .. } => "quota",
            Cause::Stockout { .. } => "stockout",
            Cause::Selector { .. } => "selector",
            Cause::Taint { .. } => "taint",
            Cause::NodeGoing { .. } => "node-going",
            Cause::ImageNotFound { .. } => "image-not-found",
            Cause::ImageForbidden { .. } => "image-forbidden",
            Cause::Creating { .. } => "creating",
            Cause::Unknown { .. } => "unknown",
        }
    }

    /// Nothing is known yet: a pod just made, that neither the scheduler nor the kubelet has
    /// said anything of. Not worth telling.
    pub fn is_not_known_yet(&self) -> bool {
        matches!(self, Cause::Unknown { reason, message } if reason == "Pending" && message.is_empty())
    }

    /// Lower first: what the operator must fix before what only takes time.
    pub fn rank(&self) -> u8 {
        match self {
            Cause::ImageNotFound { .. } | Cause::ImageForbidden { .. } => 0,
            Cause::Quota { .. } | Cause::Stockout { .. } => 1,
            Cause::NoPool { .. } | Cause::Selector { .. } | Cause::Taint { .. } => 2,
            Cause::PoolAtMax { .. } => 3,
            Cause::ScalingUp { .. } | Cause::NodeGoing { .. } => 4,
            Cause::Creating { .. } => 5,
            Cause::Unknown { .. } => 6,
        }
    }
}

/// A pod's diagnosis: its cause, since when the pod has waited, and whether the node pools
/// could be read (a kubeconfig context has no GKE API: the causes come from events alone).
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    pub cause: Cause,
    pub since: Option<Timestamp>,
    pub pools_known: bool,
}

/// What `gantry status --json` gives for a waiting pod.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaitingJson {
    pub cause: &'static str,
    pub detail: String,
    pub hint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
}

impl Waiting {
    pub fn json(&self, now: Timestamp) -> WaitingJson {
        WaitingJson {
            cause: self.cause.name(),
            detail: self.detail(now),
            hint: self.hint(),
            since: self.since.map(|t| t.to_string()),
        }
    }
}

/// Why `pod` is not running, or None when it runs, has ended or is going away. `events` are
/// the events about it (any order); `pools` the cluster's node pools, None where GKE cannot be
/// asked.
pub fn diagnose(
    pod: &PodSummary,
    events: &[&EventSummary],
    pools: Option<&[PoolSummary]>,
) -> Option<Waiting> {
    let runs = pod.phase == "Running" && pod.started && !pod.terminated;
    let ended = matches!(pod.phase.as_str(), "Succeeded" | "Failed") || pod.terminated;
    if runs || ended || pod.deleting {
        return None;
    }
    let mut events: Vec<&EventSummary> = events
        .iter()
        .copied()
        .filter(|e| e.kind == "Pod" && e.object == pod.name)
        .collect();
    // Newest last; an event without a time counts as old.
    events.sort_by_key(|e| e.last_seen);
    let cause = read::causes(pod, &events, pools)
        .into_iter()
        .min_by_key(Cause::rank)
        .unwrap_or_else(|| Cause::Unknown {
            reason: pod.reason.clone().unwrap_or_else(|| pod.phase.clone()),
            message: pod.message.clone().unwrap_or_default(),
        });
    Some(Waiting {
        cause,
        since: pod.created,
        pools_known: pools.is_some(),
    })
}

/// Seconds from a pod's creation until its container ran (`timeToRunningSeconds`).
pub fn time_to_running(pod: &PodSummary) -> Option<i64> {
    let ran = pod.running_since?;
    Some(ran.duration_since(pod.created?).as_secs().max(0))
}

/// Seconds from an attempt's first pod being created until all its pods had run (the
/// attempt's `timeToRunningSeconds`); None while one has not run yet, or without pods.
pub fn attempt_time_to_running(pods: &[PodSummary]) -> Option<i64> {
    let ran: Option<Vec<Timestamp>> = pods.iter().map(|p| p.running_since).collect();
    let last = ran?.into_iter().max()?;
    let first = pods.iter().filter_map(|p| p.created).min()?;
    Some(last.duration_since(first).as_secs().max(0))
}
