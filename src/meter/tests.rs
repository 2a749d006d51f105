#![allow(clippy::unwrap_used, clippy::expect_used)]

use jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;

use super::ledger;
use super::*;
use crate::k8s::run::Run;
use crate::k8s::status::{AttemptPhase, AttemptSummary};
use crate::vocabulary::cost::Recorded;

const FEE: f64 = 0.10;
/// An n1-standard-1 with its 100 GB pd-balanced boot disk in us-central1.
const NODE: f64 = 0.0475 + 100.0 * 0.1 / 730.0;

fn t0() -> Timestamp {
    "2026-12-05T10:00:00Z".parse().unwrap()
}

/// `t0` plus this many seconds.
fn at(secs: i64) -> Timestamp {
    t0() + SignedDuration::from_secs(secs)
}

fn span(name: &str, per_hour: PerHour, from: i64, to: Option<i64>) -> NodeSpan {
    NodeSpan {
        name: name.into(),
        per_hour,
        from: at(from),
        to: to.map(at),
    }
}

fn watched_from(secs: i64) -> Vec<Stretch> {
    vec![Stretch {
        from: at(secs),
        to: None,
    }]
}

fn meter<'a>(spans: &'a [NodeSpan], watched: &'a [Stretch]) -> Meter<'a> {
    Meter {
        spans,
        fee_per_hour: FEE,
        cluster_created: Some(t0()),
        watched,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

const HOUR: i64 = 3600;

#[test]
fn a_resize_mid_run_changes_the_slope() {
    // Three nodes for an hour, then the pool is resized to one.
    let spans = [
        span("a", PerHour::Known(NODE), 0, None),
        span("b", PerHour::Known(NODE), 0, Some(HOUR)),
        span("c", PerHour::Known(NODE), 0, Some(HOUR)),
    ];
    let watched = watched_from(0);
    let m = meter(&spans, &watched);
    let first = m.between(at(0), at(HOUR)).usd.unwrap();
    let second = m.between(at(HOUR), at(2 * HOUR)).usd.unwrap();
    assert!(close(first, FEE + 3.0 * NODE), "{first}");
    assert!(close(second, FEE + NODE), "{second}");
    let whole = m.between(at(0), at(2 * HOUR));
    assert!(!whole.partial);
    assert!(close(whole.usd.unwrap(), first + second));
}

#[test]
fn scale_to_zero_stops_the_meter_except_the_cluster_fee() {
    let spans = [
        span("a", PerHour::Known(NODE), 0, Some(600)),
        span("b", PerHour::Known(NODE), 0, Some(600)),
    ];
    let watched = watched_from(0);
    let idle = meter(&spans, &watched).between(at(600), at(600 + HOUR));
    assert_eq!(
        idle,
        Figure {
            usd: Some(FEE),
            partial: false
        }
    );
}

#[test]
fn an_unknown_machine_price_makes_the_figure_unknown_not_zero() {
    let spans = [
        span("known", PerHour::Known(NODE), 0, None),
        span("exotic", PerHour::Unknown, 600, Some(1200)),
    ];
    let watched = watched_from(0);
    let m = meter(&spans, &watched);
    assert_eq!(m.between(at(0), at(HOUR)).usd, None);
    // Outside the node's life, its price does not matter.
    assert!(m.between(at(1200), at(HOUR)).usd.is_some());
    assert!(m.between(at(0), at(600)).usd.is_some());
}

#[test]
fn time_nobody_watched_makes_the_figure_partial_though_living_nodes_count_whole() {
    // The engine started watching half an hour in: the node alive then counts from its
    // creation, but another could have come and gone before.
    let spans = [span("a", PerHour::Known(NODE), 0, None)];
    let watched = watched_from(HOUR / 2);
    let figure = meter(&spans, &watched).between(at(0), at(HOUR));
    assert!(close(figure.usd.unwrap(), FEE + NODE));
    assert!(figure.partial);
    // From the watch on, it is exact.
    assert!(
        !meter(&spans, &watched)
            .between(at(HOUR / 2), at(HOUR))
            .partial
    );
}

#[test]
fn a_gap_shorter_than_the_tolerance_is_not_partial_and_a_longer_one_is() {
    let spans = [span("a", PerHour::Known(NODE), 0, None)];
    let short = watched_from(spans::GAP_TOLERATED_SECONDS);
    assert!(!meter(&spans, &short).between(at(0), at(HOUR)).partial);
    let long = watched_from(spans::GAP_TOLERATED_SECONDS + 1);
    assert!(meter(&spans, &long).between(at(0), at(HOUR)).partial);
}

#[test]
fn time_before_the_cluster_existed_costs_nothing_and_hides_no_node() {
    let spans = [span("a", PerHour::Known(NODE), HOUR, None)];
    let watched = watched_from(HOUR);
    let m = Meter {
        cluster_created: Some(at(HOUR)),
        ..meter(&spans, &watched)
    };
    let figure = m.between(at(0), at(2 * HOUR));
    assert!(close(figure.usd.unwrap(), FEE + NODE));
    assert!(!figure.partial);
}

#[test]
fn a_node_priced_without_its_disk_makes_the_figure_a_lower_bound() {
    let spans = [span("a", PerHour::AtLeast(0.0475), 0, None)];
    let watched = watched_from(0);
    let figure = meter(&spans, &watched).between(at(0), at(HOUR));
    assert!(close(figure.usd.unwrap(), FEE + 0.0475));
    assert!(figure.partial);
}

/// The plain model: each second of `[from, to)` adds the price of every node alive in it and,
/// once the cluster exists, the fee, over 3600; a run of unwatched seconds longer than the
/// tolerance (after the cluster exists) makes it partial.
fn per_second(
    spans: &[NodeSpan],
    fee: f64,
    created: Option<i64>,
    watched: &[(i64, Option<i64>)],
    from: i64,
    to: i64,
) -> Figure {
    let secs = |t: Timestamp| (t - t0()).get_seconds();
    let mut usd = Some(0.0);
    let mut partial = false;
    let mut unwatched_run = 0;
    for s in from..to {
        let existed = created.is_none_or(|c| s >= c);
        let mut second = if existed { fee } else { 0.0 };
        for span in spans {
            let alive = secs(span.from) <= s && span.to.is_none_or(|t| s < secs(t));
            if !alive {
                continue;
            }
            match span.per_hour {
                PerHour::Known(p) => second += p,
                PerHour::AtLeast(p) => {
                    second += p;
                    partial = true;
                }
                PerHour::Unknown => usd = None,
            }
        }
        usd = usd.map(|u| u + second / 3600.0);
        if !existed {
            continue;
        }
        let seen = watched
            .iter()
            .any(|(f, t)| *f <= s && t.is_none_or(|t| s < t));
        unwatched_run = if seen { 0 } else { unwatched_run + 1 };
        partial |= unwatched_run > spans::GAP_TOLERATED_SECONDS;
    }
    Figure { usd, partial }
}

fn per_hour() -> impl Strategy<Value = PerHour> {
    prop_oneof![
        8 => (0u32..2000).prop_map(|c| PerHour::Known(f64::from(c) / 100.0)),
        1 => (0u32..2000).prop_map(|c| PerHour::AtLeast(f64::from(c) / 100.0)),
        1 => Just(PerHour::Unknown),
    ]
}

fn a_span() -> impl Strategy<Value = NodeSpan> {
    (per_hour(), 0i64..600, proptest::option::of(0i64..600))
        .prop_map(|(p, from, len)| span("n", p, from, len.map(|l| from + l)))
}

fn a_stretch() -> impl Strategy<Value = (i64, Option<i64>)> {
    (0i64..900, proptest::option::of(0i64..400))
        .prop_map(|(from, len)| (from, len.map(|l| from + l)))
}

proptest! {
    #[test]
    fn the_meter_is_the_sum_of_every_second(
        spans in proptest::collection::vec(a_span(), 0..6),
        watched in proptest::collection::vec(a_stretch(), 0..4),
        fee_cents in 0u32..100,
        created in proptest::option::of(0i64..300),
        from in 0i64..900,
        len in 0i64..900,
    ) {
        let fee = f64::from(fee_cents) / 100.0;
        let stretches: Vec<Stretch> = watched
            .iter()
            .map(|(f, t)| Stretch { from: at(*f), to: t.map(at) })
            .collect();
        let m = Meter {
            spans: &spans,
            fee_per_hour: fee,
            cluster_created: created.map(at),
            watched: &stretches,
        };
        let got = m.between(at(from), at(from + len));
        let expected = per_second(&spans, fee, created, &watched, from, from + len);
        prop_assert_eq!(got.partial, expected.partial, "{:?} vs {:?}", got, expected);
        match (got.usd, expected.usd) {
            (Some(a), Some(b)) => prop_assert!(close(a, b), "{} vs {}", a, b),
            (a, b) => prop_assert_eq!(a, b),
        }
    }

    #[test]
    fn the_meter_adds_up_over_consecutive_intervals(
        spans in proptest::collection::vec(a_span(), 0..6),
        cut in 0i64..900,
        len in 0i64..900,
    ) {
        let watched = watched_from(0);
        let m = meter(&spans, &watched);
        let whole = m.between(at(0), at(cut + len));
        let parts = m.between(at(0), at(cut)).plus(m.between(at(cut), at(cut + len)));
        prop_assert_eq!(whole.partial, parts.partial);
        match (whole.usd, parts.usd) {
            (Some(a), Some(b)) => prop_assert!(close(a, b), "{} vs {}", a, b),
            (a, b) => prop_assert_eq!(a, b),
        }
    }
}

fn attempt(name: &str, run_attempt: u32, created: i64) -> AttemptSummary {
    let mut a = crate::k8s::status::AttemptSummary::of(&Default::default());
    a.name = name.into();
    a.status = AttemptPhase::Running;
    a.created = Some(at(created));
    a.run = Some(Run {
        id: "20261205-100000-a1b2c3".into(),
        attempt: run_attempt,
        recoveries: 0,
    });
    a
}

fn ended(mut a: AttemptSummary, at_secs: i64) -> AttemptSummary {
    a.status = AttemptPhase::Failed;
    a.finished_at = Some(at(at_secs));
    a
}

#[test]
fn a_run_costs_the_cluster_from_its_first_attempt_until_it_ended() {
    let spans = [span("a", PerHour::Known(NODE), 0, None)];
    let watched = watched_from(0);
    let m = meter(&spans, &watched);
    let first = ended(attempt("job-1", 1, 600), 1200);
    let second = ended(attempt("job-2", 2, 1800), 600 + HOUR);
    let run = RunSpan::of(&second, [&first, &second]).unwrap();
    assert_eq!((run.since, run.until), (at(600), Some(at(600 + HOUR))));
    let cost = run.cost(&m, at(5 * HOUR));
    assert!(close(cost.usd.unwrap(), FEE + NODE), "{cost:?}");
    assert!(!cost.partial);
    assert_eq!(cost.as_of, at(600 + HOUR));
}

#[test]
fn a_run_carries_on_from_what_was_recorded() {
    let spans = [span("a", PerHour::Known(NODE), 0, None)];
    let watched = watched_from(HOUR);
    let m = meter(&spans, &watched);
    let mut newest = attempt("job-2", 2, 600);
    newest.recorded_cost = Some(Recorded {
        version: crate::vocabulary::cost::VERSION,
        usd: Some(5.0),
        as_of: at(HOUR),
        since: at(0),
        partial: false,
        nodes: None,
    });
    let run = RunSpan::of(&newest, [&newest]).unwrap();
    let cost = run.cost(&m, at(2 * HOUR));
    assert!(close(cost.usd.unwrap(), 5.0 + FEE + NODE), "{cost:?}");
    assert!(!cost.partial, "watched since the figure was recorded");
    assert_eq!((cost.since, cost.as_of), (at(0), at(2 * HOUR)));
}

#[test]
fn a_run_whose_first_attempts_are_gone_is_partial() {
    let spans = [];
    let watched = watched_from(0);
    let m = meter(&spans, &watched);
    let third = attempt("job-3", 3, 600);
    let cost = RunSpan::of(&third, [&third]).unwrap().cost(&m, at(HOUR));
    assert!(cost.partial);
}

#[test]
fn another_runs_attempts_are_not_counted() {
    let old = ended(attempt("job-1", 1, 0), 600);
    let mut new = attempt("job-2", 1, 1200);
    new.run = Some(Run {
        id: "20261205-102000-d4e5f6".into(),
        attempt: 1,
        recoveries: 0,
    });
    let run = RunSpan::of(&new, [&old, &new]).unwrap();
    assert_eq!(run.since, at(1200));
    assert!(run.start_known);
}

#[test]
fn the_annotation_is_versioned_json_and_another_version_is_not_read() {
    let recorded = Recorded {
        version: crate::vocabulary::cost::VERSION,
        usd: Some(1.25),
        as_of: at(HOUR),
        since: at(0),
        partial: true,
        nodes: Some(3),
    };
    let text = serde_json::to_string(&recorded).unwrap();
    assert_eq!(
        text,
        r#"{"version":1,"usd":1.25,"asOf":"2026-12-05T11:00:00Z","since":"2026-12-05T10:00:00Z","partial":true,"nodes":3}"#
    );
    let mut annotations = std::collections::BTreeMap::new();
    annotations.insert(crate::k8s::labels::COST.to_string(), text.clone());
    assert_eq!(ledger::read(Some(&annotations)), Some(recorded));
    // Written without the nodes (they are optional), it reads all the same.
    annotations.insert(
        crate::k8s::labels::COST.into(),
        text.replace(r#","nodes":3"#, ""),
    );
    assert_eq!(
        ledger::read(Some(&annotations)),
        Some(Recorded {
            nodes: None,
            ..recorded
        })
    );
    annotations.insert(crate::k8s::labels::COST.into(), text.replace(":1,", ":2,"));
    assert_eq!(ledger::read(Some(&annotations)), None);
    annotations.insert(crate::k8s::labels::COST.into(), "not json".into());
    assert_eq!(ledger::read(Some(&annotations)), None);
}

fn node(pool: &str, machine: &str) -> k8s_openapi::api::core::v1::Node {
    serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": "gke-node-1", "uid": "u-1", "creationTimestamp": "2026-12-05T10:00:00Z",
            "labels": {
                "cloud.google.com/gke-nodepool": pool,
                "node.kubernetes.io/instance-type": machine,
                "topology.kubernetes.io/region": "us-central1",
            }
        }
    }))
    .unwrap()
}

fn summary_with_pool(pool: &str) -> crate::gke::ClusterSummary {
    let target = crate::gke::ClusterRef {
        project: "demo-project".into(),
        location: "us-central1-a".into(),
        name: "ml-gke-cluster".into(),
    };
    crate::gke::ClusterSummary {
        node_pools: vec![crate::gke::summary::PoolSummary::running(
            pool,
            "n1-standard-1",
            3,
        )],
        ..crate::gke::ClusterSummary::not_found(&target, "n1-standard-1")
    }
}

#[test]
fn a_node_is_priced_with_its_pools_boot_disk_and_without_it_only_at_least() {
    let seen = NodeSeen::of(&node("default-pool", "n1-standard-1"));
    assert_eq!(seen.created, Some(t0()));
    assert_eq!(seen.pool.as_deref(), Some("default-pool"));
    let disks = PoolDisks::of(&summary_with_pool("default-pool"));
    match seen.per_hour(&disks) {
        PerHour::Known(p) => assert!(close(p, NODE), "{p}"),
        other => panic!("{other:?}"),
    }
    match seen.per_hour(&PoolDisks::default()) {
        PerHour::AtLeast(p) => assert!(close(p, 0.0475), "{p}"),
        other => panic!("{other:?}"),
    }
    let exotic = NodeSeen::of(&node("default-pool", "n9-imaginary-1"));
    assert_eq!(exotic.per_hour(&disks), PerHour::Unknown);
}

#[test]
fn a_figure_is_said_as_dollars_at_least_or_unknown() {
    assert_eq!(words(Some(0.64), false), "$0.64");
    assert_eq!(words(Some(0.64), true), "at least $0.64");
    assert_eq!(words(None, false), "unknown");
}
