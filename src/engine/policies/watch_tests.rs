#![allow(clippy::unwrap_used, clippy::expect_used)]

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::*;
use crate::engine::Report;
use crate::engine::policies::Policy;
use crate::k8s::logs::{LogLine, TailEvent};
use crate::k8s::status::{AttemptSummary, PodSummary};
use crate::k8s::watch::{Change, JobWatchEvent};

const JOB: &str = "ml-training-job-1";
const POD: &str = "ml-training-job-1-0-abcde";

fn at(minute: i64) -> Timestamp {
    Timestamp::from_second(1_780_000_000 + minute * 60).unwrap()
}

const THRESHOLDS: Thresholds = Thresholds {
    stall_after: Duration::from_secs(20 * 60),
    waiting_after: Duration::from_secs(15 * 60),
};

fn attempt() -> AttemptSummary {
    AttemptSummary::of(
        &serde_json::from_value(json!({
            "metadata": {"name": JOB, "creationTimestamp": at(0).to_string(),
                "labels": {"gantry.dev/attempt": "1"}},
            "spec": {"completions": 1, "template": {"spec": {"containers": [{"name": "c"}]}}},
            "status": {"active": 1, "startTime": at(0).to_string()},
        }))
        .unwrap(),
    )
}

fn pod(status: Value) -> PodSummary {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": POD, "namespace": "default", "creationTimestamp": at(0).to_string(),
            "labels": {"job-name": JOB}},
        "spec": {"containers": [{"name": "c"}]},
        "status": status,
    }))
    .unwrap();
    PodSummary::of(&pod)
}

fn running_since(minute: i64) -> Value {
    json!({"phase": "Running", "containerStatuses": [{"name": "c", "ready": true,
        "restartCount": 0, "image": "i", "imageID": "",
        "state": {"running": {"startedAt": at(minute).to_string()}}}]})
}

fn model_with(pod_status: Value) -> Watched {
    let mut model = World::default();
    model.apply(Report::Connected);
    model.apply(Report::Job(JobWatchEvent::Job(Change::Applied(attempt()))));
    model.apply(Report::Job(JobWatchEvent::Pod(Change::Applied(pod(
        pod_status,
    )))));
    Watched {
        world: model,
        watch: Watch::default(),
    }
}

fn running_cluster() -> crate::gke::ClusterSummary {
    let target = crate::gke::ClusterRef::new("p", "us-central1-a", "c");
    crate::gke::ClusterSummary {
        status: crate::gke::ClusterStatus::Running,
        node_count: 1,
        create_time: Some(at(0)),
        ..crate::gke::ClusterSummary::not_found(&target, "n1-standard-1")
    }
}

fn lines(model: &mut World, texts: &[&str]) {
    let lines = texts
        .iter()
        .map(|t| LogLine {
            ts: None,
            bytes: bytes::Bytes::copy_from_slice(t.as_bytes()),
            continues: false,
        })
        .collect();
    let generation = model.logs.generation;
    model.apply(Report::Tail {
        generation,
        event: TailEvent::Lines {
            pod: POD.into(),
            lines,
        },
    });
}

/// A world and the watch of the engine that holds it.
struct Watched {
    world: World,
    watch: Watch,
}

impl std::ops::Deref for Watched {
    type Target = World;
    fn deref(&self) -> &World {
        &self.world
    }
}

impl std::ops::DerefMut for Watched {
    fn deref_mut(&mut self) -> &mut World {
        &mut self.world
    }
}

/// What the watch tells at `minute`, the world's headway marked then as the owner marks it.
fn check(model: &mut Watched, minute: i64) -> Vec<Notice> {
    model.world.mark_headway(at(minute));
    let settings = Settings {
        thresholds: THRESHOLDS,
        ..Settings::default()
    };
    let now = Now {
        wall: at(minute),
        mono: std::time::Instant::now(),
    };
    model
        .watch
        .decide(&model.world, &Doing::default(), &settings, now)
        .notices
}

fn news(told: &[Notice]) -> Vec<(Kind, String)> {
    told.iter()
        .filter_map(|n| n.sent_as().map(|k| (k, n.text.clone())))
        .collect()
}

#[test]
fn a_running_attempt_without_a_new_line_for_stall_after_is_told_stalled_once_until_lines_come_again()
 {
    let mut model = model_with(running_since(1));
    lines(&mut model, &["starting"]);
    assert!(check(&mut model, 2).is_empty());
    assert!(
        check(&mut model, 21).is_empty(),
        "20 minutes from the last line, not yet"
    );
    let told = check(&mut model, 23);
    assert_eq!(
        news(&told),
        vec![(
            Kind::Stalled,
            format!("attempt {JOB} stalled: no new log line for 21m")
        )]
    );
    let stalled = told[0].news.as_ref().unwrap();
    assert_eq!(stalled.detail["attempt"], JOB);
    assert!(check(&mut model, 40).is_empty(), "told once");

    lines(&mut model, &["back"]);
    let told = check(&mut model, 41);
    assert_eq!(told.len(), 1);
    assert!(
        told[0].news.is_none(),
        "the end of a stall is for the record"
    );
    assert_eq!(
        told[0].text,
        format!("attempt {JOB} no longer stalled: it makes progress again")
    );
}

#[test]
fn lines_that_flow_without_a_new_step_are_a_stall_too() {
    let mut model = model_with(running_since(1));
    lines(&mut model, &["step=5/100 loss=1.5"]);
    assert!(check(&mut model, 2).is_empty());
    for minute in 3..=21 {
        lines(&mut model, &["waiting for rank 1 (NCCL watchdog)"]);
        assert!(check(&mut model, minute).is_empty(), "minute {minute}");
    }
    lines(&mut model, &["waiting for rank 1 (NCCL watchdog)"]);
    let told = news(&check(&mut model, 22));
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0].1.contains("no new step for 20m (last step 5)"),
        "{told:?}"
    );
}

#[test]
fn a_pod_not_running_after_waiting_after_is_told_once_with_why() {
    let mut model = model_with(
        json!({"phase": "Pending", "conditions": [{"type": "PodScheduled",
        "status": "False", "reason": "Unschedulable",
        "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}]}),
    );
    assert!(model.waits.of(POD).is_some(), "the pod waits");
    assert!(check(&mut model, 10).is_empty());
    let told = check(&mut model, 16);
    let [(event, text)] = &news(&told)[..] else {
        panic!("{told:?}")
    };
    assert_eq!(*event, Kind::Waiting);
    assert!(
        text.starts_with(&format!("pod {POD} not running after 16m: ")),
        "{text}"
    );
    assert!(check(&mut model, 30).is_empty(), "told once");
}

#[test]
fn an_unreachable_cluster_is_news_after_two_minutes_and_its_return_is_for_the_record() {
    let mut model = model_with(running_since(1));
    model.apply(Report::Cluster(running_cluster()));
    lines(&mut model, &["line"]);
    model.apply(Report::Disconnected);
    assert!(news(&check(&mut model, 2)).is_empty());
    let told = check(&mut model, 5);
    let [(event, text)] = &news(&told)[..] else {
        panic!("{told:?}")
    };
    assert_eq!(*event, Kind::Cluster);
    assert!(text.starts_with("cluster unreachable for 3m"), "{text}");
    assert!(news(&check(&mut model, 6)).is_empty());
    model.apply(Report::Connected);
    let told = check(&mut model, 7);
    assert!(
        told.iter()
            .any(|n| n.text == "cluster reachable again after 5m" && n.news.is_none()),
        "{told:?}"
    );
}
