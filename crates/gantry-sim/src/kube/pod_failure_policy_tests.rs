//! A Job's pod failure policy through the API server's defaults and validation: the examples of
//! Kubernetes' "Handling retriable and non-retriable pod failures with Pod failure policy" page
//! are admitted as given, and each rule of `pkg/apis/batch/validation` refuses with its field
//! path and words (the cases of its validation_test.go).

use serde_json::{Value, json};

use crate::kube::defaults::apply_defaults;
use crate::kube::resources::Kind;

/// The page's example Job (job-pod-failure-policy-example.yaml), with `rules` and the
/// template's restart policy as given.
fn job(rules: Value, restart: &str) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "job-pod-failure-policy-example", "namespace": "default", "uid": "u1"},
        "spec": {"completions": 12, "parallelism": 3, "backoffLimit": 6,
            "podFailurePolicy": {"rules": rules},
            "template": {"spec": {"restartPolicy": restart, "containers": [
                {"name": "main", "image": "docker.io/library/bash:5"}]}}}})
}

fn admitted(mut job: Value) -> Value {
    apply_defaults(Kind::Job.resource(), &mut job).unwrap_or_else(|e| panic!("{}", e.message));
    job
}

/// The (field, message) of each cause of the 422 the Job is refused with.
fn refused(mut job: Value) -> Vec<(String, String)> {
    let err = apply_defaults(Kind::Job.resource(), &mut job).expect_err("refused");
    assert_eq!((err.code, err.reason), (422, "Invalid"));
    err.details["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["field"].as_str().unwrap().to_string(),
                c["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn example_rules() -> Value {
    json!([
        {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
    ])
}

#[test]
fn the_pages_example_is_kept_as_given_with_its_pattern_status_and_replacement_defaulted() {
    let stored = admitted(job(example_rules(), "Never"));
    let rules = &stored["spec"]["podFailurePolicy"]["rules"];
    assert_eq!(rules[0], example_rules()[0]);
    assert_eq!(
        rules[1]["onPodConditions"],
        json!([{"type": "DisruptionTarget", "status": "True"}])
    );
    assert_eq!(stored["spec"]["podReplacementPolicy"], "Failed");
    let plain = admitted(json!({"metadata": {"name": "plain", "uid": "u2"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "main", "image": "bash"}]}}}}));
    assert_eq!(plain["spec"]["podReplacementPolicy"], "TerminatingOrFailed");
}

#[test]
fn a_policy_needs_restart_policy_never() {
    assert_eq!(
        refused(job(example_rules(), "OnFailure")),
        [(
            "spec.template.spec.restartPolicy".to_string(),
            "Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified".to_string()
        )]
    );
}

#[test]
fn a_policy_replaces_failed_pods_only() {
    let mut given = job(example_rules(), "Never");
    given["spec"]["podReplacementPolicy"] = json!("TerminatingOrFailed");
    assert_eq!(
        refused(given),
        [(
            "spec.podReplacementPolicy".to_string(),
            "Unsupported value: \"TerminatingOrFailed\": supported values: \"Failed\"".to_string()
        )]
    );
}

#[test]
fn each_rule_has_one_known_action_and_exactly_one_requirement() {
    let causes = refused(job(
        json!([
            {"action": "Retry", "onPodConditions": [{"type": "DisruptionTarget"}]},
            {"onExitCodes": {"operator": "In", "values": [1]}},
            {"action": "FailJob"},
            {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]},
             "onPodConditions": [{"type": "DisruptionTarget"}]},
            {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1]}},
        ]),
        "Never",
    ));
    let at = |i: usize| format!("spec.podFailurePolicy.rules[{i}]");
    assert_eq!(
        causes,
        [
            (format!("{}.action", at(0)), "Unsupported value: \"Retry\": supported values: \"Count\", \"FailIndex\", \"FailJob\", \"Ignore\"".to_string()),
            (format!("{}.action", at(1)), "Required value: valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]".to_string()),
            (at(2), "Invalid value: specifying one of OnExitCodes and OnPodConditions is required".to_string()),
            (at(3), "Invalid value: specifying both OnExitCodes and OnPodConditions is not supported".to_string()),
            (format!("{}.action", at(4)), "Invalid value: \"FailIndex\": requires the backoffLimitPerIndex to be set".to_string()),
        ]
    );
}

#[test]
fn exit_codes_are_ordered_unique_nonzero_for_in_and_name_a_container_of_the_template() {
    let causes = refused(job(
        json!([
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [0, 5, 5, 3]}},
            {"action": "FailJob", "onExitCodes": {"containerName": "sidecar", "operator": "Within", "values": []}},
            {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0]}},
            {"action": "Count", "onExitCodes": {"values": [1]}},
        ]),
        "Never",
    ));
    let at = |i: usize| format!("spec.podFailurePolicy.rules[{i}].onExitCodes");
    assert_eq!(
        causes,
        [
            (format!("{}.values[0]", at(0)), "Invalid value: 0: must not be 0 for the In operator".to_string()),
            (format!("{}.values[2]", at(0)), "Duplicate value: 5".to_string()),
            (format!("{}.values", at(0)), "Invalid value: []int32{0, 5, 5, 3}: must be ordered".to_string()),
            (format!("{}.operator", at(1)), "Unsupported value: \"Within\": supported values: \"In\", \"NotIn\"".to_string()),
            (format!("{}.containerName", at(1)), "Invalid value: \"sidecar\": must be one of the container or initContainer names in the pod template".to_string()),
            (format!("{}.values", at(1)), "Invalid value: []int32{}: at least one value is required".to_string()),
            (format!("{}.operator", at(3)), "Required value: valid values: [\"In\" \"NotIn\"]".to_string()),
        ]
    );
}

#[test]
fn at_most_twenty_rules_and_255_exit_codes() {
    let rule = json!({"action": "Count", "onExitCodes": {"operator": "In", "values": [1]}});
    let causes = refused(job(Value::Array(vec![rule; 21]), "Never"));
    assert_eq!(
        causes,
        [(
            "spec.podFailurePolicy.rules".to_string(),
            "Too many: 21: must have at most 20 items".to_string()
        )]
    );
    let codes: Vec<i64> = (1..=256).collect();
    let causes = refused(job(
        json!([{"action": "Count", "onExitCodes": {"operator": "In", "values": codes}}]),
        "Never",
    ));
    assert_eq!(
        causes,
        [(
            "spec.podFailurePolicy.rules[0].onExitCodes.values".to_string(),
            "Too many: 256: must have at most 255 items".to_string()
        )]
    );
}

#[test]
fn a_condition_pattern_names_a_qualified_type_and_a_known_status() {
    let causes = refused(job(
        json!([{"action": "Ignore", "onPodConditions": [
            {"type": "Invalid Condition Type", "status": "True"},
            {"type": "DisruptionTarget", "status": "Maybe"},
        ]}]),
        "Never",
    ));
    let at = "spec.podFailurePolicy.rules[0].onPodConditions";
    assert_eq!(causes.len(), 2, "{causes:?}");
    assert_eq!(causes[0].0, format!("{at}[0].type"));
    assert!(
        causes[0]
            .1
            .starts_with("Invalid value: \"Invalid Condition Type\": name part must consist of"),
        "{}",
        causes[0].1
    );
    assert_eq!(
        causes[1],
        (
            format!("{at}[1].status"),
            "Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\""
                .to_string()
        )
    );
}
