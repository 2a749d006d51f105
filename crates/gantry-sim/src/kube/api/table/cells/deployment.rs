//! `printDeployment`: ready of desired, up to date, available, age, and (wide) the template's
//! containers and images and the selector.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::labels::format_label_selector;
use super::{creation_age, int, items, name_of, s, text};

pub(super) fn cells(deployment: &Value, now: Timestamp) -> Vec<Value> {
    let spec = &deployment["spec"];
    let status = &deployment["status"];
    let desired = spec["replicas"].as_i64().unwrap_or(0);
    let containers = items(&spec["template"]["spec"]["containers"]);
    let names: Vec<&str> = containers.iter().map(|c| text(&c["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(&c["image"])).collect();
    // `LabelSelectorAsSelector(…).String()`: as the label selector prints, but empty when empty.
    let selector = match format_label_selector(&spec["selector"]).as_str() {
        "<none>" => String::new(),
        other => other.to_string(),
    };
    vec![
        s(name_of(deployment)),
        s(format!("{}/{desired}", int(&status["readyReplicas"]))),
        json!(int(&status["updatedReplicas"])),
        json!(int(&status["availableReplicas"])),
        s(creation_age(deployment, now)),
        s(names.join(",")),
        s(images.join(",")),
        s(selector),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kube::api::table::cells::fixtures::{ago, now};

    #[test]
    fn a_deployment_row_counts_ready_of_desired_then_updated_and_available() {
        let d = json!({
            "metadata": {"name": "web", "creationTimestamp": ago(90)},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
        });
        assert_eq!(
            cells(&d, now()),
            vec![
                json!("web"),
                json!("2/3"),
                json!(3),
                json!(2),
                json!("90s"),
                json!("web"),
                json!("nginx:1.27"),
                json!("app=web")
            ]
        );
        let fresh = json!({"metadata": {"name": "web"}, "spec": {"replicas": 2}, "status": {}});
        assert_eq!(
            cells(&fresh, now())[1..4],
            [json!("0/2"), json!(0), json!(0)]
        );
    }
}
