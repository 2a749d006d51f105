#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;
use crate::config::GpuPool;
use crate::gke::plan::Action;
use crate::pricing::{ClusterShape, Estimate};

fn change(pool: Option<&str>, field: &str, current: Value, desired: Value, how: How) -> Change {
    Change {
        pool: pool.map(str::to_string),
        field: field.into(),
        current,
        desired,
        how,
    }
}

fn plan_of(changes: Vec<Change>) -> Plan {
    let shape = ClusterShape {
        location: "us-central1-a".into(),
        pools: Vec::new(),
    };
    Plan {
        action: Action::Update,
        changes,
        current: Some(shape.clone()),
        desired: shape,
        cost_now: Some(Estimate::Known(0.0)),
        cost_after: Estimate::Known(0.0),
        fallbacks: Vec::new(),
    }
}

fn requests(config: &ClusterConfig, changes: Vec<Change>) -> (Vec<Step>, Vec<Change>) {
    let Steps { steps, left } = steps(config, &plan_of(changes)).unwrap();
    (steps.into_iter().map(|(s, _)| s).collect(), left)
}

/// The seed's hand-made twin: 1 × e2-medium where the config says 3 × n1-standard-1.
fn grow_and_retype() -> Vec<Change> {
    vec![
        change(
            Some("default-pool"),
            "nodeCount",
            json!(1),
            json!(3),
            How::InPlace,
        ),
        change(
            Some("default-pool"),
            "machineType",
            json!("e2-medium"),
            json!("n1-standard-1"),
            How::RecreateNodes,
        ),
    ]
}

#[test]
fn a_growing_pool_gets_its_new_machines_before_it_grows_so_fewer_nodes_are_recreated() {
    let (steps, left) = requests(&ClusterConfig::default(), grow_and_retype());
    assert!(left.is_empty());
    assert_eq!(
        steps,
        [
            Step::UpdatePool {
                pool: "default-pool".into(),
                update: PoolUpdate {
                    machine_type: Some("n1-standard-1".into()),
                    ..PoolUpdate::default()
                },
            },
            Step::Resize {
                pool: "default-pool".into(),
                nodes: 3
            },
        ]
    );
}

#[test]
fn the_autoscalers_bounds_are_set_after_the_pool_is_sized_and_off_turns_it_off() {
    let mut changes = grow_and_retype();
    changes.push(change(
        Some("default-pool"),
        "autoscaling",
        Value::Null,
        json!({"minNodes": 1, "maxNodes": 5}),
        How::InPlace,
    ));
    let (steps, left) = requests(&ClusterConfig::default(), changes);
    assert!(left.is_empty(), "{left:?}");
    assert!(matches!(
        steps.last(),
        Some(Step::Autoscaling {
            bounds: Some((1, 5)),
            ..
        })
    ));
    let off = vec![change(
        Some("default-pool"),
        "autoscaling",
        json!({"minNodes": 1, "maxNodes": 5}),
        Value::Null,
        How::InPlace,
    )];
    let (steps, _) = requests(&ClusterConfig::default(), off);
    assert!(matches!(
        steps[..],
        [Step::Autoscaling { bounds: None, .. }]
    ));
}

#[test]
fn a_shrinking_pool_is_shrunk_before_its_nodes_are_recreated() {
    let config = ClusterConfig {
        node_count: 1,
        ..ClusterConfig::default()
    };
    let mut changes = grow_and_retype();
    changes[0].current = json!(4);
    changes[0].desired = json!(1);
    let (steps, _) = requests(&config, changes);
    assert!(matches!(steps[0], Step::Resize { nodes: 1, .. }));
    assert!(matches!(steps[1], Step::UpdatePool { .. }));
}

#[test]
fn every_field_of_a_pool_that_changes_goes_in_one_update_request_with_the_configs_values() {
    let config = ClusterConfig {
        gpu_pool: Some(GpuPool::default()),
        ..ClusterConfig::default()
    };
    let gpu = GpuPool::default();
    let pool = Some(gpu.name.as_str());
    let changes = vec![
        change(
            pool,
            "machineType",
            json!("n1-standard-8"),
            json!(gpu.machine_type),
            How::RecreateNodes,
        ),
        change(
            pool,
            "diskType",
            json!("pd-standard"),
            json!(config.disk_type),
            How::RecreateNodes,
        ),
        change(
            pool,
            "diskSizeGb",
            json!(50),
            json!(config.disk_size_gb),
            How::RecreateNodes,
        ),
        change(
            pool,
            "accelerators",
            json!("2 x nvidia-tesla-t4"),
            json!("1 x nvidia-tesla-t4"),
            How::RecreateNodes,
        ),
    ];
    let (steps, left) = requests(&config, changes);
    assert!(left.is_empty());
    let [Step::UpdatePool { pool, update }] = steps.as_slice() else {
        panic!("one request expected: {steps:?}");
    };
    assert_eq!(pool, &gpu.name);
    assert_eq!(
        update.machine_type.as_deref(),
        Some(gpu.machine_type.as_str())
    );
    assert_eq!(update.disk_type.as_deref(), Some(config.disk_type.as_str()));
    assert_eq!(update.disk_size_gb, Some(i64::from(config.disk_size_gb)));
    let accelerators = update.accelerators.as_ref().unwrap();
    assert_eq!(accelerators.len(), 1);
    assert_eq!(accelerators[0].accelerator_type, gpu.accelerator_type);
    assert_eq!(
        accelerators[0].accelerator_count,
        i64::from(gpu.accelerator_count)
    );
}

#[test]
fn new_pools_come_first_labels_after_the_pools_and_pools_to_delete_last() {
    let config = ClusterConfig {
        gpu_pool: Some(GpuPool::default()),
        labels: BTreeMap::from([("team".to_string(), "ml".to_string())]),
        ..ClusterConfig::default()
    };
    let mut changes = vec![
        change(
            Some("old-pool"),
            "nodePool",
            json!("2 × e2-small"),
            Value::Null,
            How::InPlace,
        ),
        change(None, "labels.team", Value::Null, json!("ml"), How::InPlace),
    ];
    changes.extend(grow_and_retype());
    changes.push(change(
        Some("gpu-pool"),
        "nodePool",
        Value::Null,
        json!("1 × n1-standard-4 with 1 x nvidia-tesla-t4"),
        How::NewPool,
    ));
    let (steps, left) = requests(&config, changes);
    assert!(left.is_empty(), "{left:?}");
    let Step::CreatePool(pool) = &steps[0] else {
        panic!("the new pool first: {steps:?}");
    };
    // The pool as a create of the cluster would make it: GPUs, taint and all.
    let whole = spec::cluster_request(&config).unwrap();
    assert_eq!(**pool, whole.node_pools[1]);
    assert!(matches!(steps[1], Step::UpdatePool { .. }));
    assert!(matches!(steps[2], Step::Resize { .. }));
    assert_eq!(
        steps[3],
        Step::Labels(BTreeMap::from([("team".into(), "ml".into())]))
    );
    assert_eq!(steps[4], Step::DeletePool("old-pool".into()));
    assert_eq!(steps.len(), 5);
}

#[test]
fn spot_the_location_and_taking_gpus_away_are_left_with_nothing_sent() {
    let changes = vec![
        change(
            Some("default-pool"),
            "spot",
            json!(false),
            json!(true),
            How::NewPool,
        ),
        change(
            None,
            "location",
            json!("us-central1-a"),
            json!("europe-west4-a"),
            How::NewCluster,
        ),
        change(
            Some("default-pool"),
            "accelerators",
            json!("1 x nvidia-tesla-t4"),
            Value::Null,
            How::RecreateNodes,
        ),
    ];
    let (steps, left) = requests(&ClusterConfig::default(), changes.clone());
    assert!(steps.is_empty(), "{steps:?}");
    assert_eq!(left, changes);
}

#[test]
fn what_a_left_change_takes_is_said_with_the_commands_that_would_make_it() {
    let spot = change(
        Some("gpu-pool"),
        "spot",
        json!(false),
        json!(true),
        How::NewPool,
    );
    assert_eq!(
        what_it_takes(&spot),
        "spot for pool gpu-pool: needs a new node pool; create one with spot and delete gpu-pool, \
         or recreate the cluster with `gantry down` then `gantry up`"
    );
    let location = change(
        None,
        "location",
        json!("us-central1-a"),
        json!("europe-west4-a"),
        How::NewCluster,
    );
    assert_eq!(
        what_it_takes(&location),
        "location us-central1-a → europe-west4-a: needs a new cluster; recreate the cluster with \
         `gantry down` then `gantry up`"
    );
}

#[test]
fn a_plan_with_nothing_makeable_sends_nothing() {
    let plan = Plan {
        action: Action::None,
        ..plan_of(Vec::new())
    };
    let Steps { steps, left } = steps(&ClusterConfig::default(), &plan).unwrap();
    assert!(steps.is_empty() && left.is_empty());
}
