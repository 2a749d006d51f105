//! What reading the GPUs costs: 64 DCGM exporters of 8 H100s each (a node pool of
//! a3-highgpu-8g, one training pod holding each node's GPUs), each read through the simulated
//! API server's pod proxy over HTTPS, as the engine's GPU worker reads them every 10 s:
//! - `gpus/read_64_exporters_x_8_gpus`: one round, wall time (`k8s::gpus::read`, 8 at a time);
//! - `gpus/parse_one_exporter_8_gpus`: one exporter's text into GPUs (`dcgm::read`) alone;
//! - printed: the process's CPU time per round over a number of rounds, and that as a share of
//!   one core at one round every 10 s. The simulated API server and its exporters run in this
//!   process too, so the figure is an upper bound on Gantry's own share.
//!
//! `cargo bench --bench gpus`. That nothing is read while no screen shows the GPUs and no guard
//! needs them is a test (`tests/it/gpu_e2e.rs`), not a measure.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use gantry::k8s::gpus::{self, ExporterSource, GpuRead};
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::sim::kube::cluster::{ClusterSpec, DEFAULT_VERSION, NodePoolSpec};
use gantry::sim::kube::lifecycle;
use gantry::sim::kube::resources::Kind;
use gantry::sim::{SimCloud, SimOptions};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

const NODES: u32 = 64;
const GPUS_PER_NODE: u32 = 8;
/// How often the engine reads the exporters.
const ROUND_EVERY: Duration = gpus::POLL;
/// Rounds over which the CPU time is measured.
const CPU_ROUNDS: u32 = 30;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// This process's CPU time (user and system), from /proc/self/stat.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command (which may hold spaces) in its parentheses.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are the 14th and 15th fields; `rest` starts at the 3rd. Linux counts
    // them in USER_HZ, 100 a second on every architecture it runs on.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

fn pool(name: &str, machine: &str, nodes: u32, accelerator: Option<(String, u32)>) -> NodePoolSpec {
    NodePoolSpec {
        name: name.into(),
        machine_type: machine.into(),
        nodes_per_zone: nodes,
        zones: vec![DEMO_LOCATION.into()],
        accelerator,
        labels: BTreeMap::new(),
        taints: Vec::new(),
        spot: false,
        disk_size_gb: 100,
        disk_type: "pd-balanced".into(),
    }
}

/// The cluster, a training pod on each GPU node, every exporter running; a client for it.
async fn cluster() -> (SimCloud, kube::Client) {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let cloud = SimCloud::start(SimOptions {
        time_scale: 0.001,
        ..Default::default()
    })
    .await
    .expect("simulated cloud starts");
    cloud
        .gke()
        .create_running(ClusterSpec {
            project: DEMO_PROJECT.into(),
            location: DEMO_LOCATION.into(),
            name: "bench".into(),
            version: DEFAULT_VERSION.into(),
            node_pools: vec![
                pool("default-pool", "n1-standard-1", 1, None),
                pool(
                    "gpu-pool",
                    "a3-highgpu-8g",
                    NODES,
                    Some(("nvidia-h100-80gb".into(), GPUS_PER_NODE)),
                ),
            ],
        })
        .await
        .expect("cluster runs");
    let runtime = cloud
        .cluster(DEMO_PROJECT, DEMO_LOCATION, "bench")
        .expect("cluster runtime");
    let state = runtime.state().clone();
    for i in 0..NODES {
        let pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": format!("train-{i:02}"), "labels": {"app": "bench"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{
                    "name": "train",
                    "image": "us-docker.pkg.dev/gantry-bench/train:1",
                    "resources": {"limits": {"nvidia.com/gpu": GPUS_PER_NODE.to_string()}},
                    "env": [{"name": "SIM_LOG_LINES", "value": "1000000"},
                            {"name": "SIM_LINES_PER_SECOND", "value": "0.001"}],
                }],
            },
        });
        lifecycle::create(&state, Kind::Pod, Some("default"), pod).expect("pod created");
    }
    let running = |ns: &str| {
        state
            .store
            .list(Kind::Pod, Some(ns), |p| {
                p.pointer("/status/phase").and_then(Value::as_str) == Some("Running")
            })
            .0
            .len()
    };
    let started = Instant::now();
    while running("default") < NODES as usize || running("gke-managed-system") < NODES as usize {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "pods and exporters not all running"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let client = gantry_test_support::kube_client_for(&cloud, &runtime.endpoint());
    (cloud, client)
}

fn read(c: &mut Criterion) {
    let rt = runtime();
    let (cloud, client) = rt.block_on(cluster());
    let exporters = rt
        .block_on(gpus::discover(&client, &ExporterSource::sources(None)))
        .expect("exporters found");
    assert_eq!(exporters.len(), NODES as usize);
    let prices = HashMap::new();
    let round = || async {
        match gpus::read(&client, &exporters, &prices).await {
            GpuRead::Read(reading) => reading,
            other => panic!("{other:?}"),
        }
    };
    let reading = rt.block_on(round());
    let gpus = reading.gpus().count();
    let held = reading.gpus().filter(|(_, g)| !g.pods.is_empty()).count();
    assert_eq!((gpus, held), ((NODES * GPUS_PER_NODE) as usize, gpus));
    let text = rt
        .block_on(gpus::scrape::fetch(&client, &exporters[0]))
        .expect("text");
    println!(
        "\n[gpus] {NODES} exporters x {GPUS_PER_NODE} GPUs: one exporter's text is {:.1} KiB",
        text.len() as f64 / 1024.0
    );

    let before = (cpu_time(), Instant::now());
    for _ in 0..CPU_ROUNDS {
        rt.block_on(round());
    }
    let cpu = (cpu_time() - before.0) / CPU_ROUNDS;
    let wall = before.1.elapsed() / CPU_ROUNDS;
    println!(
        "[gpus] one round: {wall:.2?} wall, {cpu:.2?} of CPU (this process: Gantry and the simulated API server with its exporters)"
    );
    println!(
        "gpu_read_cpu_percent_of_a_core_at_one_round_per_10s: {:.3}",
        cpu.as_secs_f64() / ROUND_EVERY.as_secs_f64() * 100.0
    );

    let mut group = c.benchmark_group("gpus");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.bench_function("read_64_exporters_x_8_gpus", |b| {
        b.to_async(&rt).iter(round)
    });
    group.sample_size(50);
    group.bench_function("parse_one_exporter_8_gpus", |b| {
        b.iter(|| gantry::dcgm::read(&text).expect("read"))
    });
    group.finish();
    cloud.shutdown();
    drop(rt);
}

criterion_group!(benches, read);
criterion_main!(benches);
