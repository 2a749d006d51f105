#![allow(clippy::unwrap_used, clippy::expect_used)]

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use crate::engine::Command;
use crate::engine::policies::Policy;
use crate::engine::policies::ledgers::CostLedger;
use crate::engine::world::World;
use crate::engine::{Report, TargetInfo};
use crate::gke::summary::PoolSummary;
use crate::gke::{ClusterRef, ClusterStatus, ClusterSummary};
use crate::k8s::status::AttemptSummary;
use crate::k8s::watch::{Change, JobWatchEvent};
use crate::meter::NodeSeen;
use crate::meter::ledger::Entry;

const FEE: f64 = 0.10;
/// An n1-standard-1 with its 100 GB pd-balanced boot disk in us-central1.
const NODE: f64 = 0.0475 + 100.0 * 0.1 / 730.0;
const HOUR: i64 = 3600;

fn t0() -> Timestamp {
    "2026-12-05T10:00:00Z".parse().unwrap()
}

fn at(secs: i64) -> Timestamp {
    t0() + SignedDuration::from_secs(secs)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn target(managed: bool) -> TargetInfo {
    TargetInfo {
        place: "demo-project/us-central1-a".into(),
        cluster: "ml-gke-cluster".into(),
        managed,
        unmanaged_reason: None,
        simulated: false,
    }
}

fn summary() -> ClusterSummary {
    let target = ClusterRef::new("demo-project", "us-central1-a", "ml-gke-cluster");
    ClusterSummary {
        status: ClusterStatus::Running,
        node_pools: vec![PoolSummary::running("default-pool", "n1-standard-1", 3)],
        create_time: Some(t0()),
        ..ClusterSummary::not_found(&target, "n1-standard-1")
    }
}

fn node(name: &str, created: i64) -> NodeSeen {
    NodeSeen::of(
        &serde_json::from_value(json!({
            "metadata": {
                "name": name, "uid": format!("uid-{name}"),
                "creationTimestamp": at(created).to_string(),
                "labels": {
                    "cloud.google.com/gke-nodepool": "default-pool",
                    "node.kubernetes.io/instance-type": "n1-standard-1",
                    "topology.kubernetes.io/region": "us-central1",
                }
            }
        }))
        .unwrap(),
    )
}

fn nodes(model: &mut World, change: Change<NodeSeen>, secs: i64) {
    model.apply(Report::Node {
        change,
        at: at(secs),
    });
}

/// A model of a GKE cluster created at `t0`, its three nodes listed by a watch at `listed`.
fn watched_from(listed: i64) -> World {
    let mut model = World::default();
    model.apply(Report::Target(target(true)));
    model.apply(Report::Cluster(summary()));
    nodes(&mut model, Change::Restarted, listed);
    for n in ["a", "b", "c"] {
        nodes(&mut model, Change::Listed(node(n, 0)), listed);
    }
    nodes(&mut model, Change::Synced, listed);
    model
}

#[test]
fn nodes_listed_and_deleted_by_the_watch_make_the_cluster_cost() {
    let mut model = watched_from(0);
    nodes(&mut model, Change::Deleted(node("b", 0)), HOUR);
    nodes(&mut model, Change::Deleted(node("c", 0)), HOUR);
    let so_far = model.cluster_cost_so_far(at(2 * HOUR)).unwrap();
    assert!(
        close(so_far.usd.unwrap(), 2.0 * FEE + 3.0 * NODE + NODE),
        "{so_far:?}"
    );
    assert!(!so_far.partial);
    assert_eq!(model.nodes.alive(), 1);
}

#[test]
fn a_node_added_counts_from_its_creation() {
    let mut model = watched_from(0);
    nodes(&mut model, Change::Applied(node("d", HOUR)), HOUR + 60);
    let so_far = model.cluster_cost_so_far(at(2 * HOUR)).unwrap();
    assert!(close(so_far.usd.unwrap(), 2.0 * (FEE + 3.0 * NODE) + NODE));
}

#[test]
fn nodes_listed_late_count_whole_but_the_figure_is_partial() {
    let model = watched_from(HOUR);
    let so_far = model.cluster_cost_so_far(at(2 * HOUR)).unwrap();
    assert!(close(so_far.usd.unwrap(), 2.0 * (FEE + 3.0 * NODE)));
    assert!(
        so_far.partial,
        "a node may have come and gone before the watch"
    );
}

#[test]
fn a_node_gone_while_the_watch_was_away_counts_until_it_went_away() {
    let mut model = watched_from(0);
    nodes(&mut model, Change::Trouble("connection reset".into()), HOUR);
    // While away, the nodes count until then, and the figure is partial.
    let away = model.cluster_cost_so_far(at(2 * HOUR)).unwrap();
    assert!(close(away.usd.unwrap(), 2.0 * FEE + 3.0 * NODE), "{away:?}");
    assert!(away.partial);
    nodes(&mut model, Change::Restarted, 2 * HOUR);
    for n in ["a", "b"] {
        nodes(&mut model, Change::Listed(node(n, 0)), 2 * HOUR);
    }
    nodes(&mut model, Change::Synced, 2 * HOUR);
    nodes(&mut model, Change::Recovered, 2 * HOUR);
    let back = model.cluster_cost_so_far(at(3 * HOUR)).unwrap();
    assert!(
        close(back.usd.unwrap(), 3.0 * FEE + 2.0 * 3.0 * NODE + NODE),
        "{back:?}"
    );
    assert!(back.partial);
    assert!(model.nodes.watching());
}

#[test]
fn nothing_is_known_before_the_nodes_are_listed_nor_on_a_context() {
    let mut model = World::default();
    model.apply(Report::Target(target(true)));
    model.apply(Report::Cluster(summary()));
    assert_eq!(model.cluster_cost_so_far(at(HOUR)), None);
    let mut context = watched_from(0);
    context.apply(Report::Target(target(false)));
    assert_eq!(context.cluster_cost_so_far(at(HOUR)), None);
}

fn attempt(name: &str, run_attempt: u32, created: i64, finished: Option<i64>) -> AttemptSummary {
    let status = match finished {
        Some(end) => json!({"active": 0, "failed": 1, "conditions": [{"type": "Failed",
            "status": "True", "lastTransitionTime": at(end).to_string()}]}),
        None => json!({"active": 1, "ready": 1}),
    };
    AttemptSummary::of(
        &serde_json::from_value(json!({
            "metadata": {"name": name, "creationTimestamp": at(created).to_string(),
                "labels": {"gantry.dev/attempt": run_attempt.to_string(), "gantry.dev/run": "r1"},
                "annotations": {"gantry.dev/run-attempt": run_attempt.to_string()}},
            "spec": {"template": {}},
            "status": status,
        }))
        .unwrap(),
    )
}

fn job(model: &mut World, attempt: AttemptSummary) {
    model.apply(Report::Job(JobWatchEvent::Job(Change::Applied(attempt))));
}

fn recoverer(model: &mut World, mine: bool) {
    crate::engine::world::fixtures::hold_lease(model, mine);
}

/// The cost ledger's record at `now`, if it is due.
fn record(model: &World, ledger: &mut CostLedger, now: Timestamp) -> Option<Entry> {
    let now = crate::engine::clock::Now {
        wall: now,
        mono: std::time::Instant::now(),
    };
    let settings = crate::engine::policies::Settings::default();
    let decided = ledger.decide(model, &Default::default(), &settings, now);
    match decided.commands.as_slice() {
        [Command::RecordCost(entry)] => Some(entry.clone()),
        [] => None,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_run_costs_the_cluster_from_its_start_and_a_scale_to_zero_leaves_the_fee() {
    let mut model = watched_from(0);
    job(&mut model, attempt("train-1", 1, HOUR, None));
    for n in ["a", "b", "c"] {
        nodes(&mut model, Change::Deleted(node(n, 0)), 2 * HOUR);
    }
    let (usd, partial) = model.run_cost_so_far(at(3 * HOUR)).unwrap();
    assert!(close(usd, (FEE + 3.0 * NODE) + FEE), "{usd}");
    assert!(!partial);
}

#[test]
fn the_recorder_records_on_a_new_attempt_every_few_minutes_and_at_its_end() {
    let mut ledger = CostLedger::default();
    let mut model = watched_from(0);
    job(&mut model, attempt("train-1", 1, 60, None));
    assert_eq!(
        record(&model, &mut ledger, at(120)),
        None,
        "not the recoverer"
    );
    recoverer(&mut model, true);
    let first = record(&model, &mut ledger, at(120)).unwrap();
    assert_eq!(first.job, "train-1");
    assert_eq!((first.cost.since, first.cost.as_of), (at(60), at(120)));
    assert_eq!(first.cost.nodes, Some(3), "the nodes it saw alive");
    assert_eq!(record(&model, &mut ledger, at(150)), None, "not due yet");
    let every = crate::meter::ledger::RECORD_EVERY.as_secs() as i64;
    assert!(record(&model, &mut ledger, at(120 + every)).is_some());
    // The attempt ends: recorded at its end, once.
    job(&mut model, attempt("train-1", 1, 60, Some(600)));
    let end = record(&model, &mut ledger, at(700)).unwrap();
    assert_eq!(end.cost.as_of, at(600));
    assert_eq!(record(&model, &mut ledger, at(710 + every)), None);
    // A retry in the same run: its attempt gets the figure at once.
    job(&mut model, attempt("train-2", 2, 900, None));
    let next = record(&model, &mut ledger, at(1000)).unwrap();
    assert_eq!((next.job.as_str(), next.cost.since), ("train-2", at(60)));
}

#[test]
fn nothing_is_recorded_while_the_node_watch_is_away() {
    let mut ledger = CostLedger::default();
    let mut model = watched_from(0);
    job(&mut model, attempt("train-1", 1, 60, None));
    recoverer(&mut model, true);
    nodes(&mut model, Change::Trouble("gone".into()), 100);
    assert_eq!(record(&model, &mut ledger, at(120)), None);
}

#[test]
fn a_started_engine_carries_on_from_the_recorded_figure() {
    let mut model = watched_from(HOUR);
    let mut newest = attempt("train-1", 1, 60, None);
    newest.recorded_cost = Some(crate::vocabulary::cost::Recorded {
        version: 1,
        usd: Some(10.0),
        as_of: at(HOUR - 600),
        since: at(60),
        partial: false,
        nodes: None,
    });
    job(&mut model, newest);
    let cost = model.run_cost(at(2 * HOUR)).unwrap();
    let metered = (600.0 + 3600.0) / 3600.0 * (FEE + 3.0 * NODE);
    assert!(close(cost.usd.unwrap(), 10.0 + metered), "{cost:?}");
    assert!(cost.partial, "ten minutes nobody watched");
    assert_eq!(cost.since, at(60));
}

#[test]
fn a_node_that_came_or_went_is_recorded_soon_and_then_not_again() {
    let mut ledger = CostLedger::default();
    let mut model = watched_from(0);
    job(&mut model, attempt("train-1", 1, 60, None));
    recoverer(&mut model, true);
    assert!(record(&model, &mut ledger, at(100)).is_some());
    nodes(&mut model, Change::Deleted(node("c", 0)), 105);
    assert_eq!(
        record(&model, &mut ledger, at(106)),
        None,
        "not within 10 s of the last"
    );
    let after = record(&model, &mut ledger, at(110)).unwrap();
    assert_eq!(after.cost.as_of, at(110));
    assert_eq!(
        record(&model, &mut ledger, at(125)),
        None,
        "nothing changed since"
    );
    nodes(&mut model, Change::Applied(node("d", 130)), 131);
    assert!(
        record(&model, &mut ledger, at(141)).is_some(),
        "a node came"
    );
}
