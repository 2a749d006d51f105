//! Writing a pod's status the way the kubelet reports it: phase, conditions and container states.

use serde_json::{Value, json};

use super::meta;

pub fn set_condition(
    pod: &mut Value,
    kind: &str,
    status: bool,
    reason: Option<&str>,
    message: Option<&str>,
) {
    let now = meta::now();
    if !pod["status"]["conditions"].is_array() {
        pod["status"]["conditions"] = json!([]);
    }
    let value = if status { "True" } else { "False" };
    let Some(conditions) = pod["status"]["conditions"].as_array_mut() else {
        return;
    };
    let mut condition =
        json!({"type": kind, "status": value, "lastProbeTime": null, "lastTransitionTime": now});
    if let Some(r) = reason {
        condition["reason"] = json!(r);
    }
    if let Some(m) = message {
        condition["message"] = json!(m);
    }
    match conditions.iter_mut().find(|c| c["type"] == kind) {
        Some(existing) => {
            if existing["status"] == value {
                condition["lastTransitionTime"] = existing["lastTransitionTime"].clone();
            }
            *existing = condition;
        }
        None => conditions.push(condition),
    }
}

/// One container's entry in `status.containerStatuses`.
#[derive(Debug, Clone)]
pub struct ContainerView {
    pub name: String,
    pub image: String,
    pub state: Value,
    pub last_state: Value,
    pub ready: bool,
    pub started: bool,
    pub restarts: u32,
    pub container_id: Option<String>,
}

impl ContainerView {
    pub fn waiting(name: &str, image: &str, reason: &str, message: Option<&str>) -> Self {
        let mut waiting = json!({"reason": reason});
        if let Some(m) = message {
            waiting["message"] = json!(m);
        }
        Self {
            name: name.into(),
            image: image.into(),
            state: json!({"waiting": waiting}),
            last_state: json!({}),
            ready: false,
            started: false,
            restarts: 0,
            container_id: None,
        }
    }

    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "name": self.name,
            "image": self.image,
            "imageID": if self.container_id.is_some() { format!("{}@sha256:{}", self.image.split(':').next().unwrap_or_default(), "5f2a".repeat(16)) } else { String::new() },
            "state": self.state,
            "lastState": self.last_state,
            "ready": self.ready,
            "started": self.started,
            "restartCount": self.restarts,
        });
        if let Some(id) = &self.container_id {
            v["containerID"] = json!(id);
        }
        v
    }
}

pub fn set_containers(pod: &mut Value, views: &[ContainerView]) {
    pod["status"]["containerStatuses"] =
        Value::Array(views.iter().map(ContainerView::to_json).collect());
}
