//! Secrets as kubectl writes and reads them, unmodified: `create secret generic`, `apply` with
//! `stringData` (created, then configured), `get` with the server's NAME TYPE DATA AGE table,
//! and `describe`, which shows each key's size and never its value.

use serde_json::json;

use super::kubectl_env::Kubectl;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_creates_applies_gets_and_describes_secrets() {
    if !gantry_test_support::kubectl_available() {
        return;
    }
    let k = Kubectl::start(Vec::new()).await;
    let created = k
        .ok(&[
            "create",
            "secret",
            "generic",
            "db",
            "--from-literal=user=ada",
            "--from-literal=password=hunter2",
        ])
        .await;
    assert_eq!(created.trim(), "secret/db created");
    let api = |token: &str| {
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "api"},
            "stringData": {"token": token}})
    };
    let file = k.manifest("api.json", &api("first"));
    assert_eq!(
        k.ok(&["apply", "-f", &file]).await.trim(),
        "secret/api created"
    );
    let decoded = |b64: String| {
        use base64::Engine;
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .unwrap(),
        )
        .unwrap()
    };
    let token = k
        .ok(&["get", "secret", "api", "-o", "jsonpath={.data.token}"])
        .await;
    assert_eq!(decoded(token), "first");
    let file = k.manifest("api.json", &api("second"));
    assert_eq!(
        k.ok(&["apply", "-f", &file]).await.trim(),
        "secret/api configured"
    );
    let token = k
        .ok(&["get", "secret", "api", "-o", "jsonpath={.data.token}"])
        .await;
    assert_eq!(decoded(token), "second");
    let stored = k.ok(&["get", "secret", "api", "-o", "json"]).await;
    let stored: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored.get("stringData"), None, "stringData is never stored");
    assert_eq!(stored["type"], "Opaque");

    let table = k.ok(&["get", "secrets"]).await;
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["NAME", "TYPE", "DATA", "AGE"], "{table}");
    assert_eq!(rows[1][..3], ["api", "Opaque", "1"], "{table}");
    assert_eq!(rows[2][..3], ["db", "Opaque", "2"], "{table}");

    let described = k.ok(&["describe", "secret", "db"]).await;
    assert!(described.contains("Type:  Opaque"), "{described}");
    assert!(described.contains("password:  7 bytes"), "{described}");
    assert!(described.contains("user:      3 bytes"), "{described}");
    assert!(!described.contains("hunter2"), "{described}");
}
