#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;
use crate::engine::policies::Policy;
use crate::engine::policies::fixtures::{
    self, RUN, attempt, hold_lease, metered, model_with, pod, running_since, see_pod,
};
use crate::engine::world::headway::{Headway, Moving};
use crate::vocabulary::Kind;

const JOB: &str = "ml-training-job";
const HOUR: i64 = 3600;

/// Two ranks of attempt 1 running on a metered cluster; the Lease held here or not.
fn world(mine: bool) -> World {
    let a = attempt(JOB, 1, 1, 0, 2, json!({"active": 2, "ready": 2}));
    let mut world = model_with(a, mine);
    metered(&mut world);
    world
}

fn settings(text: &str) -> Settings {
    let guards: crate::config::Guards = toml::from_str(text).unwrap();
    guards.validate().unwrap();
    Settings {
        guards,
        ..fixtures::settings()
    }
}

fn decide(guards: &mut Guards, world: &World, s: &Settings, secs: i64) -> Decisions {
    guards.decide(world, &Doing::default(), s, fixtures::now(secs))
}

/// A budget the run's cost crosses 80 % of after an hour, and 100 % of after two.
const BUDGET: &str = "budget = 0.35\n";

#[test]
fn a_budget_is_told_at_80_and_100_percent_once_each_and_notify_does_nothing_more() {
    let world = world(true);
    let s = settings(BUDGET);
    let mut guards = Guards::default();
    assert_eq!(
        decide(&mut guards, &world, &s, HOUR / 2),
        Decisions::default()
    );
    let decided = decide(&mut guards, &world, &s, HOUR);
    assert_eq!(decided.notices.len(), 1);
    assert_eq!(
        decided.notices[0].text,
        format!("run {RUN} has cost $0.28 of its $0.35 budget (80 %)")
    );
    let news = decided.notices[0].news.as_ref().unwrap();
    assert_eq!(
        (decided.notices[0].sent_as(), news.occurrence.as_str()),
        (Some(Kind::Budget), "budget/80")
    );
    assert!(decided.commands.is_empty());
    assert!(
        decide(&mut guards, &world, &s, HOUR + 60)
            .notices
            .is_empty(),
        "once"
    );
    let decided = decide(&mut guards, &world, &s, 2 * HOUR);
    assert_eq!(decided.notices.len(), 1);
    assert_eq!(decided.notices[0].severity, Severity::Critical);
    assert!(decided.commands.is_empty(), "notify only tells");
}

#[test]
fn a_spent_budget_ends_the_run_and_with_scale_to_zero_sizes_the_pools_to_zero() {
    let mut world = world(true);
    let s = settings("budget = 0.35\nbudget-action = \"scale-to-zero\"\n");
    let mut guards = Guards::default();
    let decided = decide(&mut guards, &world, &s, 2 * HOUR);
    assert_eq!(decided.notices.len(), 2, "80 % and 100 % at once");
    assert!(
        decided.notices[1]
            .text
            .ends_with(": ending the run and scaling the node pools to zero"),
        "{}",
        decided.notices[1].text
    );
    assert_eq!(
        decided.commands,
        vec![Command::EndRun {
            attempt: JOB.into(),
            why: "its budget is spent ($0.57 of $0.35)".into(),
            ended_by: EndedBy::Budget,
        }]
    );
    // Its pod still runs: the pools wait for it (a drain would evict it, and its end would
    // read as a preemption), at most a minute.
    see_pod(&mut world, pod(JOB, 0, running_since(0)));
    let mut doing = Doing::default();
    doing.decided(&decided.commands[0]);
    let later = |secs| fixtures::now(2 * HOUR + secs);
    assert_eq!(
        guards.decide(&world, &doing, &s, later(30)),
        Decisions::default()
    );
    assert_eq!(
        guards.decide(&world, &doing, &s, later(61)).commands,
        vec![Command::ScaleNodePools(crate::gke::resize::Scale::ToZero)]
    );
    assert_eq!(
        guards.decide(&world, &doing, &s, later(62)),
        Decisions::default()
    );
}

#[test]
fn a_spent_budget_whose_pools_gke_refuses_to_this_engine_says_so_once_instead_of_scaling() {
    use crate::engine::world::trouble::TroubleSource;
    let mut world = world(true);
    let refused = "GKE refused this account: ACCESS_TOKEN_SCOPE_INSUFFICIENT (403)";
    world.troubles.set(TroubleSource::Gke, refused.into());
    let s = settings("budget = 0.35\nbudget-action = \"scale-to-zero\"\n");
    let mut guards = Guards::default();
    let decided = decide(&mut guards, &world, &s, 2 * HOUR);
    let mut doing = Doing::default();
    doing.decided(&decided.commands[0]);
    // The run's pods gone: the pools would go to zero now, but GKE is refused here.
    let later = |secs| fixtures::now(2 * HOUR + secs);
    let told = guards.decide(&world, &doing, &s, later(1));
    assert!(told.commands.is_empty(), "{:?}", told.commands);
    assert_eq!(told.notices.len(), 1);
    let notice = &told.notices[0];
    assert_eq!(notice.severity, Severity::Critical);
    assert!(
        notice.text.contains("cannot be scaled to zero from here") && notice.text.contains(refused),
        "{}",
        notice.text
    );
    assert!(
        notice.text.contains("gantry down"),
        "says what to do: {}",
        notice.text
    );
    assert_eq!(
        notice.news.as_ref().unwrap().occurrence,
        format!("budget/cannot-scale/{JOB}")
    );
    assert_eq!(
        guards.decide(&world, &doing, &s, later(120)),
        Decisions::default(),
        "said once"
    );
}

#[test]
fn only_the_recoverer_acts() {
    let s = settings("budget = 0.35\nbudget-action = \"stop-run\"\nmax-run-time = \"1h\"\n");
    let mut world = world(false);
    assert_eq!(
        decide(&mut Guards::default(), &world, &s, 5 * HOUR),
        Decisions::default()
    );
    // The positive control: the same world, the Lease held here, ends the run.
    hold_lease(&mut world, true);
    let decided = decide(&mut Guards::default(), &world, &s, 5 * HOUR);
    assert!(
        matches!(decided.commands.as_slice(), [Command::EndRun { .. }]),
        "{decided:?}"
    );
}

#[test]
fn a_run_past_its_max_run_time_is_ended_once() {
    let world = world(true);
    let s = settings("max-run-time = \"24h\"\n");
    let mut guards = Guards::default();
    assert!(
        decide(&mut guards, &world, &s, 23 * HOUR)
            .commands
            .is_empty()
    );
    let decided = decide(&mut guards, &world, &s, 25 * HOUR);
    assert_eq!(
        decided.commands,
        vec![Command::EndRun {
            attempt: JOB.into(),
            why: "it has run for 25h (max-run-time = 24h)".into(),
            ended_by: EndedBy::MaxRunTime,
        }]
    );
    let mut doing = Doing::default();
    doing.decided(&decided.commands[0]);
    let again = guards.decide(&world, &doing, &s, fixtures::now(26 * HOUR));
    assert!(again.commands.is_empty(), "{again:?}");
}

#[test]
fn a_stalled_attempt_is_ended_and_the_next_started_when_the_stall_action_says_so() {
    let mut world = world(true);
    see_pod(&mut world, pod(JOB, 0, running_since(0)));
    world.headway = Headway {
        attempt: Some(JOB.into()),
        running_since: Some(fixtures::at(0)),
        lines: Some(Moving {
            value: 120.0,
            since: fixtures::at(60),
        }),
        step: None,
    };
    let at = 60 + 20 * 60;
    let notify = settings("");
    assert!(
        decide(&mut Guards::default(), &world, &notify, at)
            .commands
            .is_empty()
    );
    let s = settings("stall-action = \"end-attempt\"\n");
    let mut guards = Guards::default();
    assert!(
        decide(&mut guards, &world, &s, at - 1).commands.is_empty(),
        "not yet"
    );
    let decided = decide(&mut guards, &world, &s, at);
    let recover = Command::Recover {
        attempt: JOB.into(),
        why: format!("{JOB} stalled: no new log line"),
        ended_by: EndedBy::Stall,
        next: 2,
        most: 11,
    };
    assert_eq!(decided.commands, vec![recover.clone()]);
    let mut doing = Doing::default();
    doing.decided(&recover);
    assert!(doing.recovering.is_some(), "a retry now is refused");
    assert!(
        guards
            .decide(&world, &doing, &s, fixtures::now(at + 5))
            .commands
            .is_empty()
    );
}

#[test]
fn on_a_kubeconfig_context_a_budget_is_said_to_be_unavailable_once() {
    let mut world = world(true);
    world.apply(crate::engine::Report::Target(crate::engine::TargetInfo {
        place: "context training".into(),
        cluster: "training".into(),
        managed: false,
        unmanaged_reason: Some("a kubeconfig context".into()),
        simulated: false,
    }));
    let s = settings("budget = 50.0\nbudget-action = \"stop-run\"\n");
    let mut guards = Guards::default();
    let decided = decide(&mut guards, &world, &s, HOUR);
    assert_eq!(decided.commands, Vec::new());
    assert_eq!(decided.notices[0].kind, Kind::Guard);
    assert_eq!(
        decided.notices[0].text,
        "guards.budget is unavailable here: a kubeconfig context's nodes are not priced"
    );
    assert!(decide(&mut guards, &world, &s, 2 * HOUR).notices.is_empty());
}
