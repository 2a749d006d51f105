//! `printJob`: what `kubectl get jobs` shows: status from the conditions, completions,
//! duration, and (wide) containers, images and selector.

use jiff::Timestamp;
use serde_json::Value;

use super::labels::format_label_selector;
use super::{condition_true, creation_age, int, items, name_of, s, since, text, timestamp};

/// `printJob`: Name, Status, Completions, Duration, Age, Containers, Images, Selector.
pub(super) fn cells(job: &Value, now: Timestamp) -> Vec<Value> {
    let spec = &job["spec"];
    let status = &job["status"];
    let succeeded = int(&status["succeeded"]);
    let completions = match spec["completions"].as_i64() {
        Some(n) => format!("{succeeded}/{n}"),
        None => {
            let parallelism = spec["parallelism"].as_i64().unwrap_or(0);
            if parallelism > 1 {
                format!("{succeeded}/1 of {parallelism}")
            } else {
                format!("{succeeded}/1")
            }
        }
    };
    let duration = match (
        timestamp(&status["startTime"]),
        timestamp(&status["completionTime"]),
    ) {
        (None, _) => String::new(),
        (Some(start), None) => since(now, start),
        (Some(start), Some(end)) => since(end, start),
    };
    let conditions = &status["conditions"];
    let deleting = job["metadata"]
        .get("deletionTimestamp")
        .is_some_and(|v| !v.is_null());
    let job_status = if condition_true(conditions, "Complete") {
        "Complete"
    } else if condition_true(conditions, "Failed") {
        "Failed"
    } else if deleting {
        "Terminating"
    } else if condition_true(conditions, "Suspended") {
        "Suspended"
    } else if condition_true(conditions, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let containers = items(&spec["template"]["spec"]["containers"]);
    let names: Vec<&str> = containers.iter().map(|c| text(&c["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(&c["image"])).collect();
    vec![
        s(name_of(job)),
        s(job_status),
        s(completions),
        s(duration),
        s(creation_age(job, now)),
        s(names.join(",")),
        s(images.join(",")),
        s(format_label_selector(&spec["selector"])),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::kube::api::table::cells::fixtures::{ago, now};

    fn job(status: Value, completions: Option<i64>, parallelism: i64) -> Value {
        let mut spec = json!({
            "parallelism": parallelism,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "abc"}},
            "template": {"spec": {"containers": [{"name": "pi", "image": "perl:5.34"}]}},
        });
        if let Some(n) = completions {
            spec["completions"] = json!(n);
        }
        json!({"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "pi", "namespace": "default", "creationTimestamp": ago(3600)},
               "spec": spec, "status": status})
    }

    fn job_row(j: &Value) -> Vec<String> {
        cells(j, now())
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn job_running() {
        let j = job(json!({"startTime": ago(95), "active": 1}), Some(1), 1);
        assert_eq!(
            job_row(&j),
            [
                "pi",
                "Running",
                "0/1",
                "95s",
                "60m",
                "pi",
                "perl:5.34",
                "batch.kubernetes.io/controller-uid=abc"
            ]
        );
        // Not started yet: no duration.
        assert_eq!(job_row(&job(json!({}), Some(3), 1))[2..4], ["0/3", ""]);
    }

    #[test]
    fn job_complete_and_failed() {
        let complete = job(
            json!({"startTime": ago(600), "completionTime": ago(450), "succeeded": 1,
                   "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                                  {"type": "Complete", "status": "True"}]}),
            Some(1),
            1,
        );
        assert_eq!(job_row(&complete)[1..4], ["Complete", "1/1", "2m30s"]);

        let failed = job(
            json!({"startTime": ago(600), "failed": 4,
                   "conditions": [{"type": "FailureTarget", "status": "True"},
                                  {"type": "Failed", "status": "True"}]}),
            Some(1),
            1,
        );
        assert_eq!(job_row(&failed)[1], "Failed");

        let target = job(
            json!({"startTime": ago(600), "conditions": [{"type": "FailureTarget", "status": "True"}]}),
            Some(1),
            1,
        );
        assert_eq!(job_row(&target)[1], "FailureTarget");

        let mut deleting = job(json!({"startTime": ago(60)}), Some(1), 1);
        deleting["metadata"]["deletionTimestamp"] = json!(ago(1));
        assert_eq!(job_row(&deleting)[1], "Terminating");

        let suspended = job(
            json!({"conditions": [{"type": "Suspended", "status": "True"}]}),
            Some(1),
            1,
        );
        assert_eq!(job_row(&suspended)[1], "Suspended");
    }

    #[test]
    fn job_completions_without_spec_completions() {
        assert_eq!(job_row(&job(json!({"succeeded": 0}), None, 1))[2], "0/1");
        assert_eq!(
            job_row(&job(json!({"succeeded": 1}), None, 3))[2],
            "1/1 of 3"
        );
    }
}
