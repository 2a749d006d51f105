//! The node side of a node pool operation: which nodes to add, recreate or take away so that the
//! cluster's Kubernetes nodes match the pool again, and doing it at GKE's pace while the
//! operation counts the steps.

use std::sync::Arc;

use super::GkeApi;
use super::capacity;
use super::lifecycle::Failure;
use super::updates;
use crate::kube::cluster::{ClusterState, NodePoolSpec};
use crate::kube::{drain, nodes};

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

/// The steps that bring `pool`'s nodes, as the cluster has them, to `desired`.
pub fn plan(
    state: &ClusterState,
    pool: &str,
    desired: Option<&NodePoolSpec>,
    mode: Mode,
) -> PoolWork {
    plan_from(&nodes::of_pool(state, pool), desired, mode)
}

/// The steps that bring `existing` (oldest first) to `desired`. GKE shrinks a pool newest node
/// first, and takes surplus nodes away before it replaces the ones that stay.
fn plan_from(existing: &[nodes::PoolNode], desired: Option<&NodePoolSpec>, mode: Mode) -> PoolWork {
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
            for node in here[keep..].iter().rev() {
                steps.push(Step::Remove(node.name.clone()));
            }
            if mode == Mode::Recreate {
                for node in &here[..keep] {
                    steps.push(Step::Replace(node.name.clone(), zone.clone()));
                }
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

/// Does the work, counting each step on the operation. Each new instance is first asked of
/// Compute Engine (`capacity`): a refusal ends the work with the failure the operation reports.
pub async fn run(
    api: Arc<GkeApi>,
    operation: String,
    state: Option<Arc<ClusterState>>,
    work: Vec<PoolWork>,
    pace: Pace,
) -> Result<(), Failure> {
    updates::step(&api, &operation, pace.setup).await;
    let mut waited = pace.setup;
    let parallel_steps = work
        .iter()
        .flat_map(|w| &w.steps)
        .filter(|s| !matches!(s, Step::Replace(..)))
        .count();
    for pool in work {
        for step in &pool.steps {
            if let Some(state) = &state {
                check_capacity(&api, state, pool.desired.as_ref(), step, waited)?;
                apply(state, pool.desired.as_ref(), step).await;
            }
            let secs = pace.secs(step, parallel_steps);
            updates::step(&api, &operation, secs).await;
            waited += secs;
        }
    }
    Ok(())
}

/// Whether the instance a step adds can be made.
fn check_capacity(
    api: &GkeApi,
    state: &ClusterState,
    desired: Option<&NodePoolSpec>,
    step: &Step,
    waited: f64,
) -> Result<(), Failure> {
    let (Step::Add(zone) | Step::Replace(_, zone), Some(pool)) = (step, desired) else {
        return Ok(());
    };
    let Err(shortage) = capacity::check(api, state, pool, 1) else {
        return Ok(());
    };
    let running = nodes::of_pool(state, &pool.name)
        .iter()
        .filter(|n| n.zone == *zone)
        .count() as u64;
    let instance = nodes::instance_name(&state.spec.name, &pool.name, zone);
    let place = capacity::Place {
        project: &state.spec.project,
        zone,
        instance: &instance,
    };
    let expected = u64::from(pool.nodes_per_zone).max(running + 1);
    Err(capacity::operation_failure(
        shortage,
        &place,
        (expected, running),
        waited,
    ))
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::kube::cluster::ClusterSpec;

    fn node(name: &str, zone: &str) -> nodes::PoolNode {
        nodes::PoolNode {
            name: name.into(),
            zone: zone.into(),
        }
    }

    fn pool(per_zone: u32, zones: &[&str]) -> NodePoolSpec {
        let mut pool = ClusterSpec::seed("p", "us-central1-a", "c").node_pools[0].clone();
        pool.nodes_per_zone = per_zone;
        pool.zones = zones.iter().map(|z| z.to_string()).collect();
        pool
    }

    fn steps(
        existing: &[nodes::PoolNode],
        desired: Option<&NodePoolSpec>,
        mode: Mode,
    ) -> Vec<Step> {
        plan_from(existing, desired, mode).steps
    }

    const A: &str = "us-central1-a";
    const B: &str = "us-central1-b";

    #[test]
    fn a_shrinking_pool_loses_its_newest_nodes_and_a_growing_one_gains_nodes() {
        let three = [node("n0", A), node("n1", A), node("n2", A)];
        assert_eq!(
            steps(&three, Some(&pool(1, &[A])), Mode::Resize),
            [Step::Remove("n2".into()), Step::Remove("n1".into())]
        );
        assert_eq!(
            steps(&three[..1], Some(&pool(3, &[A])), Mode::Resize),
            [Step::Add(A.into()), Step::Add(A.into())]
        );
        assert!(steps(&three, Some(&pool(3, &[A])), Mode::Resize).is_empty());
    }

    #[test]
    fn a_deleted_pool_loses_every_node_newest_first() {
        let two = [node("n0", A), node("n1", B)];
        assert_eq!(
            steps(&two, None, Mode::Resize),
            [Step::Remove("n1".into()), Step::Remove("n0".into())]
        );
    }

    #[test]
    fn nodes_follow_the_pool_into_new_zones_and_out_of_old_ones() {
        let two = [node("n0", A), node("n1", A)];
        assert_eq!(
            steps(&two, Some(&pool(2, &[B])), Mode::Resize),
            [
                Step::Remove("n1".into()),
                Step::Remove("n0".into()),
                Step::Add(B.into()),
                Step::Add(B.into()),
            ]
        );
    }

    #[test]
    fn a_recreated_pool_sheds_its_surplus_then_replaces_each_node_that_stays() {
        let three = [node("n0", A), node("n1", A), node("n2", A)];
        assert_eq!(
            steps(&three, Some(&pool(2, &[A])), Mode::Recreate),
            [
                Step::Remove("n2".into()),
                Step::Replace("n0".into(), A.into()),
                Step::Replace("n1".into(), A.into()),
            ]
        );
    }

    #[test]
    fn relabelling_is_one_step_after_any_resize() {
        let one = [node("n0", A)];
        assert_eq!(
            steps(&one, Some(&pool(1, &[A])), Mode::Relabel),
            [Step::Relabel]
        );
    }

    #[test]
    fn an_operation_counts_a_setup_step_and_one_per_node_step() {
        let work = [plan_from(&[node("n0", A)], None, Mode::Resize)];
        assert_eq!(step_count(&work), 2);
        assert_eq!(step_count(&[]), 1);
    }
}
