//! Fault drills: an Indexed Job of 4 workers logging 20,000 lines each, followed at once by the
//! engine (its workers on the simulated GKE and cluster, as the TUI runs them, with one viewer
//! pressing the keys) and by the real `gantry logs --follow`, while one of the simulated cloud's
//! faults fires.
//!
//! Each drill checks that the model's picture of the Job and its pods converges to what a plain
//! list says; that every line each pod wrote is saved exactly once (the saved files equal a plain
//! GET of each pod's log, byte for byte, for the engine and for the CLI) and held exactly once
//! (the store's line count, the CLI's stdout); that nothing panicked; and that a trouble showed
//! while a fault the client can see was on, and none is left after.
//!
//! The fault window is defined by progress, not by time: it opens once every pod has delivered
//! some lines to the model and closes once every pod is past a third of its log and the notice
//! has been seen. Waits are on events; the only clock is a hang guard.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use futures::AsyncReadExt;
use gantry::app::{App, Focus};
use gantry::config::{Config, JobConfig};
use gantry::engine::{Command, Engine, Kind, Model, Severity, open_session};
use gantry::gke::{self, Auth, ClusterRef, Gke};
use gantry::k8s;
use gantry::k8s::status::{AttemptPhase, AttemptSummary, PodSummary};
use gantry::keys::Keymap;
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::sim::faults::Fault;
use gantry::sim::{SimCloud, SimOptions};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, LogParams};

const WORKERS: u32 = 4;
const LINES: u64 = 20_000;
/// Lines per simulated second; at time scale 0.01 a pod writes its log in about 5 s of wall time.
const PACE: &str = "40";
/// Only against a hung drill: nothing is asserted about time.
const HANG_GUARD: Duration = gantry_test_support::WAIT_BOUND;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Drill {
    WatchDrop,
    WatchGone,
    LogCut,
    Restart,
    Http429,
    Http503,
    TokenExpiry,
    Slow,
    PodReplaced,
}

impl Drill {
    fn fault(self) -> Option<Fault> {
        Some(match self {
            Drill::WatchDrop => Fault::WatchDrop(Duration::from_millis(300)),
            Drill::WatchGone => Fault::WatchGone,
            Drill::LogCut => Fault::LogCut(Duration::from_millis(300)),
            Drill::Restart => Fault::Restart(Duration::from_millis(700)),
            Drill::Http429 => Fault::Http429(30),
            Drill::Http503 => Fault::Http503(30),
            Drill::TokenExpiry => Fault::TokenExpiry(Duration::from_millis(400)),
            Drill::Slow => Fault::Slow(Duration::from_millis(150)),
            Drill::PodReplaced => return None,
        })
    }

    /// Whether the client can see the fault (a request or a stream fails), so the operator
    /// should be told. Not seen: kube's watcher takes a watch cut at a chunk boundary for its
    /// end and quietly watches again from where it was; kube's client retries 429 and 503 (up
    /// to 15 times, honouring Retry-After) before Gantry hears of them; slow answers still
    /// answer; a token refreshed after a 401 and retried is invisible by design; a deleted pod
    /// is news, not trouble.
    /// The status a request may get under the fault.
    fn refusal(self) -> Option<u16> {
        match self {
            Drill::Http429 => Some(429),
            Drill::Http503 => Some(503),
            _ => None,
        }
    }

    fn visible(self) -> bool {
        matches!(self, Drill::WatchGone | Drill::LogCut | Drill::Restart)
    }
}

fn job_config() -> JobConfig {
    let mut cfg = JobConfig::default();
    cfg.env.insert("SIM_LOG_LINES".into(), LINES.to_string());
    cfg.env.insert("SIM_LINES_PER_SECOND".into(), PACE.into());
    cfg.parallelism = Some(WORKERS);
    cfg.completions = Some(WORKERS);
    cfg.indexed = true;
    cfg.backoff_limit = 2;
    cfg
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

/// Retries through a fault's aftermath (a restarting API server, a rotated token).
async fn settle<T, E: std::fmt::Debug, F: std::future::Future<Output = Result<T, E>>>(
    mut f: impl FnMut() -> F,
) -> T {
    let mut tries = 0;
    loop {
        match f().await {
            Ok(t) => return t,
            Err(e) if tries < 100 => {
                tries += 1;
                tracing::debug!(?e, "retrying");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("{e:?}"),
        }
    }
}

/// A plain, non-follow GET of a pod's log.
async fn plain_log(client: &kube::Client, pod: &str) -> Result<Vec<u8>, String> {
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let mut body = Vec::new();
    pods.log_stream(pod, &LogParams::default())
        .await
        .map_err(|e| e.to_string())?
        .read_to_end(&mut body)
        .await
        .map_err(|e| e.to_string())?;
    Ok(body)
}

fn count_lines(b: &[u8]) -> usize {
    b.iter().filter(|c| **c == b'\n').count()
}

/// What the simulator says, through a plain list: the attempts and the training pods.
async fn truth(
    client: &kube::Client,
    cfg: &JobConfig,
) -> Result<(Vec<AttemptSummary>, Vec<PodSummary>), kube::Error> {
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let job_sel = ListParams::default().labels(&k8s::labels::managed_selector(&cfg.name));
    let mut pod_sel: Vec<String> = cfg.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pod_sel.push(k8s::labels::managed_selector(&cfg.name));
    let pod_sel = ListParams::default().labels(&pod_sel.join(","));
    let j = jobs.list(&job_sel).await?;
    let p = pods.list(&pod_sel).await?;
    let mut j: Vec<AttemptSummary> = j.items.iter().map(AttemptSummary::of).collect();
    let mut p: Vec<PodSummary> = p.items.iter().map(PodSummary::of).collect();
    j.sort_by(|a, b| a.name.cmp(&b.name));
    p.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((j, p))
}

fn model_picture(model: &Model) -> (Vec<AttemptSummary>, Vec<PodSummary>) {
    (
        model.jobs.attempts.items.values().cloned().collect(),
        model.jobs.pods.items.values().cloned().collect(),
    )
}

/// How a pod's stream ended, as the model's store says it (`ended`, `pod deleted`…).
fn ended_how<'a>(model: &'a Model, pod: &str) -> Option<&'a str> {
    model
        .logs
        .ended
        .iter()
        .rev()
        .find(|(p, _)| p == pod)
        .map(|(_, how)| how.as_str())
}

/// Lines the store received from each pod.
fn lines_per_pod(model: &Model) -> BTreeMap<String, u64> {
    model
        .logs
        .pods
        .iter()
        .cloned()
        .zip(model.logs.received_of.iter().copied())
        .collect()
}

/// The `gantry logs --follow` child, through GKE with the simulator's token file.
struct Cli {
    child: tokio::process::Child,
    home: tempfile::TempDir,
    /// Read as it comes, so a full pipe never slows the follow down.
    stdout: tokio::task::JoinHandle<Vec<u8>>,
    stderr: tokio::task::JoinHandle<Vec<u8>>,
    /// Lines printed so far.
    printed: Arc<AtomicUsize>,
}

fn drain(
    mut r: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    lines: Arc<AtomicUsize>,
) -> tokio::task::JoinHandle<Vec<u8>> {
    tokio::spawn(async move {
        use tokio::io::AsyncReadExt as _;
        let mut out = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = r.read(&mut buf).await {
            if n == 0 {
                break;
            }
            lines.fetch_add(count_lines(&buf[..n]), Ordering::Relaxed);
            out.extend_from_slice(&buf[..n]);
        }
        out
    })
}

impl Cli {
    fn start(cloud: &SimCloud, sim_dir: &Path) -> Cli {
        let home = tempfile::tempdir().unwrap();
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_gantry"))
            .args(["--gke-endpoint", cloud.gke_endpoint()])
            .arg("--access-token-file")
            .arg(sim_dir.join("token"))
            .args(["--project", DEMO_PROJECT, "--location", DEMO_LOCATION])
            .args(["logs", "--follow"])
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .env("KUBECONFIG", home.path().join("kubeconfig"))
            .env_remove("GOOGLE_CLOUD_PROJECT")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let printed = Arc::new(AtomicUsize::new(0));
        let stdout = drain(child.stdout.take().unwrap(), printed.clone());
        let stderr = drain(child.stderr.take().unwrap(), Arc::default());
        Cli {
            child,
            home,
            stdout,
            stderr,
            printed,
        }
    }

    async fn finish(&mut self) -> ChildOutput {
        let status = self.child.wait().await.unwrap();
        ChildOutput {
            code: status.code(),
            stdout: (&mut self.stdout).await.unwrap(),
            stderr: (&mut self.stderr).await.unwrap(),
        }
    }

    fn saved_dir(&self, job: &str) -> PathBuf {
        self.home
            .path()
            .join("state/gantry/logs")
            .join(common::CLUSTER)
            .join(job)
    }
}

/// What one drill found, for the report.
#[derive(Debug)]
struct Found {
    drill: Drill,
    lines_checked: usize,
    trouble_seen: Vec<String>,
}

async fn run(drill: Drill) -> Found {
    tokio::time::timeout(HANG_GUARD, run_inner(drill))
        .await
        .unwrap_or_else(|_| panic!("{drill:?}: the drill hung"))
}

async fn run_inner(drill: Drill) -> Found {
    let sim_dir = tempfile::tempdir().unwrap();
    let cloud = common::cloud_with(SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        state_dir: Some(sim_dir.path().to_path_buf()),
        ..Default::default()
    })
    .await;
    let cfg = job_config();
    let config = Config {
        project: Some(DEMO_PROJECT.into()),
        location: Some(DEMO_LOCATION.into()),
        job: cfg.clone(),
        ..Default::default()
    };

    // The TUI's way in: GKE says where the cluster is, the token comes from the token file.
    let app_dir = tempfile::tempdir().unwrap();
    let options = common::engine_options(&cloud, sim_dir.path(), app_dir.path());
    // The fault is on from here: before any watch, log stream or CLI request is made, as on a
    // flaky network where it is there all along.
    if let Some(f) = drill.fault() {
        cloud.faults().set(f);
    }
    let engine = Engine::start(open_session(&options, config.clone()).await.unwrap());
    let handle = engine.handle();
    let mut changed = handle.changed();
    // Troubles as they begin: a short one may come and go between two looks at the model.
    let mut notices = handle.notices();
    let mut app = App::new(config, Keymap::default(), false);
    // A plain client of our own, for the truth: through GKE, with the token file re-read when
    // the token rotates.
    let auth = Auth::token_file(&sim_dir.path().join("token")).unwrap();
    let gke = Gke::connect(auth, Some(cloud.gke_endpoint()))
        .await
        .unwrap();
    let target = ClusterRef::new(DEMO_PROJECT, DEMO_LOCATION, common::CLUSTER);
    let cluster = gke.get_cluster(&target).await.unwrap().unwrap();
    let client = gke::cluster_client::cluster_client(&target, &cluster, gke.auth()).unwrap();

    while !handle.model().connected {
        changed.changed().await.unwrap();
    }
    app.on_model(&handle.model());
    // `l`: the viewer asks for the launch; the engine's workers carry it out.
    let launch = app.on_key(key('l'), &handle.model());
    assert_eq!(launch, vec![Command::LaunchJob]);
    handle.run(gantry_test_support::approved(Command::LaunchJob));
    while handle.model().jobs.newest().is_none() {
        changed.changed().await.unwrap();
    }
    let first_token = cloud.token();
    if let Some(code) = drill.refusal() {
        // The fault is in force: a raw request (no retries) is refused now and then.
        let raw = common::https_client(&cloud);
        let mut refused = false;
        while !refused {
            let r = raw
                .get(format!("https://{}/api/v1/nodes", common::endpoint(&cloud)))
                .bearer_auth(cloud.token())
                .send()
                .await
                .unwrap();
            refused = r.status() == code;
        }
    }
    let mut cli = Cli::start(&cloud, sim_dir.path());

    #[derive(PartialEq, Debug)]
    enum Phase {
        Before,
        On,
        Over,
    }
    let mut phase = Phase::Before;
    let mut trouble_seen: Vec<String> = Vec::new();
    let mut replaced: Option<(String, Vec<u8>)> = None;
    let mut job = String::new();

    loop {
        changed.changed().await.unwrap();
        // What the model says now; the lock is let go before anything is awaited.
        let (per_pod, trouble, finished, streams_done, picture, to_delete) = {
            let model = handle.model();
            app.on_model(&model);
            if let Some(newest) = model.jobs.newest() {
                job = newest.name.clone();
            }
            let finished = model
                .jobs
                .newest()
                .is_some_and(|a| a.status == AttemptPhase::Succeeded);
            let streams_done = finished
                && model
                    .jobs
                    .pods
                    .items
                    .values()
                    .filter(|p| p.job == job)
                    .all(|p| ended_how(&model, &p.name) == Some("ended"));
            app.focus = Focus::Pods;
            let to_delete = app.selection.pod(&model.jobs).map(|p| p.name.clone());
            (
                lines_per_pod(&model),
                // The status line's trouble, or the logs pane's "pod list stale".
                model
                    .trouble()
                    .map(str::to_string)
                    .or_else(|| model.logs.pods_stale.clone()),
                finished,
                streams_done,
                model_picture(&model),
                to_delete,
            )
        };
        if std::env::var_os("DRILL_DEBUG").is_some() {
            eprintln!(
                "{drill:?} {phase:?} cli={} lines={per_pod:?} trouble={trouble:?} finished={finished}",
                cli.printed.load(Ordering::Relaxed),
            );
        }
        let mut begun: Vec<String> = trouble.into_iter().collect();
        while let Ok(n) = notices.try_recv() {
            if n.kind == Kind::Trouble {
                begun.push(n.text.trim_start_matches("trouble: ").to_string());
            }
        }
        for t in begun {
            if phase == Phase::On && trouble_seen.len() < 5 && !trouble_seen.contains(&t) {
                trouble_seen.push(t);
            }
        }

        let progress = |min: u64| {
            let live: Vec<u64> = per_pod
                .iter()
                .filter(|(p, _)| replaced.as_ref().is_none_or(|(r, _)| r != *p))
                .map(|(_, n)| *n)
                .collect();
            live.len() >= WORKERS as usize && live.iter().all(|n| *n >= min)
        };
        match phase {
            Phase::Before if drill.fault().is_some() => phase = Phase::On,
            Phase::Before if progress(1_000) && cli.printed.load(Ordering::Relaxed) >= 4_000 => {
                phase = Phase::On;
                // Delete the first worker's pod from the Pods pane: `d`, then `y`.
                let pod = to_delete.unwrap();
                let snapshot = plain_log(&client, &pod).await.unwrap();
                let (asked, confirmed) = {
                    let model = handle.model();
                    (app.on_key(key('d'), &model), app.on_key(key('y'), &model))
                };
                assert!(asked.is_empty());
                assert_eq!(confirmed, vec![Command::DeletePod(pod.clone())]);
                handle.run(gantry_test_support::approved(Command::DeletePod(
                    pod.clone(),
                )));
                replaced = Some((pod, snapshot));
            }
            Phase::On if progress(LINES / 3) && (!drill.visible() || !trouble_seen.is_empty()) => {
                phase = Phase::Over;
                cloud.faults().clear();
            }
            _ => {}
        }

        // Done when the attempt has succeeded, every pod's stream has ended, and the model's
        // picture is the simulator's.
        if phase == Phase::Over && streams_done {
            let truth = settle(|| truth(&client, &cfg)).await;
            if picture == truth {
                break;
            }
        }
    }
    assert_eq!(
        phase,
        Phase::Over,
        "{drill:?}: the run ended before the fault window closed"
    );

    // Every pod's log: saved once by the engine and by the CLI, shown once by both.
    let cli_out = cli.finish().await;
    let (jobs, pods) = settle(|| truth(&client, &cfg)).await;
    assert_eq!(jobs.len(), 1);
    let pod_names: BTreeSet<String> = pods.iter().map(|p| p.name.clone()).collect();
    let expected_pods = WORKERS as usize;
    assert_eq!(
        pods.iter().filter(|p| p.phase == "Succeeded").count(),
        expected_pods
    );
    let cli_stdout = cli_out.stdout;
    assert_eq!(
        cli_out.code,
        Some(0),
        "{drill:?}: gantry logs --follow: {}",
        String::from_utf8_lossy(&cli_out.stderr)
    );
    let cli_stderr = String::from_utf8_lossy(&cli_out.stderr).into_owned();
    assert!(!cli_stderr.contains("panicked"), "{cli_stderr}");
    let mut per_pod_stdout: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for line in cli_stdout.split_inclusive(|b| *b == b'\n') {
        let text = line.strip_prefix(b"[").unwrap();
        let close = text.iter().position(|b| *b == b']').unwrap();
        let pod = String::from_utf8(text[..close].to_vec()).unwrap();
        per_pod_stdout
            .entry(pod)
            .or_default()
            .extend_from_slice(&text[close + 2..]);
    }
    let engine_saved = |pod: &str| {
        std::fs::read(
            app_dir
                .path()
                .join(common::CLUSTER)
                .join(&job)
                .join(format!("{pod}.log")),
        )
        .unwrap()
    };
    let mut lines_checked = 0;
    for pod in &pod_names {
        let served = settle(|| plain_log(&client, pod)).await;
        assert_eq!(count_lines(&served) as u64, LINES, "{drill:?}: {pod}");
        let cli_saved = std::fs::read(cli.saved_dir(&job).join(format!("{pod}.log"))).unwrap();
        for (who, got) in [
            ("engine saved", &engine_saved(pod)),
            ("CLI saved", &cli_saved),
            ("CLI printed", per_pod_stdout.get(pod).unwrap()),
        ] {
            assert!(
                *got == served,
                "{drill:?}: {who} {pod}: {} bytes / {} lines, the server has {} / {}",
                got.len(),
                count_lines(got),
                served.len(),
                count_lines(&served)
            );
        }
        lines_checked += 3 * count_lines(&served);
    }
    // The replaced pod's log went with it: what was saved holds what it had written when it was
    // deleted, then more, each line once.
    let mut replaced_lines = 0;
    if let Some((pod, snapshot)) = &replaced {
        assert!(!pod_names.contains(pod));
        for (who, got) in [
            ("engine saved", engine_saved(pod)),
            (
                "CLI saved",
                std::fs::read(cli.saved_dir(&job).join(format!("{pod}.log"))).unwrap(),
            ),
            (
                "CLI printed",
                per_pod_stdout.get(pod).cloned().unwrap_or_default(),
            ),
        ] {
            assert!(
                got.starts_with(snapshot) && got.ends_with(b"\n"),
                "{drill:?}: {who} {pod}: {} bytes, snapshot {}",
                got.len(),
                snapshot.len()
            );
            let lines: Vec<&[u8]> = got.split(|b| *b == b'\n').collect();
            let unique: BTreeSet<&[u8]> = lines.iter().copied().collect();
            assert_eq!(
                unique.len(),
                lines.len(),
                "{drill:?}: {who} {pod}: a line twice"
            );
            replaced_lines = count_lines(&got);
            lines_checked += replaced_lines;
        }
        // Its stream ended as "pod deleted", also when the container was stopped first (graceful
        // deletion) and the stream read it to its end.
        assert_eq!(ended_how(&handle.model(), pod), Some("pod deleted"));
    }
    {
        let model = handle.model();
        // Held once: every line reached the store exactly once.
        assert_eq!(
            model.logs.received,
            LINES * WORKERS as u64 + replaced_lines as u64,
            "{drill:?}: lines held"
        );
        // The operator was told while the fault was visible, and nothing is left after.
        if drill.visible() {
            assert!(
                !trouble_seen.is_empty(),
                "{drill:?}: no notice while the fault was on"
            );
        }
        assert_eq!(
            model.trouble(),
            None,
            "{drill:?}: a trouble outlived the fault"
        );
        // Nothing failed to save, nothing was left to another saver.
        let notices: Vec<_> = model.notices_after(0).map(|(_, n)| n.clone()).collect();
        assert!(
            notices
                .iter()
                .all(|n| n.severity != Severity::Critical && !n.text.contains("another Gantry")),
            "{drill:?}: {notices:?}"
        );
    }
    if drill == Drill::TokenExpiry {
        assert_ne!(cloud.token(), first_token, "the token never rotated");
    }
    // A drill that never met its fault drilled nothing.
    if let Some(fault) = drill.fault() {
        let fired = cloud.faults().times_fired(fault.name());
        assert!(
            fired > 0,
            "{drill:?}: the fault {} never fired",
            fault.name()
        );
    }
    engine.stop().await;
    Found {
        drill,
        lines_checked,
        trouble_seen,
    }
}

struct ChildOutput {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

fn report(found: &Found) {
    eprintln!(
        "drill {:?}: {} lines checked, troubles shown: {:?}",
        found.drill, found.lines_checked, found.trouble_seen
    );
}

macro_rules! drill {
    ($name:ident, $drill:expr) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            report(&run($drill).await);
        }
    };
}

drill!(watch_drop, Drill::WatchDrop);
drill!(watch_gone, Drill::WatchGone);
drill!(log_cut, Drill::LogCut);
drill!(api_server_restart, Drill::Restart);
drill!(http_429, Drill::Http429);
drill!(http_503, Drill::Http503);
drill!(token_expiry, Drill::TokenExpiry);
drill!(slow_answers, Drill::Slow);
drill!(pod_replaced_mid_follow, Drill::PodReplaced);
