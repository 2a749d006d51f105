#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::config::GpuPool;
use crate::gke::summary::{PoolSummary, pool_node_counts};
use crate::gke::{ClusterRef, ClusterStatus};
use crate::pricing::{Estimate, Item};

/// The seed's node in us-central1: n1-standard-1 ($0.0475/h) with 100 GB of pd-balanced
/// ($0.10 per GB-month over 730 hours).
const SEED_NODE: f64 = 0.0475 + 100.0 * 0.1 / 730.0;
const FEE: f64 = 0.1;

fn close(estimate: &Estimate, expected: f64) -> bool {
    estimate
        .usd()
        .is_some_and(|usd| (usd - expected).abs() < 1e-9)
}

#[test]
fn a_zonal_cluster_has_its_node_count_once() {
    let shape = configured_shape(&ClusterConfig::default(), "us-central1-a");
    assert_eq!(shape.pools.len(), 1);
    assert_eq!(shape.pools[0].nodes, 3);
    assert_eq!(shape.pools[0].machine_type, "n1-standard-1");
    assert_eq!(
        (
            shape.pools[0].disk_type.as_str(),
            shape.pools[0].disk_size_gb
        ),
        ("pd-balanced", 100)
    );
    let cost = per_hour(&shape);
    assert!(close(&cost, FEE + 3.0 * SEED_NODE), "{cost:?}");
    assert_eq!(describe(&cost), "≈ $0.28/h, $207/month");
}

#[test]
fn a_regional_cluster_has_its_node_count_in_each_of_three_zones() {
    assert!(is_zone("europe-west4-b") && !is_zone("europe-west4"));
    let shape = configured_shape(&ClusterConfig::default(), "us-central1");
    assert_eq!(shape.pools[0].nodes, 9);
    assert!(close(&per_hour(&shape), FEE + 9.0 * SEED_NODE));
}

#[test]
fn a_gpu_pool_is_priced_with_its_accelerators() {
    let config = ClusterConfig {
        gpu_pool: Some(GpuPool {
            machine_type: "g2-standard-4".into(),
            accelerator_type: "nvidia-l4".into(),
            node_count: 2,
            ..GpuPool::default()
        }),
        ..ClusterConfig::default()
    };
    let shape = configured_shape(&config, "us-central1-a");
    let gpu = &shape.pools[1];
    assert_eq!((gpu.name.as_str(), gpu.nodes), ("gpu-pool", 2));
    assert_eq!(gpu.accelerator.as_ref().unwrap().kind, "nvidia-l4");
    let with_gpus = per_hour(&shape).usd().unwrap();
    assert!(with_gpus > FEE + 3.0 * SEED_NODE + 2.0 * 0.5, "{with_gpus}");

    // A T4 on an N1 machine is priced per GPU: n1-standard-4 $0.189999 and a T4 $0.35 an hour.
    let t4 = ClusterConfig {
        gpu_pool: Some(GpuPool::default()),
        ..ClusterConfig::default()
    };
    let t4_node = 0.189999 + 0.35 + 100.0 * 0.1 / 730.0;
    let cost = per_hour(&configured_shape(&t4, "us-central1-a"));
    assert!((cost.usd().unwrap() - (FEE + 3.0 * SEED_NODE + t4_node)).abs() < 1e-6);

    // A GPU the snapshot has no price for stays unknown, never 0.
    let k80 = ClusterConfig {
        gpu_pool: Some(GpuPool {
            accelerator_type: "nvidia-tesla-k80".into(),
            ..GpuPool::default()
        }),
        ..ClusterConfig::default()
    };
    match per_hour(&configured_shape(&k80, "us-central1-a")) {
        Estimate::Unknown(missing) => assert_eq!(missing[0].item, Item::Gpu),
        known => panic!("{known:?}"),
    }
}

#[test]
fn an_unknown_machine_type_makes_the_price_unknown() {
    let config = ClusterConfig {
        machine_type: "n9-imaginary-8".into(),
        ..ClusterConfig::default()
    };
    let cost = per_hour(&configured_shape(&config, "us-central1-a"));
    assert_eq!(cost.usd(), None);
    assert_eq!(
        describe(&cost),
        "price unknown (machine type n9-imaginary-8 in us-central1)"
    );
}

fn running(nodes: u32) -> ClusterSummary {
    let target = ClusterRef::new("p", "us-central1", "c");
    ClusterSummary {
        status: ClusterStatus::Running,
        node_count: nodes,
        node_pools: vec![PoolSummary {
            initial_node_count: 1,
            ..PoolSummary::running("default-pool", "n1-standard-1", nodes)
        }],
        create_time: "2026-01-01T10:00:00Z".parse().ok(),
        ..ClusterSummary::not_found(&target, "n1-standard-1")
    }
}

#[test]
fn the_running_cluster_costs_its_nodes_now() {
    assert!(close(
        &RunningCost::of(&running(3)).per_hour,
        FEE + 3.0 * SEED_NODE
    ));
    // Scaled to zero nodes, only the fee is left.
    assert!(close(&RunningCost::of(&running(0)).per_hour, FEE));
}

#[test]
fn pools_have_their_creation_counts_unless_the_clusters_total_says_otherwise() {
    assert_eq!(pool_node_counts(&[3, 1], 4), [3, 1]);
    assert_eq!(pool_node_counts(&[9], 4), [4]);
    assert_eq!(pool_node_counts(&[3, 1], 0), [0, 0]);
    assert_eq!(pool_node_counts(&[3, 1], 7), [3, 1]);
}

#[test]
fn an_attempt_uses_its_duration_times_the_clusters_nodes_and_price() {
    let start: Timestamp = "2026-01-01T10:00:00Z".parse().unwrap();
    let end: Timestamp = "2026-01-01T11:30:00Z".parse().unwrap();
    let used = Used::over(start, end, 3, &Estimate::Known(0.2));
    assert!((used.node_hours - 4.5).abs() < 1e-9);
    assert!(close(&used.cost, 0.3));
    assert_eq!(
        Used::over(end, start, 3, &Estimate::Known(0.2)).node_hours,
        0.0
    );
}
