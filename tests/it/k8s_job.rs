//! The training Job against the simulated cluster: launch, watch, retry, delete, and the
//! failures an operator must see with their reasons.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::collections::HashMap;

use gantry::config::JobConfig;
use gantry::k8s::logs::{LogTail, StreamEnd, TailEvent, TailOptions, TailTarget};
use gantry::k8s::manifest::Overrides;
use gantry::k8s::status::{AttemptPhase, AttemptSummary, EventSummary, PodSummary};
use gantry::k8s::watch::{Change, JobWatchEvent, spawn_job_watchers};
use gantry::k8s::{self, manifest};
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::sim::kube::cluster::ClusterSpec;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, Service};
use kube::api::{Api, ListParams};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn job_config(name: &str, env: &[(&str, &str)]) -> JobConfig {
    let mut cfg = JobConfig {
        name: name.into(),
        labels: [("job".to_string(), format!("{name}-training"))].into(),
        ..JobConfig::default()
    };
    for (k, v) in env {
        cfg.env.insert(k.to_string(), v.to_string());
    }
    cfg
}

/// The watchers' events folded into the latest view, as the TUI would keep it.
struct Watch {
    rx: mpsc::Receiver<JobWatchEvent>,
    jobs: HashMap<String, AttemptSummary>,
    pods: HashMap<String, PodSummary>,
    events: Vec<EventSummary>,
    _cancel: tokio_util::sync::DropGuard,
}

fn watch(client: &kube::Client, cfg: &JobConfig) -> Watch {
    let (tx, rx) = mpsc::channel(256);
    let cancel = CancellationToken::new();
    let mut set = spawn_job_watchers(client.clone(), cfg, tx, cancel.clone());
    // The JoinSet aborts its tasks when dropped: let them run until cancelled.
    tokio::spawn(async move { while set.join_next().await.is_some() {} });
    Watch {
        rx,
        jobs: HashMap::new(),
        pods: HashMap::new(),
        events: Vec::new(),
        _cancel: cancel.drop_guard(),
    }
}

impl Watch {
    async fn next(&mut self) {
        match self.rx.recv().await.expect("watchers run") {
            JobWatchEvent::Job(Change::Applied(j) | Change::Listed(j)) => {
                self.jobs.insert(j.name.clone(), j);
            }
            JobWatchEvent::Job(Change::Deleted(j)) => {
                self.jobs.remove(&j.name);
            }
            JobWatchEvent::Pod(Change::Applied(p) | Change::Listed(p)) => {
                self.pods.insert(p.name.clone(), p);
            }
            JobWatchEvent::Pod(Change::Deleted(p)) => {
                self.pods.remove(&p.name);
            }
            JobWatchEvent::Event(Change::Applied(e) | Change::Listed(e)) => self.events.push(e),
            _ => {}
        }
    }

    async fn job_until(&mut self, pred: impl Fn(&AttemptSummary) -> bool) -> AttemptSummary {
        loop {
            if let Some(j) = self.jobs.values().find(|j| pred(j)) {
                return j.clone();
            }
            self.next().await;
        }
    }

    async fn pod_until(&mut self, pred: impl Fn(&PodSummary) -> bool) -> PodSummary {
        loop {
            if let Some(p) = self.pods.values().find(|p| pred(p)) {
                return p.clone();
            }
            self.next().await;
        }
    }

    async fn event_until(&mut self, pred: impl Fn(&EventSummary) -> bool) -> EventSummary {
        loop {
            if let Some(e) = self.events.iter().find(|e| pred(e)) {
                return e.clone();
            }
            self.next().await;
        }
    }
}

async fn all_lines(client: &kube::Client, cfg: &JobConfig, job: &str) -> Vec<(String, Vec<u8>)> {
    let mut tail = LogTail::follow(
        client.clone(),
        TailTarget {
            namespace: cfg.namespace.clone(),
            job: job.into(),
            container: Some(cfg.container.clone()),
        },
        TailOptions {
            follow: false,
            ..TailOptions::default()
        },
    );
    let mut out = Vec::new();
    while let Some(event) = tail.next().await {
        if let TailEvent::Lines { pod, lines } = event {
            out.extend(lines.into_iter().map(|l| (pod.clone(), l.bytes.to_vec())));
        }
    }
    out
}

#[tokio::test]
async fn a_successful_run_is_watched_to_the_end() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let cfg = job_config("ml-training-job", &[("SIM_LOG_LINES", "20")]);
    let mut w = watch(&client, &cfg);
    let launched = k8s::launch(&client, &cfg, Some("demo-project"))
        .await
        .unwrap();
    assert_eq!(
        (launched.job.as_str(), launched.attempt),
        ("ml-training-job", 1)
    );
    let pod = w.pod_until(|p| p.phase == "Running").await;
    assert_eq!(pod.job, "ml-training-job");
    assert_eq!(pod.attempt, Some(1));
    let done = w.job_until(|j| j.status.is_finished()).await;
    assert_eq!(done.status, AttemptPhase::Succeeded);
    assert_eq!(done.succeeded, 1);

    // Everything Gantry made carries its labels; the pods carry the seed's.
    let job: Job = Api::default_namespaced(client.clone())
        .get("ml-training-job")
        .await
        .unwrap();
    let labels = job.metadata.labels.unwrap();
    assert_eq!(labels["app.kubernetes.io/managed-by"], "gantry");
    assert_eq!(labels["gantry.dev/attempt"], "1");
    let spec = job.spec.unwrap();
    assert_eq!(spec.backoff_limit, Some(2));
    let pod_spec = spec.template.spec.unwrap();
    assert_eq!(pod_spec.restart_policy.as_deref(), Some("Never"));
    assert_eq!(pod_spec.containers[0].name, "ml-training-container");
    assert_eq!(
        pod_spec.containers[0].image.as_deref(),
        Some("gcr.io/demo-project/ml-training-job:latest")
    );

    let lines = all_lines(&client, &cfg, "ml-training-job").await;
    assert_eq!(lines.len(), 20);
    assert!(lines[0].1.starts_with(b"[rank 0/1] starting training"));

    // A second launch while nothing runs is the next attempt; status lists both, oldest first.
    let status =
        serde_json::to_value(gantry::commands::status::job::job_status(&client, &cfg).await)
            .unwrap();
    assert_eq!(status["attempts"][0]["status"], "Succeeded");
    assert_eq!(status["attempts"][0]["pods"][0]["exitCode"], 0);
    assert!(
        status["attempts"][0]["pods"][0]["node"]
            .as_str()
            .unwrap()
            .starts_with("gke-")
    );
}

#[tokio::test]
async fn backoff_limit_exhausted_then_retry_with_an_override_succeeds() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let cfg = job_config(
        "ml-training-job",
        &[("SIM_FAIL_ATTEMPTS", "5"), ("SIM_LOG_LINES", "10")],
    );
    let mut w = watch(&client, &cfg);
    k8s::launch(&client, &cfg, Some("demo-project"))
        .await
        .unwrap();
    let failed = w.job_until(|j| j.status.is_finished()).await;
    assert_eq!(failed.status, AttemptPhase::Failed);
    assert_eq!(failed.reason.as_deref(), Some("BackoffLimitExceeded"));
    assert_eq!(failed.failed, 3);
    w.event_until(|e| e.reason == "BackoffLimitExceeded" && e.object == "ml-training-job")
        .await;

    let overrides = Overrides {
        env: vec![("SIM_FAIL_ATTEMPTS".into(), "0".into())],
        ..Default::default()
    };
    let retried = k8s::retry(&client, &cfg, &overrides).await.unwrap();
    assert_eq!(
        (retried.job.as_str(), retried.attempt),
        ("ml-training-job-2", 2)
    );
    let done = w
        .job_until(|j| j.name == "ml-training-job-2" && j.status.is_finished())
        .await;
    assert_eq!(done.status, AttemptPhase::Succeeded);
    assert_eq!(done.attempt, Some(2));

    // The failed attempt and its three pods stay for their logs.
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let old = pods
        .list(&ListParams::default().labels("job-name=ml-training-job"))
        .await
        .unwrap();
    assert_eq!(old.items.len(), 3);
    let lines = all_lines(&client, &cfg, "ml-training-job").await;
    assert!(
        lines
            .iter()
            .any(|(_, l)| l.starts_with(b"RuntimeError: simulated failure"))
    );

    let status =
        serde_json::to_value(gantry::commands::status::job::job_status(&client, &cfg).await)
            .unwrap();
    let attempts = status["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0]["status"], "Failed");
    assert_eq!(attempts[0]["reason"], "BackoffLimitExceeded");
    assert_eq!(attempts[0]["pods"].as_array().unwrap().len(), 3);
    assert_eq!(attempts[0]["pods"][0]["exitCode"], 1);
    assert_eq!(attempts[1]["name"], "ml-training-job-2");
    assert_eq!(attempts[1]["status"], "Succeeded");

    // Delete without a name: every attempt; their pods go with them (background propagation).
    let deleted = k8s::delete(&client, &cfg, None, "test").await.unwrap();
    assert_eq!(deleted.jobs, ["ml-training-job", "ml-training-job-2"]);
    while !w.pods.is_empty() || !w.jobs.is_empty() {
        w.next().await;
    }
    let left = pods
        .list(&ListParams::default().labels("job=ml-training-job-training"))
        .await
        .unwrap();
    assert!(left.items.is_empty());
}

#[tokio::test]
async fn image_pull_backoff_and_failed_scheduling_are_reported() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let mut bad = job_config("bad-image", &[]);
    bad.image = Some("gcr.io/demo-project/does-not-exist:v1".into());
    let mut w = watch(&client, &bad);
    k8s::launch(&client, &bad, None).await.unwrap();
    let pod = w
        .pod_until(|p| p.reason.as_deref() == Some("ImagePullBackOff"))
        .await;
    assert_eq!(pod.phase, "Pending");
    assert!(!pod.started);
    // A second launch is refused while the first waits; a retry with the right image is not.
    let again = k8s::launch(&client, &bad, None).await.unwrap_err();
    assert!(again.to_string().contains("still pending"), "{again}");
    let fixed = Overrides {
        image: Some("gcr.io/demo-project/ml-training-job:v2".into()),
        env: vec![("SIM_LOG_LINES".into(), "5".into())],
        ..Default::default()
    };
    k8s::retry(&client, &bad, &fixed).await.unwrap();
    w.job_until(|j| j.name == "bad-image-2" && j.status == AttemptPhase::Succeeded)
        .await;

    let mut huge = job_config("too-big", &[]);
    huge.resources.cpu = Some("64".into());
    let mut w = watch(&client, &huge);
    k8s::launch(&client, &huge, Some("demo-project"))
        .await
        .unwrap();
    let pod = w
        .pod_until(|p| p.reason.as_deref() == Some("Unschedulable"))
        .await;
    assert!(pod.message.unwrap().contains("Insufficient cpu"));
    let event = w.event_until(|e| e.reason == "FailedScheduling").await;
    assert_eq!(event.type_, "Warning");
    assert_eq!(event.kind, "Pod");
}

#[tokio::test]
async fn oom_killed_then_retry_with_more_memory_succeeds() {
    // 8Gi does not fit the seed's n1-standard-1 nodes: a cluster of bigger ones.
    let cloud = common::cloud_with(gantry::sim::SimOptions {
        time_scale: 0.01,
        ..Default::default()
    })
    .await;
    let mut spec = ClusterSpec::seed(DEMO_PROJECT, DEMO_LOCATION, "big-nodes");
    spec.node_pools[0].machine_type = "e2-standard-4".into();
    cloud.gke().create_running(spec).await.unwrap();
    let endpoint = cloud
        .cluster(DEMO_PROJECT, DEMO_LOCATION, "big-nodes")
        .unwrap()
        .endpoint();
    let client = common::kube_client_for(&cloud, &endpoint);
    let mut cfg = job_config(
        "ml-training-job",
        &[("SIM_OOM", "4Gi"), ("SIM_LOG_LINES", "10")],
    );
    cfg.resources.memory = Some("1Gi".into());
    cfg.backoff_limit = 0;
    let mut w = watch(&client, &cfg);
    k8s::launch(&client, &cfg, Some("demo-project"))
        .await
        .unwrap();
    let pod = w
        .pod_until(|p| p.reason.as_deref() == Some("OOMKilled"))
        .await;
    assert_eq!(pod.exit_code, Some(137));
    w.job_until(|j| j.status == AttemptPhase::Failed).await;
    let more = Overrides {
        memory: Some("8Gi".into()),
        ..Default::default()
    };
    let retried = k8s::retry(&client, &cfg, &more).await.unwrap();
    let done = w
        .job_until(|j| j.name == retried.job && j.status.is_finished())
        .await;
    assert_eq!(done.status, AttemptPhase::Succeeded);
    let job: Job = Api::default_namespaced(client.clone())
        .get(&retried.job)
        .await
        .unwrap();
    let limits = job.spec.unwrap().template.spec.unwrap().containers[0]
        .resources
        .clone()
        .unwrap()
        .limits
        .unwrap();
    assert_eq!(limits["memory"].0, "8Gi");
}

#[tokio::test]
async fn an_indexed_job_of_four_workers_logs_from_every_rank() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let mut cfg = job_config("ml-training-job", &[("SIM_LOG_LINES", "30")]);
    manifest::apply_launch_flags(&mut cfg, &Overrides::default(), Some(4), Some(4), true);
    let dir = tempfile::tempdir().unwrap();
    let launched = k8s::launch(&client, &cfg, Some("demo-project"))
        .await
        .unwrap();
    assert_eq!(launched.service.as_deref(), Some("ml-training-job-workers"));
    let svc: Service = Api::default_namespaced(client.clone())
        .get("ml-training-job-workers")
        .await
        .unwrap();
    assert_eq!(svc.spec.unwrap().cluster_ip.as_deref(), Some("None"));

    let mut tail = LogTail::follow(
        client.clone(),
        TailTarget {
            namespace: "default".into(),
            job: launched.job.clone(),
            container: Some(cfg.container.clone()),
        },
        TailOptions {
            save_dir: Some(dir.path().to_path_buf()),
            ..TailOptions::default()
        },
    );
    let mut ended = Vec::new();
    let mut lines: std::collections::HashMap<String, Vec<Vec<u8>>> = Default::default();
    while ended.len() < 4 {
        match tail.next().await.unwrap() {
            TailEvent::Lines { pod, lines: l } => lines
                .entry(pod)
                .or_default()
                .extend(l.into_iter().map(|l| l.bytes.to_vec())),
            TailEvent::PodEnded { pod, why } => {
                assert_eq!(why, StreamEnd::Completed, "{pod}");
                ended.push(pod);
            }
            _ => {}
        }
    }
    let mut ranks: Vec<String> = lines
        .values()
        .map(|l| {
            assert_eq!(l.len(), 30);
            String::from_utf8_lossy(&l[0][..11]).to_string()
        })
        .collect();
    ranks.sort();
    assert_eq!(
        ranks,
        ["[rank 0/4] ", "[rank 1/4] ", "[rank 2/4] ", "[rank 3/4] "]
    );
    for pod in &ended {
        let saved = std::fs::read(dir.path().join(format!("{pod}.log"))).unwrap();
        assert_eq!(saved.iter().filter(|b| **b == b'\n').count(), 30);
    }

    // The launcher env points every worker at rank 0 of this attempt.
    let job: Job = Api::default_namespaced(client.clone())
        .get(&launched.job)
        .await
        .unwrap();
    let spec = job.spec.unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    let pod_spec = spec.template.spec.unwrap();
    assert_eq!(
        pod_spec.subdomain.as_deref(),
        Some("ml-training-job-workers")
    );
    let env = pod_spec.containers[0].env.clone().unwrap();
    let value = |k: &str| {
        env.iter()
            .find(|e| e.name == k)
            .and_then(|e| e.value.clone())
    };
    assert_eq!(
        value("MASTER_ADDR").as_deref(),
        Some("ml-training-job-0.ml-training-job-workers")
    );
    assert_eq!(value("WORLD_SIZE").as_deref(), Some("4"));
    assert_eq!(value("MASTER_PORT").as_deref(), Some("29500"));

    // Deleting every attempt takes the Service too.
    let deleted = k8s::delete(&client, &cfg, None, "test").await.unwrap();
    assert_eq!(deleted.services, ["ml-training-job-workers"]);
}
