//! The App states the TUI tests start from, each built by feeding a fresh viewer the reports the
//! workers would send: from a cluster not yet created, through provisioning, to one running with
//! a failed attempt and a running one whose logs are followed.

use std::time::Duration;

use gantry::app::App;
use gantry::config::Config;
use gantry::engine::{Report, World};
use gantry::gke::{ClusterStatus, OperationKind, ProvisionEvent, Stage};
use gantry::k8s::watch::{Change, JobWatchEvent};
use gantry::keys::Keymap;

use super::{
    LOGS_DIR, NODE, POD_OOM, POD_RUNNING, Tui, cluster_summary, context_summary, context_target,
    events, failed_attempt, failed_pods, hand_made_summary, job_event, node_seen,
    not_found_summary, now, oom_lines, pod_event, running_attempt, running_pods, tail_lines,
    target, training_lines,
};

pub fn new_app(read_only: bool) -> Tui {
    Tui {
        model: World::default(),
        told: Default::default(),
        app: App::new(Config::default(), Keymap::default(), read_only),
    }
}

/// The cluster does not exist yet (GKE said NOT_FOUND).
pub fn not_created(read_only: bool) -> Tui {
    let mut app = new_app(read_only);
    app.on_event(Report::Target(target()));
    app.on_event(Report::Cluster(not_found_summary()));
    app
}

/// Create sent: GKE's operation is at stage 2 of 4, twelve minutes in.
pub fn provisioning(read_only: bool) -> Tui {
    let mut app = not_created(read_only);
    app.on_event(Report::Provision(ProvisionEvent::Started {
        kind: OperationKind::Create,
        operation: "operation-1717243200000-5f2a".into(),
    }));
    app.on_event(Report::Provision(ProvisionEvent::Cluster(cluster_summary(
        ClusterStatus::Provisioning,
    ))));
    app.on_event(Report::Provision(ProvisionEvent::Progress {
        kind: OperationKind::Create,
        status: "RUNNING".into(),
        detail: "Creating node pool default-pool (1 of 3 nodes ready)".into(),
        stage: Some(Stage {
            name: "CLUSTER_DEPLOYING".into(),
            status: "RUNNING".into(),
            index: 2,
            total: 4,
        }),
        metrics: vec![("nodes_done".into(), "1".into())],
        elapsed: Duration::from_secs(12 * 60 + 5),
        at: now(),
    }));
    app
}

/// An existing cluster used through `--context`: RUNNING and connected, no attempt yet.
pub fn context_cluster(read_only: bool) -> Tui {
    let mut app = new_app(read_only);
    app.on_event(Report::Target(context_target()));
    app.on_event(Report::Cluster(context_summary()));
    app.on_event(Report::Connected);
    app
}

/// The Node watch's first list: `count` nodes of `machine`, created with the cluster and
/// listed then, as by an engine that watched from the start (the cost so far is exact).
pub fn nodes_listed(app: &mut Tui, machine: &str, count: usize) {
    let created = cluster_summary(ClusterStatus::Running).create_time;
    let at = created.unwrap_or_else(now);
    let node = |change| Report::Node { change, at };
    app.on_event(node(Change::Restarted));
    for i in 0..count {
        let name = format!("{NODE}{i}");
        app.on_event(node(Change::Listed(node_seen(&name, machine, created))));
    }
    app.on_event(node(Change::Synced));
}

/// RUNNING and connected, its three nodes watched since its creation; no attempt yet.
pub fn running(read_only: bool) -> Tui {
    let mut app = new_app(read_only);
    app.on_event(Report::Target(target()));
    app.on_event(Report::Cluster(cluster_summary(ClusterStatus::Running)));
    app.on_event(Report::Connected);
    nodes_listed(&mut app, "n1-standard-1", 3);
    app
}

/// RUNNING and connected, told the config's cluster (as the workers do for GKE), and made by
/// hand unlike it: drifted.
pub fn drifted(read_only: bool) -> Tui {
    let mut app = new_app(read_only);
    app.on_event(Report::Target(target()));
    app.on_event(Report::Desired {
        cluster: Box::new(app.app.config.cluster.clone()),
        may_scale_to_zero: false,
        watcher: None,
    });
    app.on_event(Report::Cluster(hand_made_summary()));
    app.on_event(Report::Connected);
    nodes_listed(&mut app, "e2-medium", 1);
    app
}

/// RUNNING with only the failed first attempt (and its three failed pods).
pub fn with_failed_attempt(read_only: bool) -> Tui {
    let mut app = running(read_only);
    app.on_event(job_event(Change::Applied(failed_attempt())));
    for p in failed_pods() {
        app.on_event(pod_event(Change::Applied(p)));
    }
    app
}

/// RUNNING with a failed attempt and a running one (pods Running, ImagePullBackOff,
/// OOMKilled), their events, and the running attempt's merged logs being followed.
pub fn with_attempts(read_only: bool) -> Tui {
    let mut app = with_failed_attempt(read_only);
    app.on_event(job_event(Change::Applied(running_attempt())));
    for p in running_pods() {
        app.on_event(pod_event(Change::Applied(p)));
    }
    for e in events() {
        app.on_event(Report::Job(JobWatchEvent::Event(Change::Applied(e))));
    }
    let generation = app.model.logs.generation;
    app.on_event(Report::LogsSavedTo {
        generation,
        dir: LOGS_DIR.into(),
    });
    tail_lines(&mut app, POD_OOM, oom_lines());
    tail_lines(&mut app, POD_RUNNING, training_lines());
    app.notice = None;
    app.dirty = false;
    app
}
