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
    m("c2-standard-8", 8, 32768),
    g("g2-standard-4", 4, 16384, "nvidia-l4", 1),
    g("g2-standard-8", 8, 32768, "nvidia-l4", 1),
    g("g2-standard-24", 24, 98304, "nvidia-l4", 2),
    g("a2-highgpu-1g", 12, 87040, "nvidia-tesla-a100", 1),
    g("a2-highgpu-2g", 24, 174080, "nvidia-tesla-a100", 2),
    g("a2-highgpu-4g", 48, 348160, "nvidia-tesla-a100", 4),
    g("a2-highgpu-8g", 96, 696320, "nvidia-tesla-a100", 8),
    g("a3-highgpu-8g", 208, 1915904, "nvidia-h100-80gb", 8),
];

/// Accelerators that can be attached to N1 machines (the others come with their machine type).
pub const ATTACHABLE_ACCELERATORS: &[&str] = &[
    "nvidia-tesla-t4",
    "nvidia-tesla-v100",
    "nvidia-tesla-p100",
    "nvidia-tesla-p4",
    "nvidia-l4",
    "nvidia-tesla-a100",
    "nvidia-h100-80gb",
];

pub fn machine_type(name: &str) -> Option<MachineType> {
    MACHINE_TYPES.iter().find(|m| m.name == name).copied()
}

pub fn known_accelerator(name: &str) -> bool {
    ATTACHABLE_ACCELERATORS.contains(&name)
}

/// What the kubelet offers pods: capacity less GKE's system reservations and eviction threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allocatable {
    pub cpu_millis: u64,
    pub memory_bytes: u64,
    pub pods: u32,
}

impl MachineType {
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
