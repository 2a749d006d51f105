//! How many nodes of each machine type a GKE cluster runs, and how many of them are spot:
//! `gantry status` says `1 x n1-standard-2, 4 x n1-standard-4 (4 spot)` and `--json` lists
//! them (`nodesByMachineType`). The Kubernetes Nodes are the truth: GKE labels each with its
//! machine type and, when it is spot, as spot. Until they can be listed (no API yet, or no
//! permission), GKE's pools stand in: each pool's nodes now, of its machine type.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;
use serde::Serialize;

use crate::ends::cost::{is_spot, machine_type_of};
use crate::gke::summary::PoolSummary;

/// The nodes of one machine type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineTypeNodes {
    /// `null` for nodes without the machine type label.
    pub machine_type: Option<String>,
    pub nodes: u32,
    /// How many of them are spot (or preemptible) VMs.
    pub spot: u32,
}

/// The Nodes' own labels, by machine type (in name order).
pub fn from_nodes(nodes: &[Node]) -> Vec<MachineTypeNodes> {
    counted(
        nodes
            .iter()
            .map(|n| (machine_type_of(n).map(str::to_string), 1, is_spot(n))),
    )
}

/// GKE's pools, by machine type (in name order): each pool's nodes now. Pools with no node are
/// left out, as a list of Nodes would leave them.
pub fn from_pools(pools: &[PoolSummary]) -> Vec<MachineTypeNodes> {
    counted(
        pools
            .iter()
            .map(|p| (Some(p.machine_type.clone()), p.node_count, p.spot)),
    )
}

/// `1 x n1-standard-2, 4 x n1-standard-4 (4 spot)`; `0` when there are no nodes.
pub fn describe(counts: &[MachineTypeNodes]) -> String {
    if counts.is_empty() {
        return "0".into();
    }
    let each = counts.iter().map(|c| {
        let machine_type = c.machine_type.as_deref().unwrap_or("unlabelled");
        match c.spot {
            0 => format!("{} x {machine_type}", c.nodes),
            spot => format!("{} x {machine_type} ({spot} spot)", c.nodes),
        }
    });
    each.collect::<Vec<_>>().join(", ")
}

fn counted(nodes: impl Iterator<Item = (Option<String>, u32, bool)>) -> Vec<MachineTypeNodes> {
    let mut by_type: BTreeMap<Option<String>, (u32, u32)> = BTreeMap::new();
    for (machine_type, count, spot) in nodes.filter(|(_, count, _)| *count > 0) {
        let (all, spot_ones) = by_type.entry(machine_type).or_default();
        *all = all.saturating_add(count);
        if spot {
            *spot_ones = spot_ones.saturating_add(count);
        }
    }
    by_type
        .into_iter()
        .map(|(machine_type, (nodes, spot))| MachineTypeNodes {
            machine_type,
            nodes,
            spot,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::json;

    use super::*;

    fn node(machine_type: Option<&str>, spot: bool) -> Node {
        let mut labels = json!({"cloud.google.com/gke-nodepool": "p"});
        if let Some(machine_type) = machine_type {
            labels["node.kubernetes.io/instance-type"] = json!(machine_type);
        }
        if spot {
            labels["cloud.google.com/gke-spot"] = json!("true");
        }
        serde_json::from_value(json!({"metadata": {"name": "n", "labels": labels}})).unwrap()
    }

    #[test]
    fn nodes_are_counted_by_their_machine_type_label_with_the_spot_ones_among_them() {
        let mut nodes = vec![node(Some("n1-standard-2"), false)];
        nodes.extend((0..4).map(|i| node(Some("n1-standard-4"), i % 2 == 0)));
        let counts = from_nodes(&nodes);
        assert_eq!(
            counts,
            [
                MachineTypeNodes {
                    machine_type: Some("n1-standard-2".into()),
                    nodes: 1,
                    spot: 0
                },
                MachineTypeNodes {
                    machine_type: Some("n1-standard-4".into()),
                    nodes: 4,
                    spot: 2
                },
            ]
        );
        assert_eq!(
            describe(&counts),
            "1 x n1-standard-2, 4 x n1-standard-4 (2 spot)"
        );
        assert_eq!(
            serde_json::to_value(&counts[1]).unwrap(),
            json!({"machineType": "n1-standard-4", "nodes": 4, "spot": 2})
        );
    }

    #[test]
    fn a_node_without_a_machine_type_label_is_counted_as_unlabelled() {
        let counts = from_nodes(&[node(None, true), node(Some("e2-medium"), false)]);
        assert_eq!(describe(&counts), "1 x unlabelled (1 spot), 1 x e2-medium");
        assert_eq!(
            serde_json::to_value(&counts[0]).unwrap()["machineType"],
            json!(null)
        );
    }

    #[test]
    fn pools_stand_in_with_their_nodes_now_merged_by_machine_type() {
        let spot = PoolSummary {
            spot: true,
            ..PoolSummary::running("gpu-pool", "n1-standard-4", 4)
        };
        let pools = [
            PoolSummary::running("default-pool", "n1-standard-2", 1),
            spot,
            PoolSummary::running("extra", "n1-standard-4", 2),
            PoolSummary::running("empty", "e2-medium", 0),
        ];
        assert_eq!(
            describe(&from_pools(&pools)),
            "1 x n1-standard-2, 6 x n1-standard-4 (4 spot)"
        );
    }

    #[test]
    fn no_nodes_read_as_zero() {
        assert_eq!(describe(&from_nodes(&[])), "0");
        let empty = [PoolSummary::running("default-pool", "n1-standard-1", 0)];
        assert_eq!(describe(&from_pools(&empty)), "0");
    }
}
