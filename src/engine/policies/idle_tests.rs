#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::engine::Report;
use crate::engine::policies::Policy;
use crate::gke::summary::PoolSummary;
use crate::gke::{ClusterRef, ClusterSummary};
use crate::k8s::status::{AttemptPhase, AttemptSummary};
use crate::k8s::watch::{Change, JobWatchEvent};

fn at(minute: i64) -> Timestamp {
    Timestamp::from_second(1_780_000_000 + minute * 60).unwrap()
}

const SETTINGS: IdleSettings = IdleSettings {
    reminder: Duration::from_secs(30 * 60),
    scale_to_zero: false,
    read_only: false,
};

fn cluster(status: ClusterStatus, nodes: u32) -> ClusterSummary {
    let target = ClusterRef::new("p", "us-central1-a", "c");
    ClusterSummary {
        status,
        node_count: nodes,
        node_pools: vec![PoolSummary {
            initial_node_count: 3,
            ..PoolSummary::running("default-pool", "n1-standard-1", nodes)
        }],
        create_time: Some(at(0)),
        ..ClusterSummary::not_found(&target, "n1-standard-1")
    }
}

fn attempt(status: AttemptPhase, started: i64, finished: Option<i64>) -> AttemptSummary {
    AttemptSummary {
        name: "ml-training-job-1".into(),
        namespace: "default".into(),
        attempt: Some(1),
        status,
        reason: None,
        message: None,
        active: 0,
        ready: 0,
        succeeded: 0,
        failed: 0,
        completions: None,
        created: Some(at(started)),
        start_time: Some(at(started)),
        completion_time: None,
        finished_at: finished.map(at),
        deleting: false,
        ended_by: None,
        recovered_into: None,
        recorded_ends: Vec::new(),
        recorded_cost: None,
        ignores_disruptions: false,
        deleted_by: None,
        run: None,
        node_pool: None,
        code: None,
    }
}

/// A model of a connected cluster, with these attempts.
fn model(summary: ClusterSummary, attempts: &[AttemptSummary]) -> World {
    let mut model = World::default();
    model.apply(Report::Cluster(summary));
    model.apply(Report::Connected);
    for a in attempts {
        model.apply(Report::Job(JobWatchEvent::Job(Change::Applied(a.clone()))));
    }
    model
}

#[test]
fn a_running_cluster_without_attempts_is_reminded_of_after_the_idle_time() {
    let m = model(cluster(ClusterStatus::Running, 3), &[]);
    assert_eq!(decide(&m, &SETTINGS, at(29)), Idling::No);
    let idle = decide(&m, &SETTINGS, at(42));
    let Idling::Remind { idle_for, per_hour } = &idle else {
        panic!("{idle:?}")
    };
    assert_eq!(*idle_for, Duration::from_secs(42 * 60));
    assert!(per_hour.usd().unwrap() > 0.28);
    assert_eq!(
        idle.reminder().unwrap(),
        "idle 42m, no attempt running: the cluster costs ≈ $0.28/h"
    );
}

#[test]
fn an_attempt_going_is_not_idle_and_idleness_counts_from_the_last_ones_end() {
    let running = attempt(AttemptPhase::Running, 10, None);
    let m = model(cluster(ClusterStatus::Running, 3), &[running]);
    assert_eq!(decide(&m, &SETTINGS, at(300)), Idling::No);

    let failed = attempt(AttemptPhase::Failed, 10, Some(100));
    let m = model(cluster(ClusterStatus::Running, 3), &[failed]);
    assert_eq!(idle_since(&m), Some(at(100)));
    assert_eq!(decide(&m, &SETTINGS, at(120)), Idling::No);
    assert!(matches!(
        decide(&m, &SETTINGS, at(130)),
        Idling::Remind { .. }
    ));
}

#[test]
fn nothing_is_said_of_a_cluster_not_running_with_nodes_or_not_yet_connected() {
    let reconciling = model(cluster(ClusterStatus::Reconciling, 3), &[]);
    assert_eq!(decide(&reconciling, &SETTINGS, at(300)), Idling::No);
    let no_nodes = model(cluster(ClusterStatus::Running, 0), &[]);
    assert_eq!(decide(&no_nodes, &SETTINGS, at(300)), Idling::No);
    let mut unconnected = model(cluster(ClusterStatus::Running, 3), &[]);
    unconnected.apply(Report::Disconnected);
    assert_eq!(decide(&unconnected, &SETTINGS, at(300)), Idling::No);
}

#[test]
fn scale_to_zero_is_opt_in_and_never_in_read_only() {
    let m = model(cluster(ClusterStatus::Running, 3), &[]);
    let opted = IdleSettings {
        scale_to_zero: true,
        ..SETTINGS
    };
    let idle = decide(&m, &opted, at(31));
    assert!(matches!(idle, Idling::ScaleToZero { .. }), "{idle:?}");
    assert!(
        idle.reminder()
            .unwrap()
            .ends_with("scaling the nodes to zero")
    );
    assert_eq!(decide(&m, &opted, at(29)), Idling::No);
    let read_only = IdleSettings {
        read_only: true,
        ..opted
    };
    assert!(matches!(
        decide(&m, &read_only, at(31)),
        Idling::Remind { .. }
    ));
}

#[test]
fn settings_come_from_the_config() {
    let config =
        crate::config::Config::parse("idle-reminder = \"2s\"\nscale-to-zero-when-idle = true\n")
            .unwrap();
    let settings = IdleSettings::of(&config, false);
    assert_eq!(settings.reminder, Duration::from_secs(2));
    assert!(settings.scale_to_zero && !settings.read_only);
    assert!(IdleSettings::of(&config, true).read_only);
}

#[test]
fn an_idle_spell_is_news_once_and_only_the_recoverer_scales_it_to_zero() {
    let mut world = World::default();
    let settings = crate::engine::policies::Settings {
        idle: IdleSettings {
            scale_to_zero: true,
            ..SETTINGS
        },
        ..crate::engine::policies::Settings::default()
    };
    let now = |minute| crate::engine::clock::Now {
        wall: at(minute),
        mono: std::time::Instant::now(),
    };
    let mut idle = Idle::default();
    let doing = Doing::default();
    // Without a cluster there is no idle spell to tell.
    assert_eq!(
        idle.decide(&world, &doing, &settings, now(40)),
        Decisions::default()
    );
    world.apply(Report::Target(crate::engine::TargetInfo {
        place: "p/us-central1-a".into(),
        cluster: "c".into(),
        managed: true,
        unmanaged_reason: None,
        simulated: false,
    }));
    world.apply(Report::Cluster(cluster(ClusterStatus::Running, 3)));
    world.apply(Report::Connected);
    let decided = idle.decide(&world, &doing, &settings, now(40));
    let [notice] = decided.notices.as_slice() else {
        panic!("{decided:?}")
    };
    assert_eq!(notice.sent_as(), Some(crate::vocabulary::Kind::Idle));
    assert!(
        notice.text.starts_with("idle 40m, no attempt running"),
        "{}",
        notice.text
    );
    assert!(decided.commands.is_empty(), "not the recoverer");
    crate::engine::world::fixtures::hold_lease(&mut world, true);
    let decided = idle.decide(&world, &doing, &settings, now(45));
    assert!(decided.notices.is_empty(), "told once");
    assert_eq!(
        decided.commands,
        vec![crate::engine::Command::ScaleNodePools(
            crate::gke::resize::Scale::ToZero
        )]
    );
    assert_eq!(
        idle.decide(&world, &doing, &settings, now(46)),
        Decisions::default(),
        "not again while it stays idle"
    );
}
