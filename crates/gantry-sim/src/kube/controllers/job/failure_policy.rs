//! A failed pod judged by its Job's `podFailurePolicy`, as the Job controller judges it
//! (`pkg/controller/job/pod_failure_policy.go`): the rules are tried in order and the first that
//! matches decides. `onExitCodes` matches when a terminated container (of `containerName` only,
//! if given; app containers before init containers) exited with a nonzero code that is `In` or
//! `NotIn` the values: a container that succeeded never matches. `onPodConditions` matches when
//! the pod has a condition of a pattern's type and status. `Ignore` does not count the failure
//! (no `status.failed`, no back-off, a replacement pod), `FailJob` fails the Job at once with a
//! message naming the container or condition and the rule, `Count` counts it as without a
//! policy. `FailIndex` also counts here: it needs `backoffLimitPerIndex`, which this controller
//! does not implement. A rule whose action is unknown is skipped, as clients are told to.

use serde_json::Value;

/// What a failed pod does to its Job.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Verdict {
    /// Counted toward `backoffLimit`, as without a policy.
    Count,
    /// Not counted: the pod is replaced as if it had not failed.
    Ignore,
    /// The Job fails now, with this message.
    FailJob(String),
}

/// Judges a pod that ended `Failed` by the Job's `spec.podFailurePolicy` (null: no policy).
pub(super) fn judge(policy: &Value, pod: &Value) -> Verdict {
    let rules = policy["rules"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (index, rule) in rules.iter().enumerate() {
        let matched = if !rule["onExitCodes"].is_null() {
            exit_code_match(pod, &rule["onExitCodes"]).map(|(container, code)| {
                format!(
                    "Container {container} for pod {}/{} failed with exit code {code}",
                    namespace(pod),
                    name(pod)
                )
            })
        } else if !rule["onPodConditions"].is_null() {
            condition_match(pod, &rule["onPodConditions"])
                .map(|kind| format!("Pod {}/{} has condition {kind}", namespace(pod), name(pod)))
        } else {
            None
        };
        let Some(what) = matched else { continue };
        match rule["action"].as_str().unwrap_or_default() {
            "Ignore" => return Verdict::Ignore,
            "Count" | "FailIndex" => return Verdict::Count,
            "FailJob" => {
                return Verdict::FailJob(format!("{what} matching FailJob rule at index {index}"));
            }
            _ => continue,
        }
    }
    Verdict::Count
}

/// The first terminated container that failed with a code the requirement matches.
fn exit_code_match<'a>(pod: &'a Value, requirement: &Value) -> Option<(&'a str, i64)> {
    let only = requirement["containerName"].as_str();
    let values: Vec<i64> = requirement["values"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_i64)
        .collect();
    let listed = |code: i64| values.contains(&code);
    let operator_matches = |code: i64| match requirement["operator"].as_str() {
        Some("In") => listed(code),
        Some("NotIn") => !listed(code),
        _ => false,
    };
    ["containerStatuses", "initContainerStatuses"]
        .iter()
        .flat_map(|list| pod["status"][*list].as_array().into_iter().flatten())
        .find_map(|status| {
            let code = status.pointer("/state/terminated/exitCode")?.as_i64()?;
            let container = status["name"].as_str().unwrap_or_default();
            let wanted = only.is_none_or(|n| n == container);
            (wanted && code != 0 && operator_matches(code)).then_some((container, code))
        })
}

/// The type of the first of the pod's conditions that a pattern matches.
fn condition_match<'a>(pod: &'a Value, patterns: &Value) -> Option<&'a str> {
    let patterns = patterns.as_array()?;
    pod["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|condition| {
            patterns.iter().any(|pattern| {
                let status = pattern["status"].as_str().unwrap_or("True");
                condition["type"] == pattern["type"] && condition["status"] == status
            })
        })
        .and_then(|condition| condition["type"].as_str())
}

fn name(pod: &Value) -> &str {
    crate::kube::meta::name(pod)
}

fn namespace(pod: &Value) -> &str {
    crate::kube::meta::namespace(pod)
}

#[cfg(test)]
#[path = "failure_policy_tests.rs"]
mod tests;
