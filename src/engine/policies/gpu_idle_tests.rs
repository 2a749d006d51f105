#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;
use crate::dcgm::{Gpu, PodRef};
use crate::engine::Report;
use crate::engine::policies::Policy;
use crate::engine::policies::fixtures::*;
use crate::k8s::gpus::{GpuRead, NodeGpus, Reading};

const POD: &str = "job-1-0-abcde";

fn gpu(index: u32, util: f64, pod: Option<&str>) -> Gpu {
    Gpu {
        index,
        uuid: format!("GPU-{index}"),
        model: "NVIDIA L4".into(),
        pods: pod
            .map(|p| PodRef {
                namespace: "default".into(),
                pod: p.into(),
                container: "c".into(),
            })
            .into_iter()
            .collect(),
        util_percent: Some(util),
        fb_used_mib: Some(1000.0),
        fb_total_mib: Some(23034.0),
        power_w: Some(16.0),
        ..Gpu::default()
    }
}

/// A world with attempt `job-1` running one pod on a GPU node, metered and held.
fn world() -> World {
    let mut world = connected();
    see_attempt(
        &mut world,
        attempt("job-1", 1, 1, 0, 1, json!({"active": 1})),
    );
    see_pod(&mut world, pod("job-1", 0, running_since(0)));
    world
}

fn read(world: &mut World, secs: i64, gpus: Vec<Gpu>) {
    world.apply(Report::Gpus(GpuRead::Read(Reading {
        at: at(secs),
        nodes: vec![NodeGpus {
            node: "gke-node-1".into(),
            exporter: "gke-managed-system/dcgm-exporter-x".into(),
            gpus,
            per_gpu_hour: Some(0.7098),
        }],
    })));
}

fn settings_after(after: &str) -> Settings {
    let mut settings = settings();
    settings.guards.gpu_idle_after = after.into();
    settings
}

#[test]
fn a_gpu_idle_past_its_time_while_its_pod_runs_is_told_once_with_pod_gpu_and_cost() {
    let mut world = world();
    let settings = settings_after("10m");
    let mut policy = GpuIdle::default();
    let doing = idle_doing();
    for (secs, util) in [(0, 1.0), (300, 0.0)] {
        read(
            &mut world,
            secs,
            vec![gpu(0, util, Some(POD)), gpu(1, 0.0, None)],
        );
        let decided = policy.decide(&world, &doing, &settings, now(secs));
        assert_eq!(
            decided,
            Decisions::default(),
            "not idle long enough at {secs}s"
        );
    }
    read(
        &mut world,
        600,
        vec![gpu(0, 2.0, Some(POD)), gpu(1, 0.0, None)],
    );
    let decided = policy.decide(&world, &doing, &settings, now(600));
    let [notice] = decided.notices.as_slice() else {
        panic!("{decided:?}")
    };
    assert_eq!(notice.sent_as(), Some(Kind::GpuIdle));
    assert_eq!(notice.severity, Severity::Warning);
    assert_eq!(
        notice.text,
        "pod job-1-0-abcde GPU 0 (NVIDIA L4) idle for 10m: 2% busy (gpu-util); it costs $0.71/h"
    );
    assert!(decided.commands.is_empty(), "notify is the default");
    // The same reading judged again, and the next: told once per spell.
    assert!(
        policy
            .decide(&world, &doing, &settings, now(600))
            .notices
            .is_empty()
    );
    read(&mut world, 610, vec![gpu(0, 0.0, Some(POD))]);
    assert!(
        policy
            .decide(&world, &doing, &settings, now(610))
            .notices
            .is_empty()
    );
    // Busy again, then idle again: a new spell, told again after its own time.
    read(&mut world, 620, vec![gpu(0, 90.0, Some(POD))]);
    assert!(
        policy
            .decide(&world, &doing, &settings, now(620))
            .notices
            .is_empty()
    );
    read(&mut world, 630, vec![gpu(0, 0.0, Some(POD))]);
    assert!(
        policy
            .decide(&world, &doing, &settings, now(630))
            .notices
            .is_empty()
    );
    read(&mut world, 1230, vec![gpu(0, 0.0, Some(POD))]);
    assert_eq!(
        policy
            .decide(&world, &doing, &settings, now(1230))
            .notices
            .len(),
        1
    );
}

#[test]
fn a_gpu_of_no_training_pod_or_of_a_pod_not_running_is_never_judged() {
    let mut world = world();
    let settings = settings_after("1m");
    let mut policy = GpuIdle::default();
    let doing = idle_doing();
    for secs in [0, 120] {
        read(
            &mut world,
            secs,
            vec![gpu(0, 0.0, None), gpu(1, 0.0, Some("someone-elses-pod"))],
        );
        assert_eq!(
            policy.decide(&world, &doing, &settings, now(secs)),
            Decisions::default()
        );
    }
    see_pod(
        &mut world,
        pod(
            "job-1",
            0,
            json!({"phase": "Pending", "containerStatuses": []}),
        ),
    );
    for secs in [200, 400] {
        read(&mut world, secs, vec![gpu(0, 0.0, Some(POD))]);
        assert_eq!(
            policy.decide(&world, &doing, &settings, now(secs)),
            Decisions::default()
        );
    }
}

#[test]
fn the_watch_is_off_at_zero_percent() {
    let mut world = world();
    let mut settings = settings_after("1m");
    settings.guards.gpu_idle_below = 0.0;
    let mut policy = GpuIdle::default();
    for secs in [0, 120] {
        read(&mut world, secs, vec![gpu(0, 0.0, Some(POD))]);
        assert_eq!(
            policy.decide(&world, &idle_doing(), &settings, now(secs)),
            Decisions::default()
        );
    }
}

#[test]
fn end_attempt_ends_it_as_a_stall_by_the_recoverer_alone_and_once() {
    let mut world = world();
    let mut settings = settings_after("1m");
    settings.guards.gpu_idle_action = StallAction::EndAttempt;
    let doing = idle_doing();
    let mut policy = GpuIdle::default();
    read(&mut world, 0, vec![gpu(0, 0.0, Some(POD))]);
    policy.decide(&world, &doing, &settings, now(0));
    read(&mut world, 60, vec![gpu(0, 0.0, Some(POD))]);
    let decided = policy.decide(&world, &doing, &settings, now(60));
    assert_eq!(decided.notices.len(), 1);
    assert!(
        decided.commands.is_empty(),
        "not the recoverer: told, not ended"
    );

    hold_lease(&mut world, true);
    let mut policy = GpuIdle::default();
    read(
        &mut world,
        100,
        vec![gpu(0, 0.0, Some(POD)), gpu(1, 0.0, Some(POD))],
    );
    policy.decide(&world, &doing, &settings, now(100));
    read(
        &mut world,
        160,
        vec![gpu(0, 0.0, Some(POD)), gpu(1, 0.0, Some(POD))],
    );
    let decided = policy.decide(&world, &doing, &settings, now(160));
    assert_eq!(decided.notices.len(), 2, "each GPU told");
    let [crate::engine::Command::Recover { attempt, why, .. }] = decided.commands.as_slice() else {
        panic!("one recovery for both GPUs: {decided:?}")
    };
    assert_eq!(attempt, "job-1");
    assert!(why.contains("idle GPU"), "{why}");
    assert_eq!(policy.principal(), "guard");
}

#[test]
fn a_reading_lost_ends_every_spell() {
    let mut world = world();
    let settings = settings_after("1m");
    let mut policy = GpuIdle::default();
    let doing = idle_doing();
    read(&mut world, 0, vec![gpu(0, 0.0, Some(POD))]);
    policy.decide(&world, &doing, &settings, now(0));
    world.apply(Report::Gpus(GpuRead::Stopped));
    policy.decide(&world, &doing, &settings, now(30));
    read(&mut world, 60, vec![gpu(0, 0.0, Some(POD))]);
    assert!(
        policy
            .decide(&world, &doing, &settings, now(60))
            .notices
            .is_empty(),
        "idle since 60s, not 0s"
    );
}
