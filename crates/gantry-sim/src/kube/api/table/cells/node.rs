//! `printNode`: readiness and scheduling state, roles, versions and addresses.

use jiff::Timestamp;
use serde_json::Value;

use super::{creation_age, items, name_of, or_placeholder, s, text};

/// `printNode`: Name, Status, Roles, Age, Version, Internal-IP, External-IP, OS-Image,
/// Kernel-Version, Container-Runtime.
pub(super) fn cells(node: &Value, now: Timestamp) -> Vec<Value> {
    let status = &node["status"];
    let mut states: Vec<String> = Vec::new();
    if let Some(ready) = items(&status["conditions"])
        .iter()
        .rev()
        .find(|c| text(&c["type"]) == "Ready")
    {
        states.push(
            if text(&ready["status"]) == "True" {
                "Ready"
            } else {
                "NotReady"
            }
            .to_string(),
        );
    }
    if states.is_empty() {
        states.push("Unknown".to_string());
    }
    if node["spec"]["unschedulable"].as_bool() == Some(true) {
        states.push("SchedulingDisabled".to_string());
    }

    let mut roles: Vec<String> = node["metadata"]["labels"]
        .as_object()
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| {
                    if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                        (!role.is_empty()).then(|| role.to_string())
                    } else if k == "kubernetes.io/role" {
                        Some(text(v).to_string()).filter(|r| !r.is_empty())
                    } else {
                        None
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    roles.sort();
    roles.dedup();

    let address = |kind: &str| {
        items(&status["addresses"])
            .iter()
            .find(|a| text(&a["type"]) == kind)
            .map_or_else(|| "<none>".to_string(), |a| text(&a["address"]).to_string())
    };
    let info = &status["nodeInfo"];
    vec![
        s(name_of(node)),
        s(states.join(",")),
        s(or_placeholder(&roles.join(","), "<none>")),
        s(creation_age(node, now)),
        s(text(&info["kubeletVersion"])),
        s(address("InternalIP")),
        s(address("ExternalIP")),
        s(or_placeholder(text(&info["osImage"]), "<unknown>")),
        s(or_placeholder(text(&info["kernelVersion"]), "<unknown>")),
        s(or_placeholder(
            text(&info["containerRuntimeVersion"]),
            "<unknown>",
        )),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kube::api::table::cells::fixtures::{ago, now};

    #[test]
    fn node_rows() {
        let node = json!({
            "metadata": {"name": "gke-node-1", "creationTimestamp": ago(3 * 86400),
                         "labels": {"kubernetes.io/hostname": "gke-node-1"}},
            "spec": {},
            "status": {
                "conditions": [{"type": "MemoryPressure", "status": "False"},
                               {"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "10.128.0.2"}],
                "nodeInfo": {"kubeletVersion": "v1.32.4-gke.1", "osImage": "Container-Optimized OS",
                             "kernelVersion": "6.1.0", "containerRuntimeVersion": "containerd://1.7.24"},
            },
        });
        let row = cells(&node, now());
        assert_eq!(
            row,
            vec![
                json!("gke-node-1"),
                json!("Ready"),
                json!("<none>"),
                json!("3d"),
                json!("v1.32.4-gke.1"),
                json!("10.128.0.2"),
                json!("<none>"),
                json!("Container-Optimized OS"),
                json!("6.1.0"),
                json!("containerd://1.7.24"),
            ]
        );

        let mut cordoned = node.clone();
        cordoned["spec"]["unschedulable"] = json!(true);
        cordoned["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] = json!("");
        cordoned["status"]["conditions"][1]["status"] = json!("Unknown");
        let row = cells(&cordoned, now());
        assert_eq!(row[1], "NotReady,SchedulingDisabled");
        assert_eq!(row[2], "control-plane");

        let bare = json!({"metadata": {"name": "n"}});
        let row = cells(&bare, now());
        assert_eq!(row[1], "Unknown");
        assert_eq!(row[3], "<unknown>");
        assert_eq!(row[7], "<unknown>");
    }
}
