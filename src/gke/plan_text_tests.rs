#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use super::*;
use crate::config::ClusterConfig;
use crate::gke::plan::{Current, plan};
use crate::gke::summary::PoolSummary;
use crate::gke::{ClusterStatus, ClusterSummary};

const ZONE: &str = "us-central1-a";

fn cluster(pools: Vec<PoolSummary>) -> ClusterSummary {
    let target = ClusterRef::new("demo-project", ZONE, "ml-gke-cluster");
    ClusterSummary {
        status: ClusterStatus::Running,
        node_count: pools.iter().map(|p| p.node_count).sum(),
        node_pools: pools,
        locations: vec![ZONE.into()],
        ..ClusterSummary::not_found(&target, "n1-standard-1")
    }
}

fn pool(name: &str, machine_type: &str, nodes: u32) -> PoolSummary {
    PoolSummary::running(name, machine_type, nodes)
}

fn plan_with(
    config: &ClusterConfig,
    summary: &ClusterSummary,
    labels: &BTreeMap<String, String>,
) -> Plan {
    plan(config, ZONE, Some(Current { summary, labels }))
}

#[test]
fn a_hand_made_pool_reads_as_config_then_cluster_in_one_line() {
    let summary = cluster(vec![pool("default-pool", "e2-medium", 1)]);
    let plan = plan_with(&ClusterConfig::default(), &summary, &BTreeMap::new());
    assert_eq!(
        difference(&plan).as_deref(),
        Some("config 3 × n1-standard-1 · cluster 1 × e2-medium")
    );
}

#[test]
fn a_disk_difference_is_named_on_both_sides() {
    let mut hand_made = pool("default-pool", "n1-standard-1", 3);
    hand_made.disk_type = "pd-ssd".into();
    let plan = plan_with(
        &ClusterConfig::default(),
        &cluster(vec![hand_made]),
        &BTreeMap::new(),
    );
    assert_eq!(
        difference(&plan).as_deref(),
        Some(
            "config 3 × n1-standard-1, 100 GB pd-balanced · cluster 3 × n1-standard-1, 100 GB pd-ssd"
        )
    );
}

#[test]
fn other_differences_are_counted_after_the_first() {
    let config = ClusterConfig {
        labels: BTreeMap::from([("team".to_string(), "ml".to_string())]),
        ..ClusterConfig::default()
    };
    let summary = cluster(vec![
        pool("default-pool", "n1-standard-1", 1),
        pool("extra-pool", "e2-medium", 1),
    ]);
    let plan = plan_with(&config, &summary, &BTreeMap::new());
    assert_eq!(
        difference(&plan).as_deref(),
        Some("config labels.team ml · cluster labels.team (none) (+2 more)")
    );
}

#[test]
fn nothing_to_update_has_no_difference() {
    let summary = cluster(vec![pool("default-pool", "n1-standard-1", 3)]);
    let same = plan_with(&ClusterConfig::default(), &summary, &BTreeMap::new());
    assert_eq!(difference(&same), None);
    let create = plan(&ClusterConfig::default(), ZONE, None);
    assert_eq!(difference(&create), None);
}

#[test]
fn the_body_lists_each_change_and_the_cost_without_a_header() {
    let summary = cluster(vec![pool("default-pool", "e2-medium", 1)]);
    let plan = plan_with(&ClusterConfig::default(), &summary, &BTreeMap::new());
    let body = body(&plan, "ml-gke-cluster");
    assert_eq!(body[0], "  ~ default-pool.nodeCount: 1 → 3 (in place)");
    assert_eq!(
        body[1],
        "  ~ default-pool.machineType: e2-medium → n1-standard-1 (nodes recreated)"
    );
    assert!(body[2].starts_with("Cost: ≈ "), "{body:?}");
    assert_eq!(body.len(), 3);
}

#[test]
fn the_gpu_example_config_plans_with_a_price_for_its_spot_t4_nodes() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/config/gpu-indexed.toml");
    let config = crate::config::Config::load(&path).unwrap();
    let location = config.location.as_deref().unwrap();
    let lines = body(&plan(&config.cluster, location, None), "ml-gke-cluster");
    assert_eq!(
        lines[2],
        "  + pool gpu-pool: 4 × n1-standard-4 with 1 x nvidia-tesla-t4, 100 GB pd-balanced, spot"
    );
    // The fee $0.10; 1 × n1-standard-2 on demand $0.095; 4 × (n1-standard-4 spot $0.06701 and a
    // spot T4 $0.175); each node's 100 GB of pd-balanced at $0.10 per GB-month.
    let disk: f64 = 100.0 * 0.1 / 730.0;
    let want = 0.1 + (0.095 + disk) + 4.0 * (0.06701 + 0.175 + disk);
    assert!((want - 1.231533).abs() < 1e-6, "{want}");
    assert_eq!(lines.last().unwrap(), "Cost: ≈ $1.23/h, $899/month");
}
