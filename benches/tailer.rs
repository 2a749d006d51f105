//! The log tailer end to end against the in-process simulator: 8 pods of one Job logging as fast
//! as the simulator can (`SIM_LINES_PER_SECOND=0`), followed through `LogTail` over HTTPS with
//! every line saved to disk, as `gantry logs --follow` and the TUI do. Lines per second from the
//! first line received to the last stream's end.
//!
//! `cargo bench --bench tailer`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use gantry::k8s::logs::{LogTail, StreamEnd, TailEvent, TailOptions, TailTarget};
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::sim::kube::cluster::ClusterState;
use gantry::sim::kube::lifecycle;
use gantry::sim::kube::resources::Kind;
use gantry::sim::{SimCloud, SimOptions};
use serde_json::json;
use tokio::runtime::Runtime;

const PODS: usize = 8;
const LINES_PER_POD: u64 = 50_000;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

struct Sim {
    cloud: SimCloud,
    state: std::sync::Arc<ClusterState>,
    kube: kube::Client,
}

impl Sim {
    async fn start() -> Self {
        gantry_test_support::init();
        let cloud = SimCloud::start(SimOptions {
            time_scale: 0.001,
            clusters: vec![gantry_test_support::CLUSTER.into()],
            ..Default::default()
        })
        .await
        .expect("simulated cloud starts");
        let runtime = cloud
            .cluster(DEMO_PROJECT, DEMO_LOCATION, gantry_test_support::CLUSTER)
            .expect("cluster runs");
        let kube = gantry_test_support::kube_client_for(&cloud, &runtime.endpoint());
        let state = runtime.state().clone();
        Self { cloud, state, kube }
    }

    /// The pods of one "Job" (labelled as the Job controller labels them), created in the store.
    fn create_pods(&self, job: &str) {
        for i in 0..PODS {
            let pod = json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": format!("{job}-{i}"), "labels": {"job-name": job}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": "ml-training-container",
                        "image": "us-docker.pkg.dev/gantry-bench/train:1",
                        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
                        "env": [
                            {"name": "SIM_LOG_LINES", "value": LINES_PER_POD.to_string()},
                            {"name": "SIM_LINES_PER_SECOND", "value": "0"},
                            {"name": "RANK", "value": i.to_string()},
                            {"name": "WORLD_SIZE", "value": PODS.to_string()},
                        ],
                    }],
                },
            });
            lifecycle::create(&self.state, Kind::Pod, Some("default"), pod).expect("pod created");
        }
    }
}

/// Follows one Job's 8 pods to their end; returns (lines, time from the first line to the end).
async fn follow(sim: &Sim, job: &str, dir: &std::path::Path) -> (u64, Duration) {
    let mut tail = LogTail::follow(
        sim.kube.clone(),
        TailTarget {
            namespace: "default".into(),
            job: job.into(),
            container: None,
        },
        TailOptions {
            save_dir: Some(dir.to_path_buf()),
            ..TailOptions::default()
        },
    );
    sim.create_pods(job);
    let mut lines = 0u64;
    let mut first: Option<Instant> = None;
    let mut ended = 0;
    while ended < PODS {
        match tail.next().await.expect("the tail goes on") {
            TailEvent::Lines { lines: batch, .. } => {
                first.get_or_insert_with(Instant::now);
                lines += batch.iter().filter(|l| !l.continues).count() as u64;
            }
            TailEvent::PodEnded { pod, why } => {
                assert_eq!(why, StreamEnd::Completed, "{pod}");
                ended += 1;
            }
            TailEvent::SaveFailed { pod, error } => panic!("{pod}: {error}"),
            _ => {}
        }
    }
    let took = first.map(|f| f.elapsed()).unwrap_or_default();
    tail.handle().cancel();
    (lines, took)
}

fn tailer(c: &mut Criterion) {
    let rt = runtime();
    let sim = rt.block_on(Sim::start());
    let dir = tempfile::tempdir().expect("temp dir");
    let mut run = 0u32;
    let mut next_job = || {
        run += 1;
        format!("bench-{run}")
    };
    // One run outside criterion, to print the figure plainly.
    let job = next_job();
    let (lines, took) = rt.block_on(follow(&sim, &job, dir.path()));
    assert_eq!(lines, PODS as u64 * LINES_PER_POD);
    println!(
        "[tailer] {PODS} pods × {LINES_PER_POD} lines: {lines} lines in {took:.2?} = {:.0} lines/s",
        lines as f64 / took.as_secs_f64()
    );

    let mut group = c.benchmark_group("tailer_8_pods");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.measurement_time(Duration::from_secs(20));
    group.warm_up_time(Duration::from_secs(1));
    group.throughput(Throughput::Elements(PODS as u64 * LINES_PER_POD));
    group.bench_function("follow_as_fast_as_the_sim_emits", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let job = next_job();
                let (lines, took) = rt.block_on(follow(&sim, &job, dir.path()));
                assert_eq!(lines, PODS as u64 * LINES_PER_POD);
                total += took;
            }
            total
        })
    });
    group.finish();
    sim.cloud.shutdown();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    tailer(&mut c);
    c.final_summary();
}
