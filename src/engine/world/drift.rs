//! Drift: how the cluster GKE reports differs from the one the config describes. Derived state,
//! recomputed when the polled summary (or the config) changes, never polled for itself; each
//! new plan gets a new generation, so a plan shown to someone is applied only while it is still
//! the plan. A fallback pool an unfinished attempt targets is kept (`uses`), not drift.

use crate::config::ClusterConfig;
use crate::gke::plan::{Action, Current, Plan, plan_keeping};
use crate::gke::{ClusterStatus, ClusterSummary};

#[derive(Debug, Clone, Default)]
pub struct Drift {
    /// The cluster the config describes; None when Gantry does not manage the cluster (a
    /// kubeconfig context): there is no plan then.
    desired: Option<ClusterConfig>,
    /// Gantry may set the pools to zero nodes (`scale-to-zero-when-idle`, a budget guard): pools
    /// at zero are not drift.
    idle_zero: bool,
    plan: Option<Plan>,
    generation: u64,
    /// The node pools unfinished attempts target: fallback pools among them are kept.
    in_use: Vec<String>,
}

impl Drift {
    /// The config's cluster: what every plan from now on compares with.
    pub fn desire(
        &mut self,
        config: ClusterConfig,
        may_scale_to_zero: bool,
        summary: Option<&ClusterSummary>,
    ) {
        self.desired = Some(config);
        self.idle_zero = may_scale_to_zero;
        self.recompute(summary);
    }

    /// The summary changed (the caller compares): a new plan, and a new generation.
    pub fn recompute(&mut self, summary: Option<&ClusterSummary>) {
        let Some(config) = &self.desired else {
            return;
        };
        self.plan = summary.map(|s| {
            let current = (s.status != ClusterStatus::NotFound).then_some(Current {
                summary: s,
                labels: &s.labels,
            });
            plan_keeping(config, &s.location, current, &self.in_use)
        });
        self.generation += 1;
    }

    /// The node pools unfinished attempts target now: a new plan when they changed.
    pub fn uses(&mut self, mut pools: Vec<String>, summary: Option<&ClusterSummary>) {
        pools.sort();
        pools.dedup();
        if pools != self.in_use {
            self.in_use = pools;
            self.recompute(summary);
        }
    }

    /// The plan for the cluster as last reported, whatever it says; None before GKE has been
    /// heard from, or without a config to compare with.
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_ref()
    }

    /// Which plan [`Drift::plan`] is: it changes whenever the plan is recomputed.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The plan of that generation, if it is still the plan.
    pub fn plan_at(&self, generation: u64) -> Option<&Plan> {
        self.plan.as_ref().filter(|_| generation == self.generation)
    }

    /// The plan when the cluster has drifted: it exists, is up (RUNNING, or RECONCILING while
    /// an operation changes it) and differs from the config. A cluster still being created or
    /// deleted has not drifted, it is on its way; nor has one whose pools idled to zero nodes
    /// with `scale-to-zero-when-idle` (a launch brings them back; `P` still shows the plan).
    pub fn drifted<'a>(&'a self, summary: Option<&ClusterSummary>) -> Option<&'a Plan> {
        let up = summary.is_some_and(|s| s.status.serves_api());
        let idled = |p: &Plan| {
            self.idle_zero
                && p.changes
                    .iter()
                    .all(|c| c.field == "nodeCount" && c.current == serde_json::json!(0))
        };
        self.plan
            .as_ref()
            .filter(|p| up && p.action == Action::Update && !idled(p))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::gke::ClusterRef;
    use crate::gke::summary::PoolSummary;

    fn summary(status: ClusterStatus, machine_type: &str, nodes: u32) -> ClusterSummary {
        let target = ClusterRef::new("demo-project", "us-central1-a", "ml-gke-cluster");
        ClusterSummary {
            status,
            node_count: nodes,
            node_pools: vec![PoolSummary {
                initial_node_count: 1,
                ..PoolSummary::running("default-pool", machine_type, nodes)
            }],
            locations: vec!["us-central1-a".into()],
            ..ClusterSummary::not_found(&target, machine_type)
        }
    }

    #[test]
    fn a_running_cluster_unlike_the_config_has_drifted() {
        let mut drift = Drift::default();
        let hand_made = summary(ClusterStatus::Running, "e2-medium", 1);
        drift.desire(ClusterConfig::default(), false, Some(&hand_made));
        let plan = drift.drifted(Some(&hand_made)).expect("drift");
        assert_eq!(plan.changes.len(), 2);
    }

    #[test]
    fn a_cluster_like_the_config_or_on_its_way_has_not_drifted() {
        let mut drift = Drift::default();
        let seed = summary(ClusterStatus::Running, "n1-standard-1", 3);
        drift.desire(ClusterConfig::default(), false, Some(&seed));
        assert_eq!(drift.plan().map(|p| p.action), Some(Action::None));
        assert!(drift.drifted(Some(&seed)).is_none());

        let creating = summary(ClusterStatus::Provisioning, "n1-standard-1", 0);
        drift.recompute(Some(&creating));
        assert!(drift.drifted(Some(&creating)).is_none());
    }

    #[test]
    fn pools_idled_to_zero_nodes_are_not_drift_when_gantry_idles_them() {
        let mut drift = Drift::default();
        let idled = summary(ClusterStatus::Running, "n1-standard-1", 0);
        drift.desire(ClusterConfig::default(), true, Some(&idled));
        assert!(drift.drifted(Some(&idled)).is_none());
        // The plan is still there to be applied by hand.
        assert_eq!(drift.plan().map(|p| p.action), Some(Action::Update));
        drift.desire(ClusterConfig::default(), false, Some(&idled));
        assert!(drift.drifted(Some(&idled)).is_some());
    }

    #[test]
    fn a_fallback_pool_is_drift_only_once_no_attempt_targets_it() {
        let mut drift = Drift::default();
        let mut seed = summary(ClusterStatus::Running, "n1-standard-1", 3);
        seed.node_pools.push(PoolSummary {
            fallback_for: Some("default-pool".into()),
            ..PoolSummary::running("default-pool-on-demand", "n1-standard-1", 1)
        });
        drift.uses(vec!["default-pool-on-demand".into()], Some(&seed));
        drift.desire(ClusterConfig::default(), false, Some(&seed));
        assert!(drift.drifted(Some(&seed)).is_none());
        assert_eq!(
            drift.plan().unwrap().fallbacks[0].pool,
            "default-pool-on-demand"
        );
        let kept = drift.generation();
        drift.uses(Vec::new(), Some(&seed));
        assert!(drift.generation() > kept, "a new plan");
        let plan = drift.drifted(Some(&seed)).expect("the fallback to remove");
        assert_eq!(
            plan.changes[0].pool.as_deref(),
            Some("default-pool-on-demand")
        );
    }

    #[test]
    fn without_a_config_there_is_no_plan() {
        let mut drift = Drift::default();
        drift.recompute(Some(&summary(ClusterStatus::Running, "e2-medium", 1)));
        assert!(drift.plan().is_none());
        assert_eq!(drift.generation(), 0);
    }

    #[test]
    fn a_plan_of_an_older_generation_is_not_the_plan() {
        let mut drift = Drift::default();
        let hand_made = summary(ClusterStatus::Running, "e2-medium", 1);
        drift.desire(ClusterConfig::default(), false, Some(&hand_made));
        let shown = drift.generation();
        assert!(drift.plan_at(shown).is_some());
        drift.recompute(Some(&summary(ClusterStatus::Running, "e2-medium", 2)));
        assert!(drift.plan_at(shown).is_none());
        assert!(drift.plan_at(drift.generation()).is_some());
    }
}
