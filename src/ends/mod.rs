//! How each pod of the training Job ended, and what its time cost: the answer to "did it fail,
//! or was it taken away?". A spot node reclaimed under a pod is not a bug in the training code,
//! and is not counted as one (the Job's `podFailurePolicy` ignores it, `k8s::manifest::Policy`);
//! the operator sees every end with its class, where it ran, for how long and at what cost.
//!
//! Classes are read from what Kubernetes states in structured fields — the pod's phase and
//! reason, its `DisruptionTarget` condition and that condition's reason, its container's
//! terminated or waiting reason and exit code — never from message text, so they read the same
//! on GKE and on any `--context` cluster.
//!
//! One file per job:
//! - [`classify`]: a pod's end from its object ([`fate_of`]), and from what was last seen of a
//!   pod that is gone ([`gone`]).
//! - [`cost`]: its share of its node's price for the time it ran.
//! - [`ledger`]: the ends kept on the Job itself (an annotation every Gantry can read).
//! - [`from_events`]: what the cluster's Events still say of pods no Gantry saw end.
//! - [`attempt`]: all of it for one attempt, as `gantry status` shows it.

pub mod attempt;
pub mod classify;
pub mod cost;
pub mod from_events;
pub mod ledger;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use classify::{Fate, GoneContext, fate_of, gone};

/// A pod's end as its summary holds it (the watchers classify each pod as they see it).
pub fn fate_of_summary(pod: &crate::k8s::status::PodSummary) -> Option<Fate> {
    pod.fate.clone()
}

/// How a pod ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Its work was done (exit code 0).
    Succeeded,
    /// Kubernetes took it away (`DisruptionTarget`): its node was reclaimed or shut down, it was
    /// evicted, or it was collected with a node that went away. Not the training code's fault.
    Preempted,
    /// The training container exited with a nonzero code.
    AppError,
    /// The training container was killed for using more memory than its limit.
    Oom,
    /// It could never start: an image that cannot be pulled, a bad command or spec. Kubernetes
    /// never ends such a pod by itself; Gantry does not retry it.
    ConfigError,
    /// It ended without ever running because no node could be made for it.
    Capacity,
    /// Its attempt's `activeDeadlineSeconds` (or its own) passed.
    Deadline,
    /// Deleted before it ended: by a person through Gantry (named), by the Job controller when
    /// its attempt ended, or outside Gantry.
    Deleted,
}

impl Class {
    /// The name scripts see (`gantry status --json`, notices).
    pub fn name(self) -> &'static str {
        match self {
            Class::Succeeded => "succeeded",
            Class::Preempted => "preempted",
            Class::AppError => "app-error",
            Class::Oom => "oom",
            Class::ConfigError => "config-error",
            Class::Capacity => "capacity",
            Class::Deadline => "deadline",
            Class::Deleted => "deleted",
        }
    }

    /// Whether the end was a failure the operator has to look at (not a success, not something
    /// the cloud did to a healthy pod).
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Class::AppError | Class::Oom | Class::ConfigError | Class::Capacity | Class::Deadline
        )
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One pod's end, as recorded on its Job and shown by `gantry status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodEnd {
    pub pod: String,
    /// Its completion index (rank) in an Indexed Job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    pub class: Class,
    /// In words: `exit code 1`, `node shut down (spot VM reclaimed)`, `deleted by alice@ops`.
    pub detail: String,
    /// When it ended.
    pub at: Option<jiff::Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// How long its container ran (0: it never started).
    pub ran_seconds: u64,
    /// Its share of its node's price for that time, in US dollars; null where the price is
    /// not known (never 0 for want of one).
    pub cost: Option<f64>,
}

impl PodEnd {
    /// A pod's end as its fate says, not priced yet.
    pub fn of(pod: &crate::k8s::status::PodSummary, fate: Fate) -> PodEnd {
        PodEnd {
            pod: pod.name.clone(),
            index: pod.index,
            class: fate.class,
            detail: fate.detail,
            at: fate.at,
            node: pod.node.clone(),
            ran_seconds: fate.ran_seconds,
            cost: None,
        }
    }
}

/// How many of `pods` ran on `pod`'s node, itself included (at least 1): those that asked for
/// nothing share the node's price evenly (`cost::NodeFacts::share`).
pub fn sharing<'a>(
    pods: impl IntoIterator<Item = &'a crate::k8s::status::PodSummary>,
    pod: &crate::k8s::status::PodSummary,
) -> usize {
    pods.into_iter()
        .filter(|p| p.node.is_some() && p.node == pod.node)
        .count()
        .max(1)
}

/// How many of `ends` were preemptions.
pub fn preemptions<'a>(ends: impl IntoIterator<Item = &'a PodEnd>) -> usize {
    ends.into_iter()
        .filter(|e| e.class == Class::Preempted)
        .count()
}
