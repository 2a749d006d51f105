//! What an exporter prints for its node: each GPU's counters in DCGM's names, HELP and label
//! sets as GKE's managed exporter (4.4.1-4.6.0-gke.17) prints them — `Hostname` the node's name,
//! a GPU held by a pod with `container`, `namespace`, `pod` and an empty `pod_uid`, one held by
//! none without them; doubles with six decimals, integers as integers. Each GPU's figures are
//! its load (`load`): the pod holding it as its work goes, zero once it ends.

use std::collections::HashMap;
use std::fmt::Write;

use jiff::Timestamp;
use serde_json::Value;

use super::load::{IDLE, Load, Model, load, model};
use super::{ACCELERATOR_LABEL, GPU, gpus_of};
use crate::kube::cluster::ClusterState;
use crate::kube::controllers::kubelet::is_terminal;
use crate::kube::meta;
use crate::kube::resources::Kind;

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
    use crate::kube::dcgm::training_pod as pod;
    use serde_json::json;

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
