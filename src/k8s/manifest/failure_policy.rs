//! The Job's `podFailurePolicy`: how Kubernetes itself tells a preempted pod from a failed one,
//! so that a run on spot nodes survives preemptions with no Gantry process running. A pod with
//! the `DisruptionTarget` condition (its node was reclaimed or shut down, it was evicted or
//! garbage-collected with its node) is replaced without counting toward `backoffLimit`; an exit
//! code from `[job.recovery] fail-exit-codes` fails the Job at once.
//!
//! A manifest's own policy (`--job-manifest`) is kept as written. Kubernetes allows a policy only
//! with `restartPolicy: Never`: with `OnFailure` the Job goes without one ([`Policy::Without`]),
//! and the launch says so.

use k8s_openapi::api::batch::v1::PodFailurePolicy;
use serde_json::{Value, json};

use crate::config::JobConfig;

/// The policy a new attempt gets, and why when it gets none.
#[derive(Debug, Clone, PartialEq)]
pub enum Policy {
    /// Gantry's rules, from `[job.recovery]`.
    Gantry(Value),
    /// The `--job-manifest` file's own.
    Manifest(Value),
    /// None: the pods restart `OnFailure`, which a policy does not allow.
    Without,
}

/// What the launch says once when the Job goes without a policy.
pub const WITHOUT_POLICY: &str = "restart-policy = \"OnFailure\": launched without a podFailurePolicy (Kubernetes allows one only with \"Never\"), so a preempted pod counts toward backoff-limit like a failed one";

impl Policy {
    pub fn of(cfg: &JobConfig) -> Policy {
        if let Some(own) = &cfg.pod_failure_policy {
            return serde_json::to_value(own).map_or(Policy::Without, Policy::Manifest);
        }
        if cfg.restart_policy.as_deref() == Some("OnFailure") {
            return Policy::Without;
        }
        let mut rules = vec![json!({
            "action": "Ignore",
            "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
        })];
        let codes = cfg.recovery.fail_exit_codes_sorted();
        if !codes.is_empty() {
            rules.push(json!({
                "action": "FailJob",
                "onExitCodes": {
                    "containerName": cfg.container,
                    "operator": "In",
                    "values": codes,
                },
            }));
        }
        Policy::Gantry(json!({ "rules": rules }))
    }

    /// The `spec.podFailurePolicy` to send, if any.
    pub fn spec(&self) -> Option<&Value> {
        match self {
            Policy::Gantry(v) | Policy::Manifest(v) => Some(v),
            Policy::Without => None,
        }
    }
}

/// Whether a Job's policy ignores pods that Kubernetes disrupted (`DisruptionTarget` → `Ignore`):
/// then such a pod's end is not a counted failure.
pub fn ignores_disruptions(policy: Option<&PodFailurePolicy>) -> bool {
    policy.is_some_and(|p| {
        p.rules.iter().any(|r| {
            r.action == "Ignore"
                && r.on_pod_conditions.iter().flatten().any(|c| {
                    c.type_ == "DisruptionTarget" && matches!(c.status.as_str(), "True" | "")
                })
        })
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_job_ignores_disruptions_and_fails_at_once_on_listed_exit_codes() {
        let mut cfg = JobConfig::default();
        cfg.recovery.fail_exit_codes = vec![42, 3, 3];
        let Policy::Gantry(policy) = Policy::of(&cfg) else {
            panic!("Gantry's policy expected");
        };
        assert_eq!(
            policy,
            json!({"rules": [
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
                {"action": "FailJob", "onExitCodes": {
                    "containerName": "ml-training-container", "operator": "In", "values": [3, 42]}},
            ]})
        );
        let typed: PodFailurePolicy = serde_json::from_value(policy).unwrap();
        assert!(ignores_disruptions(Some(&typed)));
    }

    #[test]
    fn with_no_exit_codes_only_disruptions_are_ruled() {
        let policy = Policy::of(&JobConfig::default());
        let rules = policy.spec().unwrap()["rules"].as_array().unwrap().len();
        assert_eq!(rules, 1);
    }

    #[test]
    fn pods_that_restart_on_failure_go_without_a_policy() {
        let cfg = JobConfig {
            restart_policy: Some("OnFailure".into()),
            ..JobConfig::default()
        };
        assert_eq!(Policy::of(&cfg), Policy::Without);
        assert!(Policy::of(&cfg).spec().is_none());
    }

    #[test]
    fn a_manifests_own_policy_is_kept_as_written() {
        let own: PodFailurePolicy = serde_json::from_value(json!({"rules": [
            {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [1]}}
        ]}))
        .unwrap();
        let cfg = JobConfig {
            pod_failure_policy: Some(own.clone()),
            ..JobConfig::default()
        };
        let Policy::Manifest(v) = Policy::of(&cfg) else {
            panic!("the manifest's policy expected");
        };
        assert_eq!(serde_json::from_value::<PodFailurePolicy>(v).unwrap(), own);
        assert!(!ignores_disruptions(Some(&own)));
    }
}
