#![allow(clippy::unwrap_used)]

use super::*;
use crate::dcgm::PodRef;
use crate::k8s::gpus::NodeGpus;

fn reading(secs: i64, busy: f64) -> GpuRead {
    let gpu = |index: u32, pod: &str| Gpu {
        index,
        uuid: format!("GPU-{index}"),
        pods: vec![PodRef {
            namespace: "default".into(),
            pod: pod.into(),
            container: "c".into(),
        }],
        util_percent: Some(busy),
        fb_used_mib: Some(2048.0),
        fb_total_mib: Some(16384.0),
        power_w: Some(50.0),
        ..Gpu::default()
    };
    GpuRead::Read(Reading {
        at: jiff::Timestamp::from_second(1_800_000_000 + secs).unwrap(),
        nodes: vec![NodeGpus {
            node: "n".into(),
            exporter: "gke-managed-system/dcgm-exporter-x".into(),
            gpus: vec![gpu(0, "train-0"), gpu(1, "train-0"), gpu(2, "someone-else")],
            per_gpu_hour: None,
        }],
    })
}

fn training(_namespace: &str, pod: &str) -> bool {
    pod.starts_with("train-")
}

#[test]
fn a_pods_gpus_are_summed_and_its_series_kept_for_training_pods_alone() {
    let mut gpus = Gpus::default();
    let (changed, told) = gpus.apply(reading(0, 40.0), training);
    assert!(changed && told.is_none());
    gpus.apply(reading(10, 60.0), training);
    let summary = gpus.pod_summary("default", "train-0").unwrap();
    assert_eq!(summary.count, 2);
    assert_eq!(summary.busy_percent, Some(60.0));
    assert_eq!(
        (summary.used_mib, summary.total_mib),
        (Some(4096.0), Some(32768.0))
    );
    assert_eq!(summary.power_w, Some(100.0));
    assert!(gpus.pod_summary("other", "train-0").is_none());
    let series = &gpus.series["train-0"];
    let util: Vec<(f64, f64)> = series.util.points().map(|p| (p.x, p.y)).collect();
    assert_eq!(util, vec![(1.8e9, 40.0), (1.8e9 + 10.0, 60.0)]);
    assert_eq!(series.memory.latest().unwrap().y, 4.0);
    assert!(!gpus.series.contains_key("someone-else"));
    assert_eq!(gpus.series_names(["train-0"]), &SERIES);
    assert!(gpus.series_names(["someone-else"]).is_empty());
}

#[test]
fn unavailable_is_told_once_per_reason_and_reading_again_is_told_too() {
    let mut gpus = Gpus::default();
    let (_, told) = gpus.apply(GpuRead::Unavailable(Unavailable::NoExporter), training);
    let told = told.unwrap();
    assert_eq!(told.kind, Kind::GpuMetrics);
    assert_eq!(told.severity, Severity::Warning);
    assert!(
        told.text
            .starts_with("GPU metrics n/a: no DCGM exporter found")
    );
    assert!(gpus.unavailable());
    let (_, again) = gpus.apply(GpuRead::Unavailable(Unavailable::NoExporter), training);
    assert!(again.is_none(), "said once");
    let forbidden = Unavailable::Forbidden("forbidden to get pods/proxy in namespace x".into());
    let (_, other) = gpus.apply(GpuRead::Unavailable(forbidden), training);
    assert!(other.unwrap().text.contains("pods/proxy"));
    let (_, back) = gpus.apply(reading(0, 1.0), training);
    assert_eq!(back.unwrap().severity, Severity::Info);
    let (changed, _) = gpus.apply(GpuRead::Stopped, training);
    assert!(changed);
    assert_eq!(gpus.state, GpuState::Unknown);
    assert!(gpus.pod_summary("default", "train-0").is_none());
}
