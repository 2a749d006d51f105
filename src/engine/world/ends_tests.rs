#![allow(clippy::unwrap_used, clippy::expect_used)]

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use crate::engine::Report;
use crate::engine::world::World;
use crate::k8s::status::PodSummary;
use crate::k8s::watch::{Change, JobWatchEvent};
use crate::vocabulary::Kind;
use crate::vocabulary::ends::Class;

fn pod(name: &str, status: Value) -> PodSummary {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default", "labels": {"job-name": "train"}},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c",
            "resources": {"requests": {"cpu": "1"}}}]},
        "status": status,
    }))
    .unwrap();
    PodSummary::of(&pod)
}

fn reclaimed() -> Value {
    json!({
        "phase": "Failed",
        "reason": "Terminated",
        "conditions": [{"type": "DisruptionTarget", "status": "True",
            "reason": "TerminationByKubelet", "lastTransitionTime": "2026-12-05T10:05:00Z"}],
        "containerStatuses": [{"name": "c", "ready": false, "restartCount": 0, "image": "i",
            "imageID": "", "state": {"terminated": {"exitCode": 143, "reason": "Error",
            "startedAt": "2026-12-05T10:00:00Z", "finishedAt": "2026-12-05T10:05:00Z"}}}],
    })
}

/// What folding a pod's change told, and the ends it kept for the ledger.
struct Seen {
    told: Vec<crate::engine::notice::Notice>,
    record: Vec<crate::ends::ledger::Entry>,
}

fn applied(model: &mut World, change: Change<PodSummary>) -> Seen {
    let before = model.ends.seen().count();
    let told = model.apply(Report::Job(JobWatchEvent::Pod(change))).told;
    let record = model.ends.seen().skip(before).cloned().collect();
    Seen { told, record }
}

#[test]
fn a_preempted_pod_is_told_once_as_a_preemption_and_recorded_once() {
    let mut model = World::default();
    applied(
        &mut model,
        Change::Applied(pod("train-a", json!({"phase": "Running"}))),
    );
    let first = applied(&mut model, Change::Applied(pod("train-a", reclaimed())));
    let kinds: Vec<Kind> = first.told.iter().map(|n| n.kind).collect();
    assert_eq!(kinds, vec![Kind::Preempted], "{:?}", first.told);
    assert!(
        first.told[0].text.contains("preempted"),
        "{}",
        first.told[0].text
    );
    assert_eq!(first.record.len(), 1);
    let entry = &first.record[0];
    assert_eq!(
        (entry.job.as_str(), entry.end.class),
        ("train", Class::Preempted)
    );
    assert_eq!(entry.end.ran_seconds, 300);
    assert_eq!(entry.requests.cpu_millis, 1000);
    // The same pod again (a status update, a relist): nothing new.
    let again = applied(&mut model, Change::Applied(pod("train-a", reclaimed())));
    assert!(again.record.is_empty() && again.told.is_empty());
    let gone = applied(&mut model, Change::Deleted(pod("train-a", reclaimed())));
    assert!(gone.record.is_empty());
}

#[test]
fn a_running_pod_deleted_outside_gantry_ends_as_deleted() {
    let mut model = World::default();
    applied(
        &mut model,
        Change::Applied(pod("train-b", json!({"phase": "Running"}))),
    );
    let gone = applied(
        &mut model,
        Change::Deleted(pod("train-b", json!({"phase": "Running"}))),
    );
    assert_eq!(gone.record.len(), 1);
    assert_eq!(gone.record[0].end.class, Class::Deleted);
    assert_eq!(gone.record[0].end.detail, "deleted outside Gantry");
}

#[test]
fn a_pod_that_vanished_while_the_watch_was_down_ends_at_the_relist() {
    let mut model = World::default();
    applied(
        &mut model,
        Change::Applied(pod("train-c", json!({"phase": "Running"}))),
    );
    applied(&mut model, Change::Restarted);
    let synced = applied(&mut model, Change::Synced);
    assert_eq!(synced.record.len(), 1);
    assert_eq!(synced.record[0].end.pod, "train-c");
}

#[test]
fn a_pod_that_cannot_pull_its_image_is_shown_but_recorded_only_once_gone() {
    let mut model = World::default();
    let stuck = pod(
        "train-d",
        json!({"phase": "Pending", "containerStatuses": [{"name": "c", "ready": false,
            "restartCount": 0, "image": "i", "imageID": "",
            "state": {"waiting": {"reason": "ErrImagePull"}}}]}),
    );
    let seen = applied(&mut model, Change::Applied(stuck.clone()));
    assert!(seen.record.is_empty());
    let attempt = crate::k8s::status::AttemptSummary::of(
        &serde_json::from_value(json!({"metadata": {"name": "train"}})).unwrap(),
    );
    let shown = model.ends_of(&attempt);
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].class, Class::ConfigError);
    let gone = applied(&mut model, Change::Deleted(stuck));
    assert_eq!(gone.record[0].end.class, Class::ConfigError);
}

#[test]
fn pods_that_go_with_an_attempt_deleted_through_gantry_name_who_deleted_it() {
    let mut model = World::default();
    let mut attempt = crate::k8s::status::AttemptSummary::of(
        &serde_json::from_value(json!({"metadata": {"name": "train",
            "annotations": {"gantry.dev/deleted-by": "alice@ops"}}}))
        .unwrap(),
    );
    model.apply(Report::Job(JobWatchEvent::Job(Change::Applied(
        attempt.clone(),
    ))));
    applied(
        &mut model,
        Change::Applied(pod("train-e", json!({"phase": "Running"}))),
    );
    attempt.deleted_by = None;
    model.apply(Report::Job(JobWatchEvent::Job(Change::Deleted(attempt))));
    let gone = applied(
        &mut model,
        Change::Deleted(pod("train-e", json!({"phase": "Running"}))),
    );
    assert_eq!(gone.record[0].end.class, Class::Deleted);
    assert_eq!(
        gone.record[0].end.detail,
        "deleted with its attempt by alice@ops"
    );
}

#[test]
fn an_end_another_engine_recorded_is_neither_told_nor_recorded_again() {
    let mut model = World::default();
    let attempt = crate::k8s::status::AttemptSummary::of(
        &serde_json::from_value(json!({"metadata": {"name": "train", "annotations": {
            "gantry.dev/pod-ends": r#"[{"pod":"train-f","class":"preempted","detail":"d","at":null,"ranSeconds":5,"cost":null}]"#
        }}}))
        .unwrap(),
    );
    assert_eq!(attempt.recorded_ends.len(), 1);
    model.apply(Report::Job(JobWatchEvent::Job(Change::Listed(attempt))));
    let listed = applied(&mut model, Change::Listed(pod("train-f", reclaimed())));
    assert!(listed.record.is_empty(), "{:?}", listed.record);
    assert!(!listed.told.iter().any(|n| n.kind == Kind::Preempted));
}
