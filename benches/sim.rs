//! How much the simulated cloud holds and how fast it streams, over HTTPS on loopback:
//! - 10,000 pods on 100 × n1-standard-16 nodes: list them all (raw and through `kube`), a watch
//!   delivering one change while they are there, and the memory they hold (RSS, printed);
//! - logs: a finished pod's 1,000,000 lines read in one request, and a follow of a pod that logs
//!   as fast as the simulator can (`SIM_LINES_PER_SECOND=0`), in lines per second.
//!
//! `cargo bench --bench sim`. The pods are created in the cluster's state (admission included),
//! not over HTTP, so the setup stays short; every measurement goes through the HTTPS API.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::sim::kube::cluster::{ClusterSpec, ClusterState, DEFAULT_VERSION, NodePoolSpec};
use gantry::sim::kube::lifecycle::{self, DeleteOptions};
use gantry::sim::kube::resources::Kind;
use gantry::sim::{SimCloud, SimOptions};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

const PODS: usize = 10_000;
const BIG_LOG_LINES: u64 = 1_000_000;
const FOLLOW_LINES: u64 = 500_000;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Resident and peak memory of this process, from /proc/self/status.
fn memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .map(|l| l[name.len()..].trim().to_string())
            .unwrap_or_else(|| "?".into())
    };
    format!("VmRSS {} (VmHWM {})", field("VmRSS:"), field("VmHWM:"))
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

struct Sim {
    cloud: SimCloud,
    state: Arc<ClusterState>,
    base: String,
    http: reqwest::Client,
    kube: kube::Client,
}

impl Sim {
    async fn start(time_scale: f64, nodes: u32) -> Self {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let cloud = SimCloud::start(SimOptions {
            time_scale,
            ..Default::default()
        })
        .await
        .expect("simulated cloud starts");
        let spec = ClusterSpec {
            project: DEMO_PROJECT.into(),
            location: DEMO_LOCATION.into(),
            name: "bench".into(),
            version: DEFAULT_VERSION.into(),
            node_pools: vec![NodePoolSpec {
                name: "big-pool".into(),
                machine_type: "n1-standard-16".into(),
                nodes_per_zone: nodes,
                zones: vec![DEMO_LOCATION.into()],
                accelerator: None,
                labels: BTreeMap::new(),
                taints: Vec::new(),
                spot: false,
                disk_size_gb: 100,
                disk_type: "pd-balanced".into(),
            }],
        };
        cloud
            .gke()
            .create_running(spec)
            .await
            .expect("cluster runs");
        let runtime = cloud
            .cluster(DEMO_PROJECT, DEMO_LOCATION, "bench")
            .expect("cluster runtime");
        let base = format!("https://{}", runtime.endpoint());
        let state = runtime.state().clone();
        let cert = reqwest::Certificate::from_pem(cloud.ca_pem().as_bytes()).expect("CA");
        let http = reqwest::Client::builder()
            .tls_certs_only([cert])
            .build()
            .expect("https client");
        let kube = gantry_test_support::kube_client_for(&cloud, &runtime.endpoint());
        Self {
            cloud,
            state,
            base,
            http,
            kube,
        }
    }

    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.http
            .get(format!("{}{path}", self.base))
            .bearer_auth(self.cloud.token())
    }

    fn create_pod(&self, name: &str, env: &[(&str, &str)]) {
        let env: Vec<Value> = env
            .iter()
            .map(|(k, v)| json!({"name": k, "value": v}))
            .collect();
        let pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": "bench"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{
                    "name": "train",
                    "image": "us-docker.pkg.dev/gantry-bench/train:1",
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                    "env": env,
                }],
            },
        });
        lifecycle::create(&self.state, Kind::Pod, Some("default"), pod).expect("pod created");
    }

    fn count_phase(&self, phase: &str) -> usize {
        self.state
            .store
            .list(Kind::Pod, Some("default"), |p| {
                p.pointer("/status/phase").and_then(Value::as_str) == Some(phase)
            })
            .0
            .len()
    }

    async fn wait_phase(&self, phase: &str, n: usize, limit: Duration) {
        let started = Instant::now();
        while self.count_phase(phase) < n {
            if started.elapsed() > limit {
                let (pods, _) = self.state.store.list(Kind::Pod, Some("default"), |p| {
                    p.pointer("/status/phase").and_then(Value::as_str) != Some(phase)
                });
                let sample: Vec<&Value> = pods.iter().take(2).map(|p| p.as_ref()).collect();
                panic!(
                    "only {} of {n} pods {phase} after {limit:?}; others: {sample:#?}",
                    self.count_phase(phase)
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Reads a response body to its end; returns (bytes, newline count).
async fn drain(mut response: reqwest::Response) -> (usize, u64) {
    let (mut bytes, mut lines) = (0, 0u64);
    while let Some(chunk) = response.chunk().await.expect("body chunk") {
        bytes += chunk.len();
        lines += chunk.iter().filter(|b| **b == b'\n').count() as u64;
    }
    (bytes, lines)
}

/// An open watch on pods, read line by line.
struct WatchReader {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl WatchReader {
    /// Reads events until one carries `resourceVersion` `rv`.
    async fn until_rv(&mut self, rv: u64) {
        let needle = format!("\"resourceVersion\":\"{rv}\"");
        loop {
            while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                if line.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                    return;
                }
            }
            let chunk = self
                .response
                .chunk()
                .await
                .expect("watch chunk")
                .expect("the watch stays open");
            self.buffer.extend_from_slice(&chunk);
        }
    }
}

fn pods(c: &mut Criterion) {
    let rt = runtime();
    let rss_before = rss_kib();
    println!("\n[sim] before the cluster: {}", memory());
    let sim = rt.block_on(Sim::start(0.01, 100));
    println!("[sim] cluster of 100 x n1-standard-16 up: {}", memory());
    // Pods that run for hours, writing a line about every wall second.
    let started = Instant::now();
    for i in 0..PODS {
        sim.create_pod(
            &format!("held-{i:05}"),
            &[
                ("SIM_LOG_LINES", "100000"),
                ("SIM_LINES_PER_SECOND", "0.01"),
            ],
        );
    }
    let created = started.elapsed();
    rt.block_on(sim.wait_phase("Running", PODS, Duration::from_secs(120)));
    let running = started.elapsed();
    let events = sim.state.store.count(Kind::Event);
    let rss_after = rss_kib();
    println!(
        "[sim] {PODS} pods created in {created:.2?}, all Running after {running:.2?} ({events} events stored)"
    );
    println!(
        "[sim] holding {PODS} running pods: {} — {:.1} MiB more than before the cluster, {:.1} KiB per pod",
        memory(),
        (rss_after.saturating_sub(rss_before)) as f64 / 1024.0,
        (rss_after.saturating_sub(rss_before)) as f64 / PODS as f64
    );

    let list_path = "/api/v1/namespaces/default/pods";
    let (bytes, _) = rt.block_on(async {
        let response = sim.get(list_path).send().await.expect("list");
        assert!(response.status().is_success());
        drain(response).await
    });
    println!(
        "[sim] a list of {PODS} pods is {:.1} MiB of JSON",
        bytes as f64 / 1048576.0
    );

    let mut group = c.benchmark_group("pods_10k");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.measurement_time(Duration::from_secs(8));
    group.warm_up_time(Duration::from_secs(1));
    group.throughput(Throughput::Elements(PODS as u64));
    group.bench_function("list_https_raw", |b| {
        b.to_async(&rt).iter(|| async {
            let response = sim.get(list_path).send().await.expect("list");
            let (n, _) = drain(response).await;
            assert_eq!(n, bytes);
        })
    });
    group.bench_function("list_kube_typed", |b| {
        let api: kube::Api<k8s_openapi::api::core::v1::Pod> =
            kube::Api::default_namespaced(sim.kube.clone());
        b.to_async(&rt).iter(|| async {
            let list = api.list(&Default::default()).await.expect("list");
            assert_eq!(list.items.len(), PODS);
        })
    });
    group.finish();

    let mut group = c.benchmark_group("watch_10k");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    group.warm_up_time(Duration::from_secs(1));
    // A change made in the store, seen on a watch that is already open over HTTPS.
    let rv = sim.state.store.current_rv();
    let mut watch = rt.block_on(async {
        let response = sim
            .get(&format!("{list_path}?watch=true&resourceVersion={rv}"))
            .send()
            .await
            .expect("watch");
        assert!(response.status().is_success());
        WatchReader {
            response,
            buffer: Vec::new(),
        }
    });
    let mut tick = 0u64;
    group.bench_function("one_change_delivered", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    tick += 1;
                    let name = format!("held-{:05}", tick % PODS as u64);
                    let started = Instant::now();
                    let changed = sim
                        .state
                        .store
                        .update(Kind::Pod, "default", &name, |p| {
                            p["metadata"]["annotations"]["bench/tick"] = json!(tick.to_string());
                        })
                        .expect("pod updated");
                    let rv = gantry::sim::kube::store::rv_of(&changed).expect("rv");
                    watch.until_rv(rv).await;
                    total += started.elapsed();
                }
                total
            })
        })
    });
    // The same, end to end: a client patches a pod over HTTPS, another sees it on its watch.
    group.bench_function("patch_then_watch", |b| {
        let api: kube::Api<k8s_openapi::api::core::v1::Pod> =
            kube::Api::default_namespaced(sim.kube.clone());
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    tick += 1;
                    let name = format!("held-{:05}", tick % PODS as u64);
                    let patch =
                        json!({"metadata": {"annotations": {"bench/tick": tick.to_string()}}});
                    let started = Instant::now();
                    let pod = api
                        .patch(
                            &name,
                            &kube::api::PatchParams::default(),
                            &kube::api::Patch::Merge(&patch),
                        )
                        .await
                        .expect("patched");
                    let rv: u64 = pod
                        .metadata
                        .resource_version
                        .expect("rv")
                        .parse()
                        .expect("numeric rv");
                    watch.until_rv(rv).await;
                    total += started.elapsed();
                }
                total
            })
        })
    });
    // A new watch from "0": every pod as ADDED first, then the change.
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.measurement_time(Duration::from_secs(8));
    group.throughput(Throughput::Elements(PODS as u64));
    group.bench_function("initial_events_10k", |b| {
        b.to_async(&rt).iter(|| async {
            let mut response = sim
                .get(&format!(
                    "{list_path}?watch=true&resourceVersion=0&timeoutSeconds=60"
                ))
                .send()
                .await
                .expect("watch");
            let mut seen = 0;
            while seen < PODS {
                let chunk = response.chunk().await.expect("chunk").expect("open");
                seen += chunk.iter().filter(|b| **b == b'\n').count();
            }
        })
    });
    group.finish();
    drop(watch);
    println!("[sim] after the pod benchmarks: {}", memory());
    sim.cloud.shutdown();
    drop(sim);
    drop(rt);
}

fn logs(c: &mut Criterion) {
    let rt = runtime();
    let sim = rt.block_on(Sim::start(0.001, 3));
    let started = Instant::now();
    let lines = BIG_LOG_LINES.to_string();
    sim.create_pod(
        "big-log",
        &[
            ("SIM_LOG_LINES", lines.as_str()),
            ("SIM_LINES_PER_SECOND", "0"),
        ],
    );
    rt.block_on(sim.wait_phase("Succeeded", 1, Duration::from_secs(120)));
    println!(
        "\n[sim] a pod wrote {BIG_LOG_LINES} lines and finished in {:.2?}: {}",
        started.elapsed(),
        memory()
    );
    let path = "/api/v1/namespaces/default/pods/big-log/log";
    let (bytes, n) = rt.block_on(async { drain(sim.get(path).send().await.expect("log")).await });
    assert_eq!(n, BIG_LOG_LINES);
    println!(
        "[sim] its log is {:.1} MiB ({} bytes a line)",
        bytes as f64 / 1048576.0,
        bytes as u64 / n
    );

    let mut group = c.benchmark_group("logs");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.measurement_time(Duration::from_secs(10));
    group.warm_up_time(Duration::from_secs(1));
    group.throughput(Throughput::Elements(BIG_LOG_LINES));
    group.bench_function("read_finished_1m_lines", |b| {
        b.to_async(&rt).iter(|| async {
            let (_, n) = drain(sim.get(path).send().await.expect("log")).await;
            assert_eq!(n, BIG_LOG_LINES);
        })
    });
    group.bench_function("read_finished_1m_lines_timestamps", |b| {
        b.to_async(&rt).iter(|| async {
            let (_, n) = drain(
                sim.get(&format!("{path}?timestamps=true"))
                    .send()
                    .await
                    .expect("log"),
            )
            .await;
            assert_eq!(n, BIG_LOG_LINES);
        })
    });
    // From the pod's creation to the last line of a follow: scheduling, image pull (scaled to
    // a few milliseconds) and a workload writing as fast as it can, streamed as it writes.
    group.throughput(Throughput::Elements(FOLLOW_LINES));
    let follow_lines = FOLLOW_LINES.to_string();
    let mut round = 0u64;
    group.bench_function("follow_fastest_writer", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    round += 1;
                    let name = format!("follow-{round}");
                    let started = Instant::now();
                    sim.create_pod(
                        &name,
                        &[
                            ("SIM_LOG_LINES", follow_lines.as_str()),
                            ("SIM_LINES_PER_SECOND", "0"),
                        ],
                    );
                    let url = format!("/api/v1/namespaces/default/pods/{name}/log?follow=true");
                    let response = loop {
                        let r = sim.get(&url).send().await.expect("log");
                        if r.status().is_success() {
                            break r;
                        }
                        // 400 while the container is still being created.
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    };
                    let (_, n) = drain(response).await;
                    total += started.elapsed();
                    assert_eq!(n, FOLLOW_LINES);
                    lifecycle::delete(
                        &sim.state,
                        Kind::Pod,
                        "default",
                        &name,
                        &DeleteOptions {
                            grace_seconds: Some(0),
                            ..Default::default()
                        },
                    )
                    .expect("pod deleted");
                }
                total
            })
        })
    });
    group.finish();
    println!("[sim] after the log benchmarks: {}", memory());
    sim.cloud.shutdown();
    drop(sim);
    drop(rt);
}

criterion_group!(benches, pods, logs);
criterion_main!(benches);
