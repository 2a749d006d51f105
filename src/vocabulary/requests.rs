//! What a pod asked of its node: what its share of the node's price is judged by (the largest
//! fraction of CPU, memory or GPUs, as GKE's cost allocation counts requests).

/// CPU in millicores, memory in bytes, GPUs in whole devices.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Requests {
    pub cpu_millis: u128,
    pub memory_bytes: u128,
    pub gpus: u32,
}
