//! The `ExtendedResourceToleration` admission plugin, which GKE enables: a pod asking for an
//! extended resource (`nvidia.com/gpu`) is given a toleration of that resource's `NoSchedule`
//! taint, so it can land on the GPU nodes GKE taints `nvidia.com/gpu=present:NoSchedule` without
//! saying so itself. As the plugin does, a toleration already there is left alone.

use std::collections::BTreeSet;

use serde_json::{Value, json};

/// Adds the toleration of each extended resource the pod's containers request or limit.
pub fn add_tolerations(spec: &mut Value) {
    let resources = extended_resources(spec);
    if resources.is_empty() {
        return;
    }
    if !spec["tolerations"].is_array() {
        spec["tolerations"] = json!([]);
    }
    let Some(tolerations) = spec["tolerations"].as_array_mut() else {
        return;
    };
    for resource in resources {
        let toleration = json!({"key": resource, "operator": "Exists", "effect": "NoSchedule"});
        // The plugin's AddOrUpdateTolerationInPodSpec: one with the same key, operator, value
        // and effect is the same toleration.
        let same = |t: &Value| {
            t["key"] == toleration["key"]
                && t["operator"].as_str().unwrap_or("Equal") == "Exists"
                && t["value"].as_str().unwrap_or_default().is_empty()
                && t["effect"] == toleration["effect"]
        };
        if !tolerations.iter().any(same) {
            tolerations.push(toleration);
        }
    }
}

/// Extended resources are named with a domain outside `kubernetes.io` (`nvidia.com/gpu`).
fn extended_resources(spec: &Value) -> BTreeSet<String> {
    let containers = ["containers", "initContainers"]
        .iter()
        .filter_map(|key| spec[*key].as_array())
        .flatten();
    containers
        .flat_map(|c| {
            ["requests", "limits"]
                .iter()
                .filter_map(|kind| c["resources"][*kind].as_object())
                .flat_map(|m| m.keys())
                .collect::<Vec<_>>()
        })
        .filter(|name| is_extended(name))
        .cloned()
        .collect()
}

fn is_extended(name: &str) -> bool {
    match name.split_once('/') {
        Some((domain, _)) => {
            !(domain == "kubernetes.io"
                || domain.ends_with(".kubernetes.io")
                || name.starts_with("requests."))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_pod_asking_gpus_tolerates_the_gpu_taint() {
        let mut spec = json!({"containers": [{"name": "a",
            "resources": {"limits": {"nvidia.com/gpu": "1", "cpu": "1"}}}]});
        add_tolerations(&mut spec);
        assert_eq!(
            spec["tolerations"],
            json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
        );
        add_tolerations(&mut spec);
        assert_eq!(spec["tolerations"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn other_pods_are_left_as_they_are() {
        let mut spec = json!({"containers": [{"name": "a",
            "resources": {"requests": {"cpu": "1", "hugepages-2Mi": "1Gi"}}}]});
        add_tolerations(&mut spec);
        assert!(spec.get("tolerations").is_none());
    }
}
