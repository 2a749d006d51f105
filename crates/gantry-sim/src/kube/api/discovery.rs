//! Discovery: `/version`, `/api`, `/apis` and the resource lists of each group version.

use axum::response::Response;
use http::StatusCode;
use serde_json::{Value, json};

use crate::http_faults::json_response;
use crate::kube::cluster::ClusterState;
use crate::kube::errors::ApiError;
use crate::kube::resources::{RESOURCES, ResourceType};
use axum::response::IntoResponse;

pub fn version(state: &ClusterState) -> Response {
    let version = &state.spec.version;
    let mut parts = version.split(['.', '-']);
    let major = parts.next().unwrap_or("1");
    let minor = parts.next().unwrap_or("32");
    json_response(
        StatusCode::OK,
        &json!({
            "major": major,
            "minor": minor,
            "emulationMajor": major,
            "emulationMinor": minor,
            "gitVersion": format!("v{version}"),
            "gitCommit": "5a8e0b3b4f0e2f9ad4b1c9d8e7f6a5b4c3d2e1f0",
            "gitTreeState": "clean",
            "buildDate": "2026-10-01T00:00:00Z",
            "goVersion": "go1.24.6 X:boringcrypto",
            "compiler": "gc",
            "platform": "linux/amd64",
        }),
    )
}

pub fn core_versions(state: &ClusterState) -> Response {
    let _ = state;
    json_response(
        StatusCode::OK,
        &json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:443"}],
        }),
    )
}

fn group_json(group: &str, version: &str) -> Value {
    let gv = json!({"groupVersion": format!("{group}/{version}"), "version": version});
    json!({"name": group, "versions": [gv], "preferredVersion": gv})
}

/// The groups served; `metrics` adds metrics.k8s.io (metrics-server's, through the aggregator).
pub fn groups(metrics: bool) -> Response {
    let mut groups: Vec<Value> = ResourceType::groups()
        .into_iter()
        .map(|(g, v)| group_json(g, v))
        .collect();
    if metrics {
        groups.push(group_json(super::metrics::GROUP, super::metrics::VERSION));
    }
    json_response(
        StatusCode::OK,
        &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
    )
}

pub fn group(name: &str, metrics: bool) -> Response {
    let mut known = ResourceType::groups();
    if metrics {
        known.push((super::metrics::GROUP, super::metrics::VERSION));
    }
    match known.into_iter().find(|(g, _)| *g == name) {
        Some((g, v)) => {
            let mut body = group_json(g, v);
            body["kind"] = json!("APIGroup");
            body["apiVersion"] = json!("v1");
            json_response(StatusCode::OK, &body)
        }
        None => ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .into_response(),
    }
}

/// A subresource's entry; those of another kind name its group and version.
fn subresource(r: &ResourceType, sub: &str) -> Value {
    let (kind, group_version, verbs): (&str, Option<(&str, &str)>, &[&str]) = match sub {
        "log" => (r.kind_name, None, &["get"]),
        "token" => (
            "TokenRequest",
            Some(("authentication.k8s.io", "v1")),
            &["create"],
        ),
        "scale" => (
            "Scale",
            Some(("autoscaling", "v1")),
            &["get", "patch", "update"],
        ),
        // A connect subresource: its kind is its options' (as kube-apiserver lists it).
        "portforward" => ("PodPortForwardOptions", None, &["create", "get"]),
        _ => (r.kind_name, None, &["get", "patch", "update"]),
    };
    let mut entry = json!({
        "name": format!("{}/{sub}", r.plural),
        "singularName": "",
        "namespaced": r.namespaced,
        "kind": kind,
        "verbs": verbs,
    });
    if let Some((group, version)) = group_version {
        entry["group"] = json!(group);
        entry["version"] = json!(version);
    }
    entry
}

pub fn resources(group: &str, version: &str) -> Response {
    let mut list = Vec::new();
    for r in RESOURCES
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        let mut entry = json!({
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind_name,
            "verbs": r.verbs,
            "storageVersionHash": format!("{:x}", r.plural.len() * 7919 + r.kind_name.len()),
        });
        if !r.short_names.is_empty() {
            entry["shortNames"] = json!(r.short_names);
        }
        if !r.categories.is_empty() {
            entry["categories"] = json!(r.categories);
        }
        list.push(entry);
        for sub in r.subresources {
            list.push(subresource(r, sub));
        }
    }
    if list.is_empty() {
        return ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .into_response();
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    json_response(
        StatusCode::OK,
        &json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": list}),
    )
}
