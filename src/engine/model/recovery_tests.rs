#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::Preempted;
use crate::engine::model::fixtures::model_with;
use crate::engine::{Command, Report};
use crate::k8s::lease::Holder;
use crate::k8s::status::AttemptSummary;
use crate::k8s::watch::{Change, JobWatchEvent};

fn attempt(name: &str, completions: u32, run_attempt: u32, recoveries: u32) -> AttemptSummary {
    AttemptSummary::of(
        &serde_json::from_value(json!({
            "metadata": {"name": name,
                "labels": {"gantry.dev/attempt": run_attempt.to_string(), "gantry.dev/run": "r1"},
                "annotations": {"gantry.dev/run-attempt": run_attempt.to_string(),
                    "gantry.dev/recoveries": recoveries.to_string()}},
            "spec": {"completions": completions, "template": {}},
            "status": {"active": completions, "ready": completions},
        }))
        .unwrap(),
    )
}

fn rank(attempt: &str, index: u32) -> Preempted {
    Preempted {
        attempt: attempt.into(),
        index: Some(index),
    }
}

#[test]
fn the_recoverer_restarts_a_gang_once_when_a_rank_is_preempted() {
    let mut model = model_with(attempt("train-3", 2, 3, 0), true);
    let command = model.recovery_for(&rank("train-3", 1), 10, false).unwrap();
    assert_eq!(
        command,
        Command::Recover {
            attempt: "train-3".into(),
            why: "rank 1 of train-3 preempted".into(),
            next: 4,
            most: 13,
        }
    );
    assert_eq!(
        command.describe(),
        "recover: rank 1 of train-3 preempted; attempt 4 of at most 13"
    );
    let told = command.told_as_recovery().unwrap();
    assert_eq!(
        (told.kind, told.text.as_str()),
        (
            crate::vocabulary::Kind::Recovered,
            "recovering: rank 1 of train-3 preempted; attempt 4 of at most 13"
        )
    );
    // The other rank, preempted with it: the attempt is being recovered already.
    assert_eq!(model.recovery_for(&rank("train-3", 0), 10, false), None);
    assert!(model.recovery.recovering.is_some());
    model.recovery_done(&command.describe());
    assert!(model.recovery.recovering.is_none());
}

#[test]
fn only_the_holder_of_the_lease_recovers() {
    let mut model = model_with(attempt("train", 2, 1, 0), false);
    assert_eq!(model.recovery_for(&rank("train", 0), 10, false), None);
}

#[test]
fn a_person_s_retry_on_its_way_is_not_doubled_by_a_recovery() {
    let mut model = model_with(attempt("train", 2, 1, 0), true);
    assert_eq!(model.recovery_for(&rank("train", 0), 10, true), None);
}

#[test]
fn a_gang_past_its_recoveries_ends_the_run_as_failed() {
    let mut model = model_with(attempt("train-2", 2, 2, 1), true);
    let command = model.recovery_for(&rank("train-2", 0), 1, false).unwrap();
    let Command::EndRun { attempt, why } = command else {
        panic!("the run should end: {command:?}");
    };
    assert_eq!(attempt, "train-2");
    assert!(why.contains("max-recoveries = 1"), "{why}");
}

#[test]
fn a_single_pod_run_ends_when_its_preemptions_pass_the_bound() {
    let mut model = model_with(attempt("solo", 1, 1, 0), true);
    let single = Preempted {
        attempt: "solo".into(),
        index: None,
    };
    // No ends seen yet: the cloud replaces the pod, nothing to do.
    assert_eq!(model.recovery_for(&single, 0, false), None);
    let preempted = |name: &str| {
        serde_json::from_value::<k8s_openapi::api::core::v1::Pod>(json!({
            "metadata": {"name": name, "labels": {"job-name": "solo"}},
            "spec": {"containers": [{"name": "c"}]},
            "status": {"phase": "Failed", "conditions": [{"type": "DisruptionTarget",
                "status": "True", "reason": "TerminationByKubelet"}]},
        }))
        .unwrap()
    };
    for name in ["solo-a", "solo-b"] {
        let pod = crate::k8s::status::PodSummary::of(&preempted(name));
        model.apply(Report::Job(JobWatchEvent::Pod(Change::Applied(pod))));
    }
    assert_eq!(model.recovery_for(&single, 2, false), None);
    let Some(Command::EndRun { why, .. }) = model.recovery_for(&single, 1, false) else {
        panic!("two preemptions pass max-recoveries = 1");
    };
    assert!(why.starts_with("2 preemptions of solo"), "{why}");
}

#[test]
fn a_new_recoverer_acts_on_a_preemption_its_dead_predecessor_saw_and_left() {
    let now = jiff::Timestamp::now();
    let end = |pod: &str, secs_ago: i64| crate::vocabulary::ends::PodEnd {
        pod: pod.into(),
        index: Some(1),
        class: crate::vocabulary::ends::Class::Preempted,
        detail: String::new(),
        at: Some(now - jiff::SignedDuration::from_secs(secs_ago)),
        node: None,
        ran_seconds: 1,
        cost: None,
    };
    let mut recent = attempt("gang", 2, 1, 0);
    recent.recorded_ends = vec![end("gang-1-a", 10)];
    let mut model = model_with(recent, false);
    let taken = model.apply(Report::Recoverer(Some(Holder {
        identity: "me pid 2".into(),
        mine: true,
    })));
    assert_eq!(taken.preempted, vec![rank("gang", 1)]);
    assert!(matches!(
        model.recovery_for(&taken.preempted[0], 10, false),
        Some(Command::Recover { .. })
    ));

    let mut old = attempt("gang", 2, 1, 0);
    old.recorded_ends = vec![end("gang-1-b", 300)];
    let mut model = model_with(old, false);
    let taken = model.apply(Report::Recoverer(Some(Holder {
        identity: "me pid 2".into(),
        mine: true,
    })));
    assert!(taken.preempted.is_empty(), "the run carried on since");
}
