//! Reading the GPUs, apart from the binary: the engine reads them only while a screen shows them
//! or the idle-GPU guard watches, and lets go when neither does, its pods pane drawing what it
//! read; a refusal by the API server says which permission is missing; an exporter's answer past
//! its bound is not read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

/// Only against a hang: nothing is asserted about time.
const HANG_GUARD: Duration = gantry_test_support::WAIT_BOUND;

/// A GKE cluster with a default pool and one n1-standard-4 with a T4, RUNNING at once.
async fn gpu_cloud(dirs: &tempfile::TempDir) -> gantry::sim::SimCloud {
    use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
    use gantry::sim::kube::cluster::{ClusterSpec, DEFAULT_VERSION, NodePoolSpec};
    let cloud = gantry_test_support::cloud_with(gantry::sim::SimOptions {
        time_scale: 0.01,
        state_dir: Some(dirs.path().join("sim")),
        ..Default::default()
    })
    .await;
    let pool = |name: &str, machine: &str, accelerator: Option<(String, u32)>| NodePoolSpec {
        name: name.into(),
        machine_type: machine.into(),
        nodes_per_zone: 1,
        zones: vec![DEMO_LOCATION.into()],
        accelerator,
        labels: Default::default(),
        taints: Vec::new(),
        spot: false,
        disk_size_gb: 100,
        disk_type: "pd-balanced".into(),
    };
    cloud
        .gke()
        .create_running(ClusterSpec {
            project: DEMO_PROJECT.into(),
            location: DEMO_LOCATION.into(),
            name: gantry_test_support::CLUSTER.into(),
            version: DEFAULT_VERSION.into(),
            node_pools: vec![
                pool("default-pool", "n1-standard-1", None),
                pool(
                    "gpu-pool",
                    "n1-standard-4",
                    Some(("nvidia-tesla-t4".into(), 1)),
                ),
            ],
        })
        .await
        .unwrap();
    cloud
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gpus_are_read_only_while_a_screen_shows_them_or_the_guard_watches() {
    use gantry::engine::world::gpus::GpuState;
    let dirs = tempfile::tempdir().unwrap();
    let cloud = gpu_cloud(&dirs).await;
    let mut job = gantry::config::JobConfig::default();
    job.env.insert("SIM_LOG_LINES".into(), "100000".into());
    job.resources.gpus = Some(1);
    let client = gantry_test_support::kube_client(&cloud);
    gantry::k8s::launch(&client, &job, Some("demo-project"))
        .await
        .unwrap();
    // The idle-GPU guard off: only a screen showing them makes the GPUs worth reading.
    let mut config = gantry::config::Config::default();
    config.guards.gpu_idle_below = 0.0;
    config.job = job;
    let options =
        gantry_test_support::engine_options(&cloud, &dirs.path().join("sim"), dirs.path());
    let engine = gantry::engine::Engine::start(
        gantry::engine::open_session(&options, config)
            .await
            .unwrap(),
    );
    let handle = engine.handle();
    let mut app = gantry::app::App::new(
        gantry::config::Config::default(),
        gantry::keys::Keymap::default(),
        false,
    );
    tokio::time::timeout(HANG_GUARD, async {
        // The GPU pod runs and this engine holds the Lease (its keeper's ticks came): nothing
        // was read all that while.
        crate::engine::until(&mut app, &handle, |m| {
            m.wants_gpus() && m.is_recoverer() && m.jobs.pods.values().any(|p| p.phase == "Running")
        })
        .await;
        assert_eq!(handle.model().gpus.state, GpuState::Unknown);

        let shown = handle.show_usage();
        crate::engine::until(&mut app, &handle, |m| {
            matches!(&m.gpus.state, GpuState::Known(r) if r.gpus().any(|(_, g)| !g.pods.is_empty()))
        })
        .await;
        // The pods pane shows the pod's GPU as read: how busy, how full.
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(200, 50)).unwrap();
        let theme = gantry::ui::theme::Theme::plain();
        terminal
            .draw(|frame| {
                gantry::ui::draw(frame, &handle.model(), &app, &theme, jiff::Timestamp::now())
            })
            .unwrap();
        let screen = format!("{:?}", terminal.backend());
        assert!(screen.contains("/15G"), "{screen}");
        let cluster = gantry::ui::gpus::cluster_part(&handle.model(), 5.0).unwrap();
        assert!(
            cluster.starts_with("GPU ") && cluster.contains("/1 busy · "),
            "{cluster}"
        );
        drop(shown);
        crate::engine::until(&mut app, &handle, |m| m.gpus.state == GpuState::Unknown).await;
    })
    .await
    .expect("the GPUs were read, and let go, as screens came and went");
    engine.stop().await;
}

/// An API server that answers every request with `status` and `body`.
async fn answering(status: u16, body: Vec<u8>) -> kube::Client {
    let app = axum::Router::new().fallback(move || {
        let body = body.clone();
        async move {
            (
                axum::http::StatusCode::from_u16(status).unwrap(),
                [("content-type", "application/json")],
                body,
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
    kube::Client::try_from(config).unwrap()
}

#[tokio::test]
async fn a_refusal_says_which_permission_is_missing_and_an_answer_past_its_bound_is_not_read() {
    use gantry::k8s::gpus::{self, Exporter, ExporterSource, ScrapeError, Unavailable};
    let exporter = Exporter {
        namespace: "gke-managed-system".into(),
        pod: "dcgm-exporter-rv72r".into(),
        node: "n".into(),
        port: 9400,
    };
    let refused = serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
        "message": "pods \"dcgm-exporter-rv72r:9400\" is forbidden: User \"system:serviceaccount:default:gantry\" cannot get resource \"pods/proxy\" in API group \"\" in the namespace \"gke-managed-system\"",
        "reason": "Forbidden", "code": 403});
    let client = answering(403, refused.to_string().into_bytes()).await;
    let err = gpus::scrape(&client, &exporter).await.unwrap_err();
    assert!(matches!(err, ScrapeError::Forbidden { .. }), "{err:?}");
    let said = err.to_string();
    assert!(
        said.starts_with("forbidden to get pods/proxy in namespace gke-managed-system (grant get on pods/proxy there)"),
        "{said}"
    );
    assert!(said.contains("cannot get resource"), "{said}");
    // Listing the exporters refused: the list permission, where.
    let sources = ExporterSource::sources(None);
    let Err(Unavailable::Forbidden(why)) = gpus::discover(&client, &sources).await else {
        panic!("not refused")
    };
    assert!(
        why.starts_with(
            "forbidden to list pods in namespace gke-managed-system (grant list on pods there)"
        ),
        "{why}"
    );

    let flood = answering(200, vec![b'#'; gpus::scrape::MAX_BYTES + 1]).await;
    let err = gpus::scrape::fetch(&flood, &exporter).await.unwrap_err();
    assert!(
        err.to_string().contains("answer longer than 4 MiB"),
        "{err}"
    );
}
