//! What a node of a machine type offers pods before it exists: its size from the snapshot, less
//! what GKE keeps back on every Standard node for the kubelet, the runtime and the system
//! (https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes, "Memory and CPU
//! reservations"). A pod's share of a node is a share of this, as it is of a running node's
//! `status.allocatable` (`ends::cost`): a plan prices a pod to come by the same rule.

/// A machine type's size, as billed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineSize {
    pub vcpus: f64,
    /// Compute Engine's "GB" are GiB.
    pub memory_gib: f64,
}

/// What the kubelet offers pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocatable {
    pub cpu_millis: u128,
    pub memory_bytes: u128,
}

const MIB: u128 = 1024 * 1024;

impl MachineSize {
    /// Capacity less GKE's reservations and its 100 MiB eviction threshold. A shared-core E2
    /// has a whole core's capacity on its node (GKE reports 940m allocatable on each).
    pub fn allocatable(&self) -> Allocatable {
        let cores = (self.vcpus.ceil() as u128).max(1);
        // 6% of the first core, 1% of the second, 0.5% of the third and fourth, 0.25% above.
        let mut reserved_cpu = 60;
        if cores >= 2 {
            reserved_cpu += 10;
        }
        reserved_cpu += cores.saturating_sub(2).min(2) * 5;
        reserved_cpu += cores.saturating_sub(4) * 5 / 2;
        let mib = (self.memory_gib * 1024.0).round() as u128;
        let reserved_mib = if mib < 1024 {
            255
        } else {
            // 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112,
            // 2% above.
            let tiers: [(u128, u128); 5] = [
                (4096, 25),
                (4096, 20),
                (8192, 10),
                (114_688, 6),
                (u128::MAX, 2),
            ];
            let mut left = mib;
            let mut reserved = 0;
            for (size, percent) in tiers {
                let part = left.min(size);
                reserved += part * percent / 100;
                left -= part;
            }
            reserved
        };
        Allocatable {
            cpu_millis: (cores * 1000).saturating_sub(reserved_cpu),
            memory_bytes: mib.saturating_sub(reserved_mib + 100) * MIB,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::pricing::Catalogue;

    fn allocatable(machine_type: &str) -> Allocatable {
        Catalogue::embedded()
            .machine_size(machine_type)
            .unwrap()
            .allocatable()
    }

    #[test]
    fn a_planned_node_offers_what_gke_reports_on_a_running_one() {
        // GKE's own table: n1-standard-1 (3.75 GB) reports 940m and about 2.7 GiB.
        let n1 = allocatable("n1-standard-1");
        assert_eq!(n1.cpu_millis, 940);
        assert_eq!(n1.memory_bytes / MIB, 3840 - 960 - 100);
        // 4 cores: 60 + 10 + 2 × 5 = 80m kept; 16 GiB: 1024 + 819 + 819 + 100 MiB.
        let n2 = allocatable("n2-standard-4");
        assert_eq!(n2.cpu_millis, 3920);
        assert_eq!(n2.memory_bytes / MIB, 16384 - 1024 - 819 - 819 - 100);
        // A shared core is a core's capacity on its node.
        assert_eq!(allocatable("e2-micro").cpu_millis, 940);
        assert_eq!(allocatable("e2-micro").memory_bytes / MIB, 1024 - 256 - 100);
    }

    #[test]
    fn a_snapshot_without_sizes_says_none_rather_than_zero() {
        assert!(Catalogue::default().machine_size("n1-standard-1").is_none());
        assert!(
            Catalogue::embedded()
                .machine_size("z9-imaginary-1")
                .is_none()
        );
    }
}
