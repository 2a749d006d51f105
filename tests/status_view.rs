//! `gantry status` as a person reads it, at 80 columns: no attempt yet, a running attempt, a
//! failed attempt whose three pods failed, and a retried Job. Snapshots, plus the width checked
//! on every line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::tui as common_tui;

use common_tui::*;
use gantry::commands::status::cost::Nodes;
use gantry::commands::status::job::{AttemptStatus, JobStatus};
use gantry::commands::status::{ClusterReport, GkeCluster, StatusReport, render};
use gantry::gke::ClusterStatus;
use gantry::k8s::status::PodSummary;
use unicode_width::UnicodeWidthStr;

fn job(attempts: Vec<AttemptStatus>) -> JobStatus {
    JobStatus {
        name: ATTEMPT_1.into(),
        namespace: "default".into(),
        attempts,
        run_id: None,
        recoveries: None,
        recoverer: None,
        recoverer_silent: false,
        watcher: None,
        error: None,
    }
}

fn with(summary: gantry::k8s::status::AttemptSummary, pods: Vec<PodSummary>) -> AttemptStatus {
    AttemptStatus {
        summary,
        backoff_limit: 2,
        pods,
        ends: Default::default(),
    }
}

/// The cluster's three nodes as `gantry status` lists them: alive since its creation.
fn nodes() -> Nodes {
    let summary = cluster_summary(ClusterStatus::Running);
    let seen: Vec<_> = (0..3)
        .map(|i| node_seen(&format!("{NODE}{i}"), "n1-standard-1", summary.create_time))
        .collect();
    Nodes::of(&summary, &seen, now())
}

fn report(job: Option<JobStatus>) -> StatusReport {
    let logs_dir = job
        .as_ref()
        .and_then(|j| j.current())
        .map(|_| LOGS_DIR.into());
    let nodes = nodes();
    let mut cluster = GkeCluster::new(cluster_summary(ClusterStatus::Running));
    cluster.metered(Ok(&nodes), now());
    let run_cost = job.as_ref().filter(|j| j.current().is_some()).map(|j| {
        nodes
            .run_cost(j, now())
            .ok_or_else(|| "unknown".to_string())
    });
    StatusReport {
        waiting: Default::default(),
        cluster: ClusterReport::Gke(Box::new(cluster)),
        job,
        logs_dir,
        run_cost,
    }
}

fn shown(report: &StatusReport) -> String {
    let lines = render(report, now());
    for line in &lines {
        assert!(line.width() <= 80, "wider than 80 columns: {line:?}");
    }
    lines.join("\n")
}

#[test]
fn with_no_attempt_it_says_how_to_launch_one() {
    let text = shown(&report(Some(job(vec![]))));
    assert!(text.contains("gantry launch"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn a_running_attempt_shows_its_pods_and_how_to_follow_it() {
    let running = AttemptStatus {
        summary: gantry::k8s::status::AttemptSummary {
            name: ATTEMPT_1.into(),
            ..running_attempt()
        },
        ..with(running_attempt(), vec![])
    };
    let pods = running_pods()
        .into_iter()
        .map(|p| PodSummary {
            name: p.name.replace(ATTEMPT_2, ATTEMPT_1),
            job: ATTEMPT_1.into(),
            ..p
        })
        .collect();
    let text = shown(&report(Some(job(vec![AttemptStatus { pods, ..running }]))));
    assert!(text.contains("gantry logs -f"), "{text}");
    assert!(
        text.contains("OOMKilled") && text.contains("exit 137"),
        "{text}"
    );
    assert!(text.contains("ImagePullBackOff"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn a_failed_attempt_shows_each_pods_exit_code_and_reason() {
    let mut pods = failed_pods();
    pods[2].reason = Some("OOMKilled".into());
    pods[2].exit_code = Some(137);
    pods[2].message = Some("memory limit 16Gi exceeded".into());
    let text = shown(&report(Some(job(vec![with(failed_attempt(), pods)]))));
    assert!(text.contains("BackoffLimitExceeded"), "{text}");
    assert!(
        text.contains("3/2"),
        "failures against backoffLimit: {text}"
    );
    assert_eq!(text.matches("Error(1)").count(), 2, "{text}");
    assert!(
        text.contains("exit 137: memory limit 16Gi exceeded"),
        "{text}"
    );
    assert!(text.contains("gantry retry"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn a_retried_job_lists_every_attempt_and_shows_the_newest_pods() {
    let text = shown(&report(Some(job(vec![
        with(failed_attempt(), failed_pods()),
        with(running_attempt(), running_pods()),
    ]))));
    assert!(text.contains("2 attempts"), "{text}");
    assert!(text.contains(&format!("pods of {ATTEMPT_2}")), "{text}");
    assert!(
        !text.contains("7q2vd"),
        "the older attempt's pods are not listed: {text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn hostile_text_from_the_cluster_is_one_inert_line() {
    let mut pods = failed_pods();
    pods[0].message = Some("\u{1b}]0;pwned\u{7}line\nnext \u{202e}gpj.exe \u{9b}2J".into());
    let text = shown(&report(Some(job(vec![with(failed_attempt(), pods)]))));
    assert!(
        gantry::sanitize::is_inert(&text.replace('\n', "")),
        "{text:?}"
    );
}

#[test]
fn a_cluster_that_is_not_there_says_how_to_create_it() {
    let r = StatusReport {
        waiting: Default::default(),
        cluster: ClusterReport::Gke(Box::new(GkeCluster::new(cluster_summary(
            ClusterStatus::NotFound,
        )))),
        job: None,
        logs_dir: None,
        run_cost: None,
    };
    let text = shown(&r);
    assert!(text.contains("gantry up --wait"), "{text}");
}

#[test]
fn an_attempt_shows_how_its_pods_ended_and_the_preemptions_apart_from_failures() {
    use gantry::ends::attempt::AttemptEnds;
    use gantry::vocabulary::ends::{Class, PodEnd};
    let end = |pod: &str, class, detail: &str, cost| PodEnd {
        pod: format!("{ATTEMPT_1}-{pod}"),
        index: None,
        class,
        detail: detail.into(),
        at: Some(now() - jiff::SignedDuration::from_mins(5)),
        node: Some("gke-ml-gke-cluster-default-pool-1a2b3c4d-x9k2".into()),
        ran_seconds: 100,
        cost,
    };
    let shut_down = "its node shut down (spot VM reclaimed, or maintenance)";
    let mut pod_ends = vec![
        end("p1a2b", Class::Preempted, shut_down, Some(0.0005)),
        end("q3c4d", Class::Preempted, shut_down, None),
        end("r5e6f", Class::Succeeded, "completed", Some(0.0013)),
    ];
    pod_ends.push(PodEnd {
        at: None,
        node: None,
        cost: None,
        ran_seconds: 0,
        ..end(
            "s7g8h",
            Class::Preempted,
            "gone before any Gantry saw it end; Kubernetes did not count it as a failure (DisruptionTarget)",
            None,
        )
    });
    let attempt = AttemptStatus {
        summary: gantry::k8s::status::AttemptSummary {
            name: ATTEMPT_1.into(),
            ..running_attempt()
        },
        ends: AttemptEnds {
            preemptions: 3,
            pod_ends,
            partial: true,
            unexplained: 0,
            cost: None,
        },
        ..with(running_attempt(), vec![])
    };
    let text = shown(&report(Some(job(vec![attempt]))));
    assert!(text.contains("⟳3"), "{text}");
    assert!(
        text.contains("3 preempted, not counted as failures"),
        "{text}"
    );
    assert!(text.contains("partial"), "{text}");
    insta::assert_snapshot!(text);
}

/// The GPU example's cluster: 1 × n1-standard-2 on demand, and 4 × n1-standard-4 spot with a T4
/// each, as GKE reports its pools.
fn gpu_example_cluster() -> gantry::gke::ClusterSummary {
    let running = cluster_summary(ClusterStatus::Running);
    let base = running.node_pools[0].clone();
    let pools = vec![
        gantry::gke::summary::PoolSummary {
            machine_type: "n1-standard-2".into(),
            initial_node_count: 1,
            node_count: 1,
            ..base.clone()
        },
        gantry::gke::summary::PoolSummary {
            name: "gpu-pool".into(),
            machine_type: "n1-standard-4".into(),
            initial_node_count: 4,
            node_count: 4,
            spot: true,
            accelerator: Some("1 x nvidia-tesla-t4".into()),
            accelerator_type: Some("nvidia-tesla-t4".into()),
            accelerator_count: 1,
            ..base
        },
    ];
    gantry::gke::ClusterSummary {
        node_count: 5,
        machine_type: "n1-standard-2".into(),
        node_pools: pools,
        ..running
    }
}

fn node(name: &str, machine_type: &str, spot: bool) -> k8s_openapi::api::core::v1::Node {
    let mut labels = serde_json::json!({"node.kubernetes.io/instance-type": machine_type});
    if spot {
        labels["cloud.google.com/gke-spot"] = "true".into();
    }
    serde_json::from_value(serde_json::json!({"metadata": {"name": name, "labels": labels}}))
        .unwrap()
}

#[test]
fn the_nodes_line_counts_each_machine_type_and_its_spot_nodes_the_nodes_labels_first() {
    let mut gke = GkeCluster::new(gpu_example_cluster());
    let report = |gke: GkeCluster| StatusReport {
        waiting: Default::default(),
        cluster: ClusterReport::Gke(Box::new(gke)),
        job: Some(job(vec![])),
        logs_dir: None,
        run_cost: None,
    };
    // GKE's pools alone: each pool's nodes, of its machine type.
    let from_pools = shown(&report(GkeCluster::new(gpu_example_cluster())));
    assert!(
        from_pools.contains("\nnodes     1 x n1-standard-2, 4 x n1-standard-4 (4 spot)\n"),
        "{from_pools}"
    );
    // The spot T4s are priced: $0.10 fee, $0.095 + 4 × ($0.06701 + $0.175), and the disks.
    assert!(
        from_pools.contains("cost      ≈ $1.23/h, $899/month"),
        "{from_pools}"
    );

    // The Nodes are the truth: two of the GPU pool's four were reclaimed.
    gke.count_nodes(&[
        node("a", "n1-standard-2", false),
        node("b", "n1-standard-4", true),
        node("c", "n1-standard-4", true),
    ]);
    let r = report(gke);
    let text = shown(&r);
    assert!(
        text.contains("\nnodes     1 x n1-standard-2, 2 x n1-standard-4 (2 spot)\n"),
        "{text}"
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(
        json["cluster"]["nodesByMachineType"],
        serde_json::json!([
            {"machineType": "n1-standard-2", "nodes": 1, "spot": 0},
            {"machineType": "n1-standard-4", "nodes": 2, "spot": 2},
        ])
    );
    // GKE's own fields stay as GKE reports them.
    assert_eq!(json["cluster"]["nodeCount"], 5);
    assert_eq!(json["cluster"]["machineType"], "n1-standard-2");
    insta::assert_snapshot!(text);
}

#[test]
fn the_cost_so_far_is_each_nodes_life_and_at_least_that_with_no_watch() {
    let text = shown(&report(Some(job(vec![
        with(failed_attempt(), failed_pods()),
        with(running_attempt(), running_pods()),
    ]))));
    // Three nodes since the cluster's creation 2h 15m ago, and the fee: a lower bound, as no
    // engine's watch is known to have seen every node come and go.
    assert!(
        text.contains("; at least $0.64 since it was created 135m ago"),
        "{text}"
    );
    // The run (here the newest attempt alone: it has no run id) since it started 10m ago.
    assert!(
        text.contains("run cost  at least $0.05 since it started 10m ago"),
        "{text}"
    );
}

#[test]
fn a_run_that_ended_costs_until_its_end() {
    let text = shown(&report(Some(job(vec![with(
        failed_attempt(),
        failed_pods(),
    )]))));
    assert!(
        text.contains("run cost  at least $0.04 since it started 30m ago, ended 22m ago"),
        "{text}"
    );
}

#[test]
fn a_context_says_its_cost_is_unavailable() {
    let context = gantry::k8s::cluster_info::ContextSummary {
        name: "gke_demo_training".into(),
        server: "https://34.118.12.7".into(),
        status: gantry::k8s::cluster_info::ContextStatus::Running,
        version: "1.33.2".into(),
        node_count: 3,
        error: None,
    };
    let r = StatusReport {
        waiting: Default::default(),
        cluster: ClusterReport::Context(context),
        job: Some(job(vec![with(running_attempt(), running_pods())])),
        logs_dir: None,
        run_cost: Some(Err(format!(
            "unavailable: {}",
            gantry::meter::NOT_PRICED_ON_A_CONTEXT
        ))),
    };
    let text = shown(&r);
    assert!(
        text.contains("cost      unavailable: a kubeconfig context's nodes are not priced"),
        "{text}"
    );
    assert!(
        text.contains("run cost  unavailable: a kubeconfig context's nodes are not priced"),
        "{text}"
    );
}
