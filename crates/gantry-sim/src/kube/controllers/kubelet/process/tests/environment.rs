//! What a process pod is given: its own environment and nothing of the machine's, values and
//! files from Secrets and ConfigMaps, its service account's token and the API server, its
//! node's metadata server; and what keeps it from starting until they can be had.

use serde_json::json;

use super::*;

const SEES: &str = r#"
import json, os, ssl, stat, sys, urllib.request
print("NAMES=" + ",".join(sorted(os.environ)))
print("HOME=" + os.environ["HOME"])
print("PRIVATE=" + oct(stat.S_IMODE(os.stat(os.path.dirname(os.environ["HOME"])).st_mode)))
print("PASSWORD=" + os.environ["PASSWORD"])
print("CREDS=" + open(sys.argv[1]).read())
print("MODE=" + oct(stat.S_IMODE(os.stat(sys.argv[2]).st_mode)))
print("CONFIG=" + open(sys.argv[2]).read())
print("NAMESPACE=" + open(sys.argv[3] + "/namespace").read())
print("CWD=" + os.getcwd())
print("POD_IP=" + os.environ["POD_IP"])
api = "https://%s:%s/apis/authentication.k8s.io/v1/selfsubjectreviews" % (
    os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"])
token = open(sys.argv[3] + "/token").read()
tls = ssl.create_default_context(cafile=sys.argv[3] + "/ca.crt")
review = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
request = urllib.request.Request(api, data=review.encode(), method="POST",
    headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
print("WHO=" + json.load(urllib.request.urlopen(request, context=tls))["status"]["userInfo"]["username"])
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_pod_sees_its_secrets_volumes_and_service_account_and_nothing_of_the_machine() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    create(
        state,
        Kind::Secret,
        json!({"metadata": {"name": "creds"},
        "stringData": {"password": "hunter2"}}),
    );
    create(
        state,
        Kind::ConfigMap,
        json!({"metadata": {"name": "settings"},
        "data": {"app.yaml": "mode: fast\n", "unused": "x"}}),
    );
    let main = json!({
    "workingDir": "/work",
    "env": [
        {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
    ],
    "volumeMounts": [
        {"name": "creds", "mountPath": "/etc/creds", "readOnly": true},
        {"name": "settings", "mountPath": "/etc/app"},
        {"name": "scratch", "mountPath": "/work"},
    ]});
    let volumes = json!({"volumes": [
        {"name": "creds", "secret": {"secretName": "creds"}},
        {"name": "settings", "configMap": {"name": "settings",
            "items": [{"key": "app.yaml", "path": "conf/app.yaml", "mode": 0o600}]}},
        {"name": "scratch", "emptyDir": {}},
    ]});
    let args = [
        "/etc/creds/password",
        "/etc/app/conf/app.yaml",
        "/var/run/secrets/kubernetes.io/serviceaccount",
    ];
    create(
        state,
        Kind::Pod,
        python_pod("sees", SEES, &args, main, volumes),
    );
    let done = pod_when(state, "sees", "the pod's end", |p| {
        matches!(phase(p), "Succeeded" | "Failed")
    })
    .await;
    let log = logged(state, "sees", "WHO=").await;
    assert_eq!(phase(&done), "Succeeded", "{log}");
    let names: Vec<&str> = said(&log, "NAMES").split(',').collect();
    for name in &names {
        // LC_CTYPE is python's own (PEP 538 sets it when no locale is given).
        let expected = [
            "PATH",
            "HOSTNAME",
            "HOME",
            "PASSWORD",
            "POD_IP",
            "GCE_METADATA_HOST",
        ]
        .contains(name)
            || name.starts_with("KUBERNETES_")
            || *name == "LC_CTYPE";
        assert!(
            expected,
            "{name} leaked into the pod's environment: {names:?}"
        );
    }
    let home = said(&log, "HOME");
    assert_ne!(Some(home), std::env::var("HOME").ok().as_deref());
    assert!(home.contains("gantry-pod-default-sees-"), "{home}");
    assert_eq!(
        said(&log, "PRIVATE"),
        "0o700",
        "only its owner enters the pod's directory"
    );
    assert_eq!(said(&log, "PASSWORD"), "hunter2");
    assert_eq!(said(&log, "CREDS"), "hunter2");
    assert_eq!(said(&log, "MODE"), "0o600");
    assert_eq!(said(&log, "CONFIG"), "mode: fast");
    assert_eq!(said(&log, "NAMESPACE"), "default");
    assert!(said(&log, "CWD").ends_with("/volumes/scratch"), "{log}");
    let ip: std::net::IpAddr = said(&log, "POD_IP").parse().unwrap();
    assert!(ip.is_loopback());
    assert_eq!(done["status"]["podIP"], ip.to_string());
    assert_eq!(said(&log, "WHO"), "system:serviceaccount:default:default");
    let terminated = &container(&done)["state"]["terminated"];
    assert_eq!(
        (
            terminated["exitCode"].as_i64(),
            terminated["reason"].as_str()
        ),
        (Some(0), Some("Completed"))
    );
    // The pod is done: its address is free again and its directory gone.
    assert_eq!(state.pod_endpoint("default", "sees", 80), None);
    assert!(!std::path::Path::new(home).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_secret_key_keeps_the_container_waiting_until_the_secret_has_it() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    create(
        state,
        Kind::Secret,
        json!({"metadata": {"name": "api"}, "stringData": {"other": "x"}}),
    );
    let env = json!({"env": [{"name": "KEY",
        "valueFrom": {"secretKeyRef": {"name": "api", "key": "key"}}}]});
    let script = "import os; print('KEY=' + os.environ['KEY'])";
    create(
        state,
        Kind::Pod,
        python_pod("waits", script, &[], env, json!({})),
    );
    let waiting = pod_when(state, "waits", "a config error", |p| {
        container(p)["state"]["waiting"]["reason"] == "CreateContainerConfigError"
    })
    .await;
    assert_eq!(
        container(&waiting)["state"]["waiting"]["message"],
        "couldn't find key key in Secret default/api"
    );
    assert_eq!(phase(&waiting), "Pending");
    let events = test_support::events(state, "waits", "Failed");
    assert!(
        events
            .iter()
            .any(|e| e["message"] == "Error: couldn't find key key in Secret default/api"),
        "{events:?}"
    );
    state
        .store
        .update(Kind::Secret, "default", "api", |s| {
            s["data"]["key"] = json!("Zm91bmQ=");
        })
        .unwrap();
    let log = logged(state, "waits", "KEY=").await;
    assert_eq!(said(&log, "KEY"), "found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_volume_of_a_missing_secret_fails_its_mount_until_the_secret_exists() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    let mount = json!({"volumeMounts": [{"name": "tls", "mountPath": "/etc/tls"}]});
    let volumes = json!({"volumes": [{"name": "tls", "secret": {"secretName": "tls",
        "items": [{"key": "tls.key", "path": "key.pem"}]}}]});
    let script = "import sys; print('KEY=' + open(sys.argv[1]).read())";
    let pod = python_pod("mounts", script, &["/etc/tls/key.pem"], mount, volumes);
    create(state, Kind::Pod, pod);
    let failed = until(state, "a FailedMount event", |s| {
        test_support::events(s, "mounts", "FailedMount")
            .into_iter()
            .next()
    })
    .await;
    assert_eq!(
        failed["message"],
        "MountVolume.SetUp failed for volume \"tls\" : secret \"tls\" not found"
    );
    assert_eq!(failed["type"], "Warning");
    create(
        state,
        Kind::Secret,
        json!({"metadata": {"name": "tls"},
        "type": "kubernetes.io/tls", "stringData": {"tls.key": "PRIVATE", "tls.crt": "PUBLIC"}}),
    );
    let log = logged(state, "mounts", "KEY=").await;
    assert_eq!(said(&log, "KEY"), "PRIVATE");
}

const METADATA: &str = r#"
import json, os, sys, urllib.error, urllib.request
url = "http://%s/computeMetadata/v1/instance/service-accounts/default/token" % os.environ["GCE_METADATA_HOST"]
try:
    urllib.request.urlopen(url)
    print("BARE=200")
except urllib.error.HTTPError as e:
    print("BARE=%d" % e.code)
google = {"Metadata-Flavor": "Google"}
email = url.replace("/token", "/email")
print("EMAIL=" + urllib.request.urlopen(urllib.request.Request(email, headers=google)).read().decode())
answer = urllib.request.urlopen(urllib.request.Request(url, headers=google))
print("FLAVOR=" + answer.headers["Metadata-Flavor"])
token = json.load(answer)
print("TYPE=" + token["token_type"])
gke = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + token["access_token"]})
print("GKE=%d" % urllib.request.urlopen(gke).status)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_server_gives_the_bound_accounts_token_which_the_gke_api_accepts_and_refuses_a_bare_request()
 {
    let Some((_api, state, gke, stop)) = cluster_in_cloud().await else {
        return;
    };
    let clusters = format!("{gke}/v1/projects/p/locations/us-central1-a/clusters");
    // Workload Identity: the pod's ServiceAccount names the Google account it acts as.
    let gsa = "trainer@p.iam.gserviceaccount.com";
    create(
        &state,
        Kind::ServiceAccount,
        json!({"metadata": {"name": "trainer",
        "annotations": {"iam.gke.io/gcp-service-account": gsa}}}),
    );
    let spec = json!({"serviceAccountName": "trainer"});
    create(
        &state,
        Kind::Pod,
        python_pod("gcp", METADATA, &[&clusters], json!({}), spec),
    );
    let log = logged(&state, "gcp", "GKE=").await;
    assert_eq!(said(&log, "BARE"), "403");
    assert_eq!(said(&log, "FLAVOR"), "Google");
    assert_eq!(said(&log, "TYPE"), "Bearer");
    assert_eq!(said(&log, "GKE"), "200");
    assert_eq!(said(&log, "EMAIL"), gsa);
    stop.cancel();
}

const FILES: &str = r#"
import os, stat, sys
for path in sys.argv[1:]:
    print("%s %s" % (oct(stat.S_IMODE(os.stat(path).st_mode)), open(path, "rb").read()))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn volumes_hold_binary_data_modes_downward_fields_and_projections() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    create(
        state,
        Kind::ConfigMap,
        json!({"metadata": {"name": "blobs"},
        "data": {"text": "plain"}, "binaryData": {"raw": "AAEC"}}),
    );
    create(
        state,
        Kind::Secret,
        json!({"metadata": {"name": "key"}, "stringData": {"pem": "KEY"}}),
    );
    let mounts = json!({"volumeMounts": [
        {"name": "blobs", "mountPath": "/v/blobs"},
        {"name": "info", "mountPath": "/v/info"},
        {"name": "all", "mountPath": "/v/all"},
    ]});
    let volumes = json!({"volumes": [
        {"name": "blobs", "configMap": {"name": "blobs", "defaultMode": 0o640}},
        {"name": "info", "downwardAPI": {"items": [
            {"path": "labels/team", "fieldRef": {"fieldPath": "metadata.labels['team']"}}]}},
        {"name": "all", "projected": {"defaultMode": 0o400, "sources": [
            {"secret": {"name": "key", "items": [{"key": "pem", "path": "tls/key.pem"}]}},
            {"configMap": {"name": "blobs", "items": [{"key": "text", "path": "text", "mode": 0o644}]}},
        ]}},
    ]});
    let args = [
        "/v/blobs/text",
        "/v/blobs/raw",
        "/v/info/labels/team",
        "/v/all/tls/key.pem",
        "/v/all/text",
    ];
    let mut pod = python_pod("files", FILES, &args, mounts, volumes);
    pod["metadata"]["labels"] = json!({"team": "ml"});
    create(state, Kind::Pod, pod);
    let done = pod_when(state, "files", "the pod's end", |p| {
        matches!(phase(p), "Succeeded" | "Failed")
    })
    .await;
    let log = log_text(
        &state
            .logs
            .stream("default", "files", "main", false)
            .unwrap(),
    );
    assert_eq!(phase(&done), "Succeeded", "{log}");
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines,
        [
            "0o640 b'plain'",
            "0o640 b'\\x00\\x01\\x02'",
            "0o644 b'ml'",
            "0o400 b'KEY'",
            "0o644 b'plain'",
        ],
        "{log}"
    );
}
