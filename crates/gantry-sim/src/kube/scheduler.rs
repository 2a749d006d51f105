//! The scheduler stand-in: places a pod on the least-loaded node whose free resources, labels and
//! taints admit it, and explains, as kube-scheduler does, why no node fits.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use serde_json::Value;
use tokio::sync::Notify;

use super::quantity;
use super::resources::Kind;
use super::store::Store;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Resources {
    pub cpu_millis: u64,
    pub memory: u64,
    pub gpus: u64,
    pub pods: u64,
}

impl Resources {
    /// What a pod asks for: the sum of its containers' requests (limits where requests are unset).
    pub fn of_pod(pod: &Value) -> Self {
        let mut r = Resources {
            pods: 1,
            ..Default::default()
        };
        for c in pod
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let get = |name: &str| {
                c.pointer("/resources/requests")
                    .and_then(|q| q.get(name))
                    .or_else(|| c.pointer("/resources/limits").and_then(|q| q.get(name)))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| {
                        c.pointer("/resources/requests")
                            .and_then(|q| q.get(name))
                            .and_then(Value::as_u64)
                            .map(|n| n.to_string())
                    })
            };
            r.cpu_millis += get("cpu")
                .and_then(|q| quantity::cpu_millis(&q))
                .unwrap_or(0);
            r.memory += get("memory").and_then(|q| quantity::units(&q)).unwrap_or(0);
            r.gpus += get("nvidia.com/gpu")
                .and_then(|q| quantity::units(&q))
                .unwrap_or(0);
        }
        r
    }

    pub fn of_node(node: &Value) -> Self {
        let a = |name: &str| {
            node.pointer("/status/allocatable")
                .and_then(|q| q.get(name))
                .and_then(Value::as_str)
        };
        Resources {
            cpu_millis: a("cpu").and_then(quantity::cpu_millis).unwrap_or(0),
            memory: a("memory").and_then(quantity::units).unwrap_or(0),
            gpus: a("nvidia.com/gpu").and_then(quantity::units).unwrap_or(0),
            pods: a("pods").and_then(quantity::units).unwrap_or(110),
        }
    }
}

#[derive(Debug, Default)]
struct Placement {
    used: HashMap<String, Resources>,
    bound: HashMap<String, (String, Resources)>,
}

/// Keeps what every node has promised, so a placement costs a pass over nodes, not pods.
#[derive(Debug, Default)]
pub struct Scheduler {
    placement: Mutex<Placement>,
    /// Woken when resources are released, so pending pods try again.
    pub freed: Notify,
}

impl Scheduler {
    /// Picks a node for the pod and reserves its resources there, or says why none fits.
    pub fn place(&self, store: &Store, pod: &Value) -> Result<String, String> {
        let (nodes, _) = store.list(Kind::Node, None, |_| true);
        if nodes.is_empty() {
            return Err("no nodes available to schedule pods".to_string());
        }
        let want = Resources::of_pod(pod);
        let uid = super::meta::uid(pod).to_string();
        let mut placement = self.placement.lock().unwrap_or_else(|p| p.into_inner());
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let mut best: Option<(String, f64)> = None;
        for node in &nodes {
            let name = super::meta::name(node).to_string();
            match fits(
                node,
                pod,
                want,
                placement.used.get(&name).copied().unwrap_or_default(),
            ) {
                Ok(load) => {
                    if best.as_ref().is_none_or(|(_, l)| load < *l) {
                        best = Some((name, load));
                    }
                }
                Err(why) => {
                    for w in why {
                        *reasons.entry(w).or_default() += 1;
                    }
                }
            }
        }
        match best {
            Some((node, _)) => {
                let used = placement.used.entry(node.clone()).or_default();
                used.cpu_millis += want.cpu_millis;
                used.memory += want.memory;
                used.gpus += want.gpus;
                used.pods += 1;
                placement.bound.insert(uid, (node.clone(), want));
                Ok(node)
            }
            None => {
                let detail: Vec<String> = reasons
                    .iter()
                    .map(|(why, n)| format!("{n} {why}"))
                    .collect();
                Err(format!(
                    "0/{} nodes are available: {}. preemption: 0/{} nodes are available: {} No preemption victims found for incoming pod.",
                    nodes.len(),
                    detail.join(", "),
                    nodes.len(),
                    nodes.len()
                ))
            }
        }
    }

    /// Gives back what a pod held (it ended or went away).
    pub fn release(&self, pod_uid: &str) {
        let mut placement = self.placement.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((node, r)) = placement.bound.remove(pod_uid)
            && let Some(used) = placement.used.get_mut(&node)
        {
            used.cpu_millis = used.cpu_millis.saturating_sub(r.cpu_millis);
            used.memory = used.memory.saturating_sub(r.memory);
            used.gpus = used.gpus.saturating_sub(r.gpus);
            used.pods = used.pods.saturating_sub(1);
        }
        drop(placement);
        self.freed.notify_waiters();
    }
}

impl std::ops::AddAssign for Resources {
    fn add_assign(&mut self, other: Self) {
        self.cpu_millis += other.cpu_millis;
        self.memory += other.memory;
        self.gpus += other.gpus;
        self.pods += other.pods;
    }
}

/// Whether the pod would fit the node with `used` already promised there, and if not, why, in
/// kube-scheduler's words: what the cluster autoscaler asks of a node a pool would add.
pub fn fits_alongside(node: &Value, pod: &Value, used: Resources) -> Result<(), Vec<String>> {
    fits(node, pod, Resources::of_pod(pod), used).map(|_| ())
}

/// Whether the pod fits the node; Ok carries how loaded the node would be (lower is better).
fn fits(node: &Value, pod: &Value, want: Resources, used: Resources) -> Result<f64, Vec<String>> {
    // kube-scheduler's NodeUnschedulable filter runs first and says only this.
    let cordoned = node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true);
    let tolerates_cordon = pod
        .pointer("/spec/tolerations")
        .and_then(Value::as_array)
        .is_some_and(|ts| {
            let taint = serde_json::json!({"key": super::nodes::UNSCHEDULABLE_TAINT, "effect": "NoSchedule"});
            ts.iter().any(|t| tolerates(t, &taint))
        });
    if cordoned && !tolerates_cordon {
        return Err(vec!["node(s) were unschedulable".to_string()]);
    }
    let mut why = Vec::new();
    let labels = node.pointer("/metadata/labels");
    if let Some(selector) = pod.pointer("/spec/nodeSelector").and_then(Value::as_object) {
        let matches = selector
            .iter()
            .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v));
        if !matches {
            why.push("node(s) didn't match Pod's node affinity/selector".to_string());
        }
    }
    let tolerations = pod
        .pointer("/spec/tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // TaintToleration names the first taint the pod does not tolerate.
    let untolerated = node
        .pointer("/spec/taints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|taint| matches!(taint["effect"].as_str(), Some("NoSchedule" | "NoExecute")))
        .find(|taint| !tolerations.iter().any(|t| tolerates(t, taint)));
    if let Some(taint) = untolerated {
        why.push(format!(
            "node(s) had untolerated taint {{{}: {}}}",
            taint["key"].as_str().unwrap_or_default(),
            taint["value"].as_str().unwrap_or_default()
        ));
    }
    let cap = Resources::of_node(node);
    if used.pods + 1 > cap.pods {
        why.push("Too many pods".to_string());
    }
    if used.cpu_millis + want.cpu_millis > cap.cpu_millis {
        why.push("Insufficient cpu".to_string());
    }
    if used.memory + want.memory > cap.memory {
        why.push("Insufficient memory".to_string());
    }
    if want.gpus > 0 && used.gpus + want.gpus > cap.gpus {
        why.push("Insufficient nvidia.com/gpu".to_string());
    }
    if !why.is_empty() {
        return Err(why);
    }
    let cpu = (used.cpu_millis + want.cpu_millis) as f64 / cap.cpu_millis.max(1) as f64;
    let mem = (used.memory + want.memory) as f64 / cap.memory.max(1) as f64;
    let pods = (used.pods + 1) as f64 / cap.pods.max(1) as f64;
    Ok(cpu + mem + pods)
}

fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect_ok = toleration["effect"]
        .as_str()
        .is_none_or(|e| e.is_empty() || Some(e) == taint["effect"].as_str());
    let key = toleration["key"].as_str().unwrap_or_default();
    match toleration["operator"].as_str().unwrap_or("Equal") {
        "Exists" => effect_ok && (key.is_empty() || Some(key) == taint["key"].as_str()),
        _ => {
            effect_ok
                && Some(key) == taint["key"].as_str()
                && toleration["value"].as_str().unwrap_or_default()
                    == taint["value"].as_str().unwrap_or_default()
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(taints: Value) -> Value {
        json!({"metadata": {"name": "n"}, "spec": {"taints": taints},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}})
    }

    #[test]
    fn a_node_with_several_untolerated_taints_is_refused_for_the_first() {
        let pod = json!({"spec": {"containers": [{"name": "main"}]}});
        let shutting_down = node(json!([
            {"key": "cloud.google.com/impending-node-termination", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
        ]));
        assert_eq!(
            fits_alongside(&shutting_down, &pod, Resources::default()),
            Err(vec![
                "node(s) had untolerated taint {cloud.google.com/impending-node-termination: }"
                    .to_string()
            ])
        );
    }

    #[test]
    fn with_no_nodes_at_all_the_scheduler_says_so() {
        let store = Store::new();
        let pod = json!({"metadata": {"uid": "u"}, "spec": {"containers": [{"name": "main"}]}});
        assert_eq!(
            Scheduler::default().place(&store, &pod),
            Err("no nodes available to schedule pods".to_string())
        );
    }
}
