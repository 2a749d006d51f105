//! What a GPU is doing, from the pod that holds it: the GPU models GKE offers as DCGM names
//! them, and each one's load as the pod's workload goes — loading its data, steady steps, a
//! checkpoint pause at each epoch's end — or as its container's knobs say (`SIM_GPU_IDLE=1`:
//! nothing with the model loaded; `SIM_GPU_MEMORY_BOUND=1`: memory near full, engines half busy).

use jiff::Timestamp;
use serde_json::Value;

use crate::kube::meta;

/// A GPU model as DCGM names it, its framebuffer (MiB), its power idle and at full work (W) and
/// its SM clock at rest and at work (MHz).
pub(super) struct Model {
    pub(super) name: &'static str,
    pub(super) fb_mib: u64,
    pub(super) idle_w: f64,
    pub(super) max_w: f64,
    pub(super) clocks: (u64, u64),
}

pub(super) fn model(accelerator: &str) -> Model {
    let (name, fb_mib, idle_w, max_w, clocks) = match accelerator {
        "nvidia-tesla-t4" => ("Tesla T4", 15360, 10.0, 70.0, (300, 1590)),
        "nvidia-l4" => ("NVIDIA L4", 23034, 16.0, 72.0, (210, 2040)),
        "nvidia-tesla-a100" => ("NVIDIA A100-SXM4-40GB", 40960, 55.0, 400.0, (210, 1410)),
        "nvidia-a100-80gb" => ("NVIDIA A100-SXM4-80GB", 81920, 60.0, 400.0, (210, 1410)),
        "nvidia-h100-80gb" | "nvidia-h100-mega-80gb" => {
            ("NVIDIA H100 80GB HBM3", 81559, 70.0, 700.0, (345, 1980))
        }
        "nvidia-h200-141gb" => ("NVIDIA H200", 143771, 75.0, 700.0, (345, 1980)),
        "nvidia-tesla-v100" => ("Tesla V100-SXM2-16GB", 16384, 40.0, 300.0, (135, 1530)),
        "nvidia-tesla-p100" => ("Tesla P100-PCIE-16GB", 16384, 30.0, 250.0, (405, 1328)),
        "nvidia-tesla-p4" => ("Tesla P4", 7680, 10.0, 75.0, (455, 1531)),
        _ => ("NVIDIA GPU", 16384, 20.0, 250.0, (300, 1500)),
    };
    Model {
        name,
        fb_mib,
        idle_w,
        max_w,
        clocks,
    }
}

/// What a GPU is doing: busy share (0–1) and share of its memory used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Load {
    pub(super) busy: f64,
    pub(super) memory: f64,
    /// Memory-bound work: the memory interface busier than the engines.
    pub(super) memory_bound: bool,
}

pub(super) const IDLE: Load = Load {
    busy: 0.0,
    memory: 0.0,
    memory_bound: false,
};

/// A container's plain environment value.
fn env<'a>(pod: &'a Value, name: &str) -> Option<&'a str> {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|c| c["env"].as_array().into_iter().flatten())
        .find(|e| e["name"] == name)
        .and_then(|e| e["value"].as_str())
}

fn flag(pod: &Value, name: &str) -> bool {
    env(pod, name)
        .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
}

/// A number in [0, 1) that is the same for the same pod, GPU and ten-second window.
fn wobble(pod: &Value, gpu: u32, now: Timestamp) -> f64 {
    let seed = meta::name(pod)
        .bytes()
        .fold((now.as_second() / 10) as u64 ^ u64::from(gpu), |h, b| {
            h.wrapping_mul(0x100_0000_01b3).wrapping_add(u64::from(b))
        });
    (seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11) as f64 / (1u64 << 53) as f64
}

/// What the pod's work does to one of its GPUs, `now`: in the workload's own time (its lines
/// at `SIM_LINES_PER_SECOND`, `SIM_EPOCHS` epochs), as the log it writes goes.
pub(super) fn load(pod: &Value, gpu: u32, now: Timestamp, scale: f64) -> Load {
    let started = pod
        .pointer("/status/containerStatuses/0/state/running/startedAt")
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<Timestamp>().ok());
    let Some(started) = started else {
        // Holding its GPUs while its containers are made: nothing on them yet.
        return IDLE;
    };
    let wall = (now - started).get_seconds().max(0) as f64;
    let age = if scale > 0.0 { wall / scale } else { wall };
    let wobble = wobble(pod, gpu, now);
    if flag(pod, "SIM_GPU_IDLE") {
        return Load {
            busy: 0.0,
            memory: 0.31,
            memory_bound: false,
        };
    }
    let memory_bound = flag(pod, "SIM_GPU_MEMORY_BOUND");
    let number = |name: &str, default: f64| {
        env(pod, name)
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v > 0.0)
            .unwrap_or(default)
    };
    let lines = number("SIM_LOG_LINES", 60.0);
    let pace = number("SIM_LINES_PER_SECOND", 5.0);
    let epochs = number("SIM_EPOCHS", 3.0).max(1.0);
    let run = lines / pace;
    // Loading data and weights: a share of a short run, a minute at most of a long one.
    let loading = (run * 0.08).clamp(1.0, 60.0);
    let full = if memory_bound { 0.97 } else { 0.86 };
    if age < loading {
        return Load {
            busy: 0.04 + 0.08 * wobble,
            memory: full * age / loading,
            memory_bound: false,
        };
    }
    let epoch = ((run - loading) / epochs).max(1.0);
    let into_epoch = (age - loading) % epoch;
    if into_epoch > epoch * 0.94 {
        // Saving a checkpoint: the GPUs wait for the disk.
        return Load {
            busy: 0.06 + 0.04 * wobble,
            memory: full,
            memory_bound: false,
        };
    }
    let busy = if memory_bound {
        0.40 + 0.12 * wobble
    } else {
        0.88 + 0.10 * wobble
    };
    Load {
        busy,
        memory: full - 0.01 * wobble,
        memory_bound,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::kube::dcgm::training_pod as pod;
    use serde_json::json;

    #[test]
    fn a_training_loads_then_steps_busy_and_the_knobs_make_it_idle_or_memory_bound() {
        let now = Timestamp::now();
        let env = json!([{"name": "SIM_LOG_LINES", "value": "600"}]);
        let loading = load(&pod(env.clone(), 1), 0, now, 1.0);
        assert!(loading.busy < 0.2 && loading.memory < 0.2, "{loading:?}");
        let steady = load(&pod(env.clone(), 30), 0, now, 1.0);
        assert!(steady.busy > 0.85 && steady.memory > 0.8, "{steady:?}");
        let idle = json!([{"name": "SIM_GPU_IDLE", "value": "1"}]);
        let idle = load(&pod(idle, 30), 0, now, 1.0);
        assert_eq!(idle.busy, 0.0);
        assert!(idle.memory > 0.0, "the model stays loaded");
        let bound = json!([{"name": "SIM_LOG_LINES", "value": "600"}, {"name": "SIM_GPU_MEMORY_BOUND", "value": "1"}]);
        let bound = load(&pod(bound, 30), 0, now, 1.0);
        assert!(
            bound.memory > 0.95 && bound.busy < 0.6 && bound.memory_bound,
            "{bound:?}"
        );
    }
}
