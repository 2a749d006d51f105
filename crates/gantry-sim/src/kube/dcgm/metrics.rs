//! What an exporter prints for its node: each GPU's counters in DCGM's names, HELP and label
//! sets as GKE's managed exporter (4.4.1-4.6.0-gke.17) prints them — `Hostname` the node's name,
//! a GPU held by a pod with `container`, `namespace`, `pod` and an empty `pod_uid`, one held by
//! none without them; doubles with six decimals, integers as integers. The values follow the
//! pod holding the GPU: loading its data, steady steps with a checkpoint pause at each epoch's
//! end, zero once it ends; `SIM_GPU_IDLE=1` on its container leaves its GPUs idle with the
//! model loaded, `SIM_GPU_MEMORY_BOUND=1` fills their memory and halves their work.

use std::collections::HashMap;
use std::fmt::Write;

use jiff::Timestamp;
use serde_json::Value;

use super::{ACCELERATOR_LABEL, GPU, gpus_of};
use crate::kube::cluster::ClusterState;
use crate::kube::controllers::kubelet::is_terminal;
use crate::kube::meta;
use crate::kube::resources::Kind;

/// A GPU model as DCGM names it, its framebuffer (MiB), its power idle and at full work (W) and
/// its SM clock at rest and at work (MHz).
struct Model {
    name: &'static str,
    fb_mib: u64,
    idle_w: f64,
    max_w: f64,
    clocks: (u64, u64),
}

fn model(accelerator: &str) -> Model {
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
struct Load {
    busy: f64,
    memory: f64,
    /// Memory-bound work: the memory interface busier than the engines.
    memory_bound: bool,
}

const IDLE: Load = Load {
    busy: 0.0,
    memory: 0.0,
    memory_bound: false,
};

/// A pod holding GPUs of the node, and which.
struct Holder<'a> {
    pod: &'a Value,
    container: &'a str,
    load: Load,
}

/// The exporter's text for `node` at `now`; None when there is no such GPU node.
pub fn exposition(state: &ClusterState, node: &str, now: Timestamp) -> Option<String> {
    let node_obj = state.store.get(Kind::Node, "", node)?;
    let count = gpus_of(&node_obj);
    if count == 0 {
        return None;
    }
    let model = model(meta::label(&node_obj, ACCELERATOR_LABEL).unwrap_or_default());
    let (pods, _) = state.store.list(Kind::Pod, None, |p| {
        p.pointer("/spec/nodeName").and_then(Value::as_str) == Some(node)
            && !is_terminal(p)
            && requested_gpus(p) > 0
    });
    let mut pods: Vec<_> = pods.iter().collect();
    pods.sort_by_key(|p| {
        (
            p["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            meta::name(p).to_string(),
        )
    });
    let scale = state.shared.clock.scale();
    // The device plugin hands each pod its GPUs in turn.
    let mut held: HashMap<u32, Holder> = HashMap::new();
    let mut next = 0;
    for pod in &pods {
        for _ in 0..requested_gpus(pod) {
            if next < count {
                held.insert(
                    next,
                    Holder {
                        pod,
                        container: first_gpu_container(pod),
                        load: load(pod, next, now, scale),
                    },
                );
                next += 1;
            }
        }
    }
    Some(render(node, count, &model, &held, now))
}

fn requested_gpus(pod: &Value) -> u32 {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| {
            c["resources"]["limits"][GPU]
                .as_str()
                .or(c["resources"]["requests"][GPU].as_str())
        })
        .filter_map(|q| q.parse::<u32>().ok())
        .sum()
}

fn first_gpu_container(pod: &Value) -> &str {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| {
            c["resources"]["limits"][GPU].is_string() || c["resources"]["requests"][GPU].is_string()
        })
        .and_then(|c| c["name"].as_str())
        .unwrap_or_default()
}

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
fn load(pod: &Value, gpu: u32, now: Timestamp, scale: f64) -> Load {
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

/// The families in the order GKE's exporter prints them: name, type, help.
const FAMILIES: [(&str, &str, &str); 12] = [
    (
        "DCGM_FI_DEV_SM_CLOCK",
        "gauge",
        "SM clock frequency (in MHz).",
    ),
    (
        "DCGM_FI_DEV_MEMORY_TEMP",
        "gauge",
        "Memory temperature for the device.",
    ),
    (
        "DCGM_FI_DEV_GPU_TEMP",
        "gauge",
        "Current temperature readings for the device in degrees C.",
    ),
    (
        "DCGM_FI_DEV_POWER_USAGE",
        "gauge",
        "Power usage for the device in Watts.",
    ),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    (
        "DCGM_FI_DEV_MEM_COPY_UTIL",
        "gauge",
        "Memory utilization (in %).",
    ),
    (
        "DCGM_FI_DEV_FB_TOTAL",
        "gauge",
        "Total Frame Buffer of the GPU in MB.",
    ),
    (
        "DCGM_FI_DEV_FB_FREE",
        "gauge",
        "Framebuffer memory free (in MiB).",
    ),
    (
        "DCGM_FI_DEV_FB_USED",
        "gauge",
        "Framebuffer memory used (in MiB).",
    ),
    (
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        "gauge",
        "Ratio of time the graphics engine is active.",
    ),
    (
        "DCGM_FI_PROF_SM_ACTIVE",
        "gauge",
        "The ratio of cycles an SM has at least 1 warp assigned.",
    ),
    (
        "DCGM_FI_PROF_DRAM_ACTIVE",
        "gauge",
        "Ratio of cycles the device memory interface is active sending or receiving data.",
    ),
];

/// A DCGM value as the exporter prints it: `%d` for integer fields, `%f` for doubles.
enum Printed {
    Int(u64),
    Double(f64),
}

fn values(model: &Model, load: Load) -> [Printed; 12] {
    let used = (model.fb_mib as f64 * load.memory).round() as u64;
    let reserved = model.fb_mib / 50;
    let busy = load.busy;
    let clock = if busy > 0.1 {
        model.clocks.1
    } else {
        model.clocks.0
    };
    let power = model.idle_w + (model.max_w - model.idle_w) * busy * 0.92;
    let dram = if load.memory_bound { 0.78 } else { busy * 0.35 };
    [
        Printed::Int(clock),
        Printed::Int((34.0 + 30.0 * busy).round() as u64),
        Printed::Int((31.0 + 45.0 * busy).round() as u64),
        Printed::Double(power),
        Printed::Int((busy * 100.0).round() as u64),
        Printed::Int((dram * 100.0).round() as u64),
        Printed::Int(model.fb_mib),
        Printed::Int(model.fb_mib.saturating_sub(used + reserved)),
        Printed::Int(used),
        Printed::Double(busy * 0.99),
        Printed::Double(busy * 0.91),
        Printed::Double(dram),
    ]
}

/// A UUID that is the same for the same node and GPU.
fn uuid(node: &str, gpu: u32) -> String {
    let h = |salt: u64| {
        node.bytes().fold(salt ^ u64::from(gpu), |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
    };
    let (a, b) = (h(0xcbf2_9ce4_8422_2325), h(0x8422_2325_cbf2_9ce4));
    format!(
        "GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

fn render(
    node: &str,
    count: u32,
    model: &Model,
    held: &HashMap<u32, Holder>,
    _now: Timestamp,
) -> String {
    let rows: Vec<(String, [Printed; 12])> = (0..count)
        .map(|gpu| {
            let mut labels = format!(
                "gpu=\"{gpu}\",UUID=\"{}\",pci_bus_id=\"00000000:{:02X}:00.0\",device=\"nvidia{gpu}\",modelName=\"{}\",Hostname=\"{node}\"",
                uuid(node, gpu),
                4 + gpu,
                model.name,
            );
            let load = match held.get(&gpu) {
                Some(holder) => {
                    let _ = write!(
                        labels,
                        ",container=\"{}\",namespace=\"{}\",pod=\"{}\",pod_uid=\"\"",
                        holder.container,
                        meta::namespace(holder.pod),
                        meta::name(holder.pod)
                    );
                    holder.load
                }
                None => IDLE,
            };
            (labels, values(model, load))
        })
        .collect();
    let mut out = String::new();
    for (i, (name, kind, help)) in FAMILIES.iter().enumerate() {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, values) in &rows {
            let _ = match &values[i] {
                Printed::Int(v) => writeln!(out, "{name}{{{labels}}} {v}"),
                Printed::Double(v) => writeln!(out, "{name}{{{labels}}} {v:.6}"),
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn pod(env: Value, started_secs_ago: i64) -> Value {
        let started = Timestamp::now() - jiff::SignedDuration::from_secs(started_secs_ago);
        json!({"metadata": {"name": "job-1-0-abcde", "namespace": "default"},
            "spec": {"containers": [{"name": "trainer", "env": env,
                "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
            "status": {"containerStatuses": [{"state": {"running": {"startedAt": started.to_string()}}}]}})
    }

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

    #[test]
    fn the_text_is_gkes_with_six_decimal_doubles_and_pod_labels_only_on_held_gpus() {
        let pod = pod(json!([]), 30);
        let mut held = HashMap::new();
        held.insert(
            1,
            Holder {
                pod: &pod,
                container: "trainer",
                load: Load {
                    busy: 0.5,
                    memory: 0.5,
                    memory_bound: false,
                },
            },
        );
        let text = render(
            "gke-c-gpu-pool-1a2b3c4d-x1y2",
            2,
            &model("nvidia-l4"),
            &held,
            Timestamp::now(),
        );
        assert!(text.contains("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"));
        let util: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("DCGM_FI_DEV_GPU_UTIL{"))
            .collect();
        assert_eq!(util.len(), 2);
        assert!(
            util[0].ends_with("Hostname=\"gke-c-gpu-pool-1a2b3c4d-x1y2\"} 0"),
            "{}",
            util[0]
        );
        assert!(util[1].ends_with(",container=\"trainer\",namespace=\"default\",pod=\"job-1-0-abcde\",pod_uid=\"\"} 50"), "{}", util[1]);
        assert!(text.contains("modelName=\"NVIDIA L4\""));
        let power = text
            .lines()
            .find(|l| l.starts_with("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\""))
            .unwrap();
        assert!(power.ends_with(" 16.000000"), "{power}");
        assert_ne!(uuid("n", 0), uuid("n", 1));
        assert_eq!(uuid("n", 0), uuid("n", 0));
    }
}
