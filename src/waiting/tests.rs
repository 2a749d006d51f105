//! The diagnosis, table by table, from pod, event and pool states as Kubernetes and GKE write
//! them; the simulator plays no part. Where each message comes from:
//! - kube-scheduler (`pkg/scheduler/framework/plugins`): `0/N nodes are available: …`, with
//!   noderesources' `Insufficient nvidia.com/gpu`, nodeaffinity's `node(s) didn't match Pod's
//!   node affinity/selector`, tainttoleration's `node(s) had untolerated taint {k: v}`.
//! - cluster-autoscaler (`processors/status/eventing_scale_up_processor.go`,
//!   `clusterstate/clusterstate.go`): `pod triggered scale-up: [{MIG from->to (max: N)}]`,
//!   `pod didn't trigger scale-up: …max node group size reached`, `Node scale up in zones Z
//!   associated with this pod failed: GCE quota exceeded. Pod is at risk of not being
//!   scheduled.` (GKE's "Troubleshoot cluster autoscaler not scaling up").
//! - the kubelet with containerd: `Failed to pull image "I": rpc error: code = NotFound desc =
//!   failed to pull and unpack image "I": failed to resolve reference "I": I: not found`, and
//!   `… unexpected status from HEAD request to https://…: 403 Forbidden`.

#![allow(clippy::unwrap_used)]

use jiff::Timestamp;

use super::*;
use crate::gke::summary::PoolSummary;
use crate::k8s::status::{EventSummary, PodSummary};

const POD: &str = "ml-training-job-0-abcde";

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + secs).unwrap()
}

fn pending(gpus: u32) -> PodSummary {
    PodSummary {
        name: POD.into(),
        namespace: "default".into(),
        job: "ml-training-job".into(),
        attempt: Some(1),
        index: None,
        phase: "Pending".into(),
        reason: Some("Unschedulable".into()),
        message: Some("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.".into()),
        exit_code: None,
        restarts: 0,
        node: None,
        started: false,
        terminated: false,
        created: Some(at(0)),
        deleting: false,
        gpus,
        running_since: None,
        image: "gcr.io/demo/train:v2".into(),
        node_selector: Vec::new(),
        fate: None,
        requests: Default::default(),
        deleted_by: None,
    }
}

fn event(reason: &str, message: &str, secs: i64) -> EventSummary {
    EventSummary {
        name: format!("{POD}.{reason}"),
        kind: "Pod".into(),
        object: POD.into(),
        type_: "Normal".into(),
        reason: reason.into(),
        message: message.into(),
        count: 1,
        last_seen: Some(at(secs)),
    }
}

fn pool(name: &str, gpus: u32, nodes: u32, autoscaling: Option<(u32, u32)>) -> PoolSummary {
    let mut p = PoolSummary::running(name, "n1-standard-4", nodes);
    p.accelerator_count = gpus;
    p.autoscaling = autoscaling;
    p
}

fn default_pool() -> PoolSummary {
    pool("default-pool", 0, 3, None)
}

const NO_GPU: &str = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";

/// One case: the pod, its events, the pools (None: a context), the cause's name and detail.
struct Case {
    what: &'static str,
    pod: PodSummary,
    events: Vec<EventSummary>,
    pools: Option<Vec<PoolSummary>>,
    cause: &'static str,
    detail: &'static str,
    hint: &'static str,
}

fn check(cases: Vec<Case>) {
    let now = at(40);
    for case in cases {
        let events: Vec<&EventSummary> = case.events.iter().collect();
        let waiting = diagnose(&case.pod, &events, case.pools.as_deref())
            .unwrap_or_else(|| panic!("{}: no diagnosis", case.what));
        assert_eq!(
            waiting.cause.name(),
            case.cause,
            "{}: {waiting:?}",
            case.what
        );
        assert_eq!(waiting.detail(now), case.detail, "{}", case.what);
        assert!(
            waiting.hint().contains(case.hint),
            "{}: {}",
            case.what,
            waiting.hint()
        );
    }
}

#[test]
fn a_gpu_pod_on_gke_is_told_what_holds_it_back_and_what_to_do() {
    let scaling = event(
        "TriggeredScaleUp",
        "pod triggered scale-up: [{https://www.googleapis.com/compute/v1/projects/demo-project/zones/us-central1-a/instanceGroups/gke-ml-gke-cluster-gpu-pool-1a2b3c4d-grp 0->1 (max: 2)}]",
        0,
    );
    check(vec![
        Case {
            what: "the autoscaler asked for a node",
            pod: pending(1),
            events: vec![event("FailedScheduling", NO_GPU, 0), scaling.clone()],
            pools: Some(vec![default_pool(), pool("gpu-pool", 1, 0, Some((0, 2)))]),
            cause: "scaling-up",
            detail: "waiting for a node: gpu-pool is scaling up from 0 (1 node asked 40s ago, usually 2–4 min)",
            hint: "nothing to do",
        },
        Case {
            what: "no pool has GPUs",
            pod: pending(1),
            events: vec![event("FailedScheduling", NO_GPU, 0)],
            pools: Some(vec![default_pool()]),
            cause: "no-pool",
            detail: "no node pool has nvidia.com/gpu",
            hint: "[cluster.gpu-pool]",
        },
        Case {
            what: "the GPU pool is at its maximum",
            pod: pending(1),
            events: vec![
                event("FailedScheduling", NO_GPU, 0),
                event(
                    "NotTriggerScaleUp",
                    "pod didn't trigger scale-up: 1 max node group size reached, 1 Insufficient nvidia.com/gpu",
                    5,
                ),
            ],
            pools: Some(vec![default_pool(), pool("gpu-pool", 1, 2, Some((0, 2)))]),
            cause: "pool-at-max",
            detail: "gpu-pool is at its autoscaling maximum (2)",
            hint: "max-nodes",
        },
        Case {
            what: "the GPU quota is spent",
            pod: pending(1),
            events: vec![
                event("FailedScheduling", NO_GPU, 0),
                scaling.clone(),
                event(
                    "FailedScaleUp",
                    "Node scale up in zones us-central1-a associated with this pod failed: GCE quota exceeded. Pod is at risk of not being scheduled.",
                    20,
                ),
            ],
            pools: Some(vec![default_pool(), pool("gpu-pool", 1, 0, Some((0, 2)))]),
            cause: "quota",
            detail: "GKE could not make a node: quota GPUS_ALL_REGIONS exceeded",
            hint: "iam-admin/quotas",
        },
        Case {
            what: "the zone is out of the accelerator",
            pod: pending(1),
            events: vec![
                scaling,
                event(
                    "FailedScaleUp",
                    "Node scale up in zones us-central1-a associated with this pod failed: GCE out of resources. Pod is at risk of not being scheduled.",
                    20,
                ),
            ],
            pools: Some(vec![pool("gpu-pool", 1, 0, Some((0, 2)))]),
            cause: "stockout",
            detail: "zone us-central1-a has no capacity for this pool's machines now (ZONE_RESOURCE_POOL_EXHAUSTED)",
            hint: "another zone",
        },
    ]);
}

#[test]
fn selectors_taints_and_images_are_told_apart() {
    let mut selected = pending(0);
    selected.node_selector = vec![(
        "cloud.google.com/gke-accelerator".into(),
        "nvidia-l4".into(),
    )];
    let mut not_found = pending(0);
    not_found.node = Some("gke-node-1".into());
    not_found.reason = Some("ErrImagePull".into());
    not_found.message = Some("rpc error: code = NotFound desc = failed to pull and unpack image \"gcr.io/demo/does-not-exist:v1\": failed to resolve reference \"gcr.io/demo/does-not-exist:v1\": gcr.io/demo/does-not-exist:v1: not found".into());
    let mut forbidden = not_found.clone();
    forbidden.reason = Some("ImagePullBackOff".into());
    forbidden.message = Some("Back-off pulling image \"gcr.io/private/forbidden:v1\"".into());
    let mut creating = pending(0);
    creating.node = Some("gke-node-1".into());
    creating.reason = Some("ContainerCreating".into());
    creating.message = None;
    let mut failed = event(
        "Failed",
        "Failed to pull image \"gcr.io/demo/does-not-exist:v1\": rpc error: code = NotFound desc = failed to pull and unpack image: not found",
        10,
    );
    failed.count = 4;
    check(vec![
        Case {
            what: "a node selector nothing matches",
            pod: selected,
            events: vec![event(
                "FailedScheduling",
                "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
                0,
            )],
            pools: Some(vec![default_pool()]),
            cause: "selector",
            detail: "node selector cloud.google.com/gke-accelerator=nvidia-l4 matches no node",
            hint: "node selector",
        },
        Case {
            what: "a taint nothing tolerates",
            pod: pending(0),
            events: vec![event(
                "FailedScheduling",
                "0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}.",
                0,
            )],
            pools: Some(vec![pool("gpu-pool", 1, 1, None)]),
            cause: "taint",
            detail: "taint nvidia.com/gpu=present not tolerated",
            hint: "toleration",
        },
        Case {
            what: "the only node is a spot VM being reclaimed (GKE taints it before shutdown)",
            pod: pending(0),
            events: vec![event(
                "FailedScheduling",
                "0/1 nodes are available: 1 node(s) had untolerated taint {cloud.google.com/impending-node-termination: }. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
                0,
            )],
            pools: Some(vec![default_pool()]),
            cause: "node-going",
            detail: "its node is going away (cloud.google.com/impending-node-termination: a spot VM reclaimed, or a node drained or lost)",
            hint: "makes the node again",
        },
        Case {
            what: "no node at all while the pool's node is made again",
            pod: pending(0),
            events: vec![event(
                "FailedScheduling",
                "no nodes available to schedule pods",
                0,
            )],
            pools: Some(vec![default_pool()]),
            cause: "node-going",
            detail: "no node is there now (its pool is being made again, or is at zero)",
            hint: "makes the node again",
        },
        Case {
            what: "an image not in the registry, tried four times",
            pod: not_found,
            events: vec![failed],
            pools: Some(vec![default_pool()]),
            cause: "image-not-found",
            detail: "image gcr.io/demo/does-not-exist:v1 not found (ErrImagePull, 4 tries)",
            hint: "image's name and tag",
        },
        Case {
            what: "an image the node may not read",
            pod: forbidden,
            events: vec![event(
                "Failed",
                "Failed to pull image \"gcr.io/private/forbidden:v1\": failed to authorize: failed to fetch oauth token: unexpected status from GET request to https://gcr.io/v2/token: 403 Forbidden",
                5,
            )],
            pools: Some(vec![default_pool()]),
            cause: "image-forbidden",
            detail: "not allowed to pull gcr.io/private/forbidden:v1 (403)",
            hint: "artifactregistry.reader",
        },
        Case {
            what: "a container being made",
            pod: creating,
            events: vec![event(
                "Pulling",
                "Pulling image \"gcr.io/demo/train:v2\"",
                1,
            )],
            pools: Some(vec![default_pool()]),
            cause: "creating",
            detail: "container is creating: pulling gcr.io/demo/train:v2, 40s so far",
            hint: "nothing to do",
        },
    ]);
}

#[test]
fn on_a_context_the_events_alone_speak_and_say_so() {
    check(vec![Case {
        what: "a pool at its maximum, from the events alone",
        pod: pending(1),
        events: vec![event(
            "NotTriggerScaleUp",
            "pod didn't trigger scale-up: 1 max node group size reached",
            5,
        )],
        pools: None,
        cause: "pool-at-max",
        detail: "the GPU pool is at its most nodes (from the events alone: no GKE API here)",
        hint: "max-nodes",
    }]);
}

#[test]
fn the_most_telling_cause_wins_and_a_running_pod_has_none() {
    // An image that cannot be pulled says more than a scheduling hiccup before it.
    let mut pod = pending(0);
    pod.node = Some("n".into());
    pod.reason = Some("ErrImagePull".into());
    pod.message = Some("rpc error: code = NotFound desc = \"x\": not found".into());
    let events = [event("FailedScheduling", NO_GPU, 0)];
    let refs: Vec<&EventSummary> = events.iter().collect();
    let waiting = diagnose(&pod, &refs, Some(&[default_pool()])).unwrap();
    assert_eq!(waiting.cause.name(), "image-not-found");
    let mut running = pending(0);
    running.phase = "Running".into();
    running.started = true;
    running.running_since = Some(at(95));
    assert_eq!(diagnose(&running, &[], None), None);
    assert_eq!(time_to_running(&running), Some(95));
    // Events about another pod say nothing of this one.
    let mut other = event(
        "TriggeredScaleUp",
        "pod triggered scale-up: [{g 0->1 (max: 1)}]",
        0,
    );
    other.object = "someone-else".into();
    let waiting = diagnose(&pending(1), &[&other], Some(&[default_pool()])).unwrap();
    assert_eq!(waiting.cause.name(), "no-pool");
}
