//! The cluster's nodes, one per node-pool member, named and labelled as GKE names and labels them.

use serde_json::{Value, json};

use super::cluster::{ClusterState, NodePoolSpec};
use super::events::EventType;
use super::meta;
use super::resources::Kind;
use crate::machines;

/// Namespaces every cluster starts with.
const NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Creates the namespaces and the nodes of every pool.
pub fn seed(state: &ClusterState) {
    for ns in NAMESPACES {
        let namespace = json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": ns,
                "uid": meta::new_uid(),
                "creationTimestamp": meta::now(),
                "labels": {"kubernetes.io/metadata.name": ns},
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        });
        let _ = state.store.create(Kind::Namespace, namespace);
    }
    for pool in &state.spec.node_pools {
        for zone in &pool.zones {
            for _ in 0..pool.nodes_per_zone {
                let name = instance_name(&state.spec.name, &pool.name, zone);
                create(state, pool, zone, &name);
            }
        }
    }
}

/// Adds one Ready node of `pool` in `zone`, as GKE registers a new instance, and lets pending
/// pods try it. Returns its name.
pub fn add(state: &ClusterState, pool: &NodePoolSpec, zone: &str) -> Option<String> {
    let name = instance_name(&state.spec.name, &pool.name, zone);
    add_named(state, pool, zone, &name)
}

/// Deletes the Node (its instance is gone), as the node lifecycle controller records it.
/// Whether there was one.
pub fn remove(state: &ClusterState, name: &str) -> bool {
    let Some(gone) = state.store.remove(Kind::Node, "", name) else {
        return false;
    };
    let message = format!("Node {name} event: Removing Node {name} from Controller");
    state.events.record(
        &state.store,
        &gone,
        EventType::Normal,
        "RemovingNode",
        &message,
        "node-controller",
    );
    true
}

/// As [`add`], for an instance of a given name: one its group recreated under the same name (a
/// preempted Spot VM). None while a node of that name still exists.
pub fn add_named(
    state: &ClusterState,
    pool: &NodePoolSpec,
    zone: &str,
    name: &str,
) -> Option<String> {
    let name = create(state, pool, zone, name)?;
    if let Some(node) = state.store.get(Kind::Node, "", &name) {
        let message = format!("Node {name} event: Registered Node {name} in Controller");
        state.events.record(
            &state.store,
            &node,
            EventType::Normal,
            "RegisteredNode",
            &message,
            "node-controller",
        );
    }
    state.scheduler.freed.notify_waiters();
    Some(name)
}

fn create(state: &ClusterState, pool: &NodePoolSpec, zone: &str, name: &str) -> Option<String> {
    let node = node_object(name, pool, zone, &state.spec.version, free_index(state));
    state.store.create(Kind::Node, node).ok()?;
    Some(name.to_string())
}

/// The base name of a pool's managed instance group in a zone, `gke-CLUSTER-POOL-1a2b3c4d`: its
/// instances (the nodes) are this and a suffix, the group itself this and `-grp`, as on GKE.
/// GKE's hash differs per pool and zone; a stable one is derived.
pub fn instance_group(cluster: &str, pool: &str, zone: &str) -> String {
    format!(
        "gke-{}-{}-{:08x}",
        truncate(cluster, 20),
        truncate(pool, 14),
        hash(&[cluster, pool, zone])
    )
}

/// A name for a new instance (node) of the pool's group in `zone`.
pub fn instance_name(cluster: &str, pool: &str, zone: &str) -> String {
    format!(
        "{}-{}",
        instance_group(cluster, pool, zone),
        meta::random_suffix(4)
    )
}

/// The node a new instance of `pool` in `zone` would register as, for the cluster autoscaler
/// to ask whether a pending pod would fit it (named as its template nodes are).
pub fn template(state: &ClusterState, pool: &NodePoolSpec, zone: &str) -> Value {
    let group = instance_group(&state.spec.name, &pool.name, zone);
    let name = format!("template-node-for-{group}-grp");
    node_object(&name, pool, zone, &state.spec.version, 0)
}

/// A node of a pool: its name and zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolNode {
    pub name: String,
    pub zone: String,
}

/// The nodes of a pool, oldest first (GKE takes the newest away first when it shrinks a pool).
pub fn of_pool(state: &ClusterState, pool: &str) -> Vec<PoolNode> {
    let (nodes, _) = state.store.list(Kind::Node, None, |n| {
        meta::label(n, POOL_LABEL) == Some(pool)
    });
    let mut nodes: Vec<(String, u32, PoolNode)> = nodes
        .iter()
        .map(|n| {
            let created = n["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or_default();
            let node = PoolNode {
                name: meta::name(n).to_string(),
                zone: meta::label(n, ZONE_LABEL).unwrap_or_default().to_string(),
            };
            (created.to_string(), index_of(n).unwrap_or(u32::MAX), node)
        })
        .collect();
    nodes.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    nodes.into_iter().map(|(_, _, node)| node).collect()
}

/// Makes the labels and taints of a pool's nodes true to `pool` again, in place, as GKE applies
/// a node-label or taint update. A cordon's taint stays.
pub fn relabel(state: &ClusterState, pool: &NodePoolSpec) {
    for node in of_pool(state, &pool.name) {
        let _ = state.store.update(Kind::Node, "", &node.name, |n| {
            let index = index_of(n).unwrap_or(0);
            let fresh = node_object(&node.name, pool, &node.zone, &state.spec.version, index);
            let mut taints = fresh["spec"]["taints"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let cordoned = n["spec"]["taints"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|t| t["key"] == UNSCHEDULABLE_TAINT)
                .cloned();
            taints.extend(cordoned);
            n["metadata"]["labels"] = fresh["metadata"]["labels"].clone();
            n["spec"]["taints"] = if taints.is_empty() {
                Value::Null
            } else {
                Value::Array(taints)
            };
        });
    }
}

/// The label GKE puts on every node with its pool's name.
pub const POOL_LABEL: &str = "cloud.google.com/gke-nodepool";
const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
/// The taint a cordoned node carries, as the node lifecycle controller adds it.
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";
/// The taint the cluster autoscaler puts on a node it is about to remove.
pub const TO_BE_DELETED_TAINT: &str = "ToBeDeletedByClusterAutoscaler";

/// The node's place in the cluster's address range, read back from its InternalIP.
fn index_of(node: &Value) -> Option<u32> {
    let ip = node
        .pointer("/status/addresses")?
        .as_array()?
        .iter()
        .find(|a| a["type"] == "InternalIP")?["address"]
        .as_str()?;
    let mut octets = ip.strip_prefix("10.128.")?.split('.');
    let high: u32 = octets.next()?.parse().ok()?;
    let low: u32 = octets.next()?.parse().ok()?;
    Some(high * 250 + low.checked_sub(2)?)
}

/// The lowest address no node holds: GCE hands a freed internal address out again.
fn free_index(state: &ClusterState) -> u32 {
    let (nodes, _) = state.store.list(Kind::Node, None, |_| true);
    let used: std::collections::BTreeSet<u32> = nodes.iter().filter_map(|n| index_of(n)).collect();
    (0..).find(|i| !used.contains(i)).unwrap_or(0)
}

fn truncate(s: &str, n: usize) -> &str {
    let end = s.char_indices().nth(n).map_or(s.len(), |(i, _)| i);
    s[..end].trim_end_matches('-')
}

fn hash(parts: &[&str]) -> u32 {
    parts
        .iter()
        .flat_map(|p| p.bytes().chain([0]))
        .fold(2166136261u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(16777619)
        })
}

fn node_object(name: &str, pool: &NodePoolSpec, zone: &str, version: &str, index: u32) -> Value {
    let machine = machines::machine_type(&pool.machine_type);
    let alloc = machine.map(|m| m.allocatable());
    let (cpu_cap, mem_cap) = machine.map_or((1, 3840), |m| (m.vcpus, m.memory_mib));
    let gpus = pool.accelerator.clone().or_else(|| {
        machine
            .and_then(|m| m.gpus)
            .map(|(t, n)| (t.to_string(), n))
    });
    let region = zone.rsplit_once('-').map_or(zone, |(r, _)| r);
    let mut labels = json!({
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": pool.machine_type,
        "beta.kubernetes.io/os": "linux",
        "cloud.google.com/gke-boot-disk": pool.disk_type,
        "cloud.google.com/gke-nodepool": pool.name,
        "cloud.google.com/gke-os-distribution": "cos",
        "cloud.google.com/machine-family": pool.machine_type.split('-').next().unwrap_or_default(),
        "failure-domain.beta.kubernetes.io/region": region,
        "failure-domain.beta.kubernetes.io/zone": zone,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": pool.machine_type,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone,
    });
    for (k, v) in &pool.labels {
        labels[k] = json!(v);
    }
    if pool.spot {
        labels["cloud.google.com/gke-spot"] = json!("true");
    }
    let mut capacity = json!({
        "cpu": cpu_cap.to_string(),
        "memory": format!("{}Ki", mem_cap * 1024),
        "pods": "110",
        "ephemeral-storage": format!("{}Ki", u64::from(pool.disk_size_gb) * 1024 * 1024),
    });
    let mut allocatable = json!({
        "cpu": format!("{}m", alloc.map_or(940, |a| a.cpu_millis)),
        "memory": format!("{}Ki", alloc.map_or(0, |a| a.memory_bytes / 1024)),
        "pods": "110",
        "ephemeral-storage": format!("{}Ki", u64::from(pool.disk_size_gb) * 1024 * 1024 * 9 / 10),
    });
    let mut taints: Vec<Value> = pool
        .taints
        .iter()
        .map(|(k, v, e)| json!({"key": k, "value": v, "effect": e}))
        .collect();
    if let Some((gpu_type, count)) = &gpus {
        labels["cloud.google.com/gke-accelerator"] = json!(gpu_type);
        labels["cloud.google.com/gke-gpu"] = json!("true");
        capacity["nvidia.com/gpu"] = json!(count.to_string());
        allocatable["nvidia.com/gpu"] = json!(count.to_string());
        // GKE taints GPU nodes so that only pods asking for GPUs land there.
        if !taints.iter().any(|t| t["key"] == "nvidia.com/gpu") {
            taints
                .push(json!({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}));
        }
    }
    let kubelet_version = format!("v{version}");
    let now = meta::now();
    let ip = format!("10.128.{}.{}", (index / 250) % 250, 2 + index % 250);
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": meta::new_uid(),
            "creationTimestamp": now,
            "labels": labels,
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {
            "podCIDR": format!("10.4.{}.0/24", index % 250),
            "providerID": format!("gce://sim/{zone}/{name}"),
            "taints": if taints.is_empty() { Value::Null } else { Value::Array(taints) },
        },
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": [
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory", "message": "kubelet has sufficient memory available", "lastHeartbeatTime": now, "lastTransitionTime": now},
                {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure", "message": "kubelet has no disk pressure", "lastHeartbeatTime": now, "lastTransitionTime": now},
                {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID", "message": "kubelet has sufficient PID available", "lastHeartbeatTime": now, "lastTransitionTime": now},
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status", "lastHeartbeatTime": now, "lastTransitionTime": now},
            ],
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://1.7.27",
                "kernelVersion": "6.6.93+",
                "kubeProxyVersion": kubelet_version,
                "kubeletVersion": kubelet_version,
                "operatingSystem": "linux",
                "osImage": "Container-Optimized OS from Google",
                "machineID": meta::new_uid().replace('-', ""),
                "systemUUID": meta::new_uid(),
                "bootID": meta::new_uid(),
            },
        },
    })
}
