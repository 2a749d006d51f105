//! The causes that apply to a waiting pod, read from what Kubernetes and GKE write. The
//! messages are the documented ones (each reader names its source): kube-scheduler's
//! `FailedScheduling` (`0/3 nodes are available: 3 Insufficient nvidia.com/gpu.`,
//! `node(s) didn't match Pod's node affinity/selector`, `node(s) had untolerated taint
//! {nvidia.com/gpu: present}`), the cluster autoscaler's events
//! (cluster-autoscaler/FAQ.md "What events are emitted by CA": `TriggeredScaleUp` `pod
//! triggered scale-up: [{MIG 0->1 (max: 2)}]`, `NotTriggerScaleUp` `pod didn't trigger
//! scale-up: 1 max node group size reached`, `FailedScaleUp` `Node scale up in zones Z
//! associated with this pod failed: GCE quota exceeded` / `GCE out of resources`), and the
//! kubelet's image pulls (containerd: `rpc error: code = NotFound … not found`, `403
//! Forbidden`).

use super::Cause;
use crate::gke::summary::PoolSummary;
use crate::k8s::status::{EventSummary, PodSummary};

/// Every cause that applies; the caller keeps the most telling.
pub(super) fn causes(
    pod: &PodSummary,
    events: &[&EventSummary],
    pools: Option<&[PoolSummary]>,
) -> Vec<Cause> {
    let mut found = Vec::new();
    if let Some(cause) = image(pod, events) {
        found.push(cause);
    }
    let newest = |reason: &str| events.iter().rev().find(|e| e.reason == reason);
    let scheduled = pod.node.is_some();
    if !scheduled {
        if let Some(e) = newest("FailedScaleUp") {
            found.extend(failed_scale_up(&e.message));
        }
        // The autoscaler's newest word: a scale-up under way, or why there is none.
        let triggered = newest("TriggeredScaleUp");
        let not_triggered = newest("NotTriggerScaleUp");
        match (triggered, not_triggered) {
            (Some(t), n) if n.is_none_or(|n| n.last_seen <= t.last_seen) => {
                found.extend(triggered_scale_up(t));
            }
            (_, Some(n)) => found.extend(unschedulable(pod, &n.message, pools)),
            _ => {}
        }
        if let Some(e) = newest("FailedScheduling") {
            found.extend(unschedulable(pod, &e.message, pools));
        } else if pod.reason.as_deref() == Some("Unschedulable")
            && let Some(message) = &pod.message
        {
            found.extend(unschedulable(pod, message, pools));
        }
    } else if found.is_empty()
        && matches!(
            pod.reason.as_deref(),
            None | Some("ContainerCreating" | "PodInitializing")
        )
    {
        let image = newest("Pulling").and_then(|e| quoted(&e.message));
        found.push(Cause::Creating { image });
    }
    found
}

/// A pull that failed: not found, or not allowed. The container's waiting message, else the
/// kubelet's newest `Failed` event.
fn image(pod: &PodSummary, events: &[&EventSummary]) -> Option<Cause> {
    let pulling = matches!(
        pod.reason.as_deref(),
        Some("ErrImagePull" | "ImagePullBackOff" | "InvalidImageName")
    );
    let failed = events
        .iter()
        .rev()
        .find(|e| e.reason == "Failed" && e.message.contains("pull"));
    if !pulling && failed.is_none() {
        return None;
    }
    // The registry's answer: the container's message while it is `ErrImagePull`, else the
    // kubelet's `Failed` event (during `ImagePullBackOff` the container says only "Back-off").
    let message = match (&pod.message, failed) {
        (Some(m), _) if m.contains("rpc error") => m.clone(),
        (_, Some(e)) => e.message.clone(),
        (Some(m), None) => m.clone(),
        (None, None) => String::new(),
    };
    let image = quoted(&message).unwrap_or_else(|| pod.image.clone());
    let lower = message.to_ascii_lowercase();
    let tries = failed.map_or(1, |e| e.count.max(1) as u32);
    if lower.contains("403") || lower.contains("forbidden") || lower.contains("denied") {
        Some(Cause::ImageForbidden { image })
    } else if lower.contains("notfound")
        || lower.contains("not found")
        || lower.contains("manifest unknown")
    {
        Some(Cause::ImageNotFound { image, tries })
    } else {
        pulling.then(|| Cause::Unknown {
            reason: pod.reason.clone().unwrap_or_default(),
            message,
        })
    }
}

/// `Node scale up in zones us-central1-a associated with this pod failed: GCE quota exceeded.`
fn failed_scale_up(message: &str) -> Option<Cause> {
    let lower = message.to_ascii_lowercase();
    if lower.contains("quota") {
        // Compute Engine names the quota: `Quota 'NVIDIA_T4_GPUS' exceeded`.
        let quota = message
            .split('\'')
            .nth(1)
            .filter(|q| {
                q.chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
            })
            .unwrap_or("GPUS_ALL_REGIONS")
            .to_string();
        return Some(Cause::Quota { quota });
    }
    if lower.contains("out of resources") || lower.contains("resource_pool_exhausted") {
        let zone = message
            .split("in zones ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or("the zone")
            .trim_end_matches(',')
            .to_string();
        return Some(Cause::Stockout { zone });
    }
    None
}

/// `pod triggered scale-up: [{https://…/instanceGroups/gke-CLUSTER-POOL-1234abcd-grp 0->1 (max: 2)}]`
fn triggered_scale_up(event: &EventSummary) -> Option<Cause> {
    let inner = event.message.split("[{").nth(1)?;
    let mut words = inner.split_whitespace();
    let group = words.next()?.rsplit('/').next()?;
    let (from, to) = words.next()?.split_once("->")?;
    Some(Cause::ScalingUp {
        pool: pool_of_group(group),
        from: from.parse().ok()?,
        to: to.trim_end_matches(['}', ']', ',']).parse().ok()?,
        asked: event.last_seen,
    })
}

/// `gke-ml-gke-cluster-gpu-pool-1234abcd-grp` → `gpu-pool`, as far as it can be told: the
/// part between the cluster's name and the hash. Without the cluster's name, the group.
fn pool_of_group(group: &str) -> String {
    let trimmed = group.trim_start_matches("gke-").trim_end_matches("-grp");
    // The hash is the last dash-separated part; the pool is the part before it that follows
    // the cluster (whose name may hold dashes too): the last two parts are the best guess.
    let parts: Vec<&str> = trimmed.split('-').collect();
    match parts.len() {
        0..=2 => trimmed.to_string(),
        n => parts[n.saturating_sub(3)..n - 1].join("-"),
    }
}

/// Taints that Kubernetes or GKE put on a node that is leaving (reclaimed, shutting down, lost,
/// drained or being removed): no Job should tolerate them, and none needs to.
const NODE_GOING_TAINTS: [&str; 5] = [
    "cloud.google.com/impending-node-termination",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable",
    "ToBeDeletedByClusterAutoscaler",
];

/// The scheduler's or the autoscaler's reasons the pod fits no node.
fn unschedulable(pod: &PodSummary, message: &str, pools: Option<&[PoolSummary]>) -> Vec<Cause> {
    let mut found = Vec::new();
    if message.contains("didn't match Pod's node affinity/selector")
        || message.contains("didn't match node selector")
    {
        let selector = pod
            .node_selector
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        found.push(Cause::Selector {
            selector: if selector.is_empty() {
                "the pod's node affinity".into()
            } else {
                selector
            },
        });
    }
    if let Some(taint) = message
        .split("untolerated taint")
        .nth(1)
        .and_then(|rest| rest.split('{').nth(1))
        .and_then(|rest| rest.split('}').next())
    {
        let key = taint.split(':').next().unwrap_or_default().trim();
        let taint = match taint.split_once(": ") {
            Some((k, v)) if !v.trim().is_empty() => format!("{}={}", k.trim(), v.trim()),
            Some((k, _)) => k.trim().to_string(),
            None => taint.trim().to_string(),
        };
        if NODE_GOING_TAINTS.contains(&key) {
            found.push(Cause::NodeGoing { taint });
        } else {
            found.push(Cause::Taint { taint });
        }
    }
    if message.contains("no nodes available to schedule pods") {
        found.push(Cause::NodeGoing {
            taint: String::new(),
        });
    }
    let wants_gpu = pod.gpus > 0 || message.contains("Insufficient nvidia.com/gpu");
    let at_max = message.contains("max node group size reached");
    if wants_gpu && (at_max || message.contains("Insufficient nvidia.com/gpu")) {
        found.extend(gpu_pools(pools, at_max));
    } else if at_max {
        found.push(Cause::PoolAtMax {
            pool: "the node pool".into(),
            max: 0,
        });
    }
    found
}

/// With the pods asking GPUs and none free: which pool, if any, could give one.
fn gpu_pools(pools: Option<&[PoolSummary]>, at_max: bool) -> Option<Cause> {
    let Some(pools) = pools else {
        // A context: what the events say is all there is.
        return at_max.then(|| Cause::PoolAtMax {
            pool: "the GPU pool".into(),
            max: 0,
        });
    };
    let gpu = pools.iter().find(|p| p.accelerator_count > 0);
    match gpu {
        None => Some(Cause::NoPool {
            resource: "nvidia.com/gpu".into(),
        }),
        Some(p) => match p.autoscaling {
            Some((_, max)) if !at_max && p.node_count < max => Some(Cause::ScalingUp {
                pool: p.name.clone(),
                from: p.node_count,
                to: p.node_count + 1,
                asked: None,
            }),
            Some((_, max)) => Some(Cause::PoolAtMax {
                pool: p.name.clone(),
                max,
            }),
            None => Some(Cause::PoolAtMax {
                pool: p.name.clone(),
                max: p.node_count,
            }),
        },
    }
}

/// The first double-quoted text: the image in `Pulling image "gcr.io/x:v1"`.
fn quoted(message: &str) -> Option<String> {
    let rest = message.split('"').nth(1)?;
    (!rest.is_empty() && message.matches('"').count() >= 2).then(|| rest.to_string())
}
