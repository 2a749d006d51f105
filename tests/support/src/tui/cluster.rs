//! What the workers report of the cluster: the target, GKE's summary of it (running, not found,
//! made by hand unlike the config, or a kubeconfig context's), its nodes as the Node watch sees
//! them, and their usage as metrics.k8s.io says it.

use gantry::engine::{Report, TargetInfo};
use gantry::gke::summary::PoolSummary;
use gantry::gke::{ClusterStatus, ClusterSummary};
use gantry::meter::NodeSeen;

use super::{CLUSTER, NODE, PLACE, POD_RUNNING, ago};

pub fn target() -> TargetInfo {
    TargetInfo {
        place: PLACE.into(),
        cluster: CLUSTER.into(),
        managed: true,
        unmanaged_reason: None,
        simulated: false,
    }
}

pub const CONTEXT_REASON: &str = "not Gantry's cluster: create and delete it with its own tools";

/// An existing cluster used through a kubeconfig context (`--context`).
pub fn context_target() -> TargetInfo {
    TargetInfo {
        place: "context gke_demo_training".into(),
        cluster: "gke_demo_training".into(),
        managed: false,
        unmanaged_reason: Some(CONTEXT_REASON.into()),
        simulated: false,
    }
}

pub fn cluster_summary(status: ClusterStatus) -> ClusterSummary {
    let up = status == ClusterStatus::Running;
    ClusterSummary {
        name: CLUSTER.into(),
        project: "demo-project".into(),
        location: "us-central1-a".into(),
        status,
        status_message: String::new(),
        node_count: if up { 3 } else { 0 },
        machine_type: "n1-standard-1".into(),
        endpoint: if up {
            "34.118.12.7".into()
        } else {
            String::new()
        },
        version: "1.33.2-gke.1111000".into(),
        node_version: "1.33.2-gke.1111000".into(),
        node_pools: vec![PoolSummary {
            name: "default-pool".into(),
            status: if up { "RUNNING" } else { "PROVISIONING" }.into(),
            machine_type: "n1-standard-1".into(),
            initial_node_count: 3,
            node_count: if up { 3 } else { 0 },
            spot: false,
            accelerator: None,
            accelerator_type: None,
            accelerator_count: 0,
            disk_type: "pd-balanced".into(),
            disk_size_gb: 100,
            version: "1.33.2-gke.1111000".into(),
            autoscaling: None,
            fallback_for: None,
        }],
        locations: vec!["us-central1-a".into()],
        create_time: if up { ago(2 * 3600 + 15 * 60) } else { None },
        labels: Default::default(),
    }
}

/// What the workers report for a kubeconfig context's cluster: the server in `location`, the
/// API server's version and the nodes; no pools, no endpoint.
pub fn context_summary() -> ClusterSummary {
    ClusterSummary {
        name: "gke_demo_training".into(),
        project: String::new(),
        location: "https://34.118.12.7".into(),
        status: ClusterStatus::Running,
        status_message: String::new(),
        node_count: 3,
        machine_type: String::new(),
        endpoint: String::new(),
        version: "1.33.2-gke.1111000".into(),
        node_version: String::new(),
        node_pools: Vec::new(),
        locations: Vec::new(),
        create_time: None,
        labels: Default::default(),
    }
}

pub fn not_found_summary() -> ClusterSummary {
    ClusterSummary {
        status: ClusterStatus::NotFound,
        node_count: 0,
        endpoint: String::new(),
        version: String::new(),
        node_version: String::new(),
        node_pools: Vec::new(),
        locations: Vec::new(),
        ..cluster_summary(ClusterStatus::NotFound)
    }
}

/// The cluster as made by hand: RUNNING with 1 × e2-medium where the config says
/// 3 × n1-standard-1.
pub fn hand_made_summary() -> ClusterSummary {
    let mut summary = cluster_summary(ClusterStatus::Running);
    summary.node_count = 1;
    summary.machine_type = "e2-medium".into();
    for pool in &mut summary.node_pools {
        pool.machine_type = "e2-medium".into();
        pool.initial_node_count = 1;
        pool.node_count = 1;
    }
    summary
}

/// A node of default-pool as the Node watch reports it.
pub fn node_seen(name: &str, machine: &str, created: Option<jiff::Timestamp>) -> NodeSeen {
    NodeSeen::of(
        &serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": name,
                "uid": format!("uid-{name}"),
                "creationTimestamp": created.map(|t| t.to_string()),
                "labels": {
                    "cloud.google.com/gke-nodepool": "default-pool",
                    "node.kubernetes.io/instance-type": machine,
                    "topology.kubernetes.io/region": "us-central1",
                    "topology.kubernetes.io/zone": "us-central1-a",
                }
            }
        }))
        .unwrap(),
    )
}

/// What the pods use, as metrics.k8s.io says it: the running pod near its CPU request with its
/// memory at a plateau; the other two not running. Three n1-standard-1 nodes, the running pod's
/// busy.
pub fn usage() -> Report {
    use gantry::k8s::usage::{NodeUsage, PodUsage, Reading};
    let running = PodUsage {
        cpu_millis: 912,
        memory_bytes: 1_932_735_283,
    };
    let node = |name: &str, cpu_millis, memory_bytes| NodeUsage {
        name: name.into(),
        cpu_millis,
        memory_bytes,
        cpu_allocatable_millis: 940,
        memory_allocatable_bytes: 2_873_729_024,
    };
    Report::Usage(Some(Reading {
        pods: [(POD_RUNNING.to_string(), running)].into(),
        nodes: vec![
            node(NODE, 903, 2_101_346_304),
            node(
                "gke-ml-gke-cluster-default-pool-1a2b3c4d-k3m4",
                61,
                702_545_920,
            ),
            node(
                "gke-ml-gke-cluster-default-pool-1a2b3c4d-p9q8",
                58,
                689_963_008,
            ),
        ],
    }))
}
