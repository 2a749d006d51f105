//! ServiceAccount tokens on a running cluster: each names its account, carries the claims a
//! real bound token carries, and stops working when it expires, when its account or pod goes,
//! or when it was meant for someone else.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use super::*;
use crate::kube::cluster::{ClusterRuntime, ClusterSpec};
use crate::kube::lifecycle;
use crate::test_support::{self, PROJECT, ZONE, until};

const HOUR: Duration = Duration::from_secs(3600);

async fn cluster() -> ClusterRuntime {
    let shared = test_support::shared(1.0, Vec::new());
    ClusterRuntime::start(ClusterSpec::seed(PROJECT, ZONE, "c"), shared, 0)
        .await
        .unwrap()
}

fn create_account(state: &ClusterState, name: &str) -> Value {
    let sa = json!({"metadata": {"name": name}});
    (*lifecycle::create(state, Kind::ServiceAccount, Some("default"), sa).unwrap()).clone()
}

fn part(token: &str, index: usize) -> Value {
    let encoded = token.split('.').nth(index).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(encoded)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test]
async fn every_namespace_has_a_default_account_made_again_when_deleted() {
    let runtime = cluster().await;
    let state = runtime.state();
    for ns in ["default", "kube-system"] {
        until(state, "a default ServiceAccount", |s| {
            s.store.get(Kind::ServiceAccount, ns, "default")
        })
        .await;
    }
    let ns = json!({"metadata": {"name": "ml"}});
    lifecycle::create(state, Kind::Namespace, None, ns).unwrap();
    let first = until(state, "ml's default ServiceAccount", |s| {
        s.store.get(Kind::ServiceAccount, "ml", "default")
    })
    .await;
    state.store.remove(Kind::ServiceAccount, "ml", "default");
    let again = until(state, "it made again", |s| {
        s.store.get(Kind::ServiceAccount, "ml", "default")
    })
    .await;
    assert_ne!(meta::uid(&first), meta::uid(&again));
}

#[tokio::test]
async fn a_token_carries_the_claims_of_a_real_bound_token() {
    let runtime = cluster().await;
    let state = runtime.state();
    let account = create_account(state, "gantry");
    let before = jiff::Timestamp::now();
    let issued = state
        .issue_token("default", "gantry", HOUR, &TokenOptions::default())
        .unwrap();
    let header = part(&issued.token, 0);
    assert_eq!(header["alg"], "ES256");
    assert_eq!(header["kid"].as_str().unwrap().len(), 43, "{header}");
    let claims = part(&issued.token, 1);
    let issuer =
        "https://container.googleapis.com/v1/projects/p/locations/us-central1-a/clusters/c";
    assert_eq!(claims["iss"], issuer);
    assert_eq!(claims["aud"], json!([issuer]));
    assert_eq!(claims["sub"], "system:serviceaccount:default:gantry");
    assert_eq!(
        claims["kubernetes.io"],
        json!({"namespace": "default",
            "serviceaccount": {"name": "gantry", "uid": meta::uid(&account)}})
    );
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        3600
    );
    assert!(claims["iat"].as_i64().unwrap() >= before.as_second());
    assert_eq!(
        issued.expires_at.as_second(),
        claims["exp"].as_i64().unwrap()
    );

    let user = state.authenticate_token(&issued.token, &[]).unwrap();
    assert_eq!(user.name, "system:serviceaccount:default:gantry");
    assert_eq!(user.uid, meta::uid(&account));
    assert_eq!(
        user.groups,
        [
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ]
    );
    assert_eq!(
        user.extra[CREDENTIAL_ID],
        [format!("JTI={}", claims["jti"].as_str().unwrap())]
    );
}

#[tokio::test]
async fn a_token_stops_working_when_its_account_is_deleted_even_if_one_comes_back() {
    let runtime = cluster().await;
    let state = runtime.state();
    create_account(state, "gantry");
    let token = state
        .issue_token("default", "gantry", HOUR, &TokenOptions::default())
        .unwrap()
        .token;
    assert!(state.authenticate_token(&token, &[]).is_some());
    state
        .store
        .remove(Kind::ServiceAccount, "default", "gantry");
    assert!(state.authenticate_token(&token, &[]).is_none());
    create_account(state, "gantry");
    assert!(
        state.authenticate_token(&token, &[]).is_none(),
        "the new account has another uid"
    );
    let err = state
        .issue_token("default", "nobody", HOUR, &TokenOptions::default())
        .unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        (404, "serviceaccounts \"nobody\" not found")
    );
}

#[tokio::test]
async fn an_expired_token_or_one_meant_for_someone_else_is_refused() {
    let runtime = cluster().await;
    let state = runtime.state();
    create_account(state, "gantry");
    let for_vault = TokenOptions {
        audiences: vec!["vault".into()],
        ..TokenOptions::default()
    };
    let token = state
        .issue_token("default", "gantry", HOUR, &for_vault)
        .unwrap()
        .token;
    assert!(
        state.authenticate_token(&token, &[]).is_none(),
        "not for the API server"
    );
    assert!(state.authenticate_token(&token, &["vault"]).is_some());

    let valid = state
        .issue_token("default", "gantry", HOUR, &TokenOptions::default())
        .unwrap()
        .token;
    let mut claims: Claims = serde_json::from_value(part(&valid, 1)).unwrap();
    let now = jiff::Timestamp::now().as_second();
    claims.exp = now - 61;
    let expired = state.tokens.sign(&claims).unwrap();
    assert!(state.authenticate_token(&expired, &[]).is_none());
    claims.exp = now - 30;
    let within_leeway = state.tokens.sign(&claims).unwrap();
    assert!(
        state.authenticate_token(&within_leeway, &[]).is_some(),
        "a minute's leeway, as go-jose gives"
    );

    let other = cluster().await;
    let foreign = other.state();
    create_account(foreign, "gantry");
    let theirs = foreign
        .issue_token("default", "gantry", HOUR, &TokenOptions::default())
        .unwrap()
        .token;
    assert!(
        state.authenticate_token(&theirs, &[]).is_none(),
        "another cluster's key"
    );
    let tampered = format!("{}x", &valid[..valid.len() - 1]);
    assert!(state.authenticate_token(&tampered, &[]).is_none());
    assert!(state.authenticate_token("not-a-jwt", &[]).is_none());
}

#[tokio::test]
async fn a_token_bound_to_a_pod_names_it_and_ends_with_it() {
    let runtime = cluster().await;
    let state = runtime.state();
    create_account(state, "gantry");
    let pod = json!({"metadata": {"name": "engine"}, "spec": {"serviceAccountName": "gantry",
        "containers": [{"name": "main", "image": "gantry:1"}]}});
    let pod = lifecycle::create(state, Kind::Pod, Some("default"), pod).unwrap();
    let bound = TokenOptions {
        bound_pod: Some(PodRef::of(&pod)),
        ..TokenOptions::default()
    };
    let token = state
        .issue_token("default", "gantry", HOUR, &bound)
        .unwrap()
        .token;
    assert_eq!(
        part(&token, 1)["kubernetes.io"]["pod"],
        json!({"name": "engine", "uid": meta::uid(&pod)})
    );
    let user = state.authenticate_token(&token, &[]).unwrap();
    assert_eq!(user.extra[POD_NAME], ["engine"]);
    state.store.remove(Kind::Pod, "default", "engine");
    assert!(state.authenticate_token(&token, &[]).is_none());
}
