//! `printReplicaSet`: desired, current and ready pods, age, and (wide) the template's
//! containers and images and the selector.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::labels::format_label_selector;
use super::{creation_age, int, items, name_of, s, text};

pub(super) fn cells(rs: &Value, now: Timestamp) -> Vec<Value> {
    let spec = &rs["spec"];
    let status = &rs["status"];
    let containers = items(&spec["template"]["spec"]["containers"]);
    let names: Vec<&str> = containers.iter().map(|c| text(&c["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(&c["image"])).collect();
    vec![
        s(name_of(rs)),
        json!(int(&spec["replicas"])),
        json!(int(&status["replicas"])),
        json!(int(&status["readyReplicas"])),
        s(creation_age(rs, now)),
        s(names.join(",")),
        s(images.join(",")),
        s(format_label_selector(&spec["selector"])),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kube::api::table::cells::fixtures::{ago, now};

    #[test]
    fn a_replica_set_row_counts_desired_current_and_ready_pods() {
        let rs = json!({
            "metadata": {"name": "web-5d59d67564", "creationTimestamp": ago(30)},
            "spec": {"replicas": 2,
                "selector": {"matchLabels": {"app": "web", "pod-template-hash": "5d59d67564"}},
                "template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
            "status": {"replicas": 2, "readyReplicas": 1},
        });
        let row = cells(&rs, now());
        assert_eq!(
            row[..5],
            [
                json!("web-5d59d67564"),
                json!(2),
                json!(2),
                json!(1),
                json!("30s")
            ]
        );
        assert_eq!(row[7], "app=web,pod-template-hash=5d59d67564");
    }
}
