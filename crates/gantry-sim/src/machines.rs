//! Compute Engine machine and accelerator types the simulated cloud knows, and what a node of
//! each type offers to pods once GKE's reservations are taken off.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineType {
    pub name: &'static str,
    pub vcpus: u32,
    pub memory_mib: u64,
    /// GPUs that come attached to the machine type (A2, A3, G2 families).
    pub gpus: Option<(&'static str, u32)>,
}

const fn m(name: &'static str, vcpus: u32, memory_mib: u64) -> MachineType {
    MachineType {
        name,
        vcpus,
        memory_mib,
        gpus: None,
    }
}

const fn g(
    name: &'static str,
    vcpus: u32,
    memory_mib: u64,
    gpu: &'static str,
    n: u32,
) -> MachineType {
    MachineType {
        name,
        vcpus,
        memory_mib,
        gpus: Some((gpu, n)),
    }
}

pub const MACHINE_TYPES: &[MachineType] = &[
    m("e2-micro", 2, 1024),
    m("e2-small", 2, 2048),
    m("e2-medium", 2, 4096),
    m("e2-standard-2", 2, 8192),
    m("e2-standard-4", 4, 16384),
    m("e2-standard-8", 8, 32768),
    m("e2-standard-16", 16, 65536),
    m("n1-standard-1", 1, 3840),
    m("n1-standard-2", 2, 7680),
    m("n1-standard-4", 4, 15360),
    m("n1-standard-8", 8, 30720),
    m("n1-standard-16", 16, 61440),
    m("n1-standard-32", 32, 122880),
    m("n1-highmem-2", 2, 13312),
    m("n1-highmem-4", 4, 26624),
    m("n1-highmem-8", 8, 53248),
    m("n1-highmem-16", 16, 106496),
    m("n2-standard-2", 2, 8192),
    m("n2-standard-4", 4, 16384),
    m("n2-standard-8", 8, 32768),
    m("n2-standard-16", 16, 65536),
    m("n2-standard-32", 32, 131072),
    m("c2-standard-4", 4, 16384),
    m("c2-standard-8", 8, 32768),
    m("c3-standard-4", 4, 16384),
    m("c3-standard-8", 8, 32768),
    g("g2-standard-4", 4, 16384, "nvidia-l4", 1),
    g("g2-standard-8", 8, 32768, "nvidia-l4", 1),
    g("g2-standard-24", 24, 98304, "nvidia-l4", 2),
    g("a2-highgpu-1g", 12, 87040, "nvidia-tesla-a100", 1),
    g("a2-highgpu-2g", 24, 174080, "nvidia-tesla-a100", 2),
    g("a2-highgpu-4g", 48, 348160, "nvidia-tesla-a100", 4),
    g("a2-highgpu-8g", 96, 696320, "nvidia-tesla-a100", 8),
    g("a3-highgpu-8g", 208, 1916928, "nvidia-h100-80gb", 8),
];

/// GPUs Compute Engine attaches to N1 machines. The others (L4, A100, H100) come only with
/// their machine type (G2, A2, A3).
pub const ATTACHABLE_ACCELERATORS: &[&str] = &[
    "nvidia-tesla-t4",
    "nvidia-tesla-v100",
    "nvidia-tesla-p100",
    "nvidia-tesla-p4",
];

/// Every accelerator type the simulated cloud knows, attachable or built in.
pub fn known_accelerator(name: &str) -> bool {
    ATTACHABLE_ACCELERATORS.contains(&name)
        || MACHINE_TYPES
            .iter()
            .any(|m| m.gpus.is_some_and(|(gpu, _)| gpu == name))
}

pub fn machine_type(name: &str) -> Option<MachineType> {
    MACHINE_TYPES.iter().find(|m| m.name == name).copied()
}

/// What the kubelet offers pods: capacity less GKE's system reservations and eviction threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allocatable {
    pub cpu_millis: u64,
    pub memory_bytes: u64,
    pub pods: u32,
}

impl MachineType {
    /// Whether this accelerator can be on a node of this type: built in, or attached to an N1.
    pub fn takes_accelerator(&self, name: &str) -> bool {
        match self.gpus {
            Some((gpu, _)) => gpu == name,
            None => self.name.starts_with("n1-") && ATTACHABLE_ACCELERATORS.contains(&name),
        }
    }

    pub fn allocatable(&self) -> Allocatable {
        // GKE reserves 6% of the first core, 1% of the second, 0.5% of the next two, 0.25% above.
        let cores = u64::from(self.vcpus);
        let mut reserved_cpu = 60;
        if cores >= 2 {
            reserved_cpu += 10;
        }
        reserved_cpu += cores.saturating_sub(2).min(2) * 5;
        reserved_cpu += cores.saturating_sub(4) * 5 / 2;
        // Memory: 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next
        // 112, 2% above; plus 100 MiB kept back for eviction.
        let mib = self.memory_mib;
        let tiers: [(u64, u64); 5] = [
            (4096, 25),
            (4096, 20),
            (8192, 10),
            (114688, 6),
            (u64::MAX, 2),
        ];
        let mut left = mib;
        let mut reserved_mib = 0;
        for (size, pct) in tiers {
            let part = left.min(size);
            reserved_mib += part * pct / 100;
            left -= part;
            if left == 0 {
                break;
            }
        }
        reserved_mib += 100;
        Allocatable {
            cpu_millis: (cores * 1000).saturating_sub(reserved_cpu),
            memory_bytes: mib.saturating_sub(reserved_mib) * 1024 * 1024,
            pods: 110,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_go_only_where_compute_engine_puts_them() {
        let n1 = machine_type("n1-standard-4").unwrap_or(MACHINE_TYPES[0]);
        assert!(n1.takes_accelerator("nvidia-tesla-t4"));
        assert!(!n1.takes_accelerator("nvidia-l4"));
        let g2 = machine_type("g2-standard-8").unwrap_or(MACHINE_TYPES[0]);
        assert!(g2.takes_accelerator("nvidia-l4"));
        assert!(!g2.takes_accelerator("nvidia-tesla-t4"));
        let e2 = machine_type("e2-medium").unwrap_or(MACHINE_TYPES[0]);
        assert!(!e2.takes_accelerator("nvidia-tesla-t4"));
        assert!(known_accelerator("nvidia-h100-80gb"));
        assert!(!known_accelerator("nvidia-gtx-1080"));
    }

    #[test]
    fn n1_standard_1_matches_gke() {
        let a = machine_type("n1-standard-1").map(|m| m.allocatable());
        let a = a.unwrap_or(Allocatable {
            cpu_millis: 0,
            memory_bytes: 0,
            pods: 0,
        });
        assert_eq!(a.cpu_millis, 940);
        // GKE reports about 2.8 GB allocatable on a 3.75 GB node.
        assert!(
            (2_700..2_900).contains(&(a.memory_bytes / 1024 / 1024)),
            "{a:?}"
        );
    }
}
