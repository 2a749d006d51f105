#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;

use super::*;
use crate::metrics::alerts::AlertKind;
use crate::metrics::pieces::MetricStream;

#[test]
fn each_pod_keeps_its_series_and_the_band_spans_the_ranks() {
    let mut store = Store::default();
    store.set_ranks(2, 2);
    for step in 1..=10 {
        let x = f64::from(step);
        store.push(2, "train-2-a", x, "loss", 1.0 / x);
        store.push(2, "train-2-b", x, "loss", 2.0 / x);
    }
    let a = store.series(2, "train-2-a", "loss").unwrap().summary();
    assert_eq!(
        (a.count, a.latest.unwrap().y, a.max.unwrap().y),
        (10, 0.1, 1.0)
    );
    let band = store.band(2, "loss").unwrap();
    assert_eq!(band.mean().summary().latest.unwrap().y, 0.15000000000000002);
    assert_eq!(band.upper().summary().max.unwrap().y, 2.0);
    assert_eq!(
        store.pods(2).collect::<Vec<_>>(),
        ["train-2-a", "train-2-b"]
    );
    assert_eq!(store.bytes(), store.recount());
}

#[test]
fn the_loss_comes_first_among_the_metrics() {
    let mut store = Store::default();
    for name in ["learning_rate", "grad_norm", "eval_loss", "loss"] {
        store.push(1, "p", 1.0, name, 1.0);
    }
    assert_eq!(
        store.metrics(1),
        ["loss", "learning_rate", "grad_norm", "eval_loss"]
    );
    let mut store = Store::default();
    for name in ["accuracy", "train/loss"] {
        store.push(1, "p", 1.0, name, 1.0);
    }
    assert_eq!(store.metrics(1), ["train/loss", "accuracy"]);
}

#[test]
fn a_diverging_pod_raises_one_alert_naming_metric_step_and_pod() {
    let mut store = Store::default();
    let mut stream = MetricStream::new();
    let mut parser = crate::metrics::LineParser::new();
    let mut alerts = Vec::new();
    for line in [
        "step=1 loss=2.0",
        "step=2 loss=1.5",
        "step=3 loss=nan",
        "step=4 loss=nan",
    ] {
        stream.push_line(&mut parser, line.as_bytes(), |s| {
            alerts.extend(store.push_sample(1, "train-1-x", s))
        });
    }
    assert_eq!(alerts.len(), 1);
    assert_eq!(
        (alerts[0].metric.as_str(), alerts[0].pod.as_str()),
        ("loss", "train-1-x")
    );
    assert_eq!(alerts[0].step, 3.0);
    assert!(matches!(alerts[0].kind, AlertKind::NonFinite { .. }));
}

#[test]
fn new_metric_names_beyond_the_cap_are_not_kept() {
    let mut store = Store::default();
    for i in 0..100 {
        store.push(1, "p", 1.0, &format!("m{i}"), 1.0);
    }
    assert_eq!(store.metrics(1).len(), MAX_METRICS);
}

#[test]
fn thousands_of_ranks_keep_the_band_and_the_ranks_on_screen_within_the_budget() {
    let mut store = Store::default();
    store.set_ranks(1, 5000);
    store.set_on_screen(1, &["train-1-7", "train-1-4999"]);
    for step in 0..40 {
        for rank in 0..5000 {
            let pod = format!("train-1-{rank}");
            for metric in ["loss", "accuracy", "grad_norm"] {
                store.push(1, &pod, f64::from(step), metric, f64::from(rank));
            }
        }
        assert!(store.bytes() <= DEFAULT_BUDGET);
    }
    store.flush(1);
    for pod in ["train-1-7", "train-1-4999"] {
        assert_eq!(
            store.series(1, pod, "loss").unwrap().summary().count,
            40,
            "{pod}"
        );
    }
    assert!(store.series(1, "train-1-8", "loss").is_none());
    let band = store.band(1, "loss").unwrap();
    assert_eq!(band.mean().summary().count, 40);
    assert_eq!(band.upper().summary().max.unwrap().y, 4999.0);
    assert_eq!(band.lower().summary().min.unwrap().y, 0.0);
    assert_eq!(store.bytes(), store.recount());
}

#[test]
fn a_pod_coming_on_screen_after_being_let_go_starts_a_new_series() {
    let mut store = Store::new(64 * 1024);
    for step in 0..50 {
        for rank in 0..40 {
            store.push(1, &format!("p{rank}"), f64::from(step), "loss", 1.0);
        }
    }
    assert!(store.series(1, "p3", "loss").is_none());
    assert_eq!(store.latest(1, "p3", "loss"), Some(1.0));
    store.set_on_screen(1, &["p3"]);
    store.push(1, "p3", 50.0, "loss", 0.5);
    assert_eq!(store.series(1, "p3", "loss").unwrap().summary().count, 1);
}

#[derive(Debug, Clone)]
enum Op {
    Push {
        attempt: u32,
        pod: u8,
        metric: u8,
        x: f64,
        y: f64,
    },
    OnScreen {
        attempt: u32,
        pods: Vec<u8>,
    },
    Flush {
        attempt: u32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let y = prop_oneof![8 => -1e3f64..1e3, 1 => Just(f64::NAN)];
    prop_oneof![
        20 => (0u32..4, 0u8..60, 0u8..6, 0f64..1e4, y)
            .prop_map(|(attempt, pod, metric, x, y)| Op::Push { attempt, pod, metric, x, y }),
        1 => (0u32..4, proptest::collection::vec(0u8..60, 0..4))
            .prop_map(|(attempt, pods)| Op::OnScreen { attempt, pods }),
        1 => (0u32..4).prop_map(|attempt| Op::Flush { attempt }),
    ]
}

proptest! {
    #[test]
    fn the_budget_is_never_exceeded_and_the_count_is_true(
        ops in proptest::collection::vec(op(), 0..1500),
        budget in 8_000usize..300_000,
    ) {
        let mut store = Store::new(budget);
        for op in ops {
            match op {
                Op::Push { attempt, pod, metric, x, y } => {
                    store.push(attempt, &format!("pod-{pod}"), x, &format!("m{metric}"), y);
                }
                Op::OnScreen { attempt, pods } => {
                    let names: Vec<String> = pods.iter().map(|p| format!("pod-{p}")).collect();
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    store.set_on_screen(attempt, &names);
                }
                Op::Flush { attempt } => store.flush(attempt),
            }
            prop_assert!(store.bytes() <= budget, "{} > {budget}", store.bytes());
            prop_assert_eq!(store.bytes(), store.recount());
        }
    }

    #[test]
    fn with_room_the_latest_of_every_series_is_the_last_value_pushed(
        pushes in proptest::collection::vec((0u8..5, 0u8..3, -1e3f64..1e3), 1..400),
    ) {
        let mut store = Store::default();
        let mut last = std::collections::HashMap::new();
        for (i, (pod, metric, y)) in pushes.into_iter().enumerate() {
            let (pod, metric) = (format!("p{pod}"), format!("m{metric}"));
            store.push(1, &pod, i as f64, &metric, y);
            last.insert((pod, metric), y);
        }
        for ((pod, metric), y) in last {
            let summary = store.series(1, &pod, &metric).unwrap().summary();
            prop_assert_eq!(summary.latest.unwrap().y, y);
        }
    }
}
