//! Shared by the TUI tests: App states built from plain values (the events workers would send),
//! with fixed timestamps so that what is drawn does not depend on the clock.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gantry::app::{App, Overlay};
use gantry::config::Config;
use gantry::engine::model::FollowLogs;
use gantry::engine::{Command, Model, Report, Severity, TargetInfo};
use gantry::gke::summary::PoolSummary;
use gantry::gke::{ClusterStatus, ClusterSummary, OperationKind, ProvisionEvent, Stage};
use gantry::k8s::logs::{LogLine, TailEvent};
use gantry::k8s::status::{AttemptPhase, AttemptSummary, EventSummary, PodSummary};
use gantry::k8s::watch::{Change, JobWatchEvent};
use gantry::keys::Keymap;
use gantry::meter::NodeSeen;

pub use crate::CLUSTER;
pub const PLACE: &str = "demo-project/us-central1-a";
/// The first attempt keeps the Job's name; later ones get `-N`.
pub const ATTEMPT_1: &str = "ml-training-job";
pub const ATTEMPT_2: &str = "ml-training-job-2";
pub const FAILED_PODS: [&str; 3] = [
    "ml-training-job-7q2vd",
    "ml-training-job-b8kfw",
    "ml-training-job-zt5nm",
];
pub const POD_RUNNING: &str = "ml-training-job-2-4xk9p";
pub const POD_IMAGE: &str = "ml-training-job-2-9fzq7";
pub const POD_OOM: &str = "ml-training-job-2-m2c8d";
pub const NODE: &str = "gke-ml-gke-cluster-default-pool-1a2b3c4d-x1y2";
pub const LOGS_DIR: &str = "/home/op/.local/state/gantry/logs/ml-gke-cluster/ml-training-job-2";

/// The `now` every frame is drawn at.
pub fn now() -> jiff::Timestamp {
    "2025-06-01T12:00:00Z".parse().unwrap()
}

/// A fixed time `secs` before `now()`.
pub fn ago(secs: i64) -> Option<jiff::Timestamp> {
    Some(now() - jiff::SignedDuration::from_secs(secs))
}

// ---------------------------------------------------------------------------------------------
// A viewer and the model it reads, as the engine would feed them

/// One viewer (`app`) of a model the test feeds with the events workers would send. Reads as the
/// viewer it wraps (`Deref`); `on_event`, `on_key` and `update` pass the model along.
pub struct Tui {
    pub model: Model,
    pub app: App,
}

impl std::ops::Deref for Tui {
    type Target = App;
    fn deref(&self) -> &App {
        &self.app
    }
}

impl std::ops::DerefMut for Tui {
    fn deref_mut(&mut self) -> &mut App {
        &mut self.app
    }
}

impl Tui {
    /// What a worker reports: folded into the model, then taken in by the viewer. Returns the
    /// log follow the engine would start (a new newest attempt).
    pub fn on_event(&mut self, event: Report) -> Vec<FollowLogs> {
        let applied = self.model.apply(event);
        if applied.changed {
            self.app.on_model(&self.model);
        }
        applied.follow.into_iter().collect()
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Command> {
        self.app.on_key(key, &self.model)
    }

    pub fn update(&mut self, action: gantry::keys::Action) -> Vec<Command> {
        self.app.update(action, &self.model)
    }

    /// Lines of the viewer's own fetch.
    pub fn on_fetched(&mut self, generation: u64, event: TailEvent) {
        self.app.on_fetched(generation, event)
    }

    /// Texts of the lines the viewer shows, oldest first.
    pub fn shown_texts(&self) -> Vec<String> {
        let shown = self.app.logs.shown(&self.model);
        (0..shown.store.lines.len())
            .filter(|&i| shown.matches(i))
            .filter_map(|i| shown.store.lines.get(i).map(|l| l.text.to_string()))
            .collect()
    }

    /// Lines held below the bottom of the view (0 when following the newest).
    pub fn scrolled(&self) -> usize {
        self.app.logs.shown(&self.model).below()
    }

    /// The text of the line at the bottom of the view.
    pub fn bottom_text(&self) -> Option<String> {
        let shown = self.app.logs.shown(&self.model);
        shown
            .bottom
            .and_then(|b| shown.store.lines.get(b))
            .map(|l| l.text.to_string())
    }

    pub fn draw(&self, frame: &mut ratatui::Frame) {
        gantry::ui::draw(
            frame,
            &self.model,
            &self.app,
            &gantry::ui::theme::Theme::plain(),
            now(),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// What the viewer tests look at

/// The viewer's own fetch of an attempt's logs (not the newest attempt's, or a previous
/// container's).
pub fn fetch(attempt: &str, pod: Option<&str>, previous: bool, generation: u64) -> Command {
    Command::FetchLogs {
        attempt: attempt.into(),
        pod: pod.map(Into::into),
        previous,
        generation,
    }
}

/// What the engine follows into its store when an attempt is the newest.
pub fn store_follows(attempt: &str, generation: u64) -> FollowLogs {
    FollowLogs {
        attempt: attempt.into(),
        generation,
    }
}

pub fn texts(app: &Tui) -> Vec<String> {
    app.model
        .logs
        .lines
        .iter()
        .map(|e| e.text.to_string())
        .collect()
}

/// The text of the line at the bottom of the logs view.
pub fn bottom_line(app: &Tui) -> String {
    app.bottom_text().unwrap()
}

pub fn pod_names(app: &Tui) -> Vec<String> {
    app.model.jobs.pods.items.keys().cloned().collect()
}

pub fn is_confirm(app: &Tui) -> bool {
    matches!(app.overlay, Some(Overlay::Confirm(_)))
}

pub fn refused(app: &mut Tui, k: KeyEvent) -> String {
    let before = app.overlay.clone();
    let commands = app.on_key(k);
    assert!(commands.is_empty(), "{k:?} asked for {commands:?}");
    assert_eq!(app.overlay, before, "{k:?} opened a dialog");
    let n = app.notice.clone().expect("a refusal says why");
    assert_eq!(n.severity, Severity::Warning, "{n:?}");
    n.text
}

// ---------------------------------------------------------------------------------------------
// Keys

pub fn key(c: char) -> KeyEvent {
    let modifiers = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    KeyEvent::new(KeyCode::Char(c), modifiers)
}

pub fn code(code: KeyCode) -> KeyEvent {
    let modifiers = if code == KeyCode::BackTab {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    KeyEvent::new(code, modifiers)
}

pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Presses each character in turn; returns every command asked for.
pub fn type_text(app: &mut Tui, text: &str) -> Vec<Command> {
    text.chars().flat_map(|c| app.on_key(key(c))).collect()
}

pub fn notice(app: &App) -> String {
    app.notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Values the workers send

pub fn target() -> TargetInfo {
    TargetInfo {
        place: PLACE.into(),
        cluster: CLUSTER.into(),
        managed: true,
        unmanaged_reason: None,
        simulated: false,
    }
}

pub const CONTEXT_REASON: &str = "not Gantry's cluster: create and delete it with its own tools";

/// An existing cluster used through a kubeconfig context (`--context`).
pub fn context_target() -> TargetInfo {
    TargetInfo {
        place: "context gke_demo_training".into(),
        cluster: "gke_demo_training".into(),
        managed: false,
        unmanaged_reason: Some(CONTEXT_REASON.into()),
        simulated: false,
    }
}

pub fn cluster_summary(status: ClusterStatus) -> ClusterSummary {
    let up = status == ClusterStatus::Running;
    ClusterSummary {
        name: CLUSTER.into(),
        project: "demo-project".into(),
        location: "us-central1-a".into(),
        status,
        status_message: String::new(),
        node_count: if up { 3 } else { 0 },
        machine_type: "n1-standard-1".into(),
        endpoint: if up {
            "34.118.12.7".into()
        } else {
            String::new()
        },
        version: "1.33.2-gke.1111000".into(),
        node_version: "1.33.2-gke.1111000".into(),
        node_pools: vec![PoolSummary {
            name: "default-pool".into(),
            status: if up { "RUNNING" } else { "PROVISIONING" }.into(),
            machine_type: "n1-standard-1".into(),
            initial_node_count: 3,
            node_count: if up { 3 } else { 0 },
            spot: false,
            accelerator: None,
            accelerator_type: None,
            accelerator_count: 0,
            disk_type: "pd-balanced".into(),
            disk_size_gb: 100,
            version: "1.33.2-gke.1111000".into(),
            autoscaling: None,
            fallback_for: None,
        }],
        locations: vec!["us-central1-a".into()],
        create_time: if up { ago(2 * 3600 + 15 * 60) } else { None },
        labels: Default::default(),
    }
}

/// What the workers report for a kubeconfig context's cluster: the server in `location`, the
/// API server's version and the nodes; no pools, no endpoint.
pub fn context_summary() -> ClusterSummary {
    ClusterSummary {
        name: "gke_demo_training".into(),
        project: String::new(),
        location: "https://34.118.12.7".into(),
        status: ClusterStatus::Running,
        status_message: String::new(),
        node_count: 3,
        machine_type: String::new(),
        endpoint: String::new(),
        version: "1.33.2-gke.1111000".into(),
        node_version: String::new(),
        node_pools: Vec::new(),
        locations: Vec::new(),
        create_time: None,
        labels: Default::default(),
    }
}

pub fn not_found_summary() -> ClusterSummary {
    ClusterSummary {
        status: ClusterStatus::NotFound,
        node_count: 0,
        endpoint: String::new(),
        version: String::new(),
        node_version: String::new(),
        node_pools: Vec::new(),
        locations: Vec::new(),
        ..cluster_summary(ClusterStatus::NotFound)
    }
}

pub fn attempt(name: &str, number: u32, status: AttemptPhase) -> AttemptSummary {
    AttemptSummary {
        name: name.into(),
        namespace: "default".into(),
        attempt: Some(number),
        status,
        reason: None,
        message: None,
        active: 0,
        ready: 0,
        succeeded: 0,
        failed: 0,
        completions: None,
        created: None,
        start_time: None,
        completion_time: None,
        finished_at: None,
        deleting: false,
        recorded_ends: Vec::new(),
        recorded_cost: None,
        ignores_disruptions: false,
        deleted_by: None,
        run: None,
        node_pool: None,
    }
}

/// Attempt 1: failed for good after three pods failed (backoffLimit 2).
pub fn failed_attempt() -> AttemptSummary {
    AttemptSummary {
        reason: Some("BackoffLimitExceeded".into()),
        message: Some("Job has reached the specified backoff limit".into()),
        failed: 3,
        created: ago(30 * 60),
        start_time: ago(30 * 60),
        completion_time: ago(22 * 60),
        finished_at: ago(22 * 60),
        ..attempt(ATTEMPT_1, 1, AttemptPhase::Failed)
    }
}

/// Attempt 2: running, with one pod running, one that cannot pull its image, one OOM-killed.
pub fn running_attempt() -> AttemptSummary {
    AttemptSummary {
        active: 2,
        ready: 1,
        failed: 1,
        created: ago(10 * 60),
        start_time: ago(10 * 60),
        ..attempt(ATTEMPT_2, 2, AttemptPhase::Running)
    }
}

pub fn pod(name: &str, job: &str, phase: &str) -> PodSummary {
    PodSummary {
        name: name.into(),
        namespace: "default".into(),
        job: job.into(),
        attempt: None,
        index: None,
        phase: phase.into(),
        reason: None,
        message: None,
        exit_code: None,
        restarts: 0,
        node: Some(NODE.into()),
        started: phase != "Pending",
        terminated: phase == "Succeeded" || phase == "Failed",
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

pub fn failed_pods() -> Vec<PodSummary> {
    FAILED_PODS
        .iter()
        .enumerate()
        .map(|(i, name)| PodSummary {
            reason: Some("Error".into()),
            exit_code: Some(1),
            attempt: Some(1),
            created: ago(30 * 60 - 150 * i as i64),
            ..pod(name, ATTEMPT_1, "Failed")
        })
        .collect()
}

pub fn running_pods() -> Vec<PodSummary> {
    vec![
        PodSummary {
            attempt: Some(2),
            created: ago(10 * 60),
            ..pod(POD_RUNNING, ATTEMPT_2, "Running")
        },
        PodSummary {
            attempt: Some(2),
            reason: Some("ImagePullBackOff".into()),
            message: Some(
                "Back-off pulling image \"gcr.io/demo-project/ml-training-job:v2\"".into(),
            ),
            created: ago(9 * 60),
            ..pod(POD_IMAGE, ATTEMPT_2, "Pending")
        },
        PodSummary {
            attempt: Some(2),
            reason: Some("OOMKilled".into()),
            exit_code: Some(137),
            created: ago(8 * 60),
            ..pod(POD_OOM, ATTEMPT_2, "Failed")
        },
    ]
}

/// `(name, kind, object, type, reason, message, count, seconds ago)`
type EventRow<'a> = (
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    i32,
    i64,
);

pub fn event(row: EventRow<'_>) -> EventSummary {
    let (name, kind, object, type_, reason, message, count, secs_ago) = row;
    EventSummary {
        name: name.into(),
        kind: kind.into(),
        object: object.into(),
        type_: type_.into(),
        reason: reason.into(),
        message: message.into(),
        count,
        last_seen: ago(secs_ago),
    }
}

pub fn events() -> Vec<EventSummary> {
    let created = format!("Created pod: {POD_RUNNING}");
    [
        (
            "e1",
            "Job",
            ATTEMPT_1,
            "Warning",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
            1,
            22 * 60,
        ),
        (
            "e2",
            "Job",
            ATTEMPT_2,
            "Normal",
            "SuccessfulCreate",
            created.as_str(),
            1,
            10 * 60,
        ),
        (
            "e3",
            "Pod",
            POD_RUNNING,
            "Normal",
            "Started",
            "Started container ml-training-container",
            1,
            9 * 60 + 30,
        ),
        (
            "e4",
            "Pod",
            POD_IMAGE,
            "Warning",
            "Failed",
            "Error: ImagePullBackOff",
            6,
            60,
        ),
        (
            "e5",
            "Pod",
            POD_OOM,
            "Warning",
            "OOMKilling",
            "Memory cgroup out of memory: Killed process 4242 (python)",
            1,
            7 * 60,
        ),
    ]
    .into_iter()
    .map(event)
    .collect()
}

pub fn line(text: &str) -> LogLine {
    LogLine {
        ts: None,
        bytes: bytes::Bytes::from(text.to_string()),
        continues: false,
    }
}

/// A line stamped `secs` before `now()`.
pub fn stamped(text: &str, secs_ago: i64) -> LogLine {
    LogLine {
        ts: ago(secs_ago).map(|t| t.as_nanosecond()),
        ..line(text)
    }
}

pub fn job_event(change: Change<AttemptSummary>) -> Report {
    Report::Job(JobWatchEvent::Job(change))
}

pub fn pod_event(change: Change<PodSummary>) -> Report {
    Report::Job(JobWatchEvent::Pod(change))
}

/// The lines of the followed tail (current generation).
pub fn tail_lines(app: &mut Tui, pod: &str, lines: Vec<LogLine>) -> Vec<FollowLogs> {
    let generation = app.model.logs.generation;
    app.on_event(Report::Tail {
        generation,
        event: TailEvent::Lines {
            pod: pod.into(),
            lines,
        },
    })
}

/// Lines of the viewer's own fetch (an older attempt, a previous container).
pub fn fetched_lines(app: &mut Tui, pod: &str, lines: Vec<LogLine>) {
    let generation = app.logs.fetched.as_ref().expect("a fetch").generation;
    app.on_fetched(
        generation,
        TailEvent::Lines {
            pod: pod.into(),
            lines,
        },
    );
}

// ---------------------------------------------------------------------------------------------
// App states

pub fn new_app(read_only: bool) -> Tui {
    Tui {
        model: Model::default(),
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

/// A node of default-pool as the Node watch reports it.
pub fn node_seen(name: &str, machine: &str, created: Option<jiff::Timestamp>) -> NodeSeen {
    NodeSeen::of(
        &serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": name,
                "uid": format!("uid-{name}"),
                "creationTimestamp": created.map(|t| t.to_string()),
                "labels": {
                    "cloud.google.com/gke-nodepool": "default-pool",
                    "node.kubernetes.io/instance-type": machine,
                    "topology.kubernetes.io/region": "us-central1",
                    "topology.kubernetes.io/zone": "us-central1-a",
                }
            }
        }))
        .unwrap(),
    )
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

/// The cluster as made by hand: RUNNING with 1 × e2-medium where the config says
/// 3 × n1-standard-1.
pub fn hand_made_summary() -> ClusterSummary {
    let mut summary = cluster_summary(ClusterStatus::Running);
    summary.node_count = 1;
    summary.machine_type = "e2-medium".into();
    for pool in &mut summary.node_pools {
        pool.machine_type = "e2-medium".into();
        pool.initial_node_count = 1;
        pool.node_count = 1;
    }
    summary
}

/// RUNNING and connected, told the config's cluster (as the workers do for GKE), and made by
/// hand unlike it: drifted.
pub fn drifted(read_only: bool) -> Tui {
    let mut app = new_app(read_only);
    app.on_event(Report::Target(target()));
    app.on_event(Report::Desired {
        cluster: Box::new(app.app.config.cluster.clone()),
        may_scale_to_zero: false,
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

/// What the pods use, as metrics.k8s.io says it: the running pod near its CPU request with its
/// memory at a plateau; the other two not running. Three n1-standard-1 nodes, the running pod's
/// busy.
pub fn usage() -> Report {
    use gantry::k8s::usage::{NodeUsage, PodUsage, Reading};
    let running = PodUsage {
        cpu_millis: 912,
        memory_bytes: 1_932_735_283,
    };
    let node = |name: &str, cpu_millis, memory_bytes| NodeUsage {
        name: name.into(),
        cpu_millis,
        memory_bytes,
        cpu_allocatable_millis: 940,
        memory_allocatable_bytes: 2_873_729_024,
    };
    Report::Usage(Some(Reading {
        pods: [(POD_RUNNING.to_string(), running)].into(),
        nodes: vec![
            node(NODE, 903, 2_101_346_304),
            node(
                "gke-ml-gke-cluster-default-pool-1a2b3c4d-k3m4",
                61,
                702_545_920,
            ),
            node(
                "gke-ml-gke-cluster-default-pool-1a2b3c4d-p9q8",
                58,
                689_963_008,
            ),
        ],
    }))
}

pub fn oom_lines() -> Vec<LogLine> {
    vec![
        stamped("loading dataset shard 0/8 from gs://demo-bucket/train", 530),
        stamped("epoch 1/10 step 100 loss=2.3012 acc=0.112", 500),
        stamped(
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 14.75 GiB total capacity)",
            470,
        ),
    ]
}

pub fn training_lines() -> Vec<LogLine> {
    let mut lines = vec![stamped(
        "loading dataset shard 0/8 from gs://demo-bucket/train",
        560,
    )];
    for (n, (loss, acc)) in [
        (2.2871, 0.131),
        (1.9044, 0.324),
        (1.5123, 0.472),
        (1.2210, 0.561),
        (0.9875, 0.644),
        (0.8120, 0.702),
    ]
    .into_iter()
    .enumerate()
    {
        let epoch = n + 1;
        lines.push(stamped(
            &format!(
                "epoch {epoch}/10 step {} loss={loss:.4} acc={acc:.3}",
                epoch * 100
            ),
            500 - 60 * n as i64,
        ));
    }
    lines.push(stamped(
        "checkpoint saved to gs://demo-bucket/ckpt/epoch-6.pt",
        150,
    ));
    lines
}
