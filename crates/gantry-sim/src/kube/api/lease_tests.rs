//! Leases through a running simulated cluster's HTTPS API, as engines electing a leader write
//! and read them: optimistic concurrency, watches, validation, MicroTimes, namespaces.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::SimShared;
use crate::kube::cluster::{ClusterRuntime, ClusterSpec};
use crate::kube::resources::Kind;
use crate::test_http::ApiClient;
use crate::test_support::{self, PROJECT, ZONE};

pub(super) const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/default/leases";

pub(super) struct Sim {
    runtime: ClusterRuntime,
    pub(super) api: ApiClient,
    _shared: SimShared,
}

pub(super) async fn sim() -> Sim {
    let shared = test_support::shared(1.0, Vec::new());
    let runtime = ClusterRuntime::start(ClusterSpec::seed(PROJECT, ZONE, "c"), shared.clone(), 0)
        .await
        .unwrap();
    let api = ApiClient::new(runtime.port(), &shared);
    Sim {
        runtime,
        api,
        _shared: shared,
    }
}

pub(super) fn lease(name: &str, holder: &str) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "labels": {"app": "gantry"}},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 15,
            "leaseTransitions": 0,
            "acquireTime": "2026-12-05T13:00:00.123456Z",
            "renewTime": "2026-12-05T13:00:00.123456Z",
        },
    })
}

fn holder(lease: &Value) -> &str {
    lease["spec"]["holderIdentity"].as_str().unwrap_or_default()
}

pub(super) async fn create(sim: &Sim, name: &str, holder: &str) -> Value {
    let (status, stored) = sim
        .api
        .request("POST", LEASES, Some(&lease(name, holder)))
        .await;
    assert_eq!(status, 201, "{stored}");
    stored
}

/// `stored` taken over by `holder`, naming the version it was read at.
fn taken_over(stored: &Value, holder: &str) -> Value {
    let mut next = stored.clone();
    next["spec"]["holderIdentity"] = json!(holder);
    next["spec"]["leaseTransitions"] = json!(1);
    next
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_engines_updating_one_lease_from_the_same_version_one_wins_and_the_other_gets_409() {
    let sim = sim().await;
    let read = create(&sim, "gantry-leader", "engine-a").await;
    let path = format!("{LEASES}/gantry-leader");
    let (b, c) = (taken_over(&read, "engine-b"), taken_over(&read, "engine-c"));
    let (first, second) = tokio::join!(
        sim.api.request("PUT", &path, Some(&b)),
        sim.api.request("PUT", &path, Some(&c)),
    );
    let mut statuses = [first.0, second.0];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409], "{first:?} {second:?}");
    let (winner, loser) = if first.0 == 200 {
        (first.1, second.1)
    } else {
        (second.1, first.1)
    };
    assert_eq!(loser["reason"], "Conflict");
    assert_eq!(
        loser["message"],
        "Operation cannot be fulfilled on leases.coordination.k8s.io \"gantry-leader\": the object has been modified; please apply your changes to the latest version and try again"
    );
    let (_, now) = sim.api.request("GET", &path, None).await;
    assert_eq!(holder(&now), holder(&winner));
    assert_ne!(
        now["metadata"]["resourceVersion"],
        read["metadata"]["resourceVersion"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_naming_no_version_is_refused_and_a_put_of_a_new_name_creates_it() {
    let sim = sim().await;
    let read = create(&sim, "gantry-leader", "engine-a").await;
    let mut blind = taken_over(&read, "engine-b");
    blind["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    let (status, refused) = sim
        .api
        .request("PUT", &format!("{LEASES}/gantry-leader"), Some(&blind))
        .await;
    assert_eq!(status, 422);
    assert_eq!(
        refused["message"],
        "leases.coordination.k8s.io \"gantry-leader\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );
    assert_eq!(
        refused["details"]["causes"][0]["field"],
        "metadata.resourceVersion"
    );

    let (status, created) = sim
        .api
        .request(
            "PUT",
            &format!("{LEASES}/other"),
            Some(&lease("other", "engine-a")),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(holder(&created), "engine-a");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_get_list_patch_and_delete_answer_as_the_api_server_does() {
    let sim = sim().await;
    create(&sim, "gantry-leader", "engine-a").await;
    let (status, dup) = sim
        .api
        .request("POST", LEASES, Some(&lease("gantry-leader", "engine-b")))
        .await;
    assert_eq!(
        (status, dup["reason"].as_str()),
        (409, Some("AlreadyExists"))
    );
    assert_eq!(
        dup["message"],
        "leases.coordination.k8s.io \"gantry-leader\" already exists"
    );
    let (status, missing) = sim
        .api
        .request("GET", &format!("{LEASES}/nobody"), None)
        .await;
    assert_eq!(status, 404);
    assert_eq!(
        missing["message"],
        "leases.coordination.k8s.io \"nobody\" not found"
    );
    create(&sim, "other", "engine-b").await;
    let (_, list) = sim
        .api
        .request(
            "GET",
            &format!("{LEASES}?fieldSelector=metadata.name%3Dother"),
            None,
        )
        .await;
    assert_eq!(list["kind"], "LeaseList");
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    assert_eq!(holder(&list["items"][0]), "engine-b");
    let (_, labelled) = sim
        .api
        .request("GET", &format!("{LEASES}?labelSelector=app%3Dgantry"), None)
        .await;
    assert_eq!(labelled["items"].as_array().unwrap().len(), 2);

    let path = format!("{LEASES}/gantry-leader");
    let renew = json!({"spec": {"renewTime": "2026-12-05T13:00:10.000001Z"}});
    for content_type in [
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
    ] {
        let (status, patched) = sim
            .api
            .request_as("PATCH", &path, content_type, Some(&renew))
            .await;
        assert_eq!(status, 200, "{content_type}: {patched}");
        assert_eq!(patched["spec"]["renewTime"], "2026-12-05T13:00:10.000001Z");
    }
    let ops = json!([{"op": "replace", "path": "/spec/holderIdentity", "value": "engine-c"}]);
    let (status, patched) = sim
        .api
        .request_as("PATCH", &path, "application/json-patch+json", Some(&ops))
        .await;
    assert_eq!((status, holder(&patched)), (200, "engine-c"));
    let invalid = json!({"spec": {"leaseTransitions": -1}});
    let (status, refused) = sim
        .api
        .request_as(
            "PATCH",
            &path,
            "application/merge-patch+json",
            Some(&invalid),
        )
        .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(
        refused["details"]["causes"][0]["field"],
        "spec.leaseTransitions"
    );

    let (status, _) = sim.api.request("DELETE", &path, None).await;
    assert_eq!(status, 200);
    let (status, _) = sim.api.request("GET", &path, None).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_on_leases_sees_the_lease_added_then_modified_with_its_new_holder() {
    let sim = sim().await;
    let (_, list) = sim.api.request("GET", LEASES, None).await;
    let since = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut watch = sim
        .api
        .watch(&format!("{LEASES}?watch=true&resourceVersion={since}"))
        .await;
    let read = create(&sim, "gantry-leader", "engine-a").await;
    let (status, _) = sim
        .api
        .request(
            "PUT",
            &format!("{LEASES}/gantry-leader"),
            Some(&taken_over(&read, "engine-b")),
        )
        .await;
    assert_eq!(status, 200);
    let added = watch.next().await;
    assert_eq!(added["type"], "ADDED");
    assert_eq!(holder(&added["object"]), "engine-a");
    let modified = watch.next().await;
    assert_eq!(modified["type"], "MODIFIED");
    assert_eq!(holder(&modified["object"]), "engine-b");
    assert_eq!(modified["object"]["spec"]["leaseTransitions"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_of_no_duration_is_refused_with_422_naming_spec_lease_duration_seconds() {
    let sim = sim().await;
    let mut zero = lease("gantry-leader", "engine-a");
    zero["spec"]["leaseDurationSeconds"] = json!(0);
    let (status, refused) = sim.api.request("POST", LEASES, Some(&zero)).await;
    assert_eq!(status, 422);
    assert_eq!(refused["reason"], "Invalid");
    assert_eq!(
        refused["message"],
        "Lease.coordination.k8s.io \"gantry-leader\" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"
    );
    assert_eq!(
        refused["details"]["causes"][0]["field"],
        "spec.leaseDurationSeconds"
    );
    let read = create(&sim, "gantry-leader", "engine-a").await;
    let mut shortened = read.clone();
    shortened["spec"]["leaseDurationSeconds"] = json!(-5);
    let (status, refused) = sim
        .api
        .request("PUT", &format!("{LEASES}/gantry-leader"), Some(&shortened))
        .await;
    assert_eq!(
        status, 422,
        "an update is validated as a create is: {refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn micro_times_are_served_as_written_and_read_back_by_k8s_openapi_unchanged() {
    let sim = sim().await;
    let stored = create(&sim, "gantry-leader", "engine-a").await;
    let (_, got) = sim
        .api
        .request("GET", &format!("{LEASES}/gantry-leader"), None)
        .await;
    assert_eq!(got["spec"], stored["spec"]);
    assert_eq!(got["spec"]["renewTime"], "2026-12-05T13:00:00.123456Z");
    let typed: k8s_openapi::api::coordination::v1::Lease =
        serde_json::from_value(got.clone()).unwrap();
    let again = serde_json::to_value(&typed).unwrap();
    assert_eq!(again["spec"], got["spec"]);

    let mut coarse = lease("coarse", "engine-a");
    coarse["spec"]["renewTime"] = json!("2026-12-05T13:00:00Z");
    let (status, refused) = sim.api.request("POST", LEASES, Some(&coarse)).await;
    assert_eq!(status, 400, "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_deleted_takes_its_leases_with_it() {
    let sim = sim().await;
    let (status, _) = sim
        .api
        .request(
            "POST",
            "/api/v1/namespaces",
            Some(&json!({"metadata": {"name": "team"}})),
        )
        .await;
    assert_eq!(status, 201);
    let team = "/apis/coordination.k8s.io/v1/namespaces/team/leases";
    let (status, _) = sim
        .api
        .request("POST", team, Some(&lease("gantry-leader", "engine-a")))
        .await;
    assert_eq!(status, 201);
    let (status, _) = sim
        .api
        .request("DELETE", "/api/v1/namespaces/team", None)
        .await;
    assert!(status == 200 || status == 202, "{status}");
    let state = sim.runtime.state();
    test_support::until(state, "the team namespace gone", |s| {
        let leases = s.store.list(Kind::Lease, Some("team"), |_| true).0;
        let gone = s.store.get(Kind::Namespace, "", "team").is_none();
        (leases.is_empty() && gone).then_some(())
    })
    .await;
}
