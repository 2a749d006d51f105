//! The scale-up decision, as the cluster autoscaler makes it each loop: pending pods that will
//! fit instances already booting wait for them; for the rest, each node group is asked whether
//! a new node of it would take the pod (kube-scheduler's own filters on the group's template
//! node); the group that would take the most pods grows by as many nodes as they need, up to its
//! maximum. Pods no group can help are told why, group by group.

use std::sync::Arc;

use serde_json::Value;

use super::groups::Group;
use super::messages::{IN_BACKOFF, MAX_REACHED};
use crate::kube::scheduler::{Resources, fits_alongside};

/// Reasons, each with how many node groups gave it.
pub type Reasons = Vec<(String, usize)>;

/// One loop's outcome.
#[derive(Debug, Default)]
pub struct Plan {
    pub scale_up: Option<ScaleUp>,
    /// Pods no group can help, each with why.
    pub unhelped: Vec<(Arc<Value>, Reasons)>,
}

/// A group to grow, and the pods that triggered it.
#[derive(Debug)]
pub struct ScaleUp {
    pub group: usize,
    pub new_nodes: u64,
    pub pods: Vec<Arc<Value>>,
}

/// Decides for the pending pods. `in_backoff` says whether a group's last scale-up failed too
/// recently to try it again.
pub fn decide(
    groups: &[Group],
    pending: Vec<Arc<Value>>,
    in_backoff: impl Fn(&Group) -> bool,
) -> Plan {
    let waiting = without_those_booting_nodes_take(groups, pending);
    let mut best: Option<ScaleUp> = None;
    for (index, group) in groups.iter().enumerate() {
        if in_backoff(group) || group.target() >= group.max {
            continue;
        }
        let (pods, new_nodes) = binpack(group, &waiting, group.max - group.target());
        let better = best.as_ref().is_none_or(|b| {
            let fewer_nodes = pods.len() == b.pods.len() && new_nodes < b.new_nodes;
            // Between equals, the smaller group, as balancing similar groups does.
            let smaller = pods.len() == b.pods.len()
                && new_nodes == b.new_nodes
                && group.target() < groups[b.group].target();
            pods.len() > b.pods.len() || fewer_nodes || smaller
        });
        if !pods.is_empty() && better {
            best = Some(ScaleUp {
                group: index,
                new_nodes,
                pods,
            });
        }
    }
    if best.is_some() {
        return Plan {
            scale_up: best,
            unhelped: Vec::new(),
        };
    }
    let unhelped = waiting
        .into_iter()
        .map(|pod| {
            let reasons = reasons(groups, &pod, &in_backoff);
            (pod, reasons)
        })
        .collect();
    Plan {
        scale_up: None,
        unhelped,
    }
}

/// The pods that will not fit the instances already booting.
fn without_those_booting_nodes_take(groups: &[Group], pending: Vec<Arc<Value>>) -> Vec<Arc<Value>> {
    let mut upcoming: Vec<(&Group, Resources)> = groups
        .iter()
        .flat_map(|g| (0..g.booting).map(move |_| (g, Resources::default())))
        .collect();
    pending
        .into_iter()
        .filter(|pod| {
            let slot = upcoming
                .iter_mut()
                .find(|(g, used)| fits_alongside(&g.template, pod, *used).is_ok());
            match slot {
                Some((_, used)) => {
                    *used += Resources::of_pod(pod);
                    false
                }
                None => true,
            }
        })
        .collect()
}

/// Which pods new nodes of the group would take, first fit, and how many nodes that needs (at
/// most `room`).
fn binpack(group: &Group, pods: &[Arc<Value>], room: u64) -> (Vec<Arc<Value>>, u64) {
    let mut nodes: Vec<Resources> = Vec::new();
    let mut taken = Vec::new();
    for pod in pods {
        if fits_alongside(&group.template, pod, Resources::default()).is_err() {
            continue;
        }
        let want = Resources::of_pod(pod);
        let placed = nodes
            .iter()
            .position(|used| fits_alongside(&group.template, pod, *used).is_ok());
        match placed {
            Some(at) => nodes[at] += want,
            None if (nodes.len() as u64) < room => nodes.push(want),
            None => continue,
        }
        taken.push(pod.clone());
    }
    (taken, nodes.len() as u64)
}

/// Why no group helps the pod: groups skipped (at their maximum, in backoff) and groups whose
/// new node would not take it, each reason counted once per group, in the order they came.
fn reasons(groups: &[Group], pod: &Value, in_backoff: &impl Fn(&Group) -> bool) -> Reasons {
    let mut counted: Reasons = Vec::new();
    let mut count = |reason: String| match counted.iter_mut().find(|(r, _)| *r == reason) {
        Some((_, n)) => *n += 1,
        None => counted.push((reason, 1)),
    };
    for group in groups {
        if in_backoff(group) {
            count(IN_BACKOFF.to_string());
        } else if group.target() >= group.max {
            count(MAX_REACHED.to_string());
        } else if let Err(why) = fits_alongside(&group.template, pod, Resources::default()) {
            let mut seen: Vec<String> = Vec::new();
            for reason in why {
                if !seen.contains(&reason) {
                    seen.push(reason.clone());
                    count(reason);
                }
            }
        }
    }
    counted
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn group(pool: &str, nodes: usize, booting: u64, max: u64, gpus: u64) -> Group {
        let mut template = json!({"metadata": {"labels": {"cloud.google.com/gke-nodepool": pool}},
            "status": {"allocatable": {"cpu": "3920m", "memory": "12Gi", "pods": "110"}}});
        if gpus > 0 {
            template["status"]["allocatable"]["nvidia.com/gpu"] = json!(gpus.to_string());
        }
        let pool_spec = crate::kube::cluster::ClusterSpec::seed("p", "us-central1-a", "c")
            .node_pools[0]
            .clone();
        Group {
            pool: pool_spec,
            zone: "us-central1-a".into(),
            id: format!("group-{pool}"),
            nodes: (0..nodes).map(|i| format!("{pool}-{i}")).collect(),
            booting,
            min: 0,
            max,
            template,
        }
    }

    fn pod(gpus: u64, selector: Option<&str>) -> Arc<Value> {
        let mut pod = json!({"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": [
            {"name": "c", "resources": {"limits": {"nvidia.com/gpu": gpus.to_string()}}}]}});
        if let Some(pool) = selector {
            pod["spec"]["nodeSelector"] = json!({"cloud.google.com/gke-nodepool": pool});
        }
        Arc::new(pod)
    }

    #[test]
    fn a_gpu_pod_grows_the_gpu_group_by_one_node() {
        let groups = [group("cpu", 0, 0, 3, 0), group("gpu", 0, 0, 1, 1)];
        let plan = decide(&groups, vec![pod(1, None)], |_| false);
        let up = plan.scale_up.unwrap();
        assert_eq!((up.group, up.new_nodes, up.pods.len()), (1, 1, 1));
    }

    #[test]
    fn a_pod_that_a_booting_node_will_take_waits_for_it() {
        let groups = [group("gpu", 0, 1, 1, 1)];
        let plan = decide(&groups, vec![pod(1, None)], |_| false);
        assert!(plan.scale_up.is_none() && plan.unhelped.is_empty());
    }

    #[test]
    fn a_pod_no_group_can_help_is_told_why_per_group() {
        let groups = [
            group("gpu", 1, 0, 1, 1),
            group("a", 0, 0, 2, 0),
            group("b", 0, 0, 2, 0),
        ];
        let plan = decide(&groups, vec![pod(1, Some("gpu"))], |_| false);
        assert!(plan.scale_up.is_none());
        assert_eq!(
            plan.unhelped[0].1,
            [
                (MAX_REACHED.to_string(), 1),
                (
                    "node(s) didn't match Pod's node affinity/selector".to_string(),
                    2
                ),
                ("Insufficient nvidia.com/gpu".to_string(), 2),
            ]
        );
        let plan = decide(&groups[..1], vec![pod(1, None)], |_| true);
        assert_eq!(plan.unhelped[0].1, [(IN_BACKOFF.to_string(), 1)]);
    }

    #[test]
    fn pods_beyond_the_maximum_are_left_for_the_next_loop() {
        let groups = [group("gpu", 0, 0, 2, 1)];
        let plan = decide(
            &groups,
            vec![pod(1, None), pod(1, None), pod(1, None)],
            |_| false,
        );
        let up = plan.scale_up.unwrap();
        assert_eq!((up.new_nodes, up.pods.len()), (2, 2));
    }
}
