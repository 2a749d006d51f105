//! What the operator sees: every pane and overlay drawn on a `TestBackend` at 80×24 (the compact
//! layout, over SSH) and 200×50 (the roomy one), with the plain theme and a fixed `now`.
// Helpers outside #[test] functions unwrap too (clippy.toml allows it only inside them).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::tui as common_tui;

use common_tui::*;
use crossterm::event::KeyCode;
use gantry::app::Focus;
use gantry::k8s::status::PodSummary;
use gantry::k8s::watch::Change;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;

const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];

fn render(app: &Tui, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| app.draw(frame)).unwrap();
    terminal
}

/// Snapshots `<name>_80x24` and `<name>_200x50`.
fn snapshot(name: &str, app: &mut Tui) {
    for (width, height) in SIZES {
        app.log_rows = gantry::ui::log_rows(width, height, app.metrics.shown);
        let terminal = render(app, width, height);
        insta::assert_snapshot!(format!("{name}_{width}x{height}"), terminal.backend());
    }
}

#[test]
fn not_created() {
    snapshot("not_created", &mut common_tui::not_created(false));
}

#[test]
fn provisioning() {
    snapshot("provisioning", &mut common_tui::provisioning(false));
}

#[test]
fn running_with_a_failed_and_a_running_attempt() {
    snapshot("running_attempts", &mut with_attempts(false));
}

#[test]
fn failed_attempt_selected_in_the_jobs_pane() {
    let mut app = with_attempts(false);
    app.focus = Focus::Jobs;
    app.on_key(key('k'));
    fetched_lines(
        &mut app,
        FAILED_PODS[2],
        vec![
            line("Traceback (most recent call last):"),
            line("  File \"/app/train.py\", line 88, in <module>"),
            line("FileNotFoundError: gs://demo-bucket/train/shard-0.tfrecord"),
        ],
    );
    snapshot("failed_attempt_selected", &mut app);
}

#[test]
fn one_pod_with_timestamps_and_wrap() {
    let mut app = with_attempts(false);
    app.on_key(key('j'));
    app.on_key(key('j'));
    app.on_key(code(KeyCode::Enter));
    app.on_key(key('t'));
    app.on_key(key('w'));
    snapshot("logs_one_pod_timestamps_wrap", &mut app);
}

fn searched() -> Tui {
    let mut app = with_attempts(false);
    app.focus = Focus::Logs;
    app.on_key(key('/'));
    type_text(&mut app, "loss");
    app.on_key(code(KeyCode::Enter));
    app
}

#[test]
fn logs_with_a_search() {
    snapshot("logs_search", &mut searched());
}

#[test]
fn logs_while_typing_a_search() {
    let mut app = with_attempts(false);
    app.focus = Focus::Logs;
    app.on_key(key('/'));
    type_text(&mut app, "acc=0.");
    snapshot("logs_search_typing", &mut app);
}

/// Each row's cells as (symbol, reversed).
fn cells(terminal: &Terminal<TestBackend>) -> Vec<Vec<(String, bool)>> {
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| {
                    let cell = &buffer[(x, y)];
                    (
                        cell.symbol().to_string(),
                        cell.modifier.contains(Modifier::REVERSED),
                    )
                })
                .collect()
        })
        .collect()
}

#[test]
fn search_matches_are_highlighted_and_nothing_else_on_their_lines() {
    let app = searched();
    for (width, height) in SIZES {
        let terminal = render(&app, width, height);
        let rows = cells(&terminal);
        let mut matches = 0;
        for row in &rows {
            let text: Vec<&str> = row.iter().map(|(s, _)| s.as_str()).collect();
            if !text.concat().contains("loss=") {
                continue;
            }
            for at in 0..row.len() - 4 {
                let word = text[at..at + 4].concat();
                if word == "loss" {
                    matches += 1;
                    assert!(
                        row[at..at + 4].iter().all(|(_, rev)| *rev),
                        "{width}x{height}: match at column {at} is not highlighted: {}",
                        text.concat()
                    );
                    assert!(!row[at + 4].1, "the highlight ends with the match");
                    assert!(!row[at - 1].1, "the highlight starts with the match");
                }
            }
            let lit = row.iter().filter(|(_, rev)| *rev).count();
            let found = text.concat().matches("loss").count();
            assert_eq!(
                lit,
                4 * found,
                "{width}x{height}: only matches are highlighted: {}",
                text.concat()
            );
        }
        // Seven lines say loss=; at 80×24 the pane shows the last few of them.
        assert!(matches >= 3, "{width}x{height}: {matches} matches drawn");
    }
}

#[test]
fn logs_with_a_stale_pod_list() {
    let mut app = with_attempts(false);
    app.model.logs.pods_stale = Some("connection refused".into());
    snapshot("logs_pods_stale", &mut app);
}

#[test]
fn help_overlay() {
    let mut app = with_attempts(false);
    app.on_key(key('?'));
    snapshot("help", &mut app);
}

#[test]
fn confirm_create() {
    let mut app = common_tui::not_created(false);
    app.on_key(key('c'));
    snapshot("confirm_create", &mut app);
}

#[test]
fn confirm_delete_cluster_while_typing_its_name() {
    let mut app = with_attempts(false);
    app.on_key(key('X'));
    type_text(&mut app, "ml-gke");
    snapshot("confirm_delete_cluster", &mut app);
}

#[test]
fn confirm_delete_pod() {
    let mut app = with_attempts(false);
    app.on_key(key('j'));
    app.on_key(key('d'));
    snapshot("confirm_delete_pod", &mut app);
}

#[test]
fn read_only_badge() {
    snapshot("read_only", &mut with_attempts(true));
}

#[test]
fn read_only_refusal_in_the_status_bar() {
    let mut app = common_tui::not_created(true);
    app.on_key(key('c'));
    snapshot("read_only_refused", &mut app);
}

#[test]
fn context_cluster_says_why_cluster_keys_are_unavailable() {
    let mut app = common_tui::context_cluster(false);
    app.on_key(key('X'));
    snapshot("context_cluster", &mut app);
}

/// Snapshots `<name>_80x24` and `<name>_120x40`: the pods pane's usage columns at the two
/// widths an operator over SSH most often has.
fn snapshot_usage(name: &str, app: &mut Tui) {
    for (width, height) in [(80, 24), (120, 40)] {
        app.log_rows = gantry::ui::log_rows(width, height, app.metrics.shown);
        let terminal = render(app, width, height);
        insta::assert_snapshot!(format!("{name}_{width}x{height}"), terminal.backend());
    }
}

#[test]
fn pods_show_what_each_uses() {
    let mut app = with_attempts(false);
    app.on_event(usage());
    snapshot_usage("pods_usage", &mut app);
}

#[test]
fn pods_show_the_gpus_each_asked_for_where_there_is_room() {
    let mut app = with_attempts(false);
    for p in running_pods() {
        let gpus = u32::from(p.name != POD_IMAGE) * 4;
        app.on_event(pod_event(Change::Applied(PodSummary { gpus, ..p })));
    }
    app.on_event(usage());
    snapshot_usage("pods_gpus", &mut app);
    // The compact layout at 120 columns has room for the column.
    app.log_rows = gantry::ui::log_rows(120, 30, false);
    insta::assert_snapshot!("pods_gpus_120x30", render(&app, 120, 30).backend());
}

/// Eight H100s on the running pod's node: four held by it, busy and nearly full, four idle.
fn gpus_read() -> gantry::engine::Report {
    gpus_read_at(now(), 0.0)
}

/// As [`gpus_read`], read at `at`, the held GPUs `less` busier than 93 %.
fn gpus_read_at(at: jiff::Timestamp, less: f64) -> gantry::engine::Report {
    use gantry::dcgm::{Gpu, PodRef};
    use gantry::k8s::gpus::{GpuRead, NodeGpus, Reading};
    let gpu = |index: u32| {
        let held = index < 4;
        Gpu {
            index,
            uuid: format!("GPU-3a5cd185-7c5c-e8d4-6b75-d416612adc6{index}"),
            model: "NVIDIA H100 80GB HBM3".into(),
            pods: if held {
                vec![PodRef {
                    namespace: "default".into(),
                    pod: POD_RUNNING.into(),
                    container: "ml-training-container".into(),
                }]
            } else {
                Vec::new()
            },
            util_percent: Some(if held { 91.0 } else { 0.0 }),
            gr_engine_active: Some(if held {
                0.93 - 0.01 * f64::from(index) - less
            } else {
                0.0
            }),
            fb_used_mib: Some(if held { 72_704.0 } else { 0.0 }),
            fb_total_mib: Some(81_559.0),
            power_w: Some(if held { 612.4 } else { 71.7 }),
            temp_c: Some(if held { 64.0 } else { 33.0 }),
            ..Gpu::default()
        }
    };
    gantry::engine::Report::Gpus(GpuRead::Read(Reading {
        at,
        nodes: vec![NodeGpus {
            node: NODE.into(),
            exporter: "gke-managed-system/dcgm-exporter-rv72r".into(),
            gpus: (0..8).map(gpu).collect(),
            per_gpu_hour: Some(11.06),
        }],
    }))
}

#[test]
fn pods_show_how_busy_and_full_their_gpus_are_and_the_cluster_what_they_draw() {
    let mut app = with_attempts(false);
    for p in running_pods() {
        let gpus = u32::from(p.name != POD_IMAGE) * 4;
        app.on_event(pod_event(Change::Applied(PodSummary { gpus, ..p })));
    }
    app.on_event(usage());
    app.on_event(gpus_read());
    app.focus = Focus::Pods;
    snapshot_usage("pods_gpu_figures", &mut app);
    app.log_rows = gantry::ui::log_rows(200, 50, false);
    insta::assert_snapshot!("pods_gpu_figures_200x50", render(&app, 200, 50).backend());
}

#[test]
fn the_metrics_pane_charts_each_pods_gpu_utilisation_after_the_trainings_metrics() {
    let mut app = with_attempts(false);
    for p in running_pods() {
        let gpus = u32::from(p.name != POD_IMAGE) * 4;
        app.on_event(pod_event(Change::Applied(PodSummary { gpus, ..p })));
    }
    for (secs, less) in [(120, 0.6), (90, 0.1), (60, 0.0), (30, 0.5), (0, 0.05)] {
        app.on_event(gpus_read_at(ago(secs).unwrap(), less));
    }
    app.on_key(key('m'));
    // Round the list backwards: the GPU memory last, the utilisation before it.
    app.on_key(key('['));
    app.on_key(key('['));
    app.log_rows = gantry::ui::log_rows(200, 50, true);
    insta::assert_snapshot!("metrics_gpu_util_200x50", render(&app, 200, 50).backend());
}

#[test]
fn gpu_metrics_unavailable_are_n_a_in_the_panes() {
    let mut app = with_attempts(false);
    for p in running_pods() {
        let gpus = u32::from(p.name != POD_IMAGE) * 4;
        app.on_event(pod_event(Change::Applied(PodSummary { gpus, ..p })));
    }
    app.on_event(usage());
    app.on_event(gantry::engine::Report::Gpus(
        gantry::k8s::gpus::GpuRead::Unavailable(gantry::k8s::gpus::Unavailable::NoExporter),
    ));
    snapshot_usage("pods_gpu_unavailable", &mut app);
}

#[test]
fn pods_say_n_a_without_metrics_server() {
    let mut app = with_attempts(false);
    app.on_event(gantry::engine::Report::Usage(None));
    snapshot_usage("pods_usage_unavailable", &mut app);
}

#[test]
fn an_idle_cluster_says_what_it_costs_on_the_status_line() {
    // Created 2h 15m ago, no attempt since: past the default idle reminder of 30m.
    snapshot("idle_reminder", &mut common_tui::running(false));
}

#[test]
fn the_idle_reminder_takes_the_place_of_old_news_but_not_of_a_warning() {
    use gantry::vocabulary::Severity;
    let mut app = common_tui::running(false);
    app.notify(
        Severity::Info,
        "cluster ml-gke-cluster is running (created)",
    );
    let screen = render(&app, 80, 24).backend().to_string();
    assert!(screen.contains("no attempt running"), "{screen}");
    app.notify(Severity::Warning, "launch refused: read-only");
    let screen = render(&app, 80, 24).backend().to_string();
    assert!(
        screen.contains("launch refused") && !screen.contains("no attempt running"),
        "{screen}"
    );
}

/// A GPU attempt whose pod no node can take: the cluster has no GPU pool.
fn waiting_for_a_gpu(read_only: bool) -> Tui {
    use gantry::k8s::status::AttemptPhase;
    use gantry::k8s::watch::JobWatchEvent;
    let mut app = running(read_only);
    app.on_event(job_event(Change::Applied(attempt(
        ATTEMPT_1,
        1,
        AttemptPhase::Pending,
    ))));
    let mut pod = pod("ml-training-job-0-q8d2w", ATTEMPT_1, "Pending");
    pod.gpus = 1;
    pod.node = None;
    pod.started = false;
    pod.reason = Some("Unschedulable".into());
    pod.message = Some("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.".into());
    app.on_event(pod_event(Change::Applied(pod)));
    app.on_event(gantry::engine::Report::Job(JobWatchEvent::Event(Change::Applied(
        event((
            "w1",
            "Pod",
            "ml-training-job-0-q8d2w",
            "Warning",
            "FailedScheduling",
            "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
            4,
            30,
        )),
    ))));
    app
}

#[test]
fn a_waiting_pod_says_why_and_what_to_do_in_the_pods_and_job_panes() {
    let mut app = waiting_for_a_gpu(false);
    snapshot("waiting_no_gpu_pool", &mut app);
    // A read-only viewer is told the same.
    let read_only = waiting_for_a_gpu(true);
    let lines = |app: &Tui| {
        let terminal = render(app, 80, 24);
        let buffer = terminal.backend().buffer().clone();
        (0..24)
            .map(|y| {
                (0..80)
                    .map(|x| buffer[(x, y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
    };
    let shown = lines(&read_only);
    assert!(shown.iter().any(|l| l.contains("NoGPUPool")), "{shown:#?}");
    assert!(
        shown
            .iter()
            .any(|l| l.contains("no node pool has nvidia.com/gpu")),
        "{shown:#?}"
    );
    assert!(
        shown.iter().any(|l| l.contains("1/1 waiting: no GPU pool")),
        "{shown:#?}"
    );
}

/// The running attempt absorbed three preemptions (spot nodes reclaimed) and nothing failed:
/// `⟳3` beside its failures, and its newest ends under it, at 80×24 too.
#[test]
fn an_attempt_that_absorbed_preemptions_says_so_apart_from_failures() {
    use gantry::vocabulary::ends::{Class, PodEnd};
    let mut app = with_attempts(false);
    let end = |pod: &str, minutes_ago: i64, ran: u64| PodEnd {
        pod: format!("{ATTEMPT_2}-{pod}"),
        index: None,
        class: Class::Preempted,
        detail: "its node shut down (spot VM reclaimed, or maintenance)".into(),
        at: ago(minutes_ago * 60),
        node: Some("gke-ml-gke-cluster-default-pool-1a2b3c4d-x9k2".into()),
        ran_seconds: ran,
        cost: Some(0.0021),
    };
    let mut attempt = running_attempt();
    attempt.failed = 0;
    attempt.recorded_ends = vec![
        end("p1a2b", 9, 120),
        end("q3c4d", 6, 150),
        end("r5e6f", 3, 95),
    ];
    app.on_event(job_event(Change::Applied(attempt)));
    app.focus = Focus::Jobs;
    app.dirty = false;
    snapshot("preempted_attempt", &mut app);
}

/// An attempt that ran code without an image says which code under it, at 80×24 too.
#[test]
fn the_job_pane_says_the_code_of_the_selected_attempt() {
    let mut app = with_attempts(false);
    let mut attempt = running_attempt();
    attempt.code = Some(Box::new(gantry::code::CodeRecord {
        digest: format!("sha256:3f2a1c9e0b1d{}", "0".repeat(52)),
        files: 14,
        bytes: 38 * 1024,
        dir: "/home/a/trainer".into(),
        commit: Some("9c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d".into()),
        dirty: Some(true),
    }));
    app.on_event(job_event(Change::Applied(attempt)));
    for (width, height) in SIZES {
        let screen = render(&app, width, height).backend().to_string();
        assert!(
            screen.contains("code 3f2a1c9e0b1d · 14 files"),
            "{width}x{height}:\n{screen}"
        );
        if width == 200 {
            assert!(
                screen.contains("code 3f2a1c9e0b1d · 14 files · 38 KiB · git 9c1d2e3 (changed)"),
                "{screen}"
            );
        }
    }
}
