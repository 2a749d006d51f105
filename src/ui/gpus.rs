//! How the GPUs' figures are written in the panes: a pod's GPUs in one cell (`93% 71G/80G`),
//! each of the selected pod's GPUs on its line, and the cluster's (`GPU 6/8 busy · 412 W`).

use crate::dcgm::Gpu;
use crate::engine::World;
use crate::engine::world::gpus::{GpuState, PodGpus};
use crate::k8s::status::PodSummary;

/// GiB, as short as reads well: `71G`, `7.5G`.
fn gib(mib: f64) -> String {
    let g = mib / 1024.0;
    if g >= 9.95 {
        format!("{g:.0}G")
    } else {
        format!("{g:.1}G")
    }
}

/// `93% 71G/80G` (what is known of it), `n/a` when the GPUs cannot be read, None when not read.
pub fn pod_cell(model: &World, pod: &PodSummary) -> Option<String> {
    if model.gpus.unavailable() && pod.gpus > 0 {
        return Some("n/a".into());
    }
    let PodGpus {
        busy_percent,
        used_mib,
        total_mib,
        ..
    } = model.gpus.pod_summary(&pod.namespace, &pod.name)?;
    let busy = busy_percent.map_or("-".to_string(), |b| format!("{b:.0}%"));
    let memory = match (used_mib, total_mib) {
        (Some(used), Some(total)) => format!(" {}/{}", gib(used), gib(total)),
        (Some(used), None) => format!(" {}", gib(used)),
        _ => String::new(),
    };
    Some(format!("{busy}{memory}"))
}

/// One GPU: `GPU 0 93% 71G/80G 312W 64°C`.
pub fn one(gpu: &Gpu) -> String {
    let mut out = format!("GPU {}", gpu.index);
    if let Some(mig) = &gpu.mig {
        out.push_str(&format!(" ({} #{})", mig.profile, mig.instance));
    }
    if let Some(a) = gpu.activity() {
        out.push_str(&format!(" {:.0}%", a.percent));
    }
    match (gpu.fb_used_mib, gpu.memory_total_mib()) {
        (Some(used), Some(total)) => out.push_str(&format!(" {}/{}", gib(used), gib(total))),
        (Some(used), None) => out.push_str(&format!(" {}", gib(used))),
        _ => {}
    }
    if let Some(w) = gpu.power_w {
        out.push_str(&format!(" {w:.0}W"));
    }
    if let Some(t) = gpu.temp_c {
        out.push_str(&format!(" {t:.0}°C"));
    }
    out
}

/// The selected pod's GPUs, each: `GPU 0 93% 71G/80G 312W 64°C · GPU 1 …`.
pub fn pod_line(model: &World, pod: &PodSummary) -> Option<String> {
    let gpus: Vec<String> = model
        .gpus
        .of_pod(&pod.namespace, &pod.name)
        .map(|(_, g)| one(g))
        .collect();
    (!gpus.is_empty()).then(|| gpus.join(" · "))
}

/// `GPU 6/8 busy · 412 W` of every GPU read (busy: at least `busy_from` percent, the idle
/// guard's threshold, its default when the guard is off), `GPU n/a` when they cannot be read,
/// None when not read.
pub fn cluster_part(model: &World, busy_from: f64) -> Option<String> {
    let busy_from = if busy_from > 0.0 {
        busy_from
    } else {
        crate::config::DEFAULT_GPU_IDLE_BELOW
    };
    let reading = match &model.gpus.state {
        GpuState::Unknown => return None,
        GpuState::Unavailable(_) => return Some("GPU n/a".into()),
        GpuState::Known(reading) => reading,
    };
    let gpus: Vec<&Gpu> = reading.gpus().map(|(_, g)| g).collect();
    if gpus.is_empty() {
        return None;
    }
    let busy = gpus
        .iter()
        .filter(|g| g.activity().is_some_and(|a| a.percent >= busy_from))
        .count();
    let power: f64 = gpus.iter().filter_map(|g| g.power_w).sum();
    Some(format!("GPU {busy}/{} busy · {power:.0} W", gpus.len()))
}
