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
//! The words (`Class`, `Fate`, `PodEnd`) are the vocabulary's (`vocabulary::ends`), and a pod's
//! end read from its object is `k8s::fate`'s. One file per job here:
//! - [`classify`]: the end of a pod that is gone, from what was last seen of it ([`gone`]).
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

pub use classify::{GoneContext, gone};

use crate::k8s::status::PodSummary;

/// How the pods of an attempt Gantry stopped by suspending it ended: not failures, not
/// preemptions (None: Gantry did not stop it).
pub fn stopped_by_gantry(attempt: &crate::k8s::status::AttemptSummary) -> Option<&'static str> {
    if attempt.recovered_into.is_some() {
        Some("stopped by recovery")
    } else if attempt.ended_by.is_some() {
        Some("stopped when Gantry ended the run")
    } else {
        None
    }
}

/// How many of `pods` ran on `pod`'s node, itself included (at least 1): those that asked for
/// nothing share the node's price evenly (`cost::NodeFacts::share`).
pub fn sharing<'a>(pods: impl IntoIterator<Item = &'a PodSummary>, pod: &PodSummary) -> usize {
    pods.into_iter()
        .filter(|p| p.node.is_some() && p.node == pod.node)
        .count()
        .max(1)
}
