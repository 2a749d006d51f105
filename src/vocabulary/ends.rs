//! How a pod ended, in words every layer shares: its [`Class`] (read from what Kubernetes states
//! in structured fields, `k8s::fate`), its [`Fate`] before it is priced, and its [`PodEnd`] as
//! it is recorded on its attempt (the annotation `gantry.dev/pod-ends`, a JSON list every
//! Gantry reads) and shown by `gantry status`.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

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
    /// its attempt ended, by a recovery that stopped its attempt, or outside Gantry.
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

/// What a pod's end was, before it is priced and recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Fate {
    pub class: Class,
    pub detail: String,
    pub at: Option<Timestamp>,
    /// How long its container ran (0: never started).
    pub ran_seconds: u64,
}

/// Whole seconds from `from` to `to` (0 when `to` is earlier).
pub fn seconds_between(from: Timestamp, to: Timestamp) -> u64 {
    u64::try_from(to.as_second() - from.as_second()).unwrap_or(0)
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
    pub at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// How long its container ran (0: it never started).
    pub ran_seconds: u64,
    /// Its share of its node's price for that time, in US dollars; null where the price is
    /// not known (never 0 for want of one).
    pub cost: Option<f64>,
}

impl PodEnd {
    /// The ends an annotation's text records, oldest first; none when it is not Gantry's list
    /// (it is then rewritten whole by the next record).
    pub fn parse_recorded(text: &str) -> Vec<PodEnd> {
        serde_json::from_str(text).unwrap_or_default()
    }
}

/// How many of `ends` were preemptions.
pub fn preemptions<'a>(ends: impl IntoIterator<Item = &'a PodEnd>) -> usize {
    ends.into_iter()
        .filter(|e| e.class == Class::Preempted)
        .count()
}
