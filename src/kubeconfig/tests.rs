use super::*;
use serde_yaml::Value;

#[test]
fn merges_and_keeps_other_contexts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    let existing = "apiVersion: v1\nkind: Config\nclusters:\n- name: other\n  cluster:\n    server: https://10.0.0.1\ncontexts:\n- name: other\n  context:\n    cluster: other\n    user: other\nusers:\n- name: other\n  user:\n    token: keep-me\ncurrent-context: other\n";
    std::fs::write(&path, existing).unwrap();
    merge_context(
        &path,
        "gke_p_l_c",
        "127.0.0.1:443",
        "Q0E=",
        &Credential::TokenFile("/tmp/token".into()),
    )
    .unwrap();
    merge_context(
        &path,
        "gke_p_l_c",
        "127.0.0.1:444",
        "Q0E=",
        &Credential::GcloudPlugin,
    )
    .unwrap();
    let after: Value = serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let before: Value = serde_yaml::from_str(existing).unwrap();
    for list in ["clusters", "contexts", "users"] {
        assert_eq!(
            after[list][0], before[list][0],
            "{list} keeps the other entry"
        );
        assert_eq!(after[list].as_sequence().map(Vec::len), Some(2));
    }
    assert_eq!(after["current-context"], "gke_p_l_c");
    assert_eq!(
        after["clusters"][1]["cluster"]["server"],
        "https://127.0.0.1:444"
    );
    assert_eq!(
        after["users"][1]["user"]["exec"]["command"],
        "gke-gcloud-auth-plugin"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
}
