#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;
use crate::engine::policies::Policy;
use crate::engine::policies::fixtures::{
    attempt, model_with, now, pod, preempted_at, running_since, see_attempt, see_pod, settings,
};

fn two_ranks() -> World {
    let a = attempt("train", 1, 1, 0, 2, json!({"active": 2, "ready": 2}));
    let mut world = model_with(a, false);
    see_pod(&mut world, pod("train", 0, running_since(0)));
    see_pod(&mut world, pod("train", 1, running_since(0)));
    world
}

fn recorded(decided: &Decisions) -> Vec<String> {
    match decided.commands.as_slice() {
        [Command::RecordEnds(entries)] => entries.iter().map(|e| e.end.pod.clone()).collect(),
        [] => Vec::new(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_end_this_engine_saw_is_recorded_once_by_any_engine_that_may_write() {
    let mut world = two_ranks();
    let mut ledger = EndsLedger::default();
    let doing = Doing::default();
    assert!(recorded(&ledger.decide(&world, &doing, &settings(), now(1))).is_empty());
    see_pod(&mut world, pod("train", 1, preempted_at(30)));
    let first = ledger.decide(&world, &doing, &settings(), now(31));
    assert_eq!(recorded(&first), ["train-1-abcde"]);
    let [Command::RecordEnds(entries)] = first.commands.as_slice() else {
        unreachable!()
    };
    assert_eq!(entries[0].sharing, 2, "both ranks on the node share it");
    assert!(
        recorded(&ledger.decide(&world, &doing, &settings(), now(32))).is_empty(),
        "once"
    );
    let read_only = Settings {
        may_act: false,
        ..settings()
    };
    see_pod(&mut world, pod("train", 0, preempted_at(40)));
    assert!(
        recorded(&EndsLedger::default().decide(&world, &doing, &read_only, now(41))).is_empty()
    );
    assert_eq!(
        recorded(&ledger.decide(&world, &doing, &settings(), now(41))),
        ["train-0-abcde"]
    );
}

#[test]
fn an_end_another_engine_recorded_is_not_recorded_again() {
    let mut world = two_ranks();
    let mut a = attempt("train", 1, 1, 0, 2, json!({"active": 1, "ready": 1}));
    a.recorded_ends = vec![
        pod("train", 1, preempted_at(30)).end(crate::vocabulary::ends::Fate {
            class: crate::vocabulary::ends::Class::Preempted,
            detail: "its node shut down".into(),
            at: Some(crate::engine::policies::fixtures::at(30)),
            ran_seconds: 30,
        }),
    ];
    see_attempt(&mut world, a);
    see_pod(&mut world, pod("train", 1, preempted_at(30)));
    let decided = EndsLedger::default().decide(&world, &Doing::default(), &settings(), now(31));
    assert!(recorded(&decided).is_empty(), "{decided:?}");
}
