//! The training metrics on screen: the chart of one metric per rank (or the band across ranks),
//! the previous attempt behind it, the keys that choose what it shows, the Job pane's progress
//! and ETA, and the status line's warning when a metric goes wrong. Drawn on a `TestBackend` at
//! 80×24 and 200×50 with the plain theme and a fixed `now`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::tui::*;

use gantry::engine::Report;
use gantry::k8s::logs::{LogLine, StreamEnd, TailEvent};
use gantry::k8s::status::{AttemptPhase, PodSummary};
use gantry::k8s::watch::Change;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const STEPS: u32 = 1000;

fn render(app: &Tui, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| app.draw(frame)).unwrap();
    terminal
}

fn screen(app: &Tui, width: u16, height: u16) -> String {
    let terminal = render(app, width, height);
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Snapshots `<name>_80x24` and `<name>_200x50`.
fn snapshot(name: &str, app: &mut Tui) {
    for (width, height) in [(80, 24), (200, 50)] {
        app.log_rows = gantry::ui::log_rows(width, height, app.metrics.shown);
        let terminal = render(app, width, height);
        insta::assert_snapshot!(format!("{name}_{width}x{height}"), terminal.backend());
    }
}

/// A plain training loop's line at `step` for `rank`: a noisy decaying loss, a rising accuracy
/// and a warm-up then decaying learning rate, stamped as written two steps a second until now.
fn step_line(step: u32, rank: u32, offset: f64) -> LogLine {
    let s = f64::from(step);
    let noise = ((s * 0.37 + f64::from(rank) * 1.3).sin()) * 0.08;
    let loss = 2.4 * (-s / 280.0).exp() + 0.35 + noise + offset;
    let acc = 0.92 - 0.8 * (-s / 350.0).exp() + noise / 4.0;
    let lr = if s < 100.0 {
        3e-4 * s / 100.0
    } else {
        3e-4 * (1.0 - (s - 100.0) / 1000.0)
    };
    stamped(
        &format!("step {step:05}/{STEPS:05} | loss: {loss:.4} | accuracy: {acc:.4} | lr: {lr:.2e}"),
        i64::from((600 - step / 2).max(1)),
    )
}

fn steps(until: u32, rank: u32, offset: f64) -> Vec<LogLine> {
    (1..=until / 10)
        .map(|i| step_line(i * 10, rank, offset))
        .collect()
}

fn attempt_pod(name: &str, attempt: &str, number: u32) -> PodSummary {
    PodSummary {
        attempt: Some(number),
        created: ago(10 * 60),
        ..pod(name, attempt, "Running")
    }
}

fn running_attempt_2() -> gantry::k8s::status::AttemptSummary {
    gantry::k8s::status::AttemptSummary {
        active: 1,
        start_time: ago(10 * 60),
        ..attempt(ATTEMPT_2, 2, AttemptPhase::Running)
    }
}

/// Attempt 2 running with `ranks` pods logging up to step `until`; with `behind`, attempt 1's
/// logs were followed to step 600 before it failed.
fn training(ranks: u32, until: u32, behind: bool) -> Tui {
    let mut app = running(false);
    if behind {
        app.on_event(job_event(Change::Applied(failed_attempt())));
        let pod = FAILED_PODS[0];
        app.on_event(pod_event(Change::Applied(attempt_pod(pod, ATTEMPT_1, 1))));
        tail_lines(&mut app, pod, steps(600, 0, 0.4));
    }
    app.on_event(job_event(Change::Applied(running_attempt_2())));
    for rank in 0..ranks {
        let pod = format!("{ATTEMPT_2}-{rank}-x7k2p");
        app.on_event(pod_event(Change::Applied(attempt_pod(&pod, ATTEMPT_2, 2))));
        tail_lines(&mut app, &pod, steps(until, rank, 0.0));
    }
    app.metrics.shown = true;
    app.notice = None;
    app
}

#[test]
fn one_rank_is_charted_with_its_latest_and_best_loss() {
    let mut app = training(1, 500, false);
    snapshot("metrics_one_rank", &mut app);
    let s = screen(&app, 80, 24);
    assert!(s.contains("Metrics loss 1/3"), "{s}");
    assert!(s.contains("latest"), "{s}");
    assert!(
        s.contains('⣀')
            || s.contains('⠉')
            || s.chars().any(|c| ('\u{2801}'..='\u{28ff}').contains(&c)),
        "{s}"
    );
}

#[test]
fn four_ranks_are_four_curves() {
    let mut app = training(4, 500, false);
    snapshot("metrics_four_ranks", &mut app);
    assert!(screen(&app, 200, 50).contains("4 ranks"));
}

#[test]
fn the_previous_attempt_is_drawn_behind() {
    let mut app = training(1, 300, true);
    snapshot("metrics_previous_attempt", &mut app);
    assert!(screen(&app, 80, 24).contains("#1 dimmed behind"));
}

#[test]
fn brackets_choose_the_metric_round_the_list_and_s_smooths() {
    let mut app = training(1, 200, false);
    app.on_key(key(']'));
    assert!(screen(&app, 80, 24).contains("Metrics accuracy 2/3"));
    app.on_key(key(']'));
    app.on_key(key(']'));
    assert!(screen(&app, 80, 24).contains("Metrics loss 1/3"));
    app.on_key(key('['));
    assert!(screen(&app, 80, 24).contains("Metrics lr 3/3"));
    app.on_key(key('s'));
    assert!(screen(&app, 200, 50).contains("smoothed"));
    app.on_key(key('m'));
    assert!(!screen(&app, 80, 24).contains("Metrics"));
}

#[test]
fn at_80_columns_the_chart_takes_the_logs_place_and_from_120_stands_beside_them() {
    let app = training(1, 200, false);
    let narrow = screen(&app, 80, 24);
    assert!(
        narrow.contains("Metrics") && !narrow.contains(" Logs"),
        "{narrow}"
    );
    let wide = screen(&app, 140, 30);
    let row = wide.lines().find(|l| l.contains("Metrics")).unwrap();
    assert!(row.contains("Logs"), "{wide}");
}

#[test]
fn the_job_pane_shows_the_attempts_progress_and_eta() {
    let app = training(1, 500, false);
    let s = screen(&app, 200, 50);
    assert!(s.contains("step 500/1,000 · 50% · ETA"), "{s}");
}

#[test]
fn a_run_that_succeeded_is_shown_done_whatever_its_last_counter_said() {
    let mut app = training(1, 500, false);
    let pod = format!("{ATTEMPT_2}-0-x7k2p");
    tail_lines(
        &mut app,
        &pod,
        vec![line("epoch 3/3 done: val_loss=0.2024")],
    );
    assert!(screen(&app, 200, 50).contains("epoch 3/3 · 67%"));
    app.on_event(job_event(Change::Applied(
        gantry::k8s::status::AttemptSummary {
            status: AttemptPhase::Succeeded,
            active: 0,
            succeeded: 1,
            ..running_attempt_2()
        },
    )));
    let s = screen(&app, 200, 50);
    assert!(s.contains("epoch 3/3 · 100%"), "{s}");
    assert!(!s.contains("ETA"), "{s}");
}

#[test]
fn the_keys_are_in_the_help() {
    let mut app = training(1, 10, false);
    app.on_key(key('?'));
    let s = screen(&app, 200, 50);
    assert!(s.contains("metrics chart on/off"), "{s}");
    assert!(s.contains("smoothing on/off"), "{s}");
}

#[test]
fn a_loss_going_nan_is_told_in_the_status_line_once() {
    let mut app = training(2, 100, false);
    let pod = format!("{ATTEMPT_2}-1-x7k2p");
    tail_lines(
        &mut app,
        &pod,
        vec![line("step 00110/01000 | loss: nan | accuracy: 0.5")],
    );
    let s = screen(&app, 80, 24);
    let status = s.lines().last().unwrap();
    assert!(status.contains("loss became NaN at step 110"), "{status}");
    app.notice = None;
    tail_lines(
        &mut app,
        &format!("{ATTEMPT_2}-0-x7k2p"),
        vec![line("step 00110/01000 | loss: nan | accuracy: 0.5")],
    );
    assert!(app.notice.is_none(), "told twice: {:?}", app.notice);
}

#[test]
fn a_bar_that_does_not_say_how_many_epochs_shows_its_epoch_and_that_the_rest_is_the_epochs() {
    let mut app = training(1, 10, false);
    let pod = format!("{ATTEMPT_2}-0-x7k2p");
    // Lightning's bar: the epoch's number, its steps, never how many epochs there are.
    let bar = |n: u32| {
        format!(
            "Epoch 3:  {:>3}%|#####     | {n}/1330 [00:17<00:15, 40.00it/s, loss=0.5, v_num=1]",
            n * 100 / 1330
        )
    };
    tail_lines(
        &mut app,
        &pod,
        vec![stamped(&bar(600), 20), stamped(&bar(1330), 2)],
    );
    let s = screen(&app, 200, 50);
    assert!(s.contains("epoch 3 · step 1,330/1,330 · 100% · ETA"), "{s}");
    assert!(s.contains("(epoch)"), "{s}");
}

#[test]
fn a_bar_that_counts_the_whole_run_is_not_taken_for_an_epochs() {
    let mut app = training(1, 10, false);
    let pod = format!("{ATTEMPT_2}-0-x7k2p");
    // Hugging Face's Trainer: its bar counts every step of the run; its dicts say a fractional
    // epoch between the bar's updates.
    tail_lines(
        &mut app,
        &pod,
        vec![
            stamped("{'loss': 0.61, 'learning_rate': 4.9e-05, 'epoch': 0.5}", 20),
            stamped(" 50%|█████     | 500/1000 [00:10<00:10, 50.00it/s]", 2),
        ],
    );
    let s = screen(&app, 200, 50);
    assert!(s.contains("step 500/1,000 · 50%"), "{s}");
    assert!(!s.contains("(epoch)") && !s.contains("epoch 0"), "{s}");
}

#[test]
fn a_bar_left_without_a_newline_is_read_when_the_pod_ends() {
    let mut app = training(1, 10, false);
    let pod = format!("{ATTEMPT_2}-0-x7k2p");
    tail_lines(
        &mut app,
        &pod,
        vec![LogLine {
            continues: true,
            ..line("step 00020/01000 | loss: 0.5\rstep 00030/01000 | loss: 0.25")
        }],
    );
    let generation = app.model.logs.generation;
    app.on_event(Report::Tail {
        generation,
        event: TailEvent::PodEnded {
            pod: pod.clone(),
            why: StreamEnd::Completed,
        },
    });
    let series = app.model.training.store.series(2, &pod, "loss").unwrap();
    let latest = series.summary().latest.unwrap();
    assert_eq!((latest.x, latest.y), (30.0, 0.25));
}

#[test]
fn with_many_ranks_the_band_across_them_is_drawn() {
    let mut app = training(12, 200, false);
    let s = screen(&app, 200, 50);
    assert!(s.contains("12 ranks") || s.contains("mean"), "{s}");
    snapshot("metrics_band", &mut app);
}

#[test]
fn without_metrics_the_pane_says_what_it_reads() {
    let mut app = with_failed_attempt(false);
    app.metrics.shown = true;
    let s = screen(&app, 80, 24);
    assert!(
        s.contains("No training metrics in the logs of ml-training-job yet"),
        "{s}"
    );
}

#[test]
fn an_attempt_not_followed_live_is_read_from_its_saved_logs_for_comparison() {
    let mut app = training(1, 100, false);
    assert_eq!(app.model.training.take_wanted(), Some(1));
    assert_eq!(app.model.training.take_wanted(), None, "asked for once");
    let log: String = (1..=30)
        .map(|i| {
            format!(
                "step {:05}/01000 | loss: {:.3}\n",
                i * 10,
                3.0 - f64::from(i) * 0.05
            )
        })
        .collect();
    let mut store = gantry::metrics::store::Store::default();
    gantry::metrics::read::samples(log.as_bytes(), |s| {
        store.push_sample(1, FAILED_PODS[0], s);
    })
    .unwrap();
    store.flush(1);
    app.on_event(Report::TrainingLoaded {
        attempt: 1,
        store: Box::new(store),
    });
    assert!(screen(&app, 80, 24).contains("#1 dimmed behind"));
}

#[test]
fn with_hundreds_of_ranks_only_the_ranks_kept_are_held_and_the_band_counts_them_all() {
    let app = training(100, 30, false);
    let store = &app.model.training.store;
    assert!(store.pods(2).count() <= 8, "{}", store.pods(2).count());
    let band = store.band(2, "loss").unwrap();
    assert!(band.pending().count() + band.mean().summary().count as usize >= 3);
    let s = screen(&app, 200, 50);
    assert!(s.contains("100 ranks: min, mean, max"), "{s}");
}
