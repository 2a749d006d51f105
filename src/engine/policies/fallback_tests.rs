#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::*;
use crate::config::ClusterConfig;
use crate::engine::Report;
use crate::engine::policies::Policy;
use crate::engine::world::fixtures::model_with;
use crate::k8s::status::{AttemptSummary, EventSummary, PodSummary};
use crate::k8s::watch::{Change, JobWatchEvent};

const CREATED: &str = "2026-12-05T10:00:00Z";

fn at(time: &str) -> jiff::Timestamp {
    time.parse().unwrap()
}

/// What the fallback decides of `world` at `time`, with `doing` under way.
fn decide(fallback: &mut Fallback, world: &World, doing: &Doing, time: &str) -> Option<Command> {
    let settings = Settings {
        spot_fallback: Some(spot()),
        ..Settings::default()
    };
    let now = Now {
        wall: at(time),
        mono: std::time::Instant::now(),
    };
    let decided = fallback.decide(world, doing, &settings, now);
    assert!(decided.notices.is_empty());
    decided.commands.into_iter().next()
}

fn fresh(world: &World, doing: &Doing, time: &str) -> Option<Command> {
    decide(&mut Fallback::default(), world, doing, time)
}

fn spot() -> SpotFallback {
    SpotFallback {
        pool: "default-pool".into(),
        fallback: "default-pool-on-demand".into(),
        wait: Duration::from_secs(10 * 60),
        max_preemptions: 2,
        max_recoveries: 10,
        cluster: ClusterConfig {
            spot: true,
            ..ClusterConfig::default()
        },
        location: "us-central1-a".into(),
    }
}

/// Attempt `name`, the first of run r1, its pods sent to `pool` (None: wherever they fit).
fn attempt(name: &str, pool: Option<&str>) -> AttemptSummary {
    let selector = pool.map_or(json!({}), |p| json!({"cloud.google.com/gke-nodepool": p}));
    AttemptSummary::of(
        &serde_json::from_value(json!({
            "metadata": {"name": name, "creationTimestamp": CREATED,
                "labels": {"gantry.dev/attempt": "1", "gantry.dev/run": "r1"},
                "annotations": {"gantry.dev/run-attempt": "1", "gantry.dev/recoveries": "0"}},
            "spec": {"completions": 1, "template": {"spec": {
                "containers": [{"name": "c"}], "nodeSelector": selector}}},
            "status": {"active": 1},
        }))
        .unwrap(),
    )
}

fn pod(name: &str, job: &str, node: Option<&str>, status: Value) -> PodSummary {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default", "creationTimestamp": CREATED,
            "labels": {"job-name": job}},
        "spec": {"nodeName": node, "containers": [{"name": "c"}]},
        "status": status,
    }))
    .unwrap();
    PodSummary::of(&pod)
}

/// The pod of `job` waits for a node the zone has no capacity for.
fn out_of_spot(model: &mut World, job: &str) {
    let waiting = pod(
        &format!("{job}-abcde"),
        job,
        None,
        json!({"phase": "Pending"}),
    );
    model.apply(Report::Job(JobWatchEvent::Pod(Change::Applied(waiting))));
    model.apply(Report::Job(JobWatchEvent::Event(Change::Applied(EventSummary {
        name: "e1".into(),
        kind: "Pod".into(),
        object: format!("{job}-abcde"),
        type_: "Warning".into(),
        reason: "FailedScaleUp".into(),
        message: "Node scale up in zones us-central1-a associated with this pod failed: GCE out of resources. Pod is at risk of not being scheduled.".into(),
        count: 3,
        last_seen: Some(at("2026-12-05T10:01:00Z")),
    }))));
}

/// A pod of `job` whose spot node was reclaimed at `finished`.
fn preempted(model: &mut World, job: &str, n: u32, finished: &str) {
    let status = json!({
        "phase": "Failed",
        "reason": "Terminated",
        "conditions": [{"type": "DisruptionTarget", "status": "True",
            "reason": "TerminationByKubelet", "lastTransitionTime": finished}],
        "containerStatuses": [{"name": "c", "ready": false, "restartCount": 0, "image": "i",
            "imageID": "", "state": {"terminated": {"exitCode": 143, "reason": "Error",
            "startedAt": CREATED, "finishedAt": finished}}}],
    });
    let gone = pod(&format!("{job}-p{n}"), job, Some("spot-node"), status);
    model.apply(Report::Job(JobWatchEvent::Pod(Change::Applied(gone))));
}

#[test]
fn a_pod_out_of_spot_capacity_past_spot_wait_moves_the_run_to_an_on_demand_pool_once() {
    let mut model = model_with(attempt("train-1", None), true);
    out_of_spot(&mut model, "train-1");
    let mut fallback = Fallback::default();
    let mut doing = Doing::default();
    assert_eq!(
        decide(&mut fallback, &model, &doing, "2026-12-05T10:09:00Z"),
        None,
        "not before spot-wait"
    );
    let command =
        decide(&mut fallback, &model, &doing, "2026-12-05T10:10:00Z").expect("past spot-wait");
    let Command::FallBack {
        attempt,
        pool,
        why,
        plan,
        next,
        most,
        ..
    } = &command
    else {
        panic!("{command:?}");
    };
    assert_eq!(attempt, "train-1");
    assert_eq!(pool, "default-pool");
    assert_eq!(
        why,
        "default-pool has had no spot capacity for 10m (stockout in us-central1-a; spot-wait = 10m)"
    );
    assert_eq!(
        plan,
        "+ pool default-pool-on-demand: 3 × n1-standard-1, on-demand (new node pool), ≈ $0.09/h more than spot"
    );
    assert_eq!((*next, *most), (2, 11));
    doing.decided(&command);
    assert!(doing.recovering.is_some());
    // Once per run: not again, even after the recovery ended.
    doing.done(&command.describe());
    assert_eq!(
        decide(&mut fallback, &model, &doing, "2026-12-05T11:00:00Z"),
        None
    );
}

#[test]
fn only_the_recoverer_falls_back_and_never_over_a_persons_retry() {
    let late = "2026-12-05T10:30:00Z";
    let nothing = Doing::default();
    let mut other = model_with(attempt("train-1", None), false);
    out_of_spot(&mut other, "train-1");
    assert_eq!(fresh(&other, &nothing, late), None);
    let mut mine = model_with(attempt("train-1", None), true);
    out_of_spot(&mut mine, "train-1");
    let retrying = Doing {
        retry_asked: true,
        ..Doing::default()
    };
    assert_eq!(fresh(&mine, &retrying, late), None, "a retry is on its way");
    let recovering = Doing {
        recovering: Some("recover: rank 1 of train-1 preempted".into()),
        ..Doing::default()
    };
    assert_eq!(fresh(&mine, &recovering, late), None, "a recovery is");
    assert!(
        fresh(&mine, &nothing, late).is_some(),
        "and else it falls back"
    );
}

#[test]
fn an_attempt_already_on_the_fallback_stays_there() {
    let mut model = model_with(attempt("train-2", Some("default-pool-on-demand")), true);
    out_of_spot(&mut model, "train-2");
    assert_eq!(
        fresh(&model, &Doing::default(), "2026-12-05T10:30:00Z"),
        None
    );
}

#[test]
fn more_preemptions_in_an_hour_than_allowed_move_the_run_too() {
    let nothing = Doing::default();
    let mut model = model_with(attempt("train-1", None), true);
    preempted(&mut model, "train-1", 1, "2026-12-05T10:05:00Z");
    preempted(&mut model, "train-1", 2, "2026-12-05T10:06:00Z");
    assert_eq!(
        fresh(&model, &nothing, "2026-12-05T10:20:00Z"),
        None,
        "two is not more than two"
    );
    preempted(&mut model, "train-1", 3, "2026-12-05T10:07:00Z");
    assert_eq!(
        fresh(&model, &nothing, "2026-12-05T11:06:30Z"),
        None,
        "only one of them in the last hour"
    );
    let command = fresh(&model, &nothing, "2026-12-05T10:20:00Z").expect("three in the hour");
    assert!(
        command.describe().starts_with(
            "fall back to on-demand: default-pool was preempted 3 times in the last hour (spot-max-preemptions = 2); + pool default-pool-on-demand"
        ),
        "{}",
        command.describe()
    );
}
