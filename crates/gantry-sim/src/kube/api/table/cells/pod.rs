//! `printPod`: what `kubectl get pods` shows, above all the Status column's reason, worked
//! out from init containers, containers and deletion as the printer does.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::{
    any_condition_true, condition_true, creation_age, int, items, later, name_of, or_placeholder,
    s, since, text, timestamp,
};

/// `printPod`: Name, Ready, Status, Restarts, Age, IP, Node, Nominated Node, Readiness Gates.
pub(super) fn cells(pod: &Value, now: Timestamp) -> (Vec<Value>, Option<Value>) {
    let spec = &pod["spec"];
    let status = &pod["status"];
    let phase = text(&status["phase"]);
    let status_reason = text(&status["reason"]);
    let mut reason = if status_reason.is_empty() {
        phase
    } else {
        status_reason
    }
    .to_string();

    if items(&status["conditions"])
        .iter()
        .any(|c| text(&c["type"]) == "PodScheduled" && text(&c["reason"]) == "SchedulingGated")
    {
        reason = "SchedulingGated".to_string();
    }

    let row_conditions = match phase {
        "Succeeded" => Some(json!([{
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }])),
        "Failed" => Some(json!([{
            "type": "Completed",
            "status": "True",
            "reason": "Failed",
            "message": "The pod failed.",
        }])),
        _ => None,
    };

    let init_specs = items(&spec["initContainers"]);
    let is_restartable = |name: &str| {
        init_specs
            .iter()
            .find(|c| text(&c["name"]) == name)
            .is_some_and(|c| text(&c["restartPolicy"]) == "Always")
    };
    let total = items(&spec["containers"]).len()
        + init_specs
            .iter()
            .filter(|c| text(&c["restartPolicy"]) == "Always")
            .count();
    let mut ready = 0usize;
    let mut restarts: i64 = 0;
    let mut restartable_restarts: i64 = 0;
    let mut last_restart: Option<Timestamp> = None;
    let mut last_restartable_restart: Option<Timestamp> = None;

    let mut initializing = false;
    for (i, c) in items(&status["initContainerStatuses"]).iter().enumerate() {
        let count = int(&c["restartCount"]);
        let finished = timestamp(&c["lastState"]["terminated"]["finishedAt"]);
        restarts += count;
        last_restart = later(last_restart, finished);
        let restartable = is_restartable(text(&c["name"]));
        if restartable {
            restartable_restarts += count;
            last_restartable_restart = later(last_restartable_restart, finished);
        }
        let terminated = &c["state"]["terminated"];
        let waiting = &c["state"]["waiting"];
        if terminated.is_object() && int(&terminated["exitCode"]) == 0 {
            continue;
        }
        if restartable && c["started"].as_bool() == Some(true) {
            if c["ready"].as_bool() == Some(true) {
                ready += 1;
            }
            continue;
        }
        if terminated.is_object() {
            let why = text(&terminated["reason"]);
            reason = if !why.is_empty() {
                format!("Init:{why}")
            } else if int(&terminated["signal"]) != 0 {
                format!("Init:Signal:{}", int(&terminated["signal"]))
            } else {
                format!("Init:ExitCode:{}", int(&terminated["exitCode"]))
            };
        } else if waiting.is_object()
            && !text(&waiting["reason"]).is_empty()
            && text(&waiting["reason"]) != "PodInitializing"
        {
            reason = format!("Init:{}", text(&waiting["reason"]));
        } else {
            reason = format!("Init:{i}/{}", init_specs.len());
        }
        initializing = true;
        break;
    }

    if !initializing || condition_true(&status["conditions"], "Initialized") {
        restarts = restartable_restarts;
        last_restart = last_restartable_restart;
        let mut has_running = false;
        for c in items(&status["containerStatuses"]).iter().rev() {
            restarts += int(&c["restartCount"]);
            last_restart = later(
                last_restart,
                timestamp(&c["lastState"]["terminated"]["finishedAt"]),
            );
            let terminated = &c["state"]["terminated"];
            let waiting = &c["state"]["waiting"];
            if waiting.is_object() && !text(&waiting["reason"]).is_empty() {
                reason = text(&waiting["reason"]).to_string();
            } else if terminated.is_object() && !text(&terminated["reason"]).is_empty() {
                reason = text(&terminated["reason"]).to_string();
            } else if terminated.is_object() {
                reason = if int(&terminated["signal"]) != 0 {
                    format!("Signal:{}", int(&terminated["signal"]))
                } else {
                    format!("ExitCode:{}", int(&terminated["exitCode"]))
                };
            } else if c["ready"].as_bool() == Some(true) && c["state"]["running"].is_object() {
                has_running = true;
                ready += 1;
            }
        }
        // A pod whose last-listed container completed while another still runs is not "Completed".
        if reason == "Completed" && has_running {
            reason = if any_condition_true(&status["conditions"], "Ready") {
                "Running".to_string()
            } else {
                "NotReady".to_string()
            };
        }
    }

    let deleting = pod["metadata"]
        .get("deletionTimestamp")
        .is_some_and(|v| !v.is_null());
    if deleting && status_reason == "NodeLost" {
        reason = "Unknown".to_string();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        reason = "Terminating".to_string();
    }

    let restarts_cell = match last_restart {
        Some(t) if restarts != 0 => format!("{restarts} ({} ago)", since(now, t)),
        _ => restarts.to_string(),
    };

    let mut ip = status
        .pointer("/podIPs/0/ip")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if ip.is_empty() && !status["podIPs"].is_array() {
        ip = text(&status["podIP"]);
    }
    let gates = items(&spec["readinessGates"]);
    let readiness_gates = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let true_count = gates
            .iter()
            .filter(|g| condition_true(&status["conditions"], text(&g["conditionType"])))
            .count();
        format!("{true_count}/{}", gates.len())
    };

    let cells = vec![
        s(name_of(pod)),
        s(format!("{ready}/{total}")),
        s(reason),
        s(restarts_cell),
        s(creation_age(pod, now)),
        s(or_placeholder(ip, "<none>")),
        s(or_placeholder(text(&spec["nodeName"]), "<none>")),
        s(or_placeholder(text(&status["nominatedNodeName"]), "<none>")),
        s(readiness_gates),
    ];
    (cells, row_conditions)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::kube::api::table::cells::fixtures::{ago, now, pod};

    fn pod_row(p: &Value) -> Vec<String> {
        let (row, _) = cells(p, now());
        row.iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect()
    }

    fn status_of(p: &Value) -> String {
        pod_row(p)[2].clone()
    }

    fn terminated(reason: &str, code: i64) -> Value {
        json!({"phase": if code == 0 { "Succeeded" } else { "Failed" },
               "containerStatuses": [{"name": "main", "ready": false, "restartCount": 0,
                   "state": {"terminated": {"reason": reason, "exitCode": code,
                                            "finishedAt": ago(10)}}}]})
    }

    #[test]
    fn pod_running() {
        let p = pod(json!({
            "phase": "Running",
            "podIP": "10.244.0.5",
            "podIPs": [{"ip": "10.244.0.5"}],
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0,
                                   "state": {"running": {"startedAt": ago(300)}}}],
        }));
        assert_eq!(
            pod_row(&p),
            [
                "p1",
                "1/1",
                "Running",
                "0",
                "5m2s",
                "10.244.0.5",
                "node-1",
                "<none>",
                "<none>"
            ]
        );
        assert!(cells(&p, now()).1.is_none());
    }

    #[test]
    fn pod_waiting_reasons() {
        let waiting = |reason: &str| {
            pod(json!({
                "phase": "Pending",
                "containerStatuses": [{"name": "main", "ready": false, "restartCount": 0,
                                       "state": {"waiting": {"reason": reason}}}],
            }))
        };
        let creating = waiting("ContainerCreating");
        assert_eq!(pod_row(&creating)[1], "0/1");
        assert_eq!(status_of(&creating), "ContainerCreating");
        assert_eq!(status_of(&waiting("ImagePullBackOff")), "ImagePullBackOff");
        // No statuses yet: the phase.
        let pending = pod(json!({"phase": "Pending"}));
        assert_eq!(pod_row(&pending)[1..4], ["0/1", "Pending", "0"]);
    }

    #[test]
    fn pod_terminated_reasons() {
        let done = pod(terminated("Completed", 0));
        assert_eq!(status_of(&done), "Completed");
        let conditions = cells(&done, now()).1.unwrap();
        assert_eq!(conditions[0]["type"], "Completed");
        assert_eq!(conditions[0]["status"], "True");
        assert_eq!(conditions[0]["reason"], "Succeeded");

        let error = pod(terminated("Error", 1));
        assert_eq!(status_of(&error), "Error");
        assert_eq!(cells(&error, now()).1.unwrap()[0]["reason"], "Failed");

        assert_eq!(status_of(&pod(terminated("OOMKilled", 137))), "OOMKilled");
        assert_eq!(status_of(&pod(terminated("", 3))), "ExitCode:3");
        let mut signalled = terminated("", 0);
        signalled["containerStatuses"][0]["state"]["terminated"]["signal"] = json!(9);
        assert_eq!(status_of(&pod(signalled)), "Signal:9");
    }

    #[test]
    fn pod_terminating() {
        let mut p = pod(json!({
            "phase": "Running",
            "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0,
                                   "state": {"running": {"startedAt": ago(300)}}}],
        }));
        p["metadata"]["deletionTimestamp"] = json!(ago(1));
        assert_eq!(status_of(&p), "Terminating");
        // A finished pod being deleted keeps its final status.
        let mut done = pod(terminated("Completed", 0));
        done["metadata"]["deletionTimestamp"] = json!(ago(1));
        assert_eq!(status_of(&done), "Completed");
    }

    #[test]
    fn pod_restarts_with_last_restart_age() {
        let p = pod(json!({
            "phase": "Running",
            "containerStatuses": [{"name": "main", "ready": false, "restartCount": 2,
                "lastState": {"terminated": {"reason": "Error", "exitCode": 1, "finishedAt": ago(15 * 60)}},
                "state": {"waiting": {"reason": "CrashLoopBackOff"}}}],
        }));
        let row = pod_row(&p);
        assert_eq!(row[2], "CrashLoopBackOff");
        assert_eq!(row[3], "2 (15m ago)");
    }

    #[test]
    fn pod_init_containers() {
        let mut p = pod(json!({
            "phase": "Pending",
            "initContainerStatuses": [
                {"name": "init-a", "ready": false, "restartCount": 0,
                 "state": {"terminated": {"reason": "Completed", "exitCode": 0}}},
                {"name": "init-b", "ready": false, "restartCount": 0,
                 "state": {"running": {"startedAt": ago(5)}}},
            ],
            "containerStatuses": [{"name": "main", "ready": false, "restartCount": 0,
                                   "state": {"waiting": {"reason": "PodInitializing"}}}],
        }));
        p["spec"]["initContainers"] = json!([{"name": "init-a"}, {"name": "init-b"}]);
        assert_eq!(status_of(&p), "Init:1/2");
        p["status"]["initContainerStatuses"][1]["state"] =
            json!({"terminated": {"reason": "Error", "exitCode": 2}});
        assert_eq!(status_of(&p), "Init:Error");
        p["status"]["initContainerStatuses"][1]["state"] =
            json!({"waiting": {"reason": "ImagePullBackOff"}});
        assert_eq!(status_of(&p), "Init:ImagePullBackOff");
    }
}
