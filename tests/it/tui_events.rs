//! What workers report, folded into the model (`World::apply`) and taken in by a viewer
//! (`App::on_model`): stale tails ignored, new attempts followed, relists, troubles kept by
//! source, provisioning, notices, and when the screen needs drawing.
// Helpers outside #[test] functions unwrap too (clippy.toml allows it only inside them).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::tui as common_tui;

use common_tui::*;
use crossterm::event::KeyCode;
use gantry::engine::world::cluster::ClusterPhase;
use gantry::engine::world::trouble::TroubleSource;
use gantry::engine::{Command, Report};
use gantry::gke::{ClusterStatus, OperationKind, ProvisionEvent};
use gantry::k8s::logs::{StreamEnd, TailEvent};
use gantry::k8s::status::AttemptPhase;
use gantry::k8s::watch::{Change, JobWatchEvent};
use gantry::keys::Action;
use gantry::vocabulary::Severity;

// ---------------------------------------------------------------------------------------------
// Worker events

#[test]
fn stale_tail_events_are_ignored() {
    let mut app = with_attempts(false);
    let old = app.model.logs.generation;
    // A retry: the store moves on to the new attempt, and the old tail's events come late.
    app.on_event(job_event(Change::Applied(attempt(
        "ml-training-job-3",
        3,
        AttemptPhase::Running,
    ))));
    let new = app.model.logs.generation;
    assert_eq!(new, old + 1);

    for event in [
        TailEvent::Lines {
            pod: POD_OOM.into(),
            lines: vec![line("late line of the old tail")],
        },
        TailEvent::PodEnded {
            pod: POD_OOM.into(),
            why: StreamEnd::Failed("gone".into()),
        },
        TailEvent::Reconnecting {
            pod: POD_OOM.into(),
            error: "reset".into(),
        },
        TailEvent::SaveFailed {
            pod: POD_OOM.into(),
            error: "disk full".into(),
        },
        TailEvent::SavedByAnother {
            pod: POD_OOM.into(),
        },
        TailEvent::WatchTrouble {
            error: "410 Gone".into(),
        },
    ] {
        assert!(
            app.on_event(Report::Tail {
                generation: old,
                event
            })
            .is_empty()
        );
    }
    app.on_event(Report::LogsSavedTo {
        generation: old,
        dir: "/old".into(),
    });
    assert!(app.model.logs.lines.is_empty());
    assert_eq!(app.model.logs.ended, 0);
    assert_eq!(app.model.logs.saved_to, None);
    assert_eq!(app.model.logs.pods_stale, None);
    assert_eq!(app.model.trouble(), None);
    assert_eq!(app.notice, None);

    tail_lines(&mut app, "ml-training-job-3-abcde", vec![line("fresh")]);
    app.on_event(Report::LogsSavedTo {
        generation: new,
        dir: "/new".into(),
    });
    assert_eq!(texts(&app), ["fresh"]);
    assert_eq!(app.model.logs.received, 1);
    assert_eq!(app.model.logs.saved_to.as_deref(), Some("/new"));
}

#[test]
fn tail_events_of_the_current_generation_are_shown() {
    let mut app = with_attempts(false);
    let generation = app.model.logs.generation;
    let tail = |event| Report::Tail { generation, event };
    app.on_event(tail(TailEvent::Reconnecting {
        pod: POD_RUNNING.into(),
        error: "connection reset".into(),
    }));
    assert_eq!(
        app.model.trouble(),
        Some("logs of ml-training-job-2-4xk9p: reconnecting (connection reset)")
    );
    // Another pod's stream ending says nothing of this one; its own lines do.
    app.on_event(tail(TailEvent::PodEnded {
        pod: POD_OOM.into(),
        why: StreamEnd::Completed,
    }));
    assert!(app.model.trouble().is_some());
    app.on_event(tail(TailEvent::Lines {
        pod: POD_RUNNING.into(),
        lines: vec![line("epoch 8/10")],
    }));
    assert_eq!(app.model.trouble(), None);
    app.on_event(tail(TailEvent::PodEnded {
        pod: POD_IMAGE.into(),
        why: StreamEnd::Failed("container is waiting to start".into()),
    }));
    // Both ends are counted; the failure is the notice that stays (a warning outranks the
    // other's information).
    assert_eq!(app.model.logs.ended, 2);
    assert!(notice(&app).contains("container is waiting to start"));
    assert_eq!(
        app.notice.as_ref().map(|n| n.severity),
        Some(Severity::Warning)
    );
    app.on_event(tail(TailEvent::SaveFailed {
        pod: POD_RUNNING.into(),
        error: "disk full".into(),
    }));
    assert_eq!(
        app.notice.as_ref().map(|n| n.severity),
        Some(Severity::Critical)
    );
    assert!(notice(&app).contains("could not save the logs of ml-training-job-2-4xk9p"));
}

#[test]
fn a_failing_pod_watch_of_the_tail_marks_the_logs_pane_until_it_recovers() {
    let mut app = with_attempts(false);
    let generation = app.model.logs.generation;
    let tail = |event| Report::Tail { generation, event };
    app.on_event(tail(TailEvent::WatchTrouble {
        error: "connection refused".into(),
    }));
    assert_eq!(
        app.model.logs.pods_stale.as_deref(),
        Some("connection refused")
    );
    // Lines of the pods already followed go on coming; the list is still stale.
    tail_lines(&mut app, POD_RUNNING, vec![line("epoch 7/10")]);
    assert!(app.model.logs.pods_stale.is_some());
    app.on_event(tail(TailEvent::WatchRecovered));
    assert_eq!(app.model.logs.pods_stale, None);

    // A new attempt is a new tail, with a watch of its own.
    app.on_event(tail(TailEvent::WatchTrouble {
        error: "410 Gone".into(),
    }));
    app.on_event(job_event(Change::Applied(attempt(
        "ml-training-job-3",
        3,
        AttemptPhase::Running,
    ))));
    assert_eq!(app.model.logs.pods_stale, None);
}

#[test]
fn a_pod_saved_by_another_gantry_is_a_warning_not_an_error() {
    let mut app = with_attempts(false);
    let generation = app.model.logs.generation;
    app.on_event(Report::Tail {
        generation,
        event: TailEvent::SavedByAnother {
            pod: POD_RUNNING.into(),
        },
    });
    assert_eq!(
        app.notice.as_ref().map(|n| n.severity),
        Some(Severity::Warning)
    );
    assert_eq!(
        notice(&app),
        "another Gantry is saving the log of ml-training-job-2-4xk9p: shown here, not saved"
    );
    assert_eq!(app.model.trouble(), None);
}

#[test]
fn lines_arriving_while_scrolled_back_keep_the_view_in_place() {
    let mut app = with_attempts(false);
    app.log_rows = 3;
    app.update(Action::PageUp);
    let shown = bottom_line(&app);
    tail_lines(&mut app, POD_RUNNING, vec![line("new 1"), line("new 2")]);
    assert_eq!(bottom_line(&app), shown);
    assert!(!app.logs.follow);
    app.update(Action::Bottom);
    assert_eq!(bottom_line(&app), "new 2");
}

#[test]
fn the_first_attempt_seen_and_each_new_one_are_followed() {
    let mut app = running(false);
    // Found at start, already finished: its logs are still there to read.
    assert_eq!(
        app.on_event(job_event(Change::Listed(failed_attempt()))),
        [store_follows(ATTEMPT_1, 1)]
    );
    for p in failed_pods() {
        assert!(app.on_event(pod_event(Change::Applied(p))).is_empty());
    }
    // The operator looks at a pod of attempt 1…
    app.on_key(key('j'));
    assert!(app.on_key(code(KeyCode::Enter)).is_empty());
    assert_eq!(app.logs.label(&app.model), FAILED_PODS[1]);
    // …then retries: the new attempt takes the logs pane over, and the selection resets.
    assert_eq!(
        app.on_event(job_event(Change::Applied(running_attempt()))),
        [store_follows(ATTEMPT_2, 2)]
    );
    assert_eq!(app.logs.label(&app.model), "all pods");
    assert_eq!(app.selection.attempt, None);
    assert_eq!(app.selection.pod, None);
    assert_eq!(
        app.selection
            .attempt(&app.model.jobs)
            .map(|a| a.name.as_str()),
        Some(ATTEMPT_2)
    );
    // Updates of the same attempt do not restart the tail.
    let mut later = running_attempt();
    later.ready = 2;
    assert!(app.on_event(job_event(Change::Applied(later))).is_empty());
    assert!(
        app.on_event(job_event(Change::Applied(failed_attempt())))
            .is_empty()
    );
    assert_eq!(app.model.logs.generation, 2);
}

#[test]
fn a_relist_drops_what_vanished_while_the_watch_was_down() {
    let mut app = with_attempts(false);
    assert_eq!(app.model.jobs.pods.len(), 6);

    app.on_event(pod_event(Change::Restarted));
    let [running_pod, image_pod, _oom] = <[_; 3]>::try_from(running_pods()).unwrap();
    app.on_event(pod_event(Change::Listed(running_pod)));
    app.on_event(pod_event(Change::Listed(image_pod)));
    assert_eq!(
        app.model.jobs.pods.len(),
        6,
        "nothing is dropped before Synced"
    );
    app.on_event(pod_event(Change::Synced));
    assert_eq!(pod_names(&app), [POD_RUNNING, POD_IMAGE]);

    // A Synced without a relist before it drops nothing.
    app.on_event(pod_event(Change::Synced));
    assert_eq!(pod_names(&app), [POD_RUNNING, POD_IMAGE]);

    // Applied adds, Deleted removes.
    let [_r, _i, oom] = <[_; 3]>::try_from(running_pods()).unwrap();
    app.on_event(pod_event(Change::Applied(oom.clone())));
    assert_eq!(pod_names(&app).len(), 3);
    app.on_event(pod_event(Change::Deleted(oom)));
    assert_eq!(pod_names(&app), [POD_RUNNING, POD_IMAGE]);

    // The same for attempts: attempt 1 was deleted while the watch was down.
    app.on_event(job_event(Change::Restarted));
    app.on_event(job_event(Change::Listed(running_attempt())));
    app.on_event(job_event(Change::Synced));
    let names: Vec<&str> = app
        .model
        .jobs
        .attempts()
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(names, [ATTEMPT_2]);
}

#[test]
fn a_failing_watch_is_shown_as_trouble_until_it_recovers() {
    let mut app = with_attempts(false);
    app.on_event(Report::Job(JobWatchEvent::Pod(Change::Trouble(
        "watch pods: 410 Gone".into(),
    ))));
    assert_eq!(app.model.trouble(), Some("watch pods: 410 Gone"));
    assert_eq!(app.model.jobs.pods.len(), 6, "what was known stays");
    app.on_event(pod_event(Change::Restarted));
    assert_eq!(app.model.trouble(), None);

    // Said outright, after a relist that changed nothing.
    app.on_event(Report::Job(JobWatchEvent::Job(Change::Trouble(
        "watch jobs: connection refused".into(),
    ))));
    assert!(app.model.trouble().is_some());
    app.on_event(Report::Job(JobWatchEvent::Job(Change::Recovered)));
    assert_eq!(app.model.trouble(), None);

    app.on_event(Report::Trouble {
        source: TroubleSource::Gke,
        message: "GKE: 503, retrying".into(),
    });
    assert!(app.model.trouble().is_some());
    app.on_event(Report::TroubleOver(TroubleSource::Gke));
    assert_eq!(app.model.trouble(), None);
}

#[test]
fn a_trouble_clears_only_when_its_own_source_recovers() {
    let mut app = with_attempts(false);
    let generation = app.model.logs.generation;
    app.on_event(Report::Trouble {
        source: TroubleSource::Gke,
        message: "GKE: 503".into(),
    });
    app.on_event(Report::Job(JobWatchEvent::Pod(Change::Trouble(
        "watch pods: 410 Gone".into(),
    ))));
    app.on_event(Report::Tail {
        generation,
        event: TailEvent::Reconnecting {
            pod: POD_RUNNING.into(),
            error: "connection reset".into(),
        },
    });
    assert_eq!(app.model.troubles.len(), 3);
    // Other watchers' news, a good poll of something else: nothing of these clears.
    app.on_event(Report::Job(JobWatchEvent::Job(Change::Recovered)));
    app.on_event(Report::TroubleOver(TroubleSource::Cluster));
    assert_eq!(app.model.troubles.len(), 3);
    app.on_event(Report::Job(JobWatchEvent::Pod(Change::Recovered)));
    assert_eq!(app.model.troubles.len(), 2);
    // A good poll that changes nothing draws nothing.
    app.dirty = false;
    app.on_event(Report::TroubleOver(TroubleSource::Cluster));
    assert!(!app.dirty);
    app.on_event(Report::TroubleOver(TroubleSource::Gke));
    assert!(app.dirty);
    assert_eq!(
        app.model.trouble(),
        Some("logs of ml-training-job-2-4xk9p: reconnecting (connection reset)")
    );
    // One viewer looking at one pod changes nothing of the streams the engine holds.
    app.on_key(code(KeyCode::Enter));
    assert!(app.model.trouble().is_some());

    // Deleting the cluster stops its streams, and their troubles go with them.
    assert_eq!(
        app.request(Command::DeleteCluster),
        [Command::DeleteCluster]
    );
    assert!(app.model.command_sent(&Command::DeleteCluster));
    assert_eq!(app.model.trouble(), None);
}

#[test]
fn provisioning_events_drive_the_cluster_pane() {
    let mut app = not_created(false);
    assert_eq!(app.model.cluster.phase(), ClusterPhase::NotCreated);
    assert!(!app.model.ticking());
    assert_eq!(app.on_key(key('c')), Vec::<Command>::new());
    assert_eq!(app.on_key(key('y')), [Command::CreateCluster]);

    let mut app = provisioning(false);
    assert_eq!(app.model.cluster.phase(), ClusterPhase::Provisioning);
    assert!(app.model.ticking(), "the elapsed counter moves by itself");
    let progress = app.model.cluster.progress.as_ref().unwrap();
    assert_eq!(progress.fraction(), 0.25);
    assert_eq!(progress.stage.as_ref().map(|s| s.index), Some(2));

    app.on_event(Report::Provision(ProvisionEvent::Retrying {
        request: "get operation",
        status: Some(503),
        attempt: 1,
        wait: std::time::Duration::from_millis(500),
        message: "GKE is busy".into(),
    }));
    assert_eq!(app.model.trouble(), Some("GKE is busy"));
    app.on_event(Report::Provision(ProvisionEvent::Cluster(cluster_summary(
        ClusterStatus::Running,
    ))));
    assert_eq!(app.model.trouble(), None);
    app.on_event(Report::Provision(ProvisionEvent::Finished {
        kind: OperationKind::Create,
        elapsed: std::time::Duration::from_secs(800),
    }));
    app.on_event(Report::ProvisionDone(Ok(
        "cluster ml-gke-cluster is RUNNING".into(),
    )));
    assert_eq!(app.model.cluster.phase(), ClusterPhase::Running);
    assert!(!app.model.ticking());
    assert_eq!(notice(&app), "cluster ml-gke-cluster is RUNNING");
    assert!(!app.model.connected);
    app.on_event(Report::Connected);
    assert_eq!(app.on_key(key('l')), [Command::LaunchJob]);
}

#[test]
fn a_failed_operation_is_an_error_and_only_the_workers_say_the_connection_is_gone() {
    let mut app = provisioning(false);
    app.on_event(Report::ProvisionDone(Err("quota exceeded for CPUS".into())));
    assert_eq!(app.model.cluster.busy, None);
    assert_eq!(
        app.model.cluster.last_error.as_deref(),
        Some("quota exceeded for CPUS")
    );
    assert_eq!(
        app.notice.as_ref().map(|n| n.severity),
        Some(Severity::Critical)
    );

    // GKE reconciles (an auto-upgrade, a node-pool change): the API server keeps serving, the
    // workers keep their connection, and launching still works, during and after.
    let mut app = running(false);
    assert!(app.model.connected);
    app.on_event(Report::Cluster(cluster_summary(ClusterStatus::Reconciling)));
    assert!(app.model.connected);
    assert_eq!(app.model.cluster.phase(), ClusterPhase::Other);
    assert_eq!(app.on_key(key('l')), [Command::LaunchJob]);
    app.on_event(Report::Cluster(cluster_summary(ClusterStatus::Running)));
    assert_eq!(app.on_key(key('l')), [Command::LaunchJob]);
    // The workers lost the cluster: refused until they are back.
    app.on_event(Report::Disconnected);
    assert!(refused(&mut app, key('l')).contains("connecting to the cluster"));
    app.on_event(Report::Connected);
    assert_eq!(app.on_key(key('l')), [Command::LaunchJob]);
}

#[test]
fn one_shot_results_become_notices() {
    let mut app = with_attempts(false);
    app.on_event(Report::Done {
        what: "delete pod x".into(),
        result: Err("forbidden".into()),
    });
    assert_eq!(notice(&app), "delete pod x: forbidden");
    assert_eq!(
        app.notice.as_ref().map(|n| n.severity),
        Some(Severity::Critical)
    );
    app.on_event(Report::Done {
        what: "launch".into(),
        result: Ok("launched ml-training-job-3".into()),
    });
    assert_eq!(notice(&app), "launched ml-training-job-3");
    assert_eq!(
        app.notice.as_ref().map(|n| n.severity),
        Some(Severity::Info)
    );
}

#[test]
fn every_bound_key_and_event_marks_the_screen_dirty() {
    let mut app = with_attempts(false);
    assert!(!app.dirty);
    app.on_key(key('x'));
    assert!(
        !app.dirty,
        "an unbound key draws nothing: a pasted megabyte would be a frame a key"
    );
    app.on_key(key('?'));
    assert!(app.dirty);
    app.dirty = false;
    app.on_event(Report::Connected);
    assert!(app.dirty);
    // Except a source's "all is well" with nothing to clear: it comes after every good poll.
    app.dirty = false;
    app.on_event(Report::TroubleOver(TroubleSource::Gke));
    assert!(!app.dirty);
}
