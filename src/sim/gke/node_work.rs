//! The node side of a node pool operation: which nodes to add, recreate or take away so that the
//! cluster's Kubernetes nodes match the pool again, and doing it at GKE's pace while the
//! operation counts the steps.

use std::sync::Arc;

use super::GkeApi;
use super::updates;
use crate::sim::kube::cluster::{ClusterState, NodePoolSpec};
use crate::sim::kube::{drain, nodes};

/// One thing done to the nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A new node in this zone.
    Add(String),
    /// This node drained and deleted.
    Remove(String),
    /// A surge upgrade of this node: a new one in the zone first, then this one drained away.
    Replace(String, String),
    /// The pool's labels and taints made true on its nodes in place.
    Relabel,
}

/// What one pool needs: its desired state (None: the pool goes) and the steps to it.
#[derive(Debug, Clone)]
pub struct PoolWork {
    pub desired: Option<NodePoolSpec>,
    pub steps: Vec<Step>,
}

/// How a pool's nodes change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Nodes are added or taken away to the pool's size and zones.
    Resize,
    /// As Resize, and labels and taints are rewritten on the nodes that stay.
    Relabel,
    /// Every node that stays is replaced by a new one (machine or disk changes).
    Recreate,
}

/// The steps that bring `pool`'s nodes to `desired`. GKE shrinks a pool newest node first.
pub fn plan(
    state: &ClusterState,
    pool: &str,
    desired: Option<&NodePoolSpec>,
    mode: Mode,
) -> PoolWork {
    let existing = nodes::of_pool(state, pool);
    let mut steps = Vec::new();
    let wanted_zones: &[String] = desired.map_or(&[], |d| &d.zones);
    for node in existing.iter().rev() {
        if !wanted_zones.contains(&node.zone) {
            steps.push(Step::Remove(node.name.clone()));
        }
    }
    if let Some(desired) = desired {
        let want = usize::try_from(desired.nodes_per_zone).unwrap_or(usize::MAX);
        for zone in &desired.zones {
            let here: Vec<&nodes::PoolNode> = existing.iter().filter(|n| n.zone == *zone).collect();
            let keep = here.len().min(want);
            if mode == Mode::Recreate {
                for node in &here[..keep] {
                    steps.push(Step::Replace(node.name.clone(), zone.clone()));
                }
            }
            for node in here[keep..].iter().rev() {
                steps.push(Step::Remove(node.name.clone()));
            }
            for _ in here.len()..want {
                steps.push(Step::Add(zone.clone()));
            }
        }
        if mode == Mode::Relabel {
            steps.push(Step::Relabel);
        }
    }
    PoolWork {
        desired: desired.cloned(),
        steps,
    }
}

/// How long steps take, in simulated seconds.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// Before the first node step (instance templates, the control plane's part).
    pub setup: f64,
    /// New instances boot and old ones go in parallel: the whole of it takes about this long.
    pub parallel: f64,
    /// A surge upgrade goes node by node: each replacement takes this long.
    pub per_replacement: f64,
}

impl Pace {
    fn secs(&self, step: &Step, parallel_steps: usize) -> f64 {
        match step {
            Step::Replace(..) => self.per_replacement,
            _ => self.parallel / parallel_steps.max(1) as f64,
        }
    }
}

/// The steps an operation counts: one for the setup, one per node step.
pub fn step_count(work: &[PoolWork]) -> i64 {
    let steps: usize = work.iter().map(|w| w.steps.len()).sum();
    i64::try_from(steps + 1).unwrap_or(i64::MAX)
}

/// Does the work, counting each step on the operation.
pub async fn run(
    api: Arc<GkeApi>,
    operation: String,
    state: Option<Arc<ClusterState>>,
    work: Vec<PoolWork>,
    pace: Pace,
) {
    updates::step(&api, &operation, pace.setup).await;
    let parallel_steps = work
        .iter()
        .flat_map(|w| &w.steps)
        .filter(|s| !matches!(s, Step::Replace(..)))
        .count();
    for pool in work {
        for step in &pool.steps {
            if let Some(state) = &state {
                apply(state, pool.desired.as_ref(), step).await;
            }
            updates::step(&api, &operation, pace.secs(step, parallel_steps)).await;
        }
    }
}

async fn apply(state: &Arc<ClusterState>, desired: Option<&NodePoolSpec>, step: &Step) {
    match (step, desired) {
        (Step::Add(zone), Some(pool)) => {
            nodes::add(state, pool, zone);
        }
        (Step::Replace(node, zone), Some(pool)) => {
            nodes::add(state, pool, zone);
            drain::remove_node(state, node).await;
        }
        (Step::Remove(node), _) => drain::remove_node(state, node).await,
        (Step::Relabel, Some(pool)) => nodes::relabel(state, pool),
        _ => {}
    }
}
