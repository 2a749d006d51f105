//! Identities and access through a running cluster's HTTPS API, as a program in a pod meets
//! them: a ServiceAccount token from the TokenRequest API, discovery open to it, what its Role
//! grants allowed and the rest refused with the API server's own words, and the reviews that
//! say so beforehand.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use super::lease_tests::sim;
use crate::test_http::ApiClient;

const SA: &str = "/api/v1/namespaces/default/serviceaccounts";
const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";

async fn token_for(api: &ApiClient, account: &str, spec: Value) -> (u16, Value) {
    api.request(
        "POST",
        &format!("{SA}/{account}/token"),
        Some(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})),
    )
    .await
}

/// An account `gantry` that may get and list pods in `default`, and a client holding its token.
async fn pod_reader(api: &ApiClient) -> ApiClient {
    let (status, _) = api
        .request("POST", SA, Some(&json!({"metadata": {"name": "gantry"}})))
        .await;
    assert_eq!(status, 201);
    let role = json!({"metadata": {"name": "pod-reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]});
    let (status, body) = api
        .request(
            "POST",
            &format!("{RBAC}/namespaces/default/roles"),
            Some(&role),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let binding = json!({"metadata": {"name": "gantry-reads-pods"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "gantry", "namespace": "default"}]});
    let (status, body) = api
        .request(
            "POST",
            &format!("{RBAC}/namespaces/default/rolebindings"),
            Some(&binding),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, answer) = token_for(api, "gantry", json!({})).await;
    assert_eq!(status, 201, "{answer}");
    api.with_token(answer["status"]["token"].as_str().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_request_answers_a_token_for_an_hour_unless_asked_and_never_under_ten_minutes() {
    let sim = sim().await;
    let (status, answer) = token_for(&sim.api, "default", json!({})).await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(answer["kind"], "TokenRequest");
    assert_eq!(answer["spec"]["expirationSeconds"], 3600);
    let expires: jiff::Timestamp = answer["status"]["expirationTimestamp"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let left = expires.as_second() - jiff::Timestamp::now().as_second();
    assert!((3590..=3600).contains(&left), "{left}");
    assert_eq!(
        answer["status"]["token"]
            .as_str()
            .unwrap()
            .split('.')
            .count(),
        3
    );

    let (status, refused) = token_for(&sim.api, "default", json!({"expirationSeconds": 60})).await;
    assert_eq!(status, 422);
    assert_eq!(
        refused["message"],
        "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"
    );
    let (status, missing) = token_for(&sim.api, "nobody", json!({})).await;
    assert_eq!(
        (status, missing["reason"].as_str()),
        (404, Some("NotFound"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_account_may_do_what_its_role_grants_and_nothing_else() {
    let sim = sim().await;
    let gantry = pod_reader(&sim.api).await;
    for discovery in [
        "/api",
        "/apis",
        "/api/v1",
        "/apis/apps/v1",
        "/version",
        "/openapi/v3",
    ] {
        let (status, body) = gantry.request("GET", discovery, None).await;
        assert_eq!(status, 200, "{discovery}: {body}");
    }
    let (status, pods) = gantry
        .request("GET", "/api/v1/namespaces/default/pods", None)
        .await;
    assert_eq!((status, pods["kind"].as_str()), (200, Some("PodList")));

    let (status, refused) = gantry
        .request("GET", "/api/v1/namespaces/default/secrets", None)
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        refused,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "secrets is forbidden: User \"system:serviceaccount:default:gantry\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\"",
            "reason": "Forbidden", "details": {"kind": "secrets"}, "code": 403})
    );
    let (status, refused) = gantry
        .request("DELETE", "/api/v1/namespaces/default/pods/p1", None)
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        refused["message"],
        "pods \"p1\" is forbidden: User \"system:serviceaccount:default:gantry\" cannot delete resource \"pods\" in API group \"\" in the namespace \"default\""
    );
    let (status, refused) = gantry.request("GET", "/api/v1/nodes", None).await;
    assert_eq!(status, 403);
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .ends_with("at the cluster scope")
    );
    let (status, _) = gantry
        .request("GET", "/api/v1/namespaces/kube-system/pods", None)
        .await;
    assert_eq!(status, 403, "the Role is default's only");

    // The binding's role is gone: nothing is granted, and the refusal says why.
    let (status, _) = sim
        .api
        .request(
            "DELETE",
            &format!("{RBAC}/namespaces/default/roles/pod-reader"),
            None,
        )
        .await;
    assert_eq!(status, 200);
    let (status, refused) = gantry
        .request("GET", "/api/v1/namespaces/default/pods", None)
        .await;
    assert_eq!(status, 403);
    assert!(
        refused["message"].as_str().unwrap().ends_with(
            "in the namespace \"default\": RBAC: role.rbac.authorization.k8s.io \"pod-reader\" not found"
        ),
        "{refused}"
    );
    let (status, _) = sim
        .api
        .request("GET", "/api/v1/namespaces/kube-system/configmaps", None)
        .await;
    assert_eq!(status, 200, "the administrator may do anything");
    let (status, _) = sim
        .api
        .with_token("not-a-token")
        .request("GET", "/api", None)
        .await;
    assert_eq!(status, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reviews_say_what_the_caller_may_do_and_who_it_is() {
    let sim = sim().await;
    let gantry = pod_reader(&sim.api).await;
    let can = |verb: &str, resource: &str| {
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"namespace": "default", "verb": verb, "resource": resource}}})
    };
    let review = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    let (status, yes) = gantry
        .request("POST", review, Some(&can("list", "pods")))
        .await;
    assert_eq!((status, &yes["status"]), (201, &json!({"allowed": true})));
    let (_, no) = gantry
        .request("POST", review, Some(&can("list", "secrets")))
        .await;
    assert_eq!(no["status"], json!({"allowed": false}));
    let (status, _) = gantry.request("GET", review, None).await;
    assert_eq!(status, 403, "the authorizer speaks first");
    let (status, _) = sim.api.request("GET", review, None).await;
    assert_eq!(status, 405, "a review is created, never read");

    let rules = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "default"}});
    let (_, listed) = gantry
        .request(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
            Some(&rules),
        )
        .await;
    let resource_rules = listed["status"]["resourceRules"].as_array().unwrap();
    assert!(
        resource_rules
            .contains(&json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]})),
        "{listed}"
    );
    assert!(
        listed["status"]["nonResourceRules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["nonResourceURLs"]
                .as_array()
                .unwrap()
                .contains(&json!("/apis/*"))),
        "discovery for everyone: {listed}"
    );

    let whoami = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let (_, me) = gantry
        .request(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            Some(&whoami),
        )
        .await;
    let info = &me["status"]["userInfo"];
    assert_eq!(info["username"], "system:serviceaccount:default:gantry");
    assert_eq!(info["groups"][2], "system:authenticated");
    let (_, admin) = sim
        .api
        .request(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            Some(&whoami),
        )
        .await;
    assert_eq!(admin["status"]["userInfo"]["groups"][0], "system:masters");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_lists_the_identity_access_and_apps_kinds() {
    let sim = sim().await;
    let (_, core) = sim.api.request("GET", "/api/v1", None).await;
    let names: Vec<&str> = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"serviceaccounts"), "{names:?}");
    let token = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "serviceaccounts/token")
        .unwrap();
    assert_eq!(
        (&token["kind"], &token["group"], &token["verbs"]),
        (
            &json!("TokenRequest"),
            &json!("authentication.k8s.io"),
            &json!(["create"])
        )
    );
    let (_, groups) = sim.api.request("GET", "/apis", None).await;
    let groups: Vec<&str> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    for group in [
        "apps",
        "rbac.authorization.k8s.io",
        "authorization.k8s.io",
        "authentication.k8s.io",
    ] {
        assert!(groups.contains(&group), "{group} in {groups:?}");
    }
    let (_, apps) = sim.api.request("GET", "/apis/apps/v1", None).await;
    let scale = apps["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deployments/scale")
        .unwrap();
    assert_eq!(
        (&scale["kind"], &scale["group"]),
        (&json!("Scale"), &json!("autoscaling"))
    );
    let (_, roles) = sim
        .api
        .request(
            "GET",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            None,
        )
        .await;
    let names: Vec<&str> = roles["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["metadata"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"cluster-admin") && names.contains(&"system:discovery"),
        "{names:?}"
    );
}
