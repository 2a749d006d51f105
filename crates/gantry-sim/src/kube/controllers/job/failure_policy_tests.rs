//! The cases of Kubernetes' documentation, each test naming its page: "Handling retriable and
//! non-retriable pod failures with Pod failure policy" (tasks/job/pod-failure-policy), the Jobs
//! concept page's "Pod failure policy" section (concepts/workloads/controllers/job) and the API
//! reference of `PodFailurePolicyOnExitCodesRequirement` and `PodFailurePolicyRule`.

use serde_json::{Value, json};

use super::*;

/// The pod failure policy page's job-pod-failure-policy-example.yaml.
fn example_policy() -> Value {
    json!({"rules": [
        {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
    ]})
}

/// A Failed pod whose containers ended with these (name, exit code) and which has these
/// (type, status) conditions.
fn failed_pod(name: &str, containers: &[(&str, i64)], conditions: &[(&str, &str)]) -> Value {
    let statuses: Vec<Value> = containers
        .iter()
        .map(|(c, code)| json!({"name": c, "state": {"terminated": {"exitCode": code, "reason": if *code == 0 { "Completed" } else { "Error" }}}}))
        .collect();
    let conditions: Vec<Value> = conditions
        .iter()
        .map(|(kind, status)| json!({"type": kind, "status": status}))
        .collect();
    json!({"metadata": {"name": name, "namespace": "default"},
        "status": {"phase": "Failed", "containerStatuses": statuses, "conditions": conditions}})
}

/// tasks/job/pod-failure-policy, "Using Pod failure policy to avoid unnecessary Pod retries":
/// the main container exits 42, the Job fails with a FailureTarget and Failed condition whose
/// message names the container, the pod and the rule.
#[test]
fn exit_code_42_in_main_fails_the_job_naming_the_container_and_the_rule() {
    let pod = failed_pod(
        "job-pod-failure-policy-failjob-8ckj8",
        &[("main", 42)],
        &[("Ready", "False")],
    );
    assert_eq!(
        judge(&example_policy(), &pod),
        Verdict::FailJob(
            "Container main for pod default/job-pod-failure-policy-failjob-8ckj8 failed with exit code 42 matching FailJob rule at index 0"
                .into()
        )
    );
}

/// tasks/job/pod-failure-policy, "Using Pod failure policy to ignore Pod disruptions": a pod
/// evicted by a drain (DisruptionTarget, its container stopped by SIGTERM) is not counted, and
/// the Job makes a replacement.
#[test]
fn a_disrupted_pod_is_ignored() {
    let pod = failed_pod(
        "job-pod-failure-policy-ignore-9nqbn",
        &[("main", 143)],
        &[("DisruptionTarget", "True"), ("Ready", "False")],
    );
    assert_eq!(judge(&example_policy(), &pod), Verdict::Ignore);
}

/// concepts/workloads/controllers/job, "Pod failure policy": a failure no rule matches is
/// handled as without a policy, counted toward backoffLimit.
#[test]
fn a_failure_no_rule_matches_is_counted() {
    let pod = failed_pod("example-abcde", &[("main", 1)], &[("Ready", "False")]);
    assert_eq!(judge(&example_policy(), &pod), Verdict::Count);
    assert_eq!(judge(&Value::Null, &pod), Verdict::Count, "no policy");
}

/// tasks/job/pod-failure-policy, "Using Pod failure policy to avoid unnecessary Pod retries
/// based on custom Pod Conditions": a pod with the ConfigIssue condition fails the Job, and the
/// message names the condition.
#[test]
fn a_custom_condition_fails_the_job_naming_the_condition() {
    let policy =
        json!({"rules": [{"action": "FailJob", "onPodConditions": [{"type": "ConfigIssue"}]}]});
    let pod = failed_pod(
        "job-pod-failure-policy-config-issue-k6pvp",
        &[],
        &[("PodScheduled", "True"), ("ConfigIssue", "True")],
    );
    assert_eq!(
        judge(&policy, &pod),
        Verdict::FailJob(
            "Pod default/job-pod-failure-policy-config-issue-k6pvp has condition ConfigIssue matching FailJob rule at index 0"
                .into()
        )
    );
}

/// The API reference of PodFailurePolicyOnExitCodesRequirement: "Containers completed with
/// success (exit code 0) are excluded from the requirement check", and `containerName`
/// restricts it to one container.
#[test]
fn a_container_that_succeeded_never_matches_and_container_name_restricts_the_check() {
    let not_in_one = json!({"rules": [{"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [1]}}]});
    let pod = failed_pod("p", &[("sidecar", 0), ("main", 1)], &[]);
    assert_eq!(judge(&not_in_one, &pod), Verdict::Count);
    let pod = failed_pod("p", &[("sidecar", 0), ("main", 3)], &[]);
    assert_eq!(
        judge(&not_in_one, &pod),
        Verdict::FailJob(
            "Container main for pod default/p failed with exit code 3 matching FailJob rule at index 0"
                .into()
        )
    );
    let only_sidecar = json!({"rules": [{"action": "FailJob", "onExitCodes": {"containerName": "sidecar", "operator": "In", "values": [3]}}]});
    assert_eq!(judge(&only_sidecar, &pod), Verdict::Count);
}

/// The API reference of PodFailurePolicy: "The rules are evaluated in order. Once a rule
/// matches a Pod failure, the remaining of the rules are ignored."
#[test]
fn the_first_rule_that_matches_decides() {
    let policy = json!({"rules": [
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [137]}},
        {"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [1]}},
        {"action": "Count", "onPodConditions": [{"type": "DisruptionTarget"}]},
    ]});
    let killed = failed_pod("p", &[("main", 137)], &[("DisruptionTarget", "True")]);
    assert_eq!(judge(&policy, &killed), Verdict::Ignore);
    let terminated = failed_pod("p", &[("main", 143)], &[("DisruptionTarget", "True")]);
    assert!(
        matches!(judge(&policy, &terminated), Verdict::FailJob(m) if m.ends_with("rule at index 1"))
    );
    let one = failed_pod("p", &[("main", 1)], &[("DisruptionTarget", "True")]);
    assert_eq!(judge(&policy, &one), Verdict::Count);
}

/// The API reference of PodFailurePolicyOnPodConditionsPattern: a pattern matches a condition
/// of its type and status (True unless given).
#[test]
fn a_pattern_matches_its_conditions_status_only() {
    let policy = json!({"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "False"}]}]});
    let disrupted = failed_pod("p", &[("main", 143)], &[("DisruptionTarget", "True")]);
    assert_eq!(judge(&policy, &disrupted), Verdict::Count);
    let not_disrupted = failed_pod("p", &[("main", 143)], &[("DisruptionTarget", "False")]);
    assert_eq!(judge(&policy, &not_disrupted), Verdict::Ignore);
}

/// The API reference of PodFailurePolicyRule: "Clients should react to an unknown action by
/// skipping the rule"; FailIndex counts the failure (this controller has no per-index limit).
#[test]
fn an_unknown_action_is_skipped_and_fail_index_counts() {
    let policy = json!({"rules": [
        {"action": "Retry", "onExitCodes": {"operator": "In", "values": [3]}},
        {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [3]}},
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3]}},
    ]});
    let pod = failed_pod("p", &[("main", 3)], &[]);
    assert_eq!(judge(&policy, &pod), Verdict::Count);
}
