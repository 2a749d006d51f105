#![allow(clippy::unwrap_used, clippy::expect_used)]

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use super::job::AttemptStatus;
use super::*;
use crate::gke::ClusterRef;
use crate::gke::summary::PoolSummary;
use crate::meter::NodeSeen;

fn now() -> Timestamp {
    "2026-12-05T12:00:00Z".parse().unwrap()
}

fn ago(minutes: i64) -> Timestamp {
    now() - SignedDuration::from_mins(minutes)
}

fn summary() -> ClusterSummary {
    let target = ClusterRef::new("demo-project", "us-central1-a", "ml-gke-cluster");
    ClusterSummary {
        status: ClusterStatus::Running,
        node_count: 3,
        node_pools: vec![PoolSummary::running("default-pool", "n1-standard-1", 3)],
        create_time: Some(ago(120)),
        ..ClusterSummary::not_found(&target, "n1-standard-1")
    }
}

fn nodes(machine: &str) -> cost::Nodes {
    let seen: Vec<NodeSeen> = (0..3)
        .map(|i| {
            NodeSeen::of(
                &serde_json::from_value(json!({"metadata": {
                    "name": format!("node-{i}"), "uid": format!("uid-{i}"),
                    "creationTimestamp": ago(120).to_string(),
                    "labels": {"cloud.google.com/gke-nodepool": "default-pool",
                        "node.kubernetes.io/instance-type": machine,
                        "topology.kubernetes.io/region": "us-central1"}}}))
                .unwrap(),
            )
        })
        .collect();
    cost::Nodes::of(&summary(), &seen, now())
}

fn job(recorded: Option<&str>) -> JobStatus {
    let mut annotations = json!({"gantry.dev/run-attempt": "1"});
    if let Some(text) = recorded {
        annotations["gantry.dev/cost"] = json!(text);
    }
    let attempt = AttemptStatus::of(
        &serde_json::from_value(json!({
            "metadata": {"name": "ml-training-job", "creationTimestamp": ago(60).to_string(),
                "labels": {"gantry.dev/attempt": "1", "gantry.dev/run": "r1"},
                "annotations": annotations},
            "spec": {"template": {}},
            "status": {"active": 1, "ready": 1},
        }))
        .unwrap(),
        Vec::new(),
    );
    JobStatus {
        name: "ml-training-job".into(),
        namespace: "default".into(),
        attempts: vec![attempt],
        run_id: Some("r1".into()),
        recoveries: Some(0),
        recoverer: None,
        recoverer_silent: false,
        watcher: None,
        error: None,
    }
}

fn json_of(cluster: ClusterReport, job: JobStatus, nodes: Result<&cost::Nodes, String>) -> Value {
    let run_cost = Some(match nodes {
        Ok(n) => Ok(n.run_cost(&job, now()).unwrap()),
        Err(e) => Err(e),
    });
    let report = StatusReport {
        cluster,
        job: Some(job),
        logs_dir: None,
        waiting: Default::default(),
        run_cost,
    };
    with_run_cost(with_waiting(&report, now()), &report)
}

use serde_json::Value;

fn gke(nodes: &cost::Nodes) -> ClusterReport {
    let mut cluster = GkeCluster::new(summary());
    cluster.metered(Ok(nodes), now());
    ClusterReport::Gke(Box::new(cluster))
}

/// Three n1-standard-1 with 100 GB pd-balanced each, and the fee, per hour.
const PER_HOUR: f64 = 0.1 + 3.0 * (0.0475 + 100.0 * 0.1 / 730.0);

#[test]
fn the_clusters_cost_so_far_is_the_meters_and_partial_without_a_watch() {
    let nodes = nodes("n1-standard-1");
    let json = json_of(gke(&nodes), job(None), Ok(&nodes));
    let cluster = &json["cluster"];
    assert_eq!(cluster["costPerHour"], 0.2836, "{cluster}");
    let so_far = cluster["costSoFar"].as_f64().unwrap();
    assert!((so_far - 2.0 * PER_HOUR).abs() < 1e-6, "{cluster}");
    assert_eq!(cluster["costSoFarPartial"], true);
    assert!(cluster.get("costUnknown").is_none(), "{cluster}");
}

#[test]
fn the_runs_cost_is_in_job_with_since_as_of_and_partial() {
    let nodes = nodes("n1-standard-1");
    let json = json_of(gke(&nodes), job(None), Ok(&nodes));
    let job = &json["job"];
    let usd = job["costSoFar"].as_f64().unwrap();
    assert!((usd - PER_HOUR).abs() < 1e-6, "{job}");
    assert_eq!(job["costSoFarPartial"], true, "nobody watched: {job}");
    assert_eq!(job["costSince"], ago(60).to_string());
    assert_eq!(job["costAsOf"], now().to_string());
    assert!(job.get("costUnknown").is_none());
}

#[test]
fn the_runs_cost_carries_on_from_what_an_engine_recorded() {
    let recorded = format!(
        r#"{{"version":1,"usd":2.5,"asOf":"{}","since":"{}","partial":false,"nodes":3}}"#,
        ago(1),
        ago(60)
    );
    let nodes = nodes("n1-standard-1");
    let mut recording = job(Some(&recorded));
    recording.recoverer = Some("alice@ops pid 7".into());
    let json = json_of(gke(&nodes), recording, Ok(&nodes));
    let job = &json["job"];
    let usd = job["costSoFar"].as_f64().unwrap();
    assert!((usd - (2.5 + PER_HOUR / 60.0)).abs() < 1e-6, "{job}");
    assert_eq!(
        job["costSoFarPartial"], false,
        "an engine holds the Lease and recorded a minute ago: {job}"
    );
    assert_eq!(job["costRecordedAsOf"], ago(1).to_string());
    assert_eq!(job["costSince"], ago(60).to_string());
}

#[test]
fn an_unpriced_machine_type_is_null_with_why_never_zero() {
    let nodes = nodes("n9-imaginary-1");
    let json = json_of(gke(&nodes), job(None), Ok(&nodes));
    assert_eq!(json["job"]["costSoFar"], Value::Null, "{json:#}");
    assert!(
        json["job"]["costUnknown"]
            .as_str()
            .unwrap()
            .contains("no price"),
        "{json:#}"
    );
    assert_eq!(json["cluster"]["costSoFar"], Value::Null, "{json:#}");
}

#[test]
fn a_context_has_no_cost_and_says_so() {
    let context = ClusterReport::Context(ContextSummary {
        name: "gke_demo_training".into(),
        server: "https://34.118.12.7".into(),
        version: "1.33.2".into(),
        node_count: 3,
        status: ContextStatus::Running,
        error: None,
    });
    let why = meter_nodes(&context, None, now()).err().unwrap();
    let json = json_of(context, job(None), Err(why));
    assert_eq!(json["job"]["costSoFar"], Value::Null);
    assert_eq!(
        json["job"]["costUnknown"],
        "unavailable: a kubeconfig context's nodes are not priced"
    );
}

#[test]
fn a_node_gone_since_the_record_makes_the_runs_cost_partial_until_it_is_recorded() {
    let recorded = format!(
        r#"{{"version":1,"usd":2.5,"asOf":"{}","since":"{}","partial":false,"nodes":4}}"#,
        ago(1),
        ago(60)
    );
    let nodes = nodes("n1-standard-1");
    let mut recording = job(Some(&recorded));
    recording.recoverer = Some("alice@ops pid 7".into());
    let json = json_of(gke(&nodes), recording, Ok(&nodes));
    assert_eq!(json["job"]["costSoFarPartial"], true, "{:#}", json["job"]);
}
