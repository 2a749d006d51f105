//! What a pod's time cost: its share of its node's price for as long as it ran. The share is
//! the largest fraction of the node it asked for (CPU, memory or GPUs, as GKE's cost allocation
//! counts requests); a pod that asked for nothing shares the node with the attempt's other pods
//! on it. The node's price is the snapshot's for its machine type, region and provisioning
//! (spot or on-demand), plus its GPUs where the machine type does not include them
//! ([`Catalogue::attached_gpus`]); unknown (`None`) where the snapshot has no price, never 0.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;

use crate::k8s::usage::milli;
use crate::pricing::{Catalogue, Provisioning};
use crate::vocabulary::Requests;

const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";
const REGION: &str = "topology.kubernetes.io/region";
const ZONE: &str = "topology.kubernetes.io/zone";
const SPOT: &str = "cloud.google.com/gke-spot";
const PREEMPTIBLE: &str = "cloud.google.com/gke-preemptible";
const ACCELERATOR: &str = "cloud.google.com/gke-accelerator";
const GPU: &str = "nvidia.com/gpu";

/// What pricing a pod's time needs to know of its node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeFacts {
    /// Per hour, or None where the snapshot has no price for it.
    pub per_hour: Option<f64>,
    pub allocatable: Requests,
}

impl NodeFacts {
    pub fn of(node: &Node) -> NodeFacts {
        NodeFacts {
            per_hour: node_per_hour(node, Catalogue::embedded()),
            allocatable: allocatable(node),
        }
    }

    /// A node of a pool that is not there yet (or not read): its machine type's price in
    /// `location` and what GKE would leave its pods ([`crate::pricing::node_size`]), so that a
    /// plan prices a pod to come as a pod's end is priced. None where the snapshot does not know
    /// the machine type's size.
    pub fn planned(machine_type: &str, location: &str, spot: bool) -> Option<NodeFacts> {
        let catalogue = Catalogue::embedded();
        let size = catalogue.machine_size(machine_type)?.allocatable();
        Some(NodeFacts {
            per_hour: catalogue
                .machine_type(machine_type, location, Provisioning::from_spot(spot))
                .ok(),
            allocatable: Requests {
                cpu_millis: size.cpu_millis,
                memory_bytes: size.memory_bytes,
                gpus: 0,
            },
        })
    }

    /// The pod's share of this node (0 to 1): the largest fraction it asked for, or an even
    /// share among `sharing` pods when it asked for nothing.
    pub fn share(&self, asked: &Requests, sharing: usize) -> f64 {
        let fraction = |part: u128, whole: u128| {
            if whole == 0 {
                0.0
            } else {
                part as f64 / whole as f64
            }
        };
        let largest = [
            fraction(asked.cpu_millis, self.allocatable.cpu_millis),
            fraction(asked.memory_bytes, self.allocatable.memory_bytes),
            fraction(u128::from(asked.gpus), u128::from(self.allocatable.gpus)),
        ]
        .into_iter()
        .fold(0.0_f64, f64::max);
        if largest > 0.0 {
            largest.min(1.0)
        } else {
            1.0 / sharing.max(1) as f64
        }
    }

    /// What `seconds` of `share` of this node cost.
    pub fn cost(&self, share: f64, seconds: u64) -> Option<f64> {
        // To a millionth of a dollar: a few seconds of a small node is still not 0.
        self.per_hour
            .map(|p| (p * share * seconds as f64 / 3600.0 * 1e6).round() / 1e6)
    }
}

/// A node's machine type, as GKE labels it (`n1-standard-4`).
pub fn machine_type_of(node: &Node) -> Option<&str> {
    let labels = node.metadata.labels.as_ref()?;
    labels.get(INSTANCE_TYPE).map(String::as_str)
}

/// Whether a node is a spot (or preemptible) VM, as GKE labels it.
pub fn is_spot(node: &Node) -> bool {
    let labels = node.metadata.labels.as_ref();
    [SPOT, PREEMPTIBLE]
        .iter()
        .any(|k| labels.and_then(|l| l.get(*k)).map(String::as_str) == Some("true"))
}

/// One of the node's GPUs an hour, priced by its accelerator label as its node's GPUs are: the
/// snapshot's price of an attached GPU, or — a machine type that carries its GPUs (A2, A3, G2)
/// — its price shared among them. None: not a GPU node, or the snapshot has no price.
pub fn gpu_per_hour(node: &Node) -> Option<f64> {
    let catalogue = Catalogue::embedded();
    let labels = node.metadata.labels.as_ref()?;
    let kind = labels.get(ACCELERATOR)?;
    let machine_name = machine_type_of(node)?;
    let location = labels.get(REGION).or_else(|| labels.get(ZONE))?;
    let provisioning = Provisioning::from_spot(is_spot(node));
    let carried: u32 = catalogue
        .gpus_carried_by(machine_name)
        .map(|(_, count)| count)
        .sum();
    if carried > 0 {
        let machine = catalogue
            .machine_type(machine_name, location, provisioning)
            .ok()?;
        return Some(machine / f64::from(carried));
    }
    catalogue.gpu(kind, location, provisioning).ok()
}

fn node_per_hour(node: &Node, catalogue: &Catalogue) -> Option<f64> {
    let labels = node.metadata.labels.as_ref()?;
    let machine_name = machine_type_of(node)?;
    let location = labels.get(REGION).or_else(|| labels.get(ZONE))?;
    let provisioning = Provisioning::from_spot(is_spot(node));
    let machine = catalogue
        .machine_type(machine_name, location, provisioning)
        .ok()?;
    let gpus = match labels.get(ACCELERATOR) {
        Some(kind) => catalogue
            .attached_gpus(
                machine_name,
                kind,
                allocatable(node).gpus,
                location,
                provisioning,
            )
            .usd()?,
        None => 0.0,
    };
    Some(machine + gpus)
}

fn allocatable(node: &Node) -> Requests {
    let empty = BTreeMap::new();
    let a = node
        .status
        .as_ref()
        .and_then(|s| s.allocatable.as_ref())
        .unwrap_or(&empty);
    let get = |k: &str| a.get(k).and_then(|q| milli(&q.0)).unwrap_or(0);
    Requests {
        cpu_millis: get("cpu"),
        memory_bytes: get("memory") / 1000,
        gpus: u32::try_from(get(GPU) / 1000).unwrap_or(u32::MAX),
    }
}
