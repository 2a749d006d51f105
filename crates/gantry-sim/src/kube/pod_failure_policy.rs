//! A Job's `podFailurePolicy` as the API server takes it on create: the defaults it fills
//! (`pkg/apis/batch/v1/defaults.go`: a condition pattern's `status` is True, the Job's
//! `podReplacementPolicy` is Failed) and the checks it answers 422 with
//! (`pkg/apis/batch/validation`), with their field paths and words. What the Job controller does
//! with the policy is `controllers::job::failure_policy`.

use serde_json::{Value, json};

use super::names;

const MAX_RULES: usize = 20;
const MAX_EXIT_CODES: usize = 255;
const MAX_CONDITION_PATTERNS: usize = 20;
/// The supported values, sorted as the API server lists them (`sets.List`).
const ACTIONS: &[&str] = &["Count", "FailIndex", "FailJob", "Ignore"];
const OPERATORS: &[&str] = &["In", "NotIn"];
const STATUSES: &[&str] = &["False", "True", "Unknown"];
const REPLACEMENT_POLICIES: &[&str] = &["Failed", "TerminatingOrFailed"];

/// A validation problem: the field and what is wrong with it, as `field.Error` words it.
type Cause = (String, String);

/// Fills what the API server defaults around a pod failure policy. Runs before the Job's other
/// defaults, which would set `podReplacementPolicy` to TerminatingOrFailed.
pub fn apply_defaults(spec: &mut Value) {
    if spec["podFailurePolicy"].is_null() {
        return;
    }
    if spec["podReplacementPolicy"].is_null() {
        spec["podReplacementPolicy"] = json!("Failed");
    }
    let rules = spec
        .pointer_mut("/podFailurePolicy/rules")
        .and_then(Value::as_array_mut);
    for rule in rules.into_iter().flatten() {
        let patterns = rule
            .get_mut("onPodConditions")
            .and_then(Value::as_array_mut);
        for pattern in patterns.into_iter().flatten() {
            if pattern["status"].as_str().is_none_or(str::is_empty) {
                pattern["status"] = json!("True");
            }
        }
    }
}

/// What is wrong with the Job spec's pod failure policy and the fields it constrains
/// (`podReplacementPolicy`; `restartPolicy` is checked with the template's other rules, by
/// [`restart_policy`]).
pub fn validate(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let policy = &spec["podFailurePolicy"];
    if !policy.is_null() {
        let rules = policy["rules"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let at = "spec.podFailurePolicy.rules";
        if rules.len() > MAX_RULES {
            causes.push((at.to_string(), too_many(rules.len(), MAX_RULES)));
        }
        let containers = container_names(&spec["template"]["spec"]);
        let per_index = !spec["backoffLimitPerIndex"].is_null();
        for (i, rule) in rules.iter().enumerate() {
            rule_causes(
                rule,
                &format!("{at}[{i}]"),
                &containers,
                per_index,
                &mut causes,
            );
        }
    }
    if let Some(replacement) = spec["podReplacementPolicy"].as_str() {
        let supported: &[&str] = if policy.is_null() {
            REPLACEMENT_POLICIES
        } else {
            &["Failed"]
        };
        if !supported.contains(&replacement) {
            causes.push((
                "spec.podReplacementPolicy".to_string(),
                unsupported(replacement, supported),
            ));
        }
    }
    causes
}

/// Under a pod failure policy a failed container is not restarted in place: `Never` only.
pub fn restart_policy(spec: &Value, restart: &str) -> Option<Cause> {
    if spec["podFailurePolicy"].is_null() || restart != "OnFailure" {
        return None;
    }
    Some((
        "spec.template.spec.restartPolicy".to_string(),
        format!(
            "Invalid value: \"{restart}\": only \"Never\" is supported when podFailurePolicy is specified"
        ),
    ))
}

fn rule_causes(
    rule: &Value,
    at: &str,
    containers: &[&str],
    per_index: bool,
    causes: &mut Vec<Cause>,
) {
    let action = rule["action"].as_str().unwrap_or_default();
    let action_at = format!("{at}.action");
    if action.is_empty() {
        causes.push((action_at, required(ACTIONS)));
    } else if action == "FailIndex" {
        if !per_index {
            causes.push((
                action_at,
                "Invalid value: \"FailIndex\": requires the backoffLimitPerIndex to be set".into(),
            ));
        }
    } else if !ACTIONS.contains(&action) {
        causes.push((action_at, unsupported(action, ACTIONS)));
    }
    let on_exit_codes = !rule["onExitCodes"].is_null();
    let patterns = rule["onPodConditions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if on_exit_codes {
        exit_code_causes(
            &rule["onExitCodes"],
            &format!("{at}.onExitCodes"),
            containers,
            causes,
        );
    }
    if !patterns.is_empty() {
        pattern_causes(patterns, &format!("{at}.onPodConditions"), causes);
    }
    match (on_exit_codes, patterns.is_empty()) {
        (true, false) => causes.push((
            at.to_string(),
            "Invalid value: specifying both OnExitCodes and OnPodConditions is not supported"
                .into(),
        )),
        (false, true) => causes.push((
            at.to_string(),
            "Invalid value: specifying one of OnExitCodes and OnPodConditions is required".into(),
        )),
        _ => {}
    }
}

fn exit_code_causes(requirement: &Value, at: &str, containers: &[&str], causes: &mut Vec<Cause>) {
    let operator = requirement["operator"].as_str().unwrap_or_default();
    if operator.is_empty() {
        causes.push((format!("{at}.operator"), required(OPERATORS)));
    } else if !OPERATORS.contains(&operator) {
        causes.push((format!("{at}.operator"), unsupported(operator, OPERATORS)));
    }
    if let Some(name) = requirement["containerName"].as_str()
        && !containers.contains(&name)
    {
        causes.push((
            format!("{at}.containerName"),
            format!("Invalid value: \"{name}\": must be one of the container or initContainer names in the pod template"),
        ));
    }
    let values_at = format!("{at}.values");
    let values: Vec<i64> = requirement["values"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_i64)
        .collect();
    if values.is_empty() {
        let shown = if requirement["values"].is_array() {
            "[]int32{}"
        } else {
            "[]int32(nil)"
        };
        causes.push((
            values_at.clone(),
            format!("Invalid value: {shown}: at least one value is required"),
        ));
    } else if values.len() > MAX_EXIT_CODES {
        causes.push((values_at.clone(), too_many(values.len(), MAX_EXIT_CODES)));
    }
    let mut seen = std::collections::HashSet::new();
    for (j, value) in values.iter().enumerate() {
        if operator == "In" && *value == 0 {
            causes.push((
                format!("{values_at}[{j}]"),
                "Invalid value: 0: must not be 0 for the In operator".into(),
            ));
        }
        if !seen.insert(*value) {
            causes.push((
                format!("{values_at}[{j}]"),
                format!("Duplicate value: {value}"),
            ));
        }
    }
    if values.windows(2).any(|pair| pair[0] > pair[1]) {
        let shown: Vec<String> = values.iter().map(i64::to_string).collect();
        causes.push((
            values_at,
            format!(
                "Invalid value: []int32{{{}}}: must be ordered",
                shown.join(", ")
            ),
        ));
    }
}

fn pattern_causes(patterns: &[Value], at: &str, causes: &mut Vec<Cause>) {
    if patterns.len() > MAX_CONDITION_PATTERNS {
        causes.push((
            at.to_string(),
            too_many(patterns.len(), MAX_CONDITION_PATTERNS),
        ));
    }
    for (j, pattern) in patterns.iter().enumerate() {
        let kind = pattern["type"].as_str().unwrap_or_default();
        for problem in names::qualified_name(kind) {
            causes.push((
                format!("{at}[{j}].type"),
                format!("Invalid value: \"{kind}\": {problem}"),
            ));
        }
        let status = pattern["status"].as_str().unwrap_or_default();
        if status.is_empty() {
            causes.push((format!("{at}[{j}].status"), required(STATUSES)));
        } else if !STATUSES.contains(&status) {
            causes.push((format!("{at}[{j}].status"), unsupported(status, STATUSES)));
        }
    }
}

fn container_names(pod_spec: &Value) -> Vec<&str> {
    ["containers", "initContainers"]
        .iter()
        .flat_map(|list| pod_spec[*list].as_array().into_iter().flatten())
        .filter_map(|c| c["name"].as_str())
        .collect()
}

/// `field.Required` with the valid values, as `fmt.Sprintf("valid values: %q", list)` prints.
fn required(valid: &[&str]) -> String {
    let quoted: Vec<String> = valid.iter().map(|v| format!("\"{v}\"")).collect();
    format!("Required value: valid values: [{}]", quoted.join(" "))
}

/// `field.NotSupported`.
fn unsupported(value: &str, supported: &[&str]) -> String {
    let quoted: Vec<String> = supported.iter().map(|v| format!("\"{v}\"")).collect();
    format!(
        "Unsupported value: \"{value}\": supported values: {}",
        quoted.join(", ")
    )
}

/// `field.TooMany`.
fn too_many(actual: usize, max: usize) -> String {
    format!("Too many: {actual}: must have at most {max} items")
}

#[cfg(test)]
#[path = "pod_failure_policy_tests.rs"]
mod tests;
