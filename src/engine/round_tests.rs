#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::json;

use super::*;
use crate::engine::policies::fixtures::{self, attempt, pod, preempted_at, running_since};
use crate::engine::world::lease::Reading;
use crate::engine::{Report, TargetInfo};
use crate::gke::summary::PoolSummary;
use crate::gke::{ClusterRef, ClusterStatus, ClusterSummary};
use crate::k8s::lease::Record;
use crate::k8s::watch::{Change, JobWatchEvent};
use crate::vocabulary::Kind;

const JOB: &str = "ml-training-job";

/// The engine's part in a test: its world, policies and doing, as the owner keeps them.
#[derive(Default)]
struct Engine {
    world: World,
    policies: Policies,
    doing: Doing,
}

impl Engine {
    /// One batch, as the owner folds it at `secs` (its monotonic clock `mono`).
    fn batch(&mut self, reports: Vec<Report>, secs: i64, mono: Instant) -> Folded {
        let settings = Settings {
            job: JOB.into(),
            ..Settings::default()
        };
        let now = Now {
            wall: fixtures::at(secs),
            mono,
        };
        let folded = fold_and_decide(
            &mut self.world,
            &mut self.policies,
            &mut self.doing,
            &settings,
            reports,
            now,
            |report, doing| {
                if let Report::Lease { .. } = report {
                    doing.taking_lease = false;
                }
            },
        );
        // As the owner does once each command has passed the gate.
        for decided in &folded.round.commands {
            self.doing.decided(&decided.command);
        }
        folded
    }
}

fn lease(holder: Option<&str>, mine: bool, at: Instant) -> Report {
    Report::Lease {
        seen: Reading {
            record: holder.map(|h| Record {
                holder: Some(h.into()),
                renew_time: None,
                transitions: 0,
                version: Some("1".into()),
                stamp: Default::default(),
            }),
            mine,
        },
        at,
    }
}

fn pod_change(summary: crate::k8s::status::PodSummary) -> Report {
    Report::Job(JobWatchEvent::Pod(Change::Applied(summary)))
}

fn commands(folded: &Folded) -> Vec<(&'static str, &'static str)> {
    folded
        .round
        .commands
        .iter()
        .map(|d| (d.by, d.command.kind()))
        .collect()
}

fn told(folded: &Folded) -> Vec<(Kind, String)> {
    folded
        .told
        .iter()
        .chain(&folded.round.notices)
        .map(|n| (n.kind, n.text.clone()))
        .collect()
}

#[test]
fn the_owner_s_order_on_a_recorded_run_takes_the_lease_then_records_and_recovers_a_broken_gang() {
    let t0 = Instant::now();
    let mut engine = Engine::default();
    let target = ClusterRef::new("demo-project", "us-central1-a", "ml-gke-cluster");
    let first = engine.batch(
        vec![
            Report::Target(TargetInfo {
                place: "demo-project/us-central1-a".into(),
                cluster: "ml-gke-cluster".into(),
                managed: true,
                unmanaged_reason: None,
                simulated: false,
            }),
            Report::Cluster(ClusterSummary {
                status: ClusterStatus::Running,
                node_pools: vec![PoolSummary::running("default-pool", "n1-standard-1", 3)],
                create_time: Some(fixtures::at(0)),
                ..ClusterSummary::not_found(&target, "n1-standard-1")
            }),
            Report::Connected,
            lease(None, false, t0),
        ],
        0,
        t0,
    );
    assert_eq!(commands(&first), [("recoverer", "take-lease")]);
    assert_eq!(
        told(&first),
        [(
            Kind::ClusterStatus,
            "cluster ml-gke-cluster RUNNING".to_string()
        )]
    );

    let held = engine.batch(vec![lease(Some("me"), true, t0)], 1, t0);
    assert!(commands(&held).is_empty());
    assert_eq!(
        told(&held),
        [(
            Kind::Recoverer,
            "recoverer: this engine holds the Lease".to_string()
        )]
    );

    let gang = attempt(JOB, 1, 1, 0, 2, json!({"active": 2, "ready": 2}));
    let running = engine.batch(
        vec![
            Report::Job(JobWatchEvent::Job(Change::Applied(gang))),
            pod_change(pod(JOB, 0, running_since(2))),
            pod_change(pod(JOB, 1, running_since(2))),
        ],
        3,
        t0 + Duration::from_secs(3),
    );
    assert!(commands(&running).is_empty(), "{:?}", running.round);
    assert_eq!(
        told(&running),
        [(Kind::Attempt, format!("attempt {JOB} Running"))]
    );

    let broken = engine.batch(
        vec![pod_change(pod(JOB, 1, preempted_at(40)))],
        41,
        t0 + Duration::from_secs(41),
    );
    assert_eq!(
        commands(&broken),
        [("ends", "record-ends"), ("recovery", "recover")]
    );
    let [(kind, text)] = told(&broken).try_into().unwrap();
    assert_eq!(kind, Kind::RankPreempted);
    assert!(
        text.starts_with(&format!("pod {JOB}-1-abcde preempted")),
        "{text}"
    );
    // A rank of a gang is told, not sent: the recovery is (told as its command passes the gate).
    assert!(
        broken.round.messages.is_empty(),
        "{:?}",
        broken.round.messages
    );
    let recover = &broken.round.commands[1].command;
    let told = recover.told_as_recovery().unwrap();
    assert_eq!(told.sent_as(), Some(Kind::Recovered));

    // The other rank goes with it: nothing more is decided, the recovery is under way.
    let after = engine.batch(
        vec![pod_change(pod(JOB, 0, preempted_at(42)))],
        43,
        t0 + Duration::from_secs(43),
    );
    assert_eq!(commands(&after), [("ends", "record-ends")]);
    assert!(engine.doing.recovering.is_some());
}

#[test]
fn a_batch_of_log_lines_alone_is_not_judged_again() {
    let t0 = Instant::now();
    let mut engine = Engine::default();
    engine.batch(vec![Report::Connected, lease(None, false, t0)], 0, t0);
    let generation = engine.world.logs.generation;
    let lines = engine.batch(
        vec![Report::Tail {
            generation,
            event: crate::k8s::logs::TailEvent::PodStarted { pod: "p".into() },
        }],
        60,
        t0 + Duration::from_secs(60),
    );
    assert!(commands(&lines).is_empty(), "not judged");
    let read = engine.batch(
        vec![lease(None, false, t0 + Duration::from_secs(61))],
        61,
        t0 + Duration::from_secs(61),
    );
    assert_eq!(
        commands(&read),
        [("recoverer", "take-lease")],
        "judged again"
    );
}
