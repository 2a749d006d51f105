//! One drill from start to end: the engine and a viewer follow the Job while the fault is on,
//! the fault window opens and closes by progress, and then every pod's log is checked as saved,
//! held and shown once by the engine and the CLI, with the troubles the operator was told.

use gantry_test_support as common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;

use gantry::app::{App, Focus};
use gantry::config::Config;
use gantry::engine::{Command, Engine, open_session};
use gantry::gke::{self, Auth, ClusterRef, Gke};
use gantry::k8s::status::AttemptPhase;
use gantry::keys::Keymap;
use gantry::sim::SimOptions;
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::vocabulary::{Kind, Severity};

use super::cli::Cli;
use super::truth::{
    count_lines, lines_per_pod, model_picture, plain_log, read_notices, settle, truth,
};
use super::{Drill, Found, HANG_GUARD, LINES, WORKERS, job_config, key};

pub(super) async fn run(drill: Drill) -> Found {
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
    app.on_model(&handle.model(), &handle.told());
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

    // How each pod's stream ended, as the engine told it ("log of <pod> ended").
    let mut stream_ends: BTreeMap<String, String> = BTreeMap::new();
    loop {
        changed.changed().await.unwrap();
        let told = read_notices(&mut notices, &mut stream_ends);
        // What the model says now; the lock is let go before anything is awaited.
        let (per_pod, trouble, finished, streams_done, picture, to_delete) = {
            let model = handle.model();
            app.on_model(&model, &handle.told());
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
                    .values()
                    .filter(|p| p.job == job)
                    .all(|p| stream_ends.get(&p.name).map(String::as_str) == Some("ended"));
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
        for n in told {
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
        read_notices(&mut notices, &mut stream_ends);
        assert_eq!(
            stream_ends.get(pod).map(String::as_str),
            Some("pod deleted")
        );
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
        let notices: Vec<_> = handle.told().after(0).map(|t| t.notice.clone()).collect();
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
