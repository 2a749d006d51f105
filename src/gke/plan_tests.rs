#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::config::{Autoscaling, GpuPool};
use crate::gke::{ClusterRef, ClusterStatus};

const ZONE: &str = "us-central1-a";

/// A RUNNING cluster in `ZONE` exactly as the default config makes it (3 × n1-standard-1).
fn seed_cluster() -> ClusterSummary {
    let target = ClusterRef::new("demo-project", ZONE, "ml-gke-cluster");
    ClusterSummary {
        status: ClusterStatus::Running,
        node_count: 3,
        node_pools: vec![pool("default-pool", "n1-standard-1", 3)],
        locations: vec![ZONE.into()],
        ..ClusterSummary::not_found(&target, "n1-standard-1")
    }
}

fn pool(name: &str, machine_type: &str, nodes: u32) -> PoolSummary {
    PoolSummary::running(name, machine_type, nodes)
}

fn managed() -> BTreeMap<String, String> {
    BTreeMap::from([("managed-by".to_string(), "gantry".to_string())])
}

fn plan_for(config: &ClusterConfig, summary: &ClusterSummary) -> Plan {
    plan(
        config,
        ZONE,
        Some(Current {
            summary,
            labels: &managed(),
        }),
    )
}

fn fields(plan: &Plan) -> Vec<(Option<&str>, &str, How)> {
    plan.changes
        .iter()
        .map(|c| (c.pool.as_deref(), c.field.as_str(), c.how))
        .collect()
}

#[test]
fn a_cluster_that_matches_the_config_needs_nothing() {
    let plan = plan_for(&ClusterConfig::default(), &seed_cluster());
    assert_eq!(plan.action, Action::None);
    assert!(plan.changes.is_empty());
    assert_eq!(plan.cost_now.as_ref(), Some(&plan.cost_after));
    assert!(plan.cost_after.usd().is_some_and(|usd| usd > 0.0));
}

#[test]
fn a_hand_made_cluster_without_gantrys_label_is_adopted_as_it_is() {
    let summary = seed_cluster();
    let none = BTreeMap::new();
    let plan = plan(
        &ClusterConfig::default(),
        ZONE,
        Some(Current {
            summary: &summary,
            labels: &none,
        }),
    );
    assert_eq!(plan.action, Action::None, "{:?}", plan.changes);
}

#[test]
fn no_cluster_there_is_a_create_with_the_configs_cost() {
    let plan = plan(&ClusterConfig::default(), ZONE, None);
    assert_eq!(plan.action, Action::Create);
    assert_eq!(fields(&plan), [(None, "cluster", How::NewCluster)]);
    assert_eq!(plan.cost_now, None);
    assert_eq!(plan.desired.pools[0].nodes, 3);
    assert!(plan.cost_after.usd().is_some());
}

#[test]
fn a_smaller_pool_of_another_machine_type_is_resized_in_place_and_its_nodes_recreated() {
    let mut summary = seed_cluster();
    summary.node_pools = vec![pool("default-pool", "e2-medium", 1)];
    summary.node_count = 1;
    let plan = plan_for(&ClusterConfig::default(), &summary);
    assert_eq!(plan.action, Action::Update);
    assert_eq!(
        fields(&plan),
        [
            (Some("default-pool"), "nodeCount", How::InPlace),
            (Some("default-pool"), "machineType", How::RecreateNodes),
        ]
    );
    assert_eq!(plan.changes[0].current, json!(1));
    assert_eq!(plan.changes[0].desired, json!(3));
    assert_eq!(plan.changes[1].current, json!("e2-medium"));
    assert_eq!(plan.changes[1].desired, json!("n1-standard-1"));
    let (now, after) = (plan.cost_now.unwrap().usd().unwrap(), plan.cost_after.usd());
    assert!(after.unwrap() > now, "{now} → {after:?}");
}

#[test]
fn disks_and_accelerators_are_changed_with_the_nodes_recreated() {
    let config = ClusterConfig {
        gpu_pool: Some(GpuPool::default()),
        ..ClusterConfig::default()
    };
    let mut summary = seed_cluster();
    summary.node_pools[0].disk_type = "pd-standard".into();
    summary.node_pools[0].disk_size_gb = 50;
    let mut gpu = pool("gpu-pool", "n1-standard-4", 1);
    gpu.accelerator = Some("2 x nvidia-tesla-t4".into());
    summary.node_pools.push(gpu);
    let plan = plan_for(&config, &summary);
    assert_eq!(
        fields(&plan),
        [
            (Some("default-pool"), "diskType", How::RecreateNodes),
            (Some("default-pool"), "diskSizeGb", How::RecreateNodes),
            (Some("gpu-pool"), "accelerators", How::RecreateNodes),
        ]
    );
    assert_eq!(plan.changes[2].desired, json!("1 x nvidia-tesla-t4"));
}

#[test]
fn a_pool_the_cluster_lacks_is_a_new_pool() {
    let config = ClusterConfig {
        gpu_pool: Some(GpuPool::default()),
        ..ClusterConfig::default()
    };
    let plan = plan_for(&config, &seed_cluster());
    assert_eq!(plan.action, Action::Update);
    assert_eq!(
        fields(&plan),
        [(Some("gpu-pool"), "nodePool", How::NewPool)]
    );
    assert_eq!(plan.changes[0].current, Value::Null);
    assert_eq!(
        plan.changes[0].desired,
        json!("1 × n1-standard-4 with 1 x nvidia-tesla-t4")
    );
}

#[test]
fn a_pool_the_config_lacks_is_listed_never_dropped_silently() {
    let mut summary = seed_cluster();
    summary.node_pools.push(pool("extra", "e2-small", 2));
    let plan = plan_for(&ClusterConfig::default(), &summary);
    assert_eq!(plan.action, Action::Update);
    assert_eq!(fields(&plan), [(Some("extra"), "nodePool", How::InPlace)]);
    assert_eq!(plan.changes[0].current, json!("2 × e2-small"));
    assert_eq!(plan.changes[0].desired, Value::Null);
}

#[test]
fn spot_cannot_be_updated_and_takes_a_new_pool() {
    let config = ClusterConfig {
        spot: true,
        ..ClusterConfig::default()
    };
    let plan = plan_for(&config, &seed_cluster());
    assert_eq!(
        fields(&plan),
        [(Some("default-pool"), "spot", How::NewPool)]
    );
}

#[test]
fn labels_the_config_names_are_set_in_place_and_others_left_alone() {
    let config = ClusterConfig {
        labels: BTreeMap::from([
            ("team".to_string(), "ml".to_string()),
            ("env".to_string(), "dev".to_string()),
        ]),
        ..ClusterConfig::default()
    };
    let summary = seed_cluster();
    let mut labels = managed();
    labels.insert("env".into(), "prod".into());
    labels.insert("owner".into(), "someone".into());
    let plan = plan(
        &config,
        ZONE,
        Some(Current {
            summary: &summary,
            labels: &labels,
        }),
    );
    assert_eq!(
        fields(&plan),
        [
            (None, "labels.env", How::InPlace),
            (None, "labels.team", How::InPlace)
        ]
    );
    assert_eq!(plan.changes[0].current, json!("prod"));
    assert_eq!(plan.changes[1].current, Value::Null);
}

#[test]
fn a_cluster_in_another_location_takes_a_new_cluster() {
    let mut summary = seed_cluster();
    summary.location = "europe-west4-b".into();
    let plan = plan_for(&ClusterConfig::default(), &summary);
    assert_eq!(fields(&plan), [(None, "location", How::NewCluster)]);
}

#[test]
fn a_regional_pool_is_counted_per_zone_as_the_config_counts_it() {
    let mut summary = seed_cluster();
    summary.location = "us-central1".into();
    summary.locations = vec!["a".into(), "b".into(), "c".into()];
    summary.node_pools[0].node_count = 9;
    let plan = plan(
        &ClusterConfig::default(),
        "us-central1",
        Some(Current {
            summary: &summary,
            labels: &managed(),
        }),
    );
    assert_eq!(plan.action, Action::None, "{:?}", plan.changes);
}

#[test]
fn autoscaling_turned_on_off_or_rebounded_is_an_in_place_change() {
    let config = ClusterConfig {
        autoscaling: Some(Autoscaling {
            min_nodes: 1,
            max_nodes: 5,
        }),
        ..ClusterConfig::default()
    };
    let mut summary = seed_cluster();
    let plan = plan_for(&config, &summary);
    assert_eq!(
        fields(&plan),
        [(Some("default-pool"), "autoscaling", How::InPlace)]
    );
    assert_eq!(plan.changes[0].current, Value::Null);
    assert_eq!(
        plan.changes[0].desired,
        json!({"minNodes": 1, "maxNodes": 5})
    );
    summary.node_pools[0].autoscaling = Some((2, 5));
    assert_eq!(
        fields(&plan_for(&config, &summary)),
        [(Some("default-pool"), "autoscaling", How::InPlace)]
    );
    let plan = plan_for(&ClusterConfig::default(), &summary);
    assert_eq!(plan.changes[0].field, "autoscaling");
    assert_eq!(plan.changes[0].desired, Value::Null);
}

#[test]
fn with_autoscaling_any_count_within_its_bounds_is_the_configs() {
    let config = ClusterConfig {
        autoscaling: Some(Autoscaling {
            min_nodes: 1,
            max_nodes: 5,
        }),
        ..ClusterConfig::default()
    };
    let mut summary = seed_cluster();
    summary.node_pools[0].autoscaling = Some((1, 5));
    summary.node_pools[0].node_count = 5;
    assert_eq!(plan_for(&config, &summary).action, Action::None);
    summary.node_pools[0].node_count = 0;
    assert_eq!(
        fields(&plan_for(&config, &summary)),
        [(Some("default-pool"), "nodeCount", How::InPlace)]
    );
}

#[test]
fn a_gpu_pool_that_autoscales_from_zero_is_the_configs_at_any_size_within_its_bounds() {
    let config = ClusterConfig {
        gpu_pool: Some(GpuPool {
            node_count: 0,
            autoscaling: Some(Autoscaling {
                min_nodes: 0,
                max_nodes: 2,
            }),
            ..GpuPool::default()
        }),
        ..ClusterConfig::default()
    };
    let mut summary = seed_cluster();
    let mut gpu = pool("gpu-pool", "n1-standard-4", 0);
    gpu.accelerator = Some("1 x nvidia-tesla-t4".into());
    gpu.accelerator_type = Some("nvidia-tesla-t4".into());
    gpu.accelerator_count = 1;
    gpu.autoscaling = Some((0, 2));
    summary.node_pools.push(gpu);
    for nodes in [0, 1, 2] {
        summary.node_pools[1].node_count = nodes;
        assert_eq!(
            plan_for(&config, &summary).action,
            Action::None,
            "{nodes} nodes"
        );
    }
    // Made without autoscaling: turning it on is a change in place.
    summary.node_pools[1].autoscaling = None;
    assert_eq!(
        fields(&plan_for(&config, &summary)),
        [(Some("gpu-pool"), "autoscaling", How::InPlace)]
    );
}

/// The seed's cluster with the default pool's on-demand fallback that Gantry made.
fn with_fallback() -> ClusterSummary {
    let mut summary = seed_cluster();
    summary.node_pools.push(PoolSummary {
        fallback_for: Some("default-pool".into()),
        ..pool("default-pool-on-demand", "n1-standard-1", 3)
    });
    summary
}

#[test]
fn a_fallback_pool_a_run_uses_is_gantrys_own_not_drift() {
    let summary = with_fallback();
    let in_use = ["default-pool-on-demand".to_string()];
    let labels = managed();
    let current = Some(Current {
        summary: &summary,
        labels: &labels,
    });
    let plan = plan_keeping(&ClusterConfig::default(), ZONE, current, &in_use);
    assert_eq!(plan.action, Action::None, "{:?}", plan.changes);
    assert_eq!(
        plan.fallbacks,
        [Fallback {
            pool: "default-pool-on-demand".into(),
            of: "default-pool".into(),
            in_use: true,
        }]
    );
    let lines = crate::gke::plan_text::body(&plan, "ml-gke-cluster");
    assert!(
        lines.contains(&"  = pool default-pool-on-demand: Gantry's on-demand fallback for default-pool, kept while a run uses it".to_string()),
        "{lines:?}"
    );
}

#[test]
fn a_fallback_pool_no_run_needs_is_removed_and_said_as_the_fallback_it_is() {
    let plan = plan_for(&ClusterConfig::default(), &with_fallback());
    assert_eq!(plan.action, Action::Update);
    assert_eq!(
        fields(&plan),
        [(Some("default-pool-on-demand"), "nodePool", How::InPlace)]
    );
    assert!(plan.changes[0].desired.is_null());
    assert!(!plan.fallbacks[0].in_use);
    let lines = crate::gke::plan_text::body(&plan, "ml-gke-cluster");
    assert!(
        lines[0].starts_with("  - pool default-pool-on-demand: 3 × n1-standard-1, Gantry's on-demand fallback for default-pool; no run needs it now"),
        "{lines:?}"
    );
}
