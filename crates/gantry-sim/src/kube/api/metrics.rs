//! `metrics.k8s.io/v1beta1`, as metrics-server serves it through the aggregator: PodMetrics and
//! NodeMetrics, listed and got, with label selectors. It has no watch (clients poll it). Usage
//! follows each workload: a container's CPU near its request, its memory rising to a plateau
//! under its limit, an out-of-memory workload (`SIM_OOM`) past its limit before it is killed;
//! a node's usage is its pods' and the system's. The `no-metrics-api` fault takes the group away,
//! as on a cluster without metrics-server.

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use jiff::Timestamp;
use serde_json::{Value, json};

use super::Params;
use super::objects::Filter;
use crate::http_faults::json_response;
use crate::kube::cluster::ClusterState;
use crate::kube::errors::ApiError;
use crate::kube::quantity;
use crate::kube::resources::Kind;

pub const GROUP: &str = "metrics.k8s.io";
pub const VERSION: &str = "v1beta1";
/// The window metrics-server reports over.
const WINDOW: &str = "15s";
/// What a node's system (kubelet, runtime, system pods) uses besides the workload.
const NODE_SYSTEM_MILLIS: u64 = 180;
const NODE_SYSTEM_BYTES: u64 = 640 << 20;

/// Whether the cluster serves the group now.
pub fn served(state: &ClusterState) -> bool {
    !state.shared.faults.no_metrics_api()
}

/// The group's resource list, for discovery.
pub fn resources() -> Value {
    json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": format!("{GROUP}/{VERSION}"),
        "resources": [
            {"name": "nodes", "singularName": "", "namespaced": false, "kind": "NodeMetrics", "verbs": ["get", "list"]},
            {"name": "pods", "singularName": "", "namespaced": true, "kind": "PodMetrics", "verbs": ["get", "list"]},
        ],
    })
}

fn not_found() -> Response {
    ApiError::new(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
    .into_response()
}

/// Serves `/apis/metrics.k8s.io/v1beta1/<rest>`.
pub fn serve(state: &ClusterState, rest: &[&str], params: &Params) -> Response {
    if !served(state) {
        return not_found();
    }
    let filter = match Filter::from_params(params) {
        Ok(f) => f,
        Err(e) => return e.into_response(),
    };
    let now = Timestamp::now();
    match rest {
        [] => json_response(StatusCode::OK, &resources()),
        ["pods"] => pod_list(state, None, None, &filter, now),
        ["namespaces", ns, "pods"] => pod_list(state, Some(ns), None, &filter, now),
        ["namespaces", ns, "pods", name] => pod_list(state, Some(ns), Some(name), &filter, now),
        ["nodes"] => node_list(state, None, &filter, now),
        ["nodes", name] => node_list(state, Some(name), &filter, now),
        _ => not_found(),
    }
}

fn running(pod: &Value) -> bool {
    pod["status"]["phase"] == "Running"
}

/// CPU millis and memory bytes of one container of a running pod, `age_secs` into its run.
fn container_usage(pod: &Value, container: &Value, age_secs: f64) -> (u64, u64) {
    let resources = &container["resources"];
    let cpu_request = resources["requests"]["cpu"]
        .as_str()
        .and_then(quantity::cpu_millis)
        .unwrap_or(250);
    let memory_limit = resources["limits"]["memory"]
        .as_str()
        .or(resources["requests"]["memory"].as_str())
        .and_then(quantity::units)
        .unwrap_or(1 << 30);
    // A little wobble per pod, the same at every look at the same second.
    let name = pod["metadata"]["name"].as_str().unwrap_or_default();
    let seed = name.bytes().fold(age_secs as u64, |h, b| {
        h.wrapping_mul(31).wrapping_add(u64::from(b))
    });
    let wobble = (seed % 100) as f64 / 100.0;
    let cpu = (cpu_request as f64 * (0.88 + 0.1 * wobble)) as u64;
    let oom = container["env"]
        .as_array()
        .is_some_and(|env| env.iter().any(|e| e["name"] == "SIM_OOM"));
    // Rising to a plateau: most of it in the first minute, as a training loads its data.
    let rise = 1.0 - (-age_secs / 60.0).exp();
    let plateau = if oom { 1.04 } else { 0.62 + 0.05 * wobble };
    let memory = (memory_limit as f64 * plateau * rise.max(0.05)) as u64;
    (cpu, memory)
}

/// How long the pod has run, in simulated seconds (the workload's own pace).
fn age_secs(pod: &Value, now: Timestamp, scale: f64) -> f64 {
    let wall = pod["status"]["startTime"]
        .as_str()
        .and_then(|t| t.parse::<Timestamp>().ok())
        .map_or(0.0, |t| (now - t).get_seconds().max(0) as f64);
    if scale > 0.0 { wall / scale } else { wall }
}

fn cpu(millis: u64) -> String {
    format!("{}n", millis * 1_000_000)
}

fn memory(bytes: u64) -> String {
    format!("{}Ki", bytes / 1024)
}

fn metadata(obj: &Value, now: Timestamp) -> Value {
    let mut meta = json!({
        "name": obj["metadata"]["name"],
        "creationTimestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    });
    if let Some(ns) = obj["metadata"]["namespace"].as_str() {
        meta["namespace"] = json!(ns);
    }
    if let Some(labels) = obj["metadata"].get("labels") {
        meta["labels"] = labels.clone();
    }
    meta
}

/// The pod's PodMetrics and its total usage.
fn pod_metrics(pod: &Value, now: Timestamp, scale: f64) -> (Value, u64, u64) {
    let age = age_secs(pod, now, scale);
    let mut containers = Vec::new();
    let (mut total_cpu, mut total_memory) = (0, 0);
    for c in pod["spec"]["containers"].as_array().into_iter().flatten() {
        let (c_cpu, c_memory) = container_usage(pod, c, age);
        total_cpu += c_cpu;
        total_memory += c_memory;
        containers.push(json!({
            "name": c["name"],
            "usage": {"cpu": cpu(c_cpu), "memory": memory(c_memory)},
        }));
    }
    let metrics = json!({
        "kind": "PodMetrics",
        "apiVersion": format!("{GROUP}/{VERSION}"),
        "metadata": metadata(pod, now),
        "timestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "window": WINDOW,
        "containers": containers,
    });
    (metrics, total_cpu, total_memory)
}

fn pod_list(
    state: &ClusterState,
    namespace: Option<&str>,
    name: Option<&str>,
    filter: &Filter,
    now: Timestamp,
) -> Response {
    let (pods, _) = state.store.list(Kind::Pod, namespace, |p| {
        running(p) && filter.matches(p) && name.is_none_or(|n| p["metadata"]["name"] == n)
    });
    let scale = state.shared.clock.scale();
    let items: Vec<Value> = pods.iter().map(|p| pod_metrics(p, now, scale).0).collect();
    answer(name, items, "podmetrics", "PodMetricsList")
}

fn node_list(
    state: &ClusterState,
    name: Option<&str>,
    filter: &Filter,
    now: Timestamp,
) -> Response {
    let (nodes, _) = state.store.list(Kind::Node, None, |n| {
        filter.matches(n) && name.is_none_or(|want| n["metadata"]["name"] == want)
    });
    let (pods, _) = state.store.list(Kind::Pod, None, running);
    let scale = state.shared.clock.scale();
    let items: Vec<Value> = nodes
        .iter()
        .map(|node| {
            let node_name = &node["metadata"]["name"];
            let (mut cpu_m, mut mem) = (NODE_SYSTEM_MILLIS, NODE_SYSTEM_BYTES);
            for p in pods.iter().filter(|p| &p["spec"]["nodeName"] == node_name) {
                let (_, c, m) = pod_metrics(p, now, scale);
                cpu_m += c;
                mem += m;
            }
            json!({
                "kind": "NodeMetrics",
                "apiVersion": format!("{GROUP}/{VERSION}"),
                "metadata": metadata(node, now),
                "timestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                "window": WINDOW,
                "usage": {"cpu": cpu(cpu_m), "memory": memory(mem)},
            })
        })
        .collect();
    answer(name, items, "nodemetrics", "NodeMetricsList")
}

/// One object when a name was asked for (404 when it is not there), else the list.
fn answer(name: Option<&str>, items: Vec<Value>, resource: &str, list_kind: &str) -> Response {
    match name {
        Some(n) => match items.into_iter().next() {
            Some(one) => json_response(StatusCode::OK, &one),
            None => ApiError::new(
                404,
                "NotFound",
                format!("{resource}.{GROUP} \"{n}\" not found"),
            )
            .into_response(),
        },
        None => json_response(
            StatusCode::OK,
            &json!({"kind": list_kind, "apiVersion": format!("{GROUP}/{VERSION}"), "metadata": {}, "items": items}),
        ),
    }
}
