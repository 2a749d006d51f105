use std::os::unix::fs::PermissionsExt;

use serde_norway::Value;

use super::edit::{EditError, first_lost_byte, merge};
use super::*;

const NAME: &str = "gke_p_l_c";

fn token_file() -> Credential {
    Credential::TokenFile("/tmp/token".into())
}

fn ours(credential: &Credential) -> Entries {
    Entries::new(NAME, "10.0.0.1", "Q0E=", credential)
}

fn merged(text: &str, credential: &Credential) -> String {
    match merge(text, &ours(credential)) {
        Ok(out) => out,
        Err(e) => panic!("{e:?} for:\n{text}"),
    }
}

/// Our three items as a block list item each, `-` at column `indent`.
fn item(list: &str, credential: &Credential, indent: usize) -> String {
    let entries = ours(credential);
    let (_, value) = entries
        .lists()
        .into_iter()
        .find(|(l, _)| *l == list)
        .unwrap();
    let text = serde_norway::to_string(&Value::Sequence(vec![value.clone()])).unwrap();
    text.lines()
        .map(|l| format!("{}{l}\n", " ".repeat(indent)))
        .collect()
}

const OUR_CLUSTER: &str = "- cluster:\n    certificate-authority-data: Q0E=\n    server: https://10.0.0.1\n  name: gke_p_l_c\n";
const OUR_CONTEXT: &str =
    "- context:\n    cluster: gke_p_l_c\n    user: gke_p_l_c\n  name: gke_p_l_c\n";
const OUR_TOKEN_USER: &str = "- name: gke_p_l_c\n  user:\n    tokenFile: /tmp/token\n";
const OUR_PLUGIN_USER: &str = "- name: gke_p_l_c\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: gke-gcloud-auth-plugin\n      installHint: Install gke-gcloud-auth-plugin for use with kubectl by following https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin\n      interactiveMode: IfAvailable\n      provideClusterInfo: true\n";

/// As `gcloud container clusters get-credentials` writes it: keys sorted, lists not indented,
/// long plain scalars folded onto a continuation line.
const GCLOUD: &str = "apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: TFMwdExTMUNSVWRKVGlCRFJWSlVTVVpKUTBGVVJTMHRMUzB0Q2sxSlNVVk1WRU5E
    server: https://34.67.1.2
  name: gke_other-project_us-east1_prod
contexts:
- context:
    cluster: gke_other-project_us-east1_prod
    user: gke_other-project_us-east1_prod
  name: gke_other-project_us-east1_prod
current-context: gke_other-project_us-east1_prod
kind: Config
preferences: {}
users:
- name: gke_other-project_us-east1_prod
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: gke-gcloud-auth-plugin
      installHint: Install gke-gcloud-auth-plugin for use with kubectl by following
        https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin
      provideClusterInfo: true
";

#[test]
fn the_fixtures_match_what_serde_norway_renders() {
    assert_eq!(item("clusters", &token_file(), 0), OUR_CLUSTER);
    assert_eq!(item("contexts", &token_file(), 0), OUR_CONTEXT);
    assert_eq!(item("users", &token_file(), 0), OUR_TOKEN_USER);
    assert_eq!(item("users", &Credential::GcloudPlugin, 0), OUR_PLUGIN_USER);
}

#[test]
fn appends_to_a_gcloud_file_in_its_style() {
    let out = merged(GCLOUD, &Credential::GcloudPlugin);
    let expected = GCLOUD
        .replace("contexts:\n", &format!("{OUR_CLUSTER}contexts:\n"))
        .replace(
            "current-context: gke_other-project_us-east1_prod\n",
            &format!("{OUR_CONTEXT}current-context: gke_p_l_c\n"),
        )
        + OUR_PLUGIN_USER;
    assert_eq!(out, expected);
}

/// kubectl-like, but as a person edits it: lists indented, comments, its own key order and
/// quoting, blank lines, a flow mapping.
const HAND_EDITED: &str = r#"# my clusters -- keep this comment
apiVersion: v1
kind: Config
preferences: {colors: true}   # a flow mapping

clusters:
  # the lab
  - name: "lab: east #1"
    cluster:
      server: 'https://10.1.0.1:6443'   # internal
      insecure-skip-tls-verify: true

  - name: 'it''s-prod'
    cluster: {server: "https://prod.example.com"}
contexts:
  - name: "yes"
    context:
      cluster: "lab: east #1"
      user: 'admin'
      namespace: "007"
users:
  - name: admin
    user:
      token: "abc\tdef"
current-context: "yes"  # the default
# the end
"#;

#[test]
fn appends_to_an_indented_file_and_keeps_comments_and_quoting() {
    let credential = token_file();
    let out = merged(HAND_EDITED, &credential);
    let expected = HAND_EDITED
        .replace(
            "contexts:\n",
            &format!("{}contexts:\n", item("clusters", &credential, 2)),
        )
        .replace(
            "users:\n",
            &format!("{}users:\n", item("contexts", &credential, 2)),
        )
        .replace(
            "current-context: \"yes\"  # the default\n",
            &format!(
                "{}current-context: gke_p_l_c  # the default\n",
                item("users", &credential, 2)
            ),
        );
    assert_eq!(out, expected);
}

#[test]
fn replaces_our_item_in_the_middle_of_a_list() {
    let text = "apiVersion: v1
clusters:
- cluster:
    server: https://a
  name: a
- cluster:
    certificate-authority-data: T0xE
    server: https://old # before
  name: gke_p_l_c
- cluster:
    server: https://c
  name: c
contexts:
- context: {cluster: a, user: a}
  name: a
- name: gke_p_l_c
  context:
    cluster: gke_p_l_c
    user: gke_p_l_c
    namespace: old
- context: {cluster: c, user: c}
  name: c
current-context: a
kind: Config
preferences: {}
users:
- name: a
  user: {token: keep-me}
- name: gke_p_l_c
  user:
    token: old-secret
- name: c
  user: {username: c}
";
    let out = merged(text, &token_file());
    let expected = text
        .replace(
            "- cluster:\n    certificate-authority-data: T0xE\n    server: https://old # before\n  name: gke_p_l_c\n",
            OUR_CLUSTER,
        )
        .replace(
            "- name: gke_p_l_c\n  context:\n    cluster: gke_p_l_c\n    user: gke_p_l_c\n    namespace: old\n",
            OUR_CONTEXT,
        )
        .replace(
            "- name: gke_p_l_c\n  user:\n    token: old-secret\n",
            OUR_TOKEN_USER,
        )
        .replace("current-context: a\n", "current-context: gke_p_l_c\n");
    assert_eq!(out, expected);
    assert!(!out.contains("old-secret"));
}

#[test]
fn replaces_every_item_of_ours_when_there_are_two() {
    let text = "clusters:\n- name: gke_p_l_c\n  cluster: {server: https://one}\n- name: b\n  cluster: {server: https://b}\n- name: gke_p_l_c\n  cluster: {server: https://two}\n";
    let out = merged(text, &token_file());
    let doc: Value = serde_norway::from_str(&out).unwrap();
    let clusters = doc["clusters"].as_sequence().unwrap();
    assert_eq!(clusters.len(), 3);
    assert_eq!(clusters[0], clusters[2]);
    assert_eq!(clusters[0]["cluster"]["server"], "https://10.0.0.1");
    assert!(out.contains("- name: b\n  cluster: {server: https://b}\n"));
}

#[test]
fn a_missing_list_is_added_in_the_files_style() {
    let text = "apiVersion: v1\nkind: Config\npreferences: {}\nclusters:\n  - name: a\n    cluster:\n      server: https://a\ncontexts:\n  - name: a\n    context:\n      cluster: a\n      user: a\ncurrent-context: a\n";
    let credential = token_file();
    let out = merged(text, &credential);
    let expected = text
        .replace(
            "contexts:\n",
            &format!("{}contexts:\n", item("clusters", &credential, 2)),
        )
        .replace(
            "current-context: a\n",
            &format!(
                "{}current-context: gke_p_l_c\nusers:\n{}",
                item("contexts", &credential, 2),
                item("users", &credential, 2)
            ),
        );
    assert_eq!(out, expected);
}

#[test]
fn empty_lists_as_kubectl_writes_them_become_block_lists() {
    // `kubectl config set-credentials` on a new file.
    let text = "apiVersion: v1\nclusters: null\ncontexts: []\ncurrent-context: \"\"\nkind: Config\npreferences: {}\nusers:\n- name: foo\n  user:\n    token: bar\n";
    let out = merged(text, &token_file());
    let expected = format!(
        "apiVersion: v1\nclusters:\n{OUR_CLUSTER}contexts:\n{OUR_CONTEXT}current-context: gke_p_l_c\nkind: Config\npreferences: {{}}\nusers:\n- name: foo\n  user:\n    token: bar\n{OUR_TOKEN_USER}"
    );
    assert_eq!(out, expected);
}

#[test]
fn an_item_appended_right_before_an_empty_list_goes_before_it() {
    let text = "clusters:\n- cluster:\n    server: https://a\n  name: a\nusers: null\ncurrent-context: \"\"\ncontexts: []\n";
    let out = merged(text, &token_file());
    let expected = format!(
        "clusters:\n- cluster:\n    server: https://a\n  name: a\n{OUR_CLUSTER}users:\n{OUR_TOKEN_USER}current-context: gke_p_l_c\ncontexts:\n{OUR_CONTEXT}apiVersion: v1\nkind: Config\npreferences: {{}}\n"
    );
    assert_eq!(out, expected);
}

#[test]
fn anchors_and_aliases_elsewhere_are_kept() {
    let text = "clusters:\n- name: a\n  cluster: &lab\n    server: https://lab\n- name: b\n  cluster: *lab\n- name: gke_p_l_c\n  cluster: *lab\ncurrent-context: a\n";
    let out = merged(text, &token_file());
    let expected = text
        .replace("- name: gke_p_l_c\n  cluster: *lab\n", OUR_CLUSTER)
        .replace(
            "current-context: a\n",
            &format!(
                "current-context: gke_p_l_c\ncontexts:\n{OUR_CONTEXT}users:\n{OUR_TOKEN_USER}apiVersion: v1\nkind: Config\npreferences: {{}}\n"
            ),
        );
    assert_eq!(out, expected);
    let doc: Value = serde_norway::from_str(&out).unwrap();
    assert_eq!(doc["clusters"][1]["cluster"]["server"], "https://lab");
}

#[test]
fn an_anchor_in_an_old_item_of_ours_that_others_use_is_refused() {
    let text = "clusters:\n- name: gke_p_l_c\n  cluster: &x\n    server: https://old\n- name: b\n  cluster: *x\n";
    match merge(text, &ours(&token_file())) {
        Err(EditError::Unsupported(_)) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn missing_defaults_are_added_at_the_end() {
    let out = merged("clusters: []\n", &token_file());
    let doc: Value = serde_norway::from_str(&out).unwrap();
    assert_eq!(doc["apiVersion"], "v1");
    assert_eq!(doc["kind"], "Config");
    assert_eq!(doc["preferences"], Value::Mapping(Default::default()));
    assert!(
        out.starts_with(&format!("clusters:\n{OUR_CLUSTER}")),
        "{out}"
    );
}

fn fresh(credential: &Credential, user: &str) -> String {
    format!(
        "apiVersion: v1\nclusters:\n{OUR_CLUSTER}contexts:\n{OUR_CONTEXT}current-context: gke_p_l_c\nkind: Config\npreferences: {{}}\nusers:\n{}",
        match credential {
            Credential::TokenFile(_) => user,
            Credential::GcloudPlugin => OUR_PLUGIN_USER,
        }
    )
}

#[test]
fn an_empty_file_gets_a_kubeconfig_as_kubectl_writes_it() {
    let credential = token_file();
    let expected = fresh(&credential, OUR_TOKEN_USER);
    assert_eq!(merged("", &credential), expected);
    assert_eq!(merged("\n  \n", &credential), format!("\n  \n{expected}"));
    assert_eq!(
        merged("# mine\n# also mine", &credential),
        format!("# mine\n# also mine\n{expected}")
    );
}

#[test]
fn a_missing_file_is_created_with_mode_0600() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested").join("config");
    merge_context(&path, NAME, "10.0.0.1", "Q0E=", &Credential::GcloudPlugin).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        fresh(&Credential::GcloudPlugin, OUR_PLUGIN_USER)
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn a_file_kubectl_is_writing_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    std::fs::write(&path, GCLOUD).unwrap();
    let lock = dir.path().join("config.lock");
    std::fs::write(&lock, "").unwrap();
    let refused = merge_context(&path, NAME, "10.0.0.1", "Q0E=", &Credential::GcloudPlugin);
    let message = refused.unwrap_err().to_string();
    assert!(
        message.contains("another program is writing it"),
        "{message}"
    );
    assert!(message.contains(&lock.display().to_string()), "{message}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), GCLOUD);
    assert!(lock.exists(), "someone else's lock is theirs to remove");

    // Once it is gone: merged, and Gantry's own lock removed.
    std::fs::remove_file(&lock).unwrap();
    merge_context(&path, NAME, "10.0.0.1", "Q0E=", &Credential::GcloudPlugin).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        merged(GCLOUD, &Credential::GcloudPlugin)
    );
    assert!(!lock.exists());
}

#[test]
fn an_existing_file_keeps_its_bytes_and_becomes_0600() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    std::fs::write(&path, GCLOUD).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "never-in-the-kubeconfig").unwrap();
    let credential = Credential::TokenFile(token.clone());
    merge_context(&path, NAME, "10.0.0.1", "Q0E=", &credential).unwrap();
    let out = std::fs::read_to_string(&path).unwrap();
    assert_eq!(out, merged(GCLOUD, &credential));
    assert!(out.contains(&format!("tokenFile: {}", token.display())));
    assert!(!out.contains("never-in-the-kubeconfig"));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn a_symlinked_kubeconfig_is_edited_where_it_points() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("dotfiles").join("kubeconfig");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, GCLOUD).unwrap();
    let link = dir.path().join("config");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    merge_context(&link, NAME, "10.0.0.1", "Q0E=", &token_file()).unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        merged(GCLOUD, &token_file())
    );
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn crlf_files_keep_crlf() {
    let text = GCLOUD.replace('\n', "\r\n");
    let out = merged(&text, &token_file());
    let expected = merged(GCLOUD, &token_file()).replace('\n', "\r\n");
    assert_eq!(out, expected);
}

#[test]
fn a_file_without_a_final_line_break_gets_one() {
    let text = GCLOUD.trim_end();
    let out = merged(text, &token_file());
    assert_eq!(out, merged(GCLOUD, &token_file()));
}

#[test]
fn flow_lists_are_appended_to_in_flow_style() {
    let text = "apiVersion: v1\nclusters: [{name: a, cluster: {server: 'https://a'}}]  # one\ncontexts: [{name: a, context: {cluster: a, user: a}}]\ncurrent-context: a\nkind: Config\npreferences: {}\nusers: [{name: a, user: {token: x}}]\n";
    let out = merged(text, &token_file());
    assert!(
        out.starts_with("apiVersion: v1\nclusters: [{name: a, cluster: {server: 'https://a'}}, {"),
        "{out}"
    );
    assert!(out.contains("}]  # one\n"), "{out}");
    let doc: Value = serde_norway::from_str(&out).unwrap();
    let before: Value = serde_norway::from_str(text).unwrap();
    for list in ["clusters", "contexts", "users"] {
        assert_eq!(doc[list][0], before[list][0]);
        assert_eq!(doc[list][1]["name"], NAME);
    }
    assert_eq!(merged(&out, &token_file()), out);
}

#[test]
fn json_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    let text = r#"{"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "a", "cluster": {"server": "https://a"}}]}"#;
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let err = merge_context(&path, NAME, "10.0.0.1", "Q0E=", &token_file()).unwrap_err();
    assert!(
        matches!(err, KubeconfigError::Unsupported { .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("--no-kubeconfig"), "{message}");
    assert!(message.contains("left as it was"), "{message}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

#[test]
fn what_is_not_a_kubeconfig_is_refused() {
    for text in [
        "clusters: [\n",
        "- a\n- b\n",
        "just text\n",
        "clusters: {a: b}\n",
        "users: 3\n",
        "a: 1\n---\nb: 2\n",
        "a: 1\na: 2\n",
        "clusters:\n\t- name: a\n",
    ] {
        match merge(text, &ours(&token_file())) {
            Err(EditError::Invalid(_)) => {}
            other => panic!("{text:?} gave {other:?}"),
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    std::fs::write(&path, "- a\n").unwrap();
    let err = merge_context(&path, NAME, "10.0.0.1", "Q0E=", &token_file()).unwrap_err();
    assert!(matches!(err, KubeconfigError::Parse { .. }), "{err:?}");
    assert!(err.to_string().contains("--no-kubeconfig"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "- a\n");
}

#[test]
fn merging_twice_changes_nothing() {
    let inputs = [
        String::new(),
        GCLOUD.to_string(),
        HAND_EDITED.to_string(),
        GCLOUD.replace('\n', "\r\n"),
        "clusters: [{name: a, cluster: {server: 'https://a'}}]\n".to_string(),
    ];
    for input in &inputs {
        for credential in [token_file(), Credential::GcloudPlugin] {
            let once = merged(input, &credential);
            assert_eq!(merged(&once, &credential), once, "for:\n{input}");
        }
        // Switching the credential and back gives the same file.
        let token = merged(input, &token_file());
        let plugin = merged(&token, &Credential::GcloudPlugin);
        assert_ne!(plugin, token);
        assert_eq!(merged(&plugin, &token_file()), token);
    }
}

#[test]
fn lost_bytes_are_found() {
    let before = "a: 1\nb: 2 # two\nc: 3\n";
    // Whole lines inserted between lines: nothing lost.
    assert_eq!(
        first_lost_byte(before, &[], "a: 1\nx: 9\nb: 2 # two\nc: 3\ny: 8\n"),
        None
    );
    // A change inside a line, a lost line, lines swapped.
    assert_eq!(first_lost_byte(before, &[], "a: 1\nb: 2\nc: 3\n"), Some(5));
    assert_eq!(first_lost_byte(before, &[], "a: 1\nc: 3\n"), Some(5));
    assert_eq!(
        first_lost_byte(before, &[], "b: 2 # two\na: 1\nc: 3\n"),
        Some(5)
    );
    // Text inserted within a line only where an empty span allows it.
    assert_eq!(
        first_lost_byte(before, &[], "a: 1\nb: 2 # two!\nc: 3\n"),
        Some(5)
    );
    assert_eq!(
        first_lost_byte(
            before,
            std::slice::from_ref(&(15..15)),
            "a: 1\nb: 2 # two!\nc: 3\n"
        ),
        None
    );
    // A touched span may change as it likes.
    assert_eq!(
        first_lost_byte(
            before,
            std::slice::from_ref(&(5..16)),
            "a: 1\nb: 22\nc: 3\n"
        ),
        None
    );
    assert_eq!(
        first_lost_byte(
            before,
            std::slice::from_ref(&(5..16)),
            "a: 1\nb: 22\nc: 4\n"
        ),
        Some(16)
    );
}
