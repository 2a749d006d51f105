#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;
use crate::engine::policies::Policy;
use crate::engine::policies::fixtures::{
    attempt, hold_lease, model_with, now, pod, preempted_at, running_since, see_pod, settings,
};
use crate::vocabulary::Kind;

/// A gang of `completions` ranks, attempt `number` of the Job, `run_attempt` of its run.
fn gang(name: &str, completions: u32, run_attempt: u32, recoveries: u32, mine: bool) -> World {
    let status = json!({"active": completions, "ready": completions});
    let a = attempt(
        name,
        run_attempt,
        run_attempt,
        recoveries,
        completions,
        status,
    );
    let mut world = model_with(a, mine);
    for rank in 0..completions {
        see_pod(&mut world, pod(name, rank, running_since(0)));
    }
    world
}

fn with_max(max: u32) -> Settings {
    Settings {
        max_recoveries: max,
        ..settings()
    }
}

#[test]
fn the_recoverer_restarts_a_gang_once_when_a_rank_is_preempted() {
    let mut world = gang("train-3", 2, 3, 0, true);
    let mut recovery = Recovery::default();
    let mut doing = Doing::default();
    assert_eq!(
        recovery.decide(&world, &doing, &with_max(10), now(30)),
        Decisions::default()
    );
    see_pod(&mut world, pod("train-3", 1, preempted_at(40)));
    let decided = recovery.decide(&world, &doing, &with_max(10), now(41));
    let command = Command::Recover {
        attempt: "train-3".into(),
        why: "rank 1 of train-3 preempted".into(),
        ended_by: EndedBy::Preempted,
        next: 4,
        most: 13,
    };
    assert_eq!(decided.commands, vec![command.clone()]);
    assert_eq!(
        command.describe(),
        "recover: rank 1 of train-3 preempted; attempt 4 of at most 13"
    );
    let told = command.told_as_recovery().unwrap();
    assert_eq!(
        (told.kind, told.text.as_str()),
        (
            Kind::Recovered,
            "recovering: rank 1 of train-3 preempted; attempt 4 of at most 13"
        )
    );
    // The other rank, preempted with it: the attempt is being recovered already.
    doing.decided(&command);
    see_pod(&mut world, pod("train-3", 0, preempted_at(41)));
    assert_eq!(
        recovery.decide(&world, &doing, &with_max(10), now(42)),
        Decisions::default()
    );
    // Its end does not make the attempt recoverable again: this engine ended it.
    doing.done(&command.describe());
    assert_eq!(
        recovery.decide(&world, &doing, &with_max(10), now(43)),
        Decisions::default()
    );
}

#[test]
fn only_the_holder_of_the_lease_recovers() {
    let mut world = gang("train", 2, 1, 0, false);
    see_pod(&mut world, pod("train", 0, preempted_at(10)));
    let mut recovery = Recovery::default();
    let decided = recovery.decide(&world, &Doing::default(), &with_max(10), now(11));
    assert_eq!(decided, Decisions::default());
    // The positive control: the same world, with the Lease held here.
    hold_lease(&mut world, true);
    let decided = recovery.decide(&world, &Doing::default(), &with_max(10), now(12));
    assert_eq!(decided.commands.len(), 1, "{decided:?}");
}

#[test]
fn a_person_s_retry_on_its_way_is_not_doubled_by_a_recovery() {
    let mut world = gang("train", 2, 1, 0, true);
    see_pod(&mut world, pod("train", 0, preempted_at(10)));
    let retrying = Doing {
        retry_asked: true,
        ..Doing::default()
    };
    let mut recovery = Recovery::default();
    assert_eq!(
        recovery.decide(&world, &retrying, &with_max(10), now(11)),
        Decisions::default()
    );
}

#[test]
fn a_gang_past_its_recoveries_ends_the_run_as_failed() {
    let mut world = gang("train-2", 2, 2, 1, true);
    see_pod(&mut world, pod("train-2", 0, preempted_at(10)));
    let decided = Recovery::default().decide(&world, &Doing::default(), &with_max(1), now(11));
    let [
        Command::EndRun {
            attempt,
            why,
            ended_by: EndedBy::MaxRecoveries,
        },
    ] = decided.commands.as_slice()
    else {
        panic!("the run should end: {decided:?}");
    };
    assert_eq!(attempt, "train-2");
    assert!(why.contains("max-recoveries = 1"), "{why}");
}

#[test]
fn a_single_pod_run_ends_when_its_preemptions_pass_the_bound() {
    let a = attempt("solo", 1, 1, 0, 1, json!({"active": 1}));
    let mut world = model_with(a, true);
    let mut recovery = Recovery::default();
    // The cloud replaces the pod: nothing to do until the bound is passed.
    let mut first = pod("solo", 0, preempted_at(10));
    first.index = None;
    see_pod(&mut world, first);
    let mut second = pod("solo", 0, preempted_at(20));
    second.index = None;
    second.name = "solo-b".into();
    see_pod(&mut world, second);
    let doing = Doing::default();
    assert_eq!(
        recovery.decide(&world, &doing, &with_max(2), now(21)),
        Decisions::default()
    );
    let decided = recovery.decide(&world, &doing, &with_max(1), now(22));
    let [Command::EndRun { why, .. }] = decided.commands.as_slice() else {
        panic!("two preemptions pass max-recoveries = 1: {decided:?}");
    };
    assert!(why.starts_with("2 preemptions of solo"), "{why}");
}

#[test]
fn a_new_recoverer_acts_on_a_preemption_of_the_last_minute_and_leaves_older_ones() {
    let mut recent = gang("gang", 2, 1, 0, false);
    see_pod(&mut recent, pod("gang", 1, preempted_at(100)));
    let mut old = gang("gang", 2, 1, 0, false);
    see_pod(&mut old, pod("gang", 1, preempted_at(100)));
    for (world, taken_at, acts) in [(&mut recent, 150, true), (&mut old, 400, false)] {
        hold_lease(world, true);
        let decided =
            Recovery::default().decide(world, &Doing::default(), &with_max(10), now(taken_at));
        assert_eq!(
            matches!(decided.commands.as_slice(), [Command::Recover { .. }]),
            acts,
            "taken at {taken_at}: {decided:?}"
        );
    }
}
