#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;
use crate::engine::Report;
use crate::engine::model::unattended::Stall;
use crate::k8s::status::AttemptSummary;
use crate::k8s::watch::{Change, JobWatchEvent};

const RUN: &str = "20261205-100000-abcdef";
const JOB: &str = "ml-training-job-1";

fn at(hours: i64) -> Timestamp {
    Timestamp::from_second(
        "2026-12-05T10:00:00Z"
            .parse::<Timestamp>()
            .unwrap()
            .as_second()
            + hours * 3600,
    )
    .unwrap()
}

fn model(mine: bool) -> Model {
    let attempt = AttemptSummary::of(
        &serde_json::from_value(json!({
            "metadata": {"name": JOB, "creationTimestamp": "2026-12-05T10:00:00Z",
                "labels": {"gantry.dev/attempt": "1", "gantry.dev/run": RUN},
                "annotations": {"gantry.dev/run-attempt": "1", "gantry.dev/recoveries": "0"}},
            "spec": {"completions": 2, "template": {"spec": {"containers": [{"name": "c"}]}}},
            "status": {"active": 2},
        }))
        .unwrap(),
    );
    crate::engine::model::fixtures::model_with(attempt, mine)
}

fn running_pod() -> crate::k8s::status::PodSummary {
    let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
        "metadata": {"name": format!("{JOB}-0-abcde"), "namespace": "default",
            "labels": {"job-name": JOB}},
        "spec": {"containers": [{"name": "c"}]},
        "status": {"phase": "Running"},
    }))
    .unwrap();
    crate::k8s::status::PodSummary::of(&pod)
}

fn guards(text: &str) -> Guards {
    let guards: Guards = toml::from_str(text).unwrap();
    guards.validate().unwrap();
    guards
}

#[test]
fn a_budget_is_told_at_80_and_100_percent_once_each_and_notify_does_nothing_more() {
    let mut model = model(true);
    let g = guards("budget = 50.0\n");
    assert_eq!(
        model.guard(&g, 10, Some(39.0), at(1)),
        GuardCalls::default()
    );
    let calls = model.guard(&g, 10, Some(40.5), at(1));
    assert_eq!(calls.told.len(), 1);
    assert_eq!(
        calls.told[0].text,
        format!("run {RUN} has cost $40.50 of its $50.00 budget (80 %)")
    );
    let news = calls.told[0].news.as_ref().unwrap();
    assert_eq!(
        (calls.told[0].sent_as(), news.occurrence.as_str()),
        (Some(Kind::Budget), "budget/80")
    );
    assert!(calls.commands.is_empty());
    assert!(
        model.guard(&g, 10, Some(41.0), at(1)).told.is_empty(),
        "once"
    );
    let calls = model.guard(&g, 10, Some(50.0), at(2));
    assert_eq!(calls.told.len(), 1);
    assert_eq!(calls.told[0].severity, Severity::Critical);
    assert!(calls.commands.is_empty(), "notify only tells");
}

#[test]
fn a_spent_budget_ends_the_run_and_with_scale_to_zero_sizes_the_pools_to_zero() {
    let mut model = model(true);
    let g = guards("budget = 50.0\nbudget-action = \"scale-to-zero\"\n");
    let calls = model.guard(&g, 10, Some(51.0), at(1));
    assert_eq!(calls.told.len(), 2, "80 % and 100 % at once");
    assert!(
        calls.told[1]
            .text
            .ends_with(": ending the run and scaling the node pools to zero"),
        "{}",
        calls.told[1].text
    );
    assert_eq!(
        calls.commands,
        vec![Command::EndRun {
            attempt: JOB.into(),
            why: "its budget is spent ($51.00 of $50.00)".into()
        }]
    );
    // Its pod still runs: the pools wait for it (a drain would evict it, and its end would
    // read as a preemption), at most a minute.
    let running = running_pod();
    model.apply(Report::Job(JobWatchEvent::Pod(Change::Applied(running))));
    let soon = Timestamp::from_second(at(1).as_second() + 30).unwrap();
    assert_eq!(model.guard(&g, 10, Some(60.0), soon), GuardCalls::default());
    let later = Timestamp::from_second(at(1).as_second() + 61).unwrap();
    assert_eq!(
        model.guard(&g, 10, Some(60.0), later).commands,
        vec![Command::ScaleNodePools(crate::gke::resize::Scale::ToZero)]
    );
    assert_eq!(
        model.guard(&g, 10, Some(60.0), at(2)),
        GuardCalls::default()
    );
}

#[test]
fn only_the_recoverer_acts() {
    let mut model = model(false);
    let g = guards("budget = 50.0\nbudget-action = \"stop-run\"\nmax-run-time = \"1h\"\n");
    assert_eq!(
        model.guard(&g, 10, Some(99.0), at(5)),
        GuardCalls::default()
    );
}

#[test]
fn a_run_past_its_max_run_time_is_ended_once() {
    let mut model = model(true);
    let g = guards("max-run-time = \"24h\"\n");
    assert!(model.guard(&g, 10, None, at(23)).commands.is_empty());
    let calls = model.guard(&g, 10, None, at(25));
    assert_eq!(
        calls.commands,
        vec![Command::EndRun {
            attempt: JOB.into(),
            why: "it has run for 25h (max-run-time = 24h)".into()
        }]
    );
    assert!(model.guard(&g, 10, None, at(26)).commands.is_empty());
}

#[test]
fn a_stalled_attempt_is_ended_and_the_next_started_when_the_stall_action_says_so() {
    let mut model = model(true);
    model.unattended.stalled = Some(Stall {
        attempt: JOB.into(),
        since: at(0),
        what: "no new log line",
    });
    assert!(
        model
            .guard(&Guards::default(), 10, None, at(1))
            .commands
            .is_empty()
    );
    let g = guards("stall-action = \"end-attempt\"\n");
    let calls = model.guard(&g, 10, None, at(1));
    assert_eq!(
        calls.commands,
        vec![Command::Recover {
            attempt: JOB.into(),
            why: format!("{JOB} stalled: no new log line"),
            next: 2,
            most: 11,
        }]
    );
    assert!(
        model.recovery.recovering.is_some(),
        "a retry now is refused"
    );
    assert!(model.guard(&g, 10, None, at(2)).commands.is_empty());
}

#[test]
fn on_a_kubeconfig_context_a_budget_is_said_to_be_unavailable_once() {
    let mut model = model(true);
    model.apply(Report::Target(crate::engine::TargetInfo {
        place: "context training".into(),
        cluster: "training".into(),
        managed: false,
        unmanaged_reason: Some("a kubeconfig context".into()),
        simulated: false,
    }));
    let g = guards("budget = 50.0\nbudget-action = \"stop-run\"\n");
    let calls = model.guard(&g, 10, None, at(1));
    assert_eq!(calls.commands, Vec::new());
    assert_eq!(
        calls.told[0].text,
        "guards.budget is unavailable here: a kubeconfig context's nodes are not priced"
    );
    assert!(model.guard(&g, 10, None, at(2)).told.is_empty());
}
