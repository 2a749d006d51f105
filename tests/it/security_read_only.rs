//! Security drills, read-only through the App: the gate refuses every command that changes
//! the cloud, and no key in any pane or state asks for one when read-only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gantry::app::{App, Focus};
use gantry::config::Config;
use gantry::engine::{Command, Report, TargetInfo, World};
use gantry::gke::{ClusterRef, ClusterStatus, ClusterSummary};
use gantry::k8s::status::{AttemptSummary, PodSummary};
use gantry::k8s::watch::{Change, JobWatchEvent};
use gantry::keys::{Action, Keymap};
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};

// ---- Read-only through the App ----

fn every_command() -> Vec<Command> {
    vec![
        Command::CreateCluster,
        Command::DeleteCluster,
        Command::LaunchJob,
        Command::RetryJob,
        Command::DeleteAttempt("ml-training-job".into()),
        Command::DeletePod("ml-training-job-0-abcde".into()),
        Command::ScaleNodePools(gantry::gke::resize::Scale::ToZero),
        Command::ScaleNodePools(gantry::gke::resize::Scale::ToConfig),
        Command::ApplyPlan { generation: 1 },
        Command::FetchLogs {
            attempt: "ml-training-job".into(),
            pod: None,
            previous: false,
            generation: 1,
        },
        Command::RecordEnds(Vec::new()),
        Command::RecordCost(gantry::meter::ledger::Entry {
            job: "ml-training-job-3".into(),
            cost: gantry::vocabulary::cost::Recorded {
                version: 1,
                usd: Some(1.25),
                as_of: jiff::Timestamp::UNIX_EPOCH,
                since: jiff::Timestamp::UNIX_EPOCH,
                partial: false,
                nodes: None,
            },
        }),
        Command::TakeLease {
            from: Some("someone@there pid 1".into()),
            silent: Some(std::time::Duration::from_secs(15)),
            judged: None,
        },
        Command::Recover {
            attempt: "ml-training-job-3".into(),
            why: "rank 1 of ml-training-job-3 preempted".into(),
            ended_by: gantry::vocabulary::attempt::EndedBy::Preempted,
            next: 4,
            most: 11,
        },
        Command::FallBack {
            attempt: "ml-training-job-3".into(),
            pool: "default-pool".into(),
            why: "default-pool has had no spot capacity for 10m".into(),
            plan: "+ pool default-pool-on-demand".into(),
            next: 4,
            most: 11,
        },
        Command::EndRun {
            attempt: "ml-training-job-3".into(),
            why: "too many preemptions".into(),
            ended_by: gantry::vocabulary::attempt::EndedBy::MaxRecoveries,
        },
        Command::GiveWayLease,
    ]
}

#[test]
fn the_gate_refuses_every_mutating_command() {
    for command in every_command() {
        let mut app = App::new(Config::default(), Keymap::default(), true);
        let out = app.request(command.clone());
        if command.mutates() {
            assert!(out.is_empty(), "{command:?} went through read-only");
            let notice = app.notice.clone().unwrap();
            assert!(notice.text.starts_with("read-only: refused"), "{notice:?}");
        } else {
            assert_eq!(out, vec![command]);
        }
    }
    // The walk covers every variant: a new Command must be added here (this match says so).
    for c in every_command() {
        match c {
            Command::CreateCluster
            | Command::DeleteCluster
            | Command::LaunchJob
            | Command::RetryJob
            | Command::DeleteAttempt(_)
            | Command::DeletePod(_)
            | Command::ScaleNodePools(_)
            | Command::ApplyPlan { .. }
            | Command::RecordEnds(_)
            | Command::RecordCost(_)
            | Command::TakeLease { .. }
            | Command::GiveWayLease
            | Command::Recover { .. }
            | Command::FallBack { .. }
            | Command::EndRun { .. }
            | Command::FetchLogs { .. } => {}
        }
    }
}

/// The support crate's attempt, running with its one pod.
fn job(name: &str, attempt: u32, status: gantry::k8s::status::AttemptPhase) -> AttemptSummary {
    AttemptSummary {
        active: 1,
        ready: 1,
        completions: Some(1),
        ..common::tui::attempt(name, attempt, status)
    }
}

fn pod(name: &str, job: &str) -> PodSummary {
    PodSummary {
        name: name.into(),
        namespace: "default".into(),
        job: job.into(),
        attempt: Some(1),
        index: Some(0),
        phase: "Running".into(),
        reason: None,
        message: None,
        exit_code: None,
        restarts: 1,
        node: None,
        started: true,
        terminated: false,
        created: None,
        deleting: false,
        gpus: 0,
        running_since: None,
        image: String::new(),
        node_selector: Vec::new(),
        fate: None,
        requests: Default::default(),
        deleted_by: None,
    }
}

/// Apps in every state the keys care about: no cluster, cluster running with finished and
/// running attempts and pods, a help overlay, a search being typed.
fn states(read_only: bool, keymap: &Keymap) -> Vec<(String, World, App)> {
    use gantry::k8s::status::AttemptPhase::*;
    let target = ClusterRef::new(DEMO_PROJECT, DEMO_LOCATION, common::CLUSTER);
    let info = TargetInfo {
        place: "demo-project/us-central1-a".into(),
        cluster: common::CLUSTER.into(),
        managed: true,
        unmanaged_reason: None,
        simulated: true,
    };
    let mut out = Vec::new();
    for (label, status, attempts) in [
        ("no cluster", ClusterStatus::NotFound, vec![]),
        ("provisioning", ClusterStatus::Provisioning, vec![]),
        ("running, no attempt", ClusterStatus::Running, vec![]),
        (
            "running, attempt finished",
            ClusterStatus::Running,
            vec![job("ml-training-job", 1, Failed)],
        ),
        (
            "running, attempt running",
            ClusterStatus::Running,
            vec![
                job("ml-training-job", 1, Failed),
                job("ml-training-job-2", 2, Running),
            ],
        ),
    ] {
        for focus in [Focus::Jobs, Focus::Pods, Focus::Logs, Focus::Events] {
            for overlay in [false, true] {
                let mut app = App::new(Config::default(), keymap.clone(), read_only);
                let mut model = World::default();
                model.apply(Report::Target(info.clone()));
                let mut summary = ClusterSummary::not_found(&target, "n1-standard-1");
                summary.status = status;
                model.apply(Report::Cluster(summary));
                if status == ClusterStatus::Running {
                    model.apply(Report::Connected);
                }
                for a in &attempts {
                    model.apply(Report::Job(JobWatchEvent::Job(Change::Applied(a.clone()))));
                    model.apply(Report::Job(JobWatchEvent::Pod(Change::Applied(pod(
                        &format!("{}-0-abcde", a.name),
                        &a.name,
                    )))));
                }
                app.on_model(&model, &Default::default());
                app.focus = focus;
                if overlay {
                    app.update(Action::Help, &model);
                }
                out.push((format!("{label}, {focus:?}, overlay {overlay}"), model, app));
            }
        }
    }
    out
}

/// Every key a keymap binds to a mutating action, plus the dialog answers.
fn mutating_keys(keymap: &Keymap) -> Vec<KeyEvent> {
    let mut keys = Vec::new();
    for c in (' '..='~').chain(['é']) {
        for m in [
            KeyModifiers::NONE,
            KeyModifiers::SHIFT,
            KeyModifiers::CONTROL,
        ] {
            let k = KeyEvent::new(KeyCode::Char(c), m);
            if keymap.action_for(&k).is_some_and(|a| a.mutates()) {
                keys.push(k);
            }
        }
    }
    keys.extend(
        [
            KeyCode::Enter,
            KeyCode::Delete,
            KeyCode::Backspace,
            KeyCode::Esc,
        ]
        .map(|c| KeyEvent::new(c, KeyModifiers::NONE)),
    );
    keys
}

#[test]
fn read_only_keys_in_every_pane_and_state_ask_for_nothing() {
    // The default keys, and a config that rebinds the mutating actions.
    let rebound = Keymap::with_overrides(
        &[
            ("launch", "L"),
            ("retry", "ctrl-r"),
            ("delete", "x,d"),
            ("create-cluster", "C"),
            ("delete-cluster", "ctrl-x"),
        ]
        .into_iter()
        .map(|(a, k)| (a.to_string(), k.to_string()))
        .collect(),
    )
    .unwrap();
    for keymap in [Keymap::default(), rebound] {
        let keys = mutating_keys(&keymap);
        assert!(keys.len() >= 5, "{keys:?}");
        for (label, model, mut app) in states(true, &keymap) {
            for key in &keys {
                // Each key, then each dialog answer after it: whatever opens, nothing mutates.
                for follow_up in [None, Some('y'), Some('Y')] {
                    let mut out = app.on_key(*key, &model);
                    if let Some(c) = follow_up {
                        out.extend(
                            app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), &model),
                        );
                        out.extend(
                            app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), &model),
                        );
                    }
                    let bad: Vec<_> = out.iter().filter(|c| c.mutates()).collect();
                    assert!(bad.is_empty(), "{label}: {key:?} gave {bad:?}");
                    assert!(
                        !matches!(app.overlay, Some(gantry::app::Overlay::Confirm(_))),
                        "{label}: {key:?} opened a dialog in read-only mode"
                    );
                }
            }
            // Typing a cluster's name after X cannot confirm anything either.
            for c in common::CLUSTER.chars() {
                assert!(
                    app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), &model)
                        .iter()
                        .all(|c| !c.mutates())
                );
            }
        }
    }
    // The same states without read-only do ask (the walk would notice a dead key).
    let asked = states(false, &Keymap::default())
        .into_iter()
        .filter(|(l, _, _)| {
            l.contains("attempt finished") && l.contains("Pods") && l.ends_with("false")
        })
        .map(|(_, model, mut app)| {
            let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
            let mut out = app.on_key(key('l'), &model);
            out.extend(app.on_key(key('d'), &model));
            out.extend(app.on_key(key('y'), &model));
            out
        })
        .next()
        .unwrap();
    assert_eq!(
        asked,
        vec![
            Command::LaunchJob,
            Command::DeletePod("ml-training-job-0-abcde".into())
        ]
    );
}
