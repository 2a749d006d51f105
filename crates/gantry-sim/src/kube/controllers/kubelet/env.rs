//! A container's environment as the kubelet resolves it: literal values and downward-API
//! field references (the workload reads its knobs and its rank from there).

use std::collections::HashMap;

use serde_json::Value;

use crate::kube::meta;

/// Resolves a container's environment as the kubelet would (values and downward-API fields).
pub(super) fn resolve_env(container: &Value, pod: &Value) -> HashMap<String, String> {
    let mut env = HashMap::new();
    for e in container["env"].as_array().into_iter().flatten() {
        let Some(name) = e["name"].as_str() else {
            continue;
        };
        let value = if let Some(v) = e["value"].as_str() {
            v.to_string()
        } else if let Some(path) = e
            .pointer("/valueFrom/fieldRef/fieldPath")
            .and_then(Value::as_str)
        {
            field_path(pod, path)
        } else {
            String::new()
        };
        env.insert(name.to_string(), value);
    }
    env
}

pub(super) fn field_path(pod: &Value, path: &str) -> String {
    let bracketed = |prefix: &str| {
        path.strip_prefix(prefix)
            .and_then(|r| r.strip_suffix("']"))
            .map(str::to_string)
    };
    if let Some(key) = bracketed("metadata.annotations['") {
        return meta::annotation(pod, &key).unwrap_or_default().to_string();
    }
    if let Some(key) = bracketed("metadata.labels['") {
        return meta::label(pod, &key).unwrap_or_default().to_string();
    }
    let pointer = format!("/{}", path.replace('.', "/"));
    match pod.pointer(&pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(v) if !v.is_null() => v.to_string(),
        _ => String::new(),
    }
}
