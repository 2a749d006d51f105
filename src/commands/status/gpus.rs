//! What the training pods' GPUs are doing, for `gantry status`: the DCGM exporters read once
//! (as the engine's GPU worker reads them each round) when a pod of the Job asks for GPUs, each
//! pod's GPUs under it (`--json`: `accelerators`), or why they cannot be read.

use serde::Serialize;
use serde_json::Value;

use super::job::JobStatus;
use crate::config::Config;
use crate::dcgm::Gpu;
use crate::k8s::gpus::{self, ExporterSource, GpuRead};
use crate::k8s::status::PodSummary;

/// The exporters read once, when a pod of the Job that has not ended asks for GPUs.
pub async fn read(client: &kube::Client, config: &Config, job: &JobStatus) -> Option<GpuRead> {
    let asks = job
        .attempts
        .iter()
        .flat_map(|a| &a.pods)
        .any(|p| p.gpus > 0 && !p.terminated);
    if !asks {
        return None;
    }
    let sources = ExporterSource::sources(config.gpu.exporter().as_ref());
    Some(gpus::read_once(client, &sources).await)
}

/// One GPU as `--json` shows it (`accelerators[]`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Accelerator {
    pub index: u32,
    pub uuid: String,
    pub model: String,
    /// Percent busy: the graphics engine's activity where the exporter has it, else
    /// `GPU_UTIL`.
    pub util: Option<f64>,
    pub mem_used_bytes: Option<u64>,
    pub mem_total_bytes: Option<u64>,
    pub power_w: Option<f64>,
    pub temp_c: Option<f64>,
    /// A MIG instance: its profile and instance id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mig: Option<Value>,
}

impl Accelerator {
    pub fn of(gpu: &Gpu) -> Accelerator {
        let bytes = |mib: f64| (mib * 1024.0 * 1024.0).round() as u64;
        Accelerator {
            index: gpu.index,
            uuid: gpu.uuid.clone(),
            model: gpu.model.clone(),
            util: gpu.activity().map(|a| (a.percent * 10.0).round() / 10.0),
            mem_used_bytes: gpu.fb_used_mib.map(bytes),
            mem_total_bytes: gpu.memory_total_mib().map(bytes),
            power_w: gpu.power_w,
            temp_c: gpu.temp_c,
            mig: gpu
                .mig
                .as_ref()
                .map(|m| serde_json::json!({"profile": m.profile, "instance": m.instance})),
        }
    }
}

/// The GPUs of `pod`, as read.
pub fn of_pod<'a>(read: &'a GpuRead, pod: &'a PodSummary) -> Vec<&'a Gpu> {
    match read {
        GpuRead::Read(reading) => reading
            .gpus()
            .map(|(_, g)| g)
            .filter(|g| g.serves(&pod.namespace, &pod.name))
            .collect(),
        _ => Vec::new(),
    }
}

/// Each pod that asks for GPUs gets `accelerators` in the JSON, and the Job `gpuMetrics`
/// when they cannot be read.
pub fn add_to_json(value: &mut Value, job: &JobStatus, read: &GpuRead) {
    if let GpuRead::Unavailable(why) = read
        && let Some(job) = value.get_mut("job").and_then(Value::as_object_mut)
    {
        job.insert("gpuMetrics".into(), Value::String(why.to_string()));
    }
    let Some(attempts) = value
        .pointer_mut("/job/attempts")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for (attempt, json) in job.attempts.iter().zip(attempts.iter_mut()) {
        let pods = json.get_mut("pods").and_then(Value::as_array_mut);
        for (pod, pod_json) in attempt.pods.iter().zip(pods.into_iter().flatten()) {
            let Some(object) = pod_json.as_object_mut() else {
                continue;
            };
            if pod.gpus == 0 || pod.terminated || !matches!(read, GpuRead::Read(_)) {
                continue;
            }
            let accelerators: Vec<Accelerator> =
                of_pod(read, pod).into_iter().map(Accelerator::of).collect();
            object.insert(
                "accelerators".into(),
                serde_json::to_value(accelerators).unwrap_or_default(),
            );
        }
    }
}
