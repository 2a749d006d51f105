//! Every recorded exporter output of `tests/dcgm_samples/` read, each GPU mapped to its pod.
//! Each file's first line says where it was recorded; the table below repeats its source.
#![allow(clippy::unwrap_used)]

use super::*;

/// A sample file's text, and its source as its `# source:` line names it.
fn sample(file: &str, source: &str) -> Vec<Gpu> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/dcgm_samples")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("# source:") && first.contains(source),
        "{file}: its source line names {source}"
    );
    read(&text).unwrap()
}

fn pod(namespace: &str, pod: &str, container: &str) -> PodRef {
    PodRef {
        namespace: namespace.into(),
        pod: pod.into(),
        container: container.into(),
    }
}

fn pods_of(gpus: &[Gpu]) -> Vec<(u32, Option<String>, Vec<&str>)> {
    gpus.iter()
        .map(|g| {
            let instance = g.mig.as_ref().map(|m| m.instance.clone());
            (
                g.index,
                instance,
                g.pods.iter().map(|p| p.pod.as_str()).collect(),
            )
        })
        .collect()
}

#[test]
fn gke_managed_h100s_two_allocated_six_not_each_with_memory_power_and_temperature() {
    // elideng-sg/hypercomputer-internode-deepdive assets/lab-10/dcgm-metrics-raw.txt @ 8af85188…
    let gpus = sample(
        "gke-managed-4.4.1-4.6.0-gke.17-h100-allocated-and-idle.prom",
        "elideng-sg/hypercomputer-internode-deepdive assets/lab-10/dcgm-metrics-raw.txt @ 8af85188fc3772c4d18ecd84989b8a6c3686caf8",
    );
    assert_eq!(gpus.len(), 8);
    let vllm = pod("inference", "qwen3-vllm-b76697d85-krs4j", "vllm");
    for g in &gpus {
        let allocated = g.index == 5 || g.index == 6;
        assert_eq!(
            g.pods,
            if allocated {
                vec![vllm.clone()]
            } else {
                vec![]
            }
        );
        assert_eq!(g.model, "NVIDIA H100 80GB HBM3");
        assert_eq!(g.memory_total_mib(), Some(81559.0));
    }
    let five = &gpus[5];
    assert_eq!(five.uuid, "GPU-3a5cd185-7c5c-e8d4-6b75-d416612adc6a");
    assert_eq!(five.fb_used_mib, Some(77581.0));
    assert_eq!(five.power_w, Some(126.601));
    assert_eq!(five.temp_c, Some(35.0));
    // GPU_UTIL reads 0 here and so does the graphics engine: the engine is what is judged.
    let activity = five.activity().unwrap();
    assert_eq!(
        (activity.percent, activity.signal),
        (0.0, Signal::GrEngineActive)
    );
    assert!(five.serves("inference", "qwen3-vllm-b76697d85-krs4j"));
    assert!(!five.serves("default", "qwen3-vllm-b76697d85-krs4j"));
}

#[test]
fn a_gpu_operator_l4_with_no_pod_is_unallocated_and_its_size_is_used_free_and_reserved() {
    let gpus = sample(
        "dcgm4x-gpu-operator-kops-l4-unallocated.prom",
        "cncf/k8s-ai-conformance v1.35/kops/tests/TestObservability_AcceleratorMetrics_ViaDCGM/output.md @ 83cdb76aa420efb6dc45e1d35f20ba75dd222776",
    );
    let [l4] = gpus.as_slice() else {
        panic!("{gpus:?}")
    };
    assert!(l4.pods.is_empty());
    assert_eq!(l4.model, "NVIDIA L4");
    assert_eq!(l4.memory_total_mib(), Some(22563.0 + 470.0));
    assert_eq!(l4.power_w, Some(16.365));
    assert_eq!(l4.temp_c, Some(31.0));
}

#[test]
fn a_busy_gpu_without_pod_labels_is_not_idle_whichever_counter_is_low() {
    let gpus = sample(
        "dcgm4x-gpu-operator-dra-t4-busy-no-pod-labels.prom",
        "cncf/k8s-ai-conformance v1.35/ericsson-ccd/accelerator_metrics.md @ 6a7089506dd6329a6c252d15a50176b56d019331",
    );
    let [t4] = gpus.as_slice() else {
        panic!("{gpus:?}")
    };
    assert!(t4.pods.is_empty(), "allocated through DRA: not mapped");
    assert_eq!(t4.util_percent, Some(91.0));
    let activity = t4.activity().unwrap();
    assert_eq!(activity.signal, Signal::GrEngineActive);
    assert!((activity.percent - 15.6205).abs() < 1e-9);
    assert_eq!(t4.idle(5.0), None, "GPU_UTIL says 91 %");
    assert_eq!(
        t4.idle(95.0).map(|a| a.signal),
        Some(Signal::GrEngineActive)
    );
}

#[test]
fn lowercase_hostname_and_a_mig_instance_with_a_pod_beside_a_whole_gpu_without() {
    let gpus = sample(
        "dcgm4x-hostname-lowercase-mig-pod_PR736.prom",
        "NVIDIA/dcgm-exporter pull request #736",
    );
    assert_eq!(
        pods_of(&gpus),
        vec![
            (1, None, vec![]),
            (2, Some("3".into()), vec!["triton-server-f7cb5d77-95xcf"]),
        ]
    );
    assert_eq!(gpus[1].mig.as_ref().unwrap().profile, "1g.6gb");
    assert_eq!(
        gpus[1].pods,
        vec![pod(
            "default",
            "triton-server-f7cb5d77-95xcf",
            "triton-server"
        )]
    );
    assert_eq!(gpus[1].fb_free_mib, Some(2207.0));
    assert_eq!(
        gpus[1].fb_used_mib, None,
        "a missing field is no figure, not 0"
    );
    assert_eq!(gpus[1].memory_total_mib(), None);
}

#[test]
fn dcgm_3x_outputs_with_and_without_pci_bus_id_map_their_pods() {
    let l40s = sample(
        "dcgm3x-3.3.9-3.6.1-gpu-operator-24.9.2-l40s-pods_DCGM-issue226.prom",
        "NVIDIA/DCGM issue #226",
    );
    assert_eq!(
        pods_of(&l40s),
        vec![
            (0, None, vec!["tensorflow-0"]),
            (1, None, vec!["tensorflow-0"]),
            (2, None, vec![]),
        ]
    );
    let a5000 = sample(
        "dcgm3x-3.4.2-helm-no-pod-labels_issue363.prom",
        "NVIDIA/dcgm-exporter issue #363",
    );
    let [a5000] = a5000.as_slice() else { panic!() };
    assert_eq!(
        (a5000.util_percent, a5000.fb_used_mib),
        (Some(0.0), Some(21383.0))
    );
    assert!(a5000.pods.is_empty());
}

#[test]
fn mig_instances_are_gpus_of_their_own_under_their_parents_index() {
    let a30 = sample(
        "dcgm3x-mig-a30-no-pci_bus_id_issue317.prom",
        "NVIDIA/dcgm-exporter issue #317",
    );
    assert!(a30.iter().all(|g| g.mig.is_some() && g.pods.is_empty()));
    let gpu0: Vec<&str> = a30
        .iter()
        .filter(|g| g.index == 0)
        .map(|g| g.mig.as_ref().unwrap().instance.as_str())
        .collect();
    assert_eq!(gpu0, vec!["3", "4", "5", "6"]);
    let h100 = sample(
        "mig-h100-pods-gr-engine_issue512.prom",
        "NVIDIA/dcgm-exporter issue #512",
    );
    assert_eq!(
        pods_of(&h100),
        vec![
            (
                0,
                Some("7".into()),
                vec!["text-embedding-predictor-00008-deployment-57946f6c67-vdtjl"]
            ),
            (0, Some("8".into()), vec![]),
            (
                0,
                Some("9".into()),
                vec!["tts-predictor-00011-deployment-5554f75554-8j8pl"]
            ),
        ]
    );
    let mixed = sample(
        "mig-and-whole-gpus-mixed-memory-temp_issue512.prom",
        "NVIDIA/dcgm-exporter issue #512",
    );
    assert_eq!(
        pods_of(&mixed),
        vec![
            (0, Some("1".into()), vec![]),
            (0, Some("2".into()), vec![]),
            (1, None, vec!["ollama-76f687f4cd-xcvvp"]),
            (2, None, vec!["ollama-76f687f4cd-xcvvp"]),
            (3, None, vec!["ollama-76f687f4cd-xcvvp"]),
        ]
    );
}

#[test]
fn legacy_and_empty_pod_labels_are_read_and_an_empty_one_is_no_pod() {
    let legacy = sample(
        "legacy-use-old-namespace-mig-empty-pod_name_issue272.prom",
        "NVIDIA/dcgm-exporter issue #272",
    );
    assert_eq!(legacy.len(), 3);
    assert!(legacy.iter().all(|g| g.pods.is_empty()));
    assert_eq!(legacy[0].uuid, "GPU-ed1353d6-52ba-8793-7230-4d5d3eb68167");
    assert_eq!(legacy[0].gr_engine_active, Some(0.0));
    let titan = sample(
        "dcgm2x-empty-pod-labels-titan-v_issue58.prom",
        "NVIDIA/dcgm-exporter issue #58",
    );
    assert_eq!(titan.len(), 5);
    assert!(titan.iter().all(|g| g.pods.is_empty()));
}

#[test]
fn a_shared_gpu_takes_its_device_series_never_a_sum_and_nan_or_a_blank_is_no_figure() {
    let gpus = sample(
        "derived-time-sliced-legacy-nan.prom",
        "NVIDIA/dcgm-exporter @ d5e5f510a1b6b393f39a43293ccd9dc985defc79",
    );
    let [shared, legacy] = gpus.as_slice() else {
        panic!("{gpus:?}")
    };
    assert_eq!(
        shared.pods,
        vec![
            pod("team-a", "sweep-a-0-abcde", "trainer"),
            pod("team-a", "sweep-b-0-fghij", "trainer"),
        ]
    );
    assert_eq!(shared.util_percent, Some(61.0));
    assert_eq!(shared.fb_used_mib, Some(9000.0));
    assert_eq!(shared.memory_total_mib(), Some(15360.0));
    assert_eq!(shared.power_w, Some(41.5), "only per pod: the highest");
    assert_eq!(
        legacy.pods,
        vec![pod("team-b", "legacy-job-0-klmno", "trainer")]
    );
    assert_eq!(legacy.uuid, "GPU-9f8e7d6c-0000-1111-2222-333344445555");
    assert_eq!(legacy.util_percent, None, "NaN");
    assert_eq!(legacy.power_w, None, "+Inf");
    assert_eq!(legacy.temp_c, None, "DCGM's blank");
    assert_eq!(legacy.activity(), None);
    assert_eq!(legacy.idle(5.0), None, "no counter: not judged idle");
}

#[test]
fn a_gpu_drawing_working_power_is_not_idle_when_its_limit_is_known() {
    let text = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA L4\"} 0\n\
                DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA L4\"} 60.000000\n\
                DCGM_FI_DEV_ENFORCED_POWER_LIMIT{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA L4\"} 72.000000\n";
    let gpus = read(text).unwrap();
    assert_eq!(gpus[0].idle(5.0), None);
    let cool = text.replace("60.000000", "16.365000");
    let gpus = read(&cool).unwrap();
    assert_eq!(gpus[0].idle(5.0).map(|a| a.signal), Some(Signal::GpuUtil));
}

#[test]
fn text_that_is_not_an_exporters_is_an_error_not_a_panic() {
    assert!(read("<html>403 Forbidden</html>\n").is_err());
    assert_eq!(read("").unwrap(), Vec::new());
}
