//! Deployments on a running simulated cluster (time scale 1/1000): a ReplicaSet per template,
//! pods replaced, rolling updates within their surge, and the garbage collector taking what a
//! deleted Deployment owned. Every wait is for a change in the store, bounded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::Cell;

use serde_json::{Value, json};

use crate::kube::cluster::ClusterState;
use crate::kube::controllers::kubelet::is_terminal;
use crate::kube::controllers::replicaset::controlled_by;
use crate::kube::lifecycle::{self, DeleteOptions};
use crate::kube::meta;
use crate::kube::resources::Kind;
use crate::kube::store::Obj;
use crate::test_support::{self, condition, events, until};

async fn cluster() -> std::sync::Arc<ClusterState> {
    let pools = json!([{"name": "default-pool", "initialNodeCount": 2,
        "config": {"machineType": "n1-standard-4"}}]);
    test_support::cluster(test_support::shared(0.001, Vec::new()), pools)
        .await
        .1
}

/// `web`, `replicas` pods of `image` that run until stopped.
fn create(state: &ClusterState, replicas: u64, image: &str) -> Value {
    let d = json!({"metadata": {"name": "web"}, "spec": {"replicas": replicas,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
            {"name": "web", "image": image, "env": [{"name": "SIM_STALL_AFTER", "value": "1"}]}]}}}});
    (*lifecycle::create(state, Kind::Deployment, Some("default"), d).unwrap()).clone()
}

/// The Deployment if `kubectl rollout status` would call it rolled out.
fn rolled_out_now(s: &ClusterState) -> Option<Value> {
    let d = s.store.get(Kind::Deployment, "default", "web")?;
    let st = &d["status"];
    let want = &d["spec"]["replicas"];
    let done = st["observedGeneration"] == d["metadata"]["generation"]
        && &st["updatedReplicas"] == want
        && &st["replicas"] == want
        && &st["availableReplicas"] == want
        && condition(&d, "Progressing").is_some_and(|c| c["reason"] == "NewReplicaSetAvailable");
    done.then(|| (*d).clone())
}

async fn rolled_out(state: &ClusterState) -> Value {
    until(state, "a rolled out Deployment", rolled_out_now).await
}

fn replica_sets(state: &ClusterState) -> Vec<Obj> {
    state
        .store
        .list(Kind::ReplicaSet, Some("default"), |_| true)
        .0
}

/// Pods neither terminating nor ended.
fn live_pods(state: &ClusterState) -> Vec<Obj> {
    state
        .store
        .list(Kind::Pod, Some("default"), |p| {
            !meta::is_deleting(p) && !is_terminal(p)
        })
        .0
}

#[tokio::test]
async fn a_deployment_runs_its_pods_through_one_replica_set_named_by_its_template() {
    let state = cluster().await;
    let created = create(&state, 2, "nginx:1.27");
    assert_eq!(created["metadata"]["generation"], 1);
    let d = rolled_out(&state).await;
    assert_eq!(
        condition(&d, "Available").unwrap()["reason"],
        "MinimumReplicasAvailable"
    );
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );
    let sets = replica_sets(&state);
    assert_eq!(sets.len(), 1);
    let rs = &sets[0];
    let hash = rs["metadata"]["labels"]["pod-template-hash"]
        .as_str()
        .unwrap();
    assert_eq!(meta::name(rs), format!("web-{hash}"));
    assert!(
        hash.len() >= 8
            && hash
                .bytes()
                .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b)),
        "{hash}"
    );
    assert_eq!(
        rs["spec"]["selector"]["matchLabels"],
        json!({"app": "web", "pod-template-hash": hash})
    );
    assert!(controlled_by(rs, meta::uid(&d)));
    let pods = live_pods(&state);
    assert_eq!(pods.len(), 2);
    for pod in &pods {
        assert!(controlled_by(pod, meta::uid(rs)));
        assert!(
            meta::name(pod).starts_with(&format!("web-{hash}-")),
            "{}",
            meta::name(pod)
        );
        assert_eq!(pod["metadata"]["labels"]["pod-template-hash"], hash);
    }
    let scaled = events(&state, "web", "ScalingReplicaSet");
    assert_eq!(
        scaled[0]["message"],
        format!("Scaled up replica set web-{hash} from 0 to 2")
    );
}

#[tokio::test]
async fn a_deleted_pod_is_replaced_and_a_scale_up_adds_pods() {
    let state = cluster().await;
    create(&state, 2, "nginx:1.27");
    rolled_out(&state).await;
    let victim = live_pods(&state)[0].clone();
    let opts = DeleteOptions {
        grace_seconds: Some(0),
        ..DeleteOptions::default()
    };
    lifecycle::delete(&state, Kind::Pod, "default", meta::name(&victim), &opts).unwrap();
    let replaced = until(&state, "a replacement pod", |s| {
        let pods = live_pods(s);
        (pods.len() == 2 && pods.iter().all(|p| meta::uid(p) != meta::uid(&victim))).then_some(pods)
    })
    .await;
    assert_eq!(replaced.len(), 2);
    state
        .store
        .update(Kind::Deployment, "default", "web", |d| {
            d["spec"]["replicas"] = json!(3)
        })
        .unwrap();
    let d = rolled_out(&state).await;
    assert_eq!(d["status"]["availableReplicas"], 3);
    assert_eq!(
        replica_sets(&state).len(),
        1,
        "a scale is not a new template"
    );
}

#[tokio::test]
async fn a_new_image_rolls_to_a_new_replica_set_never_past_the_surge() {
    let state = cluster().await;
    create(&state, 4, "nginx:1.27");
    rolled_out(&state).await;
    let patched = |d: &mut Value| {
        d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.28");
        d["metadata"]["generation"] = json!(2);
    };
    state
        .store
        .update(Kind::Deployment, "default", "web", patched)
        .unwrap();
    // 25% of 4: at most one pod over the four wanted, and at most one of them unavailable.
    let (most, fewest_ready) = (Cell::new(0), Cell::new(usize::MAX));
    let d = until(&state, "the new template rolled out", |s| {
        let pods = live_pods(s);
        most.set(most.get().max(pods.len()));
        let ready = pods
            .iter()
            .filter(|p| condition(p, "Ready").is_some())
            .count();
        fewest_ready.set(fewest_ready.get().min(ready));
        rolled_out_now(s).filter(|d| d["metadata"]["generation"] == 2)
    })
    .await;
    assert!(most.get() <= 5, "{} pods at once", most.get());
    assert!(
        fewest_ready.get() >= 3,
        "{} ready at the worst",
        fewest_ready.get()
    );
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    let sets = replica_sets(&state);
    assert_eq!(sets.len(), 2);
    let (new, old): (Vec<&Obj>, Vec<&Obj>) = sets
        .iter()
        .partition(|rs| rs["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28");
    assert_eq!(new[0]["spec"]["replicas"], 4);
    assert_eq!(old[0]["spec"]["replicas"], 0);
    assert_eq!(
        old[0]["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );
    let pods = until(&state, "only new pods", |s| {
        let pods = live_pods(s);
        (pods.len() == 4 && pods.iter().all(|p| controlled_by(p, meta::uid(new[0]))))
            .then_some(pods)
    })
    .await;
    assert_eq!(pods.len(), 4);
    let surge_events: Vec<String> = events(&state, "web", "ScalingReplicaSet")
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    let new_name = meta::name(new[0]);
    assert!(
        surge_events.contains(&format!("Scaled up replica set {new_name} from 0 to 1")),
        "the new set starts at the surge: {surge_events:?}"
    );
}

#[tokio::test]
async fn deleting_a_deployment_takes_its_replica_sets_and_their_pods() {
    let state = cluster().await;
    create(&state, 2, "nginx:1.27");
    rolled_out(&state).await;
    lifecycle::delete(
        &state,
        Kind::Deployment,
        "default",
        "web",
        &DeleteOptions::default(),
    )
    .unwrap();
    until(&state, "nothing left of the Deployment", |s| {
        let pods = s.store.list(Kind::Pod, Some("default"), |_| true).0;
        (replica_sets(s).is_empty() && pods.is_empty()).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_dependent_with_another_owner_alive_only_loses_the_reference_to_the_one_gone() {
    let state = cluster().await;
    let owner = |name: &str| {
        let cm = json!({"metadata": {"name": name}});
        lifecycle::create(&state, Kind::ConfigMap, Some("default"), cm).unwrap()
    };
    let (a, b) = (owner("a"), owner("b"));
    let refs = json!([
        meta::owner_reference(&a, "v1", "ConfigMap"),
        meta::owner_reference(&b, "v1", "ConfigMap")
    ]);
    let dependent = json!({"metadata": {"name": "shared", "ownerReferences": refs}});
    lifecycle::create(&state, Kind::ConfigMap, Some("default"), dependent).unwrap();
    lifecycle::delete(
        &state,
        Kind::ConfigMap,
        "default",
        "a",
        &DeleteOptions::default(),
    )
    .unwrap();
    let kept = until(&state, "the reference to a dropped", |s| {
        let cm = s.store.get(Kind::ConfigMap, "default", "shared")?;
        (meta::owner_uids(&cm) == [meta::uid(&b)]).then_some(cm)
    })
    .await;
    assert_eq!(meta::name(&kept), "shared");
    lifecycle::delete(
        &state,
        Kind::ConfigMap,
        "default",
        "b",
        &DeleteOptions::default(),
    )
    .unwrap();
    until(&state, "the dependent gone with its last owner", |s| {
        s.store
            .get(Kind::ConfigMap, "default", "shared")
            .is_none()
            .then_some(())
    })
    .await;
}
