//! What the TUI costs per line and per frame, with no terminal and no cluster:
//! - log ingest into the screen buffer (sanitising included) through `Tui::on_event`, in lines
//!   per second, for short lines, 1 KiB lines and lines full of escape sequences;
//! - a whole 200×50 frame (ratatui `TestBackend`, diff included) with the logs pane holding
//!   1,000 and 100,000 lines, following and scrolled back with a search active: the time must
//!   not grow with the lines held;
//! - a frame with 5,000 pods in the pods pane, and applying one pod watch event to 5,000 pods.
//!
//! Before criterion runs, a plain loop prints per-frame percentiles (`frame_render_ms_p50/p99`)
//! for the heaviest states; `GANTRY_BENCH_PERCENTILES_ONLY=1` stops after them (used by
//! `benches/compare.sh`).
//!
//! `cargo bench --bench tui`
//!
//! `GANTRY_BENCH_COUNT=ingest/<case>:<n>` (`short`, `mixed`, `1kib`, `escapes`): instead of
//! all this, `n` batches of that ingest case through `counted_ingest` alone, for callgrind to
//! count its instructions (`--toggle-collect='*counted_*'`; `benches/instructions.sh`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput};
use gantry::app::{App, Focus};
use gantry::engine::world::log_store::DEFAULT_CAPACITY;
use gantry::engine::{Report, TargetInfo, World};
use gantry_test_support::tui::Tui;

use gantry::config::Config;
use gantry::gke::{ClusterStatus, ClusterSummary};
use gantry::k8s::logs::{LogLine, TailEvent};
use gantry::k8s::status::{AttemptPhase, AttemptSummary, PodSummary};
use gantry::k8s::watch::{Change, JobWatchEvent};
use gantry::keys::{Action, Keymap};
use gantry::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const ATTEMPT: &str = "ml-training-job";
const WIDTH: u16 = 200;
const HEIGHT: u16 = 50;

fn now() -> jiff::Timestamp {
    "2025-06-01T12:00:00Z".parse().unwrap()
}

fn cluster() -> ClusterSummary {
    ClusterSummary {
        name: "ml-gke-cluster".into(),
        project: "demo-project".into(),
        location: "us-central1-a".into(),
        status: ClusterStatus::Running,
        status_message: String::new(),
        node_count: 3,
        machine_type: "n1-standard-1".into(),
        endpoint: "34.118.12.7".into(),
        version: "1.33.2-gke.1111000".into(),
        node_version: "1.33.2-gke.1111000".into(),
        node_pools: Vec::new(),
        locations: vec!["us-central1-a".into()],
        create_time: None,
        labels: Default::default(),
    }
}

fn attempt() -> AttemptSummary {
    AttemptSummary {
        name: ATTEMPT.into(),
        namespace: "default".into(),
        attempt: Some(1),
        status: AttemptPhase::Running,
        reason: None,
        message: None,
        active: 8,
        ready: 8,
        succeeded: 0,
        failed: 0,
        completions: Some(8),
        created: Some(now() - jiff::SignedDuration::from_secs(600)),
        start_time: Some(now() - jiff::SignedDuration::from_secs(600)),
        completion_time: None,
        finished_at: None,
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

fn pod_name(i: usize) -> String {
    format!("{ATTEMPT}-{i}-x{:04x}", i * 7919 % 65536)
}

fn pod(i: usize) -> PodSummary {
    PodSummary {
        name: pod_name(i),
        namespace: "default".into(),
        job: ATTEMPT.into(),
        attempt: Some(1),
        index: Some(i as u32),
        phase: "Running".into(),
        reason: None,
        message: None,
        exit_code: None,
        restarts: 0,
        node: Some(format!(
            "gke-ml-gke-cluster-default-pool-1a2b3c4d-{:04}",
            i % 100
        )),
        started: true,
        terminated: false,
        created: Some(now() - jiff::SignedDuration::from_secs(300 + i as i64)),
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

/// A running attempt with `pods` pods, its logs followed (all pods, merged).
fn app(pods: usize) -> Tui {
    let config = Config::default();
    let keymap = Keymap::with_overrides(&config.keys).unwrap();
    let mut app = Tui {
        model: World::default(),
        told: Default::default(),
        app: App::new(config, keymap, false),
    };
    app.on_event(Report::Target(TargetInfo {
        place: "demo-project/us-central1-a".into(),
        cluster: "ml-gke-cluster".into(),
        managed: true,
        unmanaged_reason: None,
        simulated: true,
    }));
    app.on_event(Report::Cluster(cluster()));
    app.on_event(Report::Connected);
    app.on_event(Report::Job(JobWatchEvent::Job(Change::Applied(attempt()))));
    for i in 0..pods {
        app.on_event(Report::Job(JobWatchEvent::Pod(Change::Applied(pod(i)))));
    }
    app.on_event(Report::LogsSavedTo {
        generation: app.model.logs.generation,
        dir: "/home/op/.local/state/gantry/logs/ml-gke-cluster/ml-training-job".into(),
    });
    app
}

fn ts(i: u64) -> Option<i128> {
    Some(1_748_779_200_000_000_000 + i as i128 * 1_000_000)
}

/// A whole line as the tailer delivers it: its own allocation of exactly its length
/// (`Bytes::copy_from_slice`), which is dropped in one free.
fn tailer_line(i: u64, text: &str) -> LogLine {
    LogLine {
        ts: ts(i),
        bytes: Bytes::copy_from_slice(text.as_bytes()),
        continues: false,
    }
}

fn short_line(i: u64) -> LogLine {
    tailer_line(
        i,
        &format!(
            "epoch 2/3 step {i}/5000 loss=0.{:04} acc=0.8{:03} lr=3.0e-4 grad_norm=1.27",
            i % 10_000,
            i % 1000
        ),
    )
}

/// A log as a training pod writes it: nine lines in ten without metrics, the tenth a step line
/// (`short` is the worst case: every line a step line with five metrics).
fn mixed_line(i: u64) -> LogLine {
    if i % 10 == 9 {
        return short_line(i);
    }
    tailer_line(
        i,
        &format!(
            "INFO worker {} fetched batch {i} of shard {} in the background",
            i % 8,
            i % 64
        ),
    )
}

fn kib_line(i: u64) -> LogLine {
    let mut text = format!("step {i} metrics:");
    while text.len() < 1024 {
        text.push_str(&format!(" layer{}.weight_norm={:.4}", text.len() % 97, 1.0));
    }
    text.truncate(1024);
    tailer_line(i, &text)
}

/// A line made mostly of colour, cursor, title (OSC) and clipboard sequences.
fn escape_line(i: u64) -> LogLine {
    tailer_line(
        i,
        &format!(
            "\x1b[1;32mINFO\x1b[0m \x1b[2m{i}\x1b[0m \x1b]0;step {i}\x07\x1b[36mloss\x1b[0m=\x1b[33m0.{:04}\x1b[0m \
             \x1b[2K\x1b[1G\x1b[38;5;208macc\x1b[39m=\x1b[48;2;10;20;30m0.91\x1b[49m\t\x1b]52;c;ZWNobw==\x1b\\\
             \x1b[?25l\x1b(B\x1b[K\x1b[31;1mwarn\x1b[m\r\x1b[32m100%\x1b[0m",
            i % 10_000
        ),
    )
}

/// Pods emit in batches, as the tailer delivers them.
const BATCH: usize = 256;

fn batch(make: fn(u64) -> LogLine, from: u64) -> Vec<LogLine> {
    (from..from + BATCH as u64).map(make).collect()
}

fn tail_event(app: &Tui, pod: usize, lines: Vec<LogLine>) -> Report {
    Report::Tail {
        generation: app.model.logs.generation,
        event: TailEvent::Lines {
            pod: pod_name(pod),
            lines,
        },
    }
}

/// An app following 8 pods, its buffer holding `held` lines.
fn app_with_lines(held: usize) -> Tui {
    let mut app = app(8);
    let mut i = 0u64;
    while (i as usize) < held {
        let lines = batch(short_line, i);
        let event = tail_event(&app, (i as usize / BATCH) % 8, lines);
        app.on_event(event);
        i += BATCH as u64;
    }
    app.model.logs.lines.keep_newest(held);
    app
}

/// Makes the line of a step.
type MakeLine = fn(u64) -> LogLine;

const INGEST_CASES: [(&str, MakeLine); 4] = [
    ("short", short_line),
    ("mixed", mixed_line),
    ("1kib", kib_line),
    ("escapes", escape_line),
];

fn ingest(c: &mut Criterion) {
    let mut group = c.benchmark_group("ingest");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.measurement_time(Duration::from_secs(4));
    for (name, make) in INGEST_CASES {
        // The buffer is full (100,000 lines): every line pushed drops the oldest, as in a long run.
        let mut app = app_with_lines(DEFAULT_CAPACITY);
        let generation = app.model.logs.generation;
        // The 8 pods log the same steps in turn, each batch going on where the last round
        // ended (steps and times go forward, as a run's do); lines are made outside the
        // measured time.
        let (mut pod, mut from) = (0, DEFAULT_CAPACITY as u64);
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    pod = (pod + 1) % 8;
                    if pod == 1 {
                        from += BATCH as u64;
                    }
                    Report::Tail {
                        generation,
                        event: TailEvent::Lines {
                            pod: pod_name(pod),
                            lines: batch(make, from),
                        },
                    }
                },
                |event| app.on_event(black_box(event)),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap()
}

/// One frame as the event loop draws it: render into the buffer, diff, write to the backend.
fn frame(terminal: &mut Terminal<TestBackend>, app: &Tui, theme: &Theme) {
    terminal
        .draw(|f| gantry::ui::draw(f, &app.model, &app.app, theme, now()))
        .unwrap();
}

/// Scrolled back about half-way, a search for a word on some lines highlighted.
fn scroll_back_with_search(app: &mut Tui) {
    app.focus = Focus::Logs;
    app.logs.search = Some("loss=0.00".into());
    app.app.logs.top(&app.model);
    app.app
        .logs
        .scroll_by(&app.model, (app.model.logs.lines.len() / 2) as isize);
    app.update(Action::NextMatch);
}

#[derive(Clone, Copy)]
enum LogState {
    Following,
    ScrolledSearch,
}

fn logs_state(held: usize, state: LogState) -> Tui {
    let mut app = app_with_lines(held);
    if let LogState::ScrolledSearch = state {
        scroll_back_with_search(&mut app);
    }
    app
}

/// Adds one line (what makes the next frame differ from the last), keeping `held` lines.
fn one_more_line(app: &mut Tui, i: u64) {
    let event = tail_event(app, (i % 8) as usize, vec![short_line(i)]);
    app.on_event(event);
}

fn draw_logs(c: &mut Criterion) {
    let theme = Theme::colored();
    let mut group = c.benchmark_group("frame_logs_200x50");
    group.measurement_time(Duration::from_secs(4));
    for (label, state) in [
        ("following", LogState::Following),
        ("scrolled_search", LogState::ScrolledSearch),
    ] {
        for held in [1_000usize, 100_000] {
            let mut app = logs_state(held, state);
            let mut terminal = terminal();
            let mut i = 1_000_000u64;
            group.bench_with_input(BenchmarkId::new(label, held), &held, |b, _| {
                b.iter(|| {
                    i += 1;
                    one_more_line(&mut app, i);
                    frame(&mut terminal, &app, &theme);
                })
            });
        }
    }
    group.finish();
}

fn pods(c: &mut Criterion) {
    let theme = Theme::colored();
    let mut group = c.benchmark_group("pods_5000");
    group.measurement_time(Duration::from_secs(4));
    let mut app = app(5_000);
    app.focus = Focus::Pods;
    for _ in 0..2_500 {
        app.update(Action::Down);
    }
    let mut terminal = terminal();
    let mut flip = false;
    group.bench_function("frame_200x50", |b| {
        b.iter(|| {
            // Something changes between frames, as a watch event would.
            flip = !flip;
            app.update(if flip { Action::Down } else { Action::Up });
            frame(&mut terminal, &app, &theme);
        })
    });
    let mut n = 0usize;
    group.bench_function("apply_one_watch_event", |b| {
        b.iter_batched(
            || {
                n += 1;
                let mut p = pod(n % 5_000);
                p.restarts = (n % 3) as i32;
                Report::Job(JobWatchEvent::Pod(Change::Applied(p)))
            },
            |event| app.on_event(black_box(event)),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("apply_one_watch_event_then_frame", |b| {
        b.iter_batched(
            || {
                n += 1;
                let mut p = pod(n % 5_000);
                p.restarts = (n % 3) as i32;
                Report::Job(JobWatchEvent::Pod(Change::Applied(p)))
            },
            |event| {
                app.on_event(event);
                frame(&mut terminal, &app, &theme);
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at].as_secs_f64() * 1e3
}

/// Per-frame times of the heaviest states, as percentiles (criterion reports means).
fn frame_percentiles() {
    let theme = Theme::colored();
    let frames = 3_000;
    let mut worst_p99: f64 = 0.0;
    let mut measure = |name: &str, app: &mut Tui, change: &mut dyn FnMut(&mut Tui, u64)| {
        let mut terminal = terminal();
        for i in 0..100 {
            change(app, i);
            frame(&mut terminal, app, &theme);
        }
        let mut times = Vec::with_capacity(frames);
        for i in 0..frames as u64 {
            change(app, 10_000_000 + i);
            let started = Instant::now();
            frame(&mut terminal, app, &theme);
            times.push(started.elapsed());
        }
        times.sort();
        let p99 = percentile(&times, 0.99);
        worst_p99 = worst_p99.max(p99);
        println!(
            "[tui] {name}: frame p50 {:.3} ms, p99 {p99:.3} ms, max {:.3} ms ({frames} frames, 200x50)",
            percentile(&times, 0.50),
            percentile(&times, 1.0),
        );
    };
    for held in [1_000, 100_000] {
        measure(
            &format!("logs following, {held} lines held"),
            &mut logs_state(held, LogState::Following),
            &mut |app, i| one_more_line(app, i),
        );
        measure(
            &format!("logs scrolled back + search, {held} lines held"),
            &mut logs_state(held, LogState::ScrolledSearch),
            &mut |app, i| one_more_line(app, i),
        );
    }
    let mut app = app(5_000);
    app.focus = Focus::Pods;
    measure(
        "5000 pods, one pod changed per frame",
        &mut app,
        &mut |app, i| {
            let mut p = pod(i as usize % 5_000);
            p.restarts = (i % 3) as i32;
            app.on_event(Report::Job(JobWatchEvent::Pod(Change::Applied(p))));
        },
    );
    let mut app = metrics_state(4, 1_000_000);
    let mut metrics_p99 = 0.0;
    {
        let mut terminal = terminal();
        let mut times = Vec::with_capacity(frames);
        for i in 0..frames as u64 {
            one_more_line(&mut app, 1_000_000 + i);
            let started = Instant::now();
            frame(&mut terminal, &app, &theme);
            times.push(started.elapsed());
        }
        times.sort();
        metrics_p99 = f64::max(metrics_p99, percentile(&times, 0.99));
        println!(
            "[tui] metrics pane, 4 ranks x 1,000,000 points per series: frame p50 {:.3} ms, p99 {metrics_p99:.3} ms ({frames} frames, 200x50, store {} KiB)",
            percentile(&times, 0.50),
            app.model.training.store.bytes() / 1024,
        );
    }
    println!("frame_render_ms_p99: {:.3}", worst_p99.max(metrics_p99));
    println!("metrics_frame_ms_p99: {metrics_p99:.3}");
}

/// The metrics pane shown beside the logs of `ranks` pods that each logged `points` steps.
fn metrics_state(ranks: usize, points: u64) -> Tui {
    let mut app = app(ranks);
    let mut i = 0;
    while i < points {
        for pod in 0..ranks {
            let lines = batch(short_line, i);
            let event = tail_event(&app, pod, lines);
            app.on_event(event);
        }
        i += BATCH as u64;
    }
    app.metrics.shown = true;
    app
}

/// The ingest benchmark's events, counted alone.
#[inline(never)]
fn counted_ingest(app: &mut Tui, events: Vec<Report>) {
    for event in events {
        app.on_event(black_box(event));
    }
}

/// `GANTRY_BENCH_COUNT=ingest/<case>:<n>`: `n` batches as `ingest` gives them, after a
/// round of the 8 pods uncounted (see the module's header).
fn count(spec: &str) {
    let (case, n) = spec
        .split_once(':')
        .and_then(|(case, n)| Some((case, n.parse::<usize>().ok()?)))
        .expect("GANTRY_BENCH_COUNT=ingest/<case>:<n>");
    let (_, make) = INGEST_CASES
        .iter()
        .find(|(name, _)| case.strip_prefix("ingest/") == Some(*name))
        .expect("ingest/short, ingest/mixed, ingest/1kib or ingest/escapes");
    let mut app = app_with_lines(DEFAULT_CAPACITY);
    let generation = app.model.logs.generation;
    let events = |count: usize, from: u64| -> Vec<Report> {
        (0..count)
            .map(|b| Report::Tail {
                generation,
                event: TailEvent::Lines {
                    pod: pod_name(b % 8),
                    lines: batch(*make, from + (b / 8 * BATCH) as u64),
                },
            })
            .collect()
    };
    let from = DEFAULT_CAPACITY as u64;
    warm_up(&mut app, events(8, from));
    let counted = events(n, from + BATCH as u64);
    counted_ingest(&mut app, counted);
    println!("{case}: {} lines", n * BATCH);
}

/// The warm-up round, not counted (a name apart from `counted_*`).
#[inline(never)]
fn warm_up(app: &mut Tui, events: Vec<Report>) {
    for event in events {
        app.on_event(event);
    }
}

fn main() {
    if let Ok(spec) = std::env::var("GANTRY_BENCH_COUNT") {
        count(&spec);
        return;
    }
    // `GANTRY_BENCH_CRITERION_ONLY=1`: the criterion groups alone (to profile one of them).
    if std::env::var_os("GANTRY_BENCH_CRITERION_ONLY").is_none() {
        frame_percentiles();
    }
    if std::env::var_os("GANTRY_BENCH_PERCENTILES_ONLY").is_some() {
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    ingest(&mut c);
    draw_logs(&mut c);
    pods(&mut c);
    c.final_summary();
}
