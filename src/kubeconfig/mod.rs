//! Writing the cluster's context into the user's kubeconfig, as `gcloud container clusters
//! get-credentials` does: context `gke_<project>_<location>_<cluster>`, the cluster's CA, and a
//! user that fetches tokens itself (gke-gcloud-auth-plugin), or reads Gantry's token file. No
//! token is ever copied into the file. Every other entry is kept as it was; the file stays 0600.

use std::path::{Path, PathBuf};

use serde_yaml::{Mapping, Value};

use crate::sim::state_dir::write_private;

/// How kubectl will authenticate to the cluster.
#[derive(Debug, Clone, PartialEq)]
pub enum Credential {
    /// `gke-gcloud-auth-plugin` (Application Default Credentials), as gcloud writes it.
    GcloudPlugin,
    /// The file Gantry itself reads its token from (`--access-token-file`).
    TokenFile(PathBuf),
}

#[derive(Debug, thiserror::Error)]
pub enum KubeconfigError {
    #[error("cannot read the kubeconfig {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the kubeconfig {path} is not valid YAML ({message}); fix it or pass --no-kubeconfig")]
    Parse { path: PathBuf, message: String },
    #[error("cannot write the kubeconfig {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no kubeconfig location: set KUBECONFIG or HOME, or pass --no-kubeconfig")]
    NoPath,
}

/// `$KUBECONFIG`'s first file, else `~/.kube/config` (kubectl's order for writes).
pub fn default_path() -> Option<PathBuf> {
    if let Some(list) = std::env::var_os("KUBECONFIG")
        && let Some(first) = std::env::split_paths(&list).find(|p| !p.as_os_str().is_empty())
    {
        return Some(first);
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".kube").join("config"))
}

/// Adds or replaces the context (and its cluster and user entries) and makes it current.
pub fn merge_context(
    path: &Path,
    name: &str,
    server: &str,
    ca_base64: &str,
    credential: &Credential,
) -> Result<(), KubeconfigError> {
    let mut doc = match std::fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => {
            serde_yaml::from_str::<Value>(&text).map_err(|e| KubeconfigError::Parse {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?
        }
        Ok(_) => Value::Mapping(Mapping::new()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Mapping(Mapping::new()),
        Err(source) => {
            return Err(KubeconfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let Value::Mapping(root) = &mut doc else {
        return Err(KubeconfigError::Parse {
            path: path.to_path_buf(),
            message: "the top level is not a mapping".into(),
        });
    };
    set_default(root, "apiVersion", Value::from("v1"));
    set_default(root, "kind", Value::from("Config"));
    set_default(root, "preferences", Value::Mapping(Mapping::new()));
    let mut cluster = Mapping::new();
    cluster.insert("certificate-authority-data".into(), ca_base64.into());
    cluster.insert("server".into(), format!("https://{server}").into());
    upsert(root, "clusters", name, "cluster", Value::Mapping(cluster));
    upsert(root, "users", name, "user", user(credential));
    let mut context = Mapping::new();
    context.insert("cluster".into(), name.into());
    context.insert("user".into(), name.into());
    upsert(root, "contexts", name, "context", Value::Mapping(context));
    root.insert("current-context".into(), name.into());
    let text = serde_yaml::to_string(&doc).map_err(|e| KubeconfigError::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    write_private(path, text.as_bytes()).map_err(|source| KubeconfigError::Write {
        path: path.to_path_buf(),
        source,
    })
}

fn set_default(root: &mut Mapping, key: &str, value: Value) {
    if !root.contains_key(key) {
        root.insert(key.into(), value);
    }
}

fn user(credential: &Credential) -> Value {
    let mut user = Mapping::new();
    match credential {
        Credential::GcloudPlugin => {
            let mut exec = Mapping::new();
            exec.insert(
                "apiVersion".into(),
                "client.authentication.k8s.io/v1beta1".into(),
            );
            exec.insert("command".into(), "gke-gcloud-auth-plugin".into());
            exec.insert(
                "installHint".into(),
                "Install gke-gcloud-auth-plugin for use with kubectl by following https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin".into(),
            );
            exec.insert("provideClusterInfo".into(), true.into());
            exec.insert("interactiveMode".into(), "IfAvailable".into());
            user.insert("exec".into(), Value::Mapping(exec));
        }
        Credential::TokenFile(path) => {
            user.insert("tokenFile".into(), path.display().to_string().into());
        }
    }
    Value::Mapping(user)
}

/// Replaces the named entry of a list (`clusters`, `users`, `contexts`) or appends it.
fn upsert(root: &mut Mapping, list: &str, name: &str, field: &str, value: Value) {
    let mut entry = Mapping::new();
    entry.insert("name".into(), name.into());
    entry.insert(field.into(), value);
    let items = root
        .entry(list.into())
        .or_insert_with(|| Value::Sequence(Vec::new()));
    if !items.is_sequence() {
        *items = Value::Sequence(Vec::new());
    }
    if let Value::Sequence(seq) = items {
        match seq
            .iter_mut()
            .find(|e| e.get("name").and_then(Value::as_str) == Some(name))
        {
            Some(existing) => *existing = Value::Mapping(entry),
            None => seq.push(Value::Mapping(entry)),
        }
    }
}

/// The credential kubectl should use, from Gantry's own flags: None when `--no-kubeconfig`.
pub fn credential_for(target: &crate::cli::TargetArgs) -> Option<Credential> {
    if target.no_kubeconfig {
        return None;
    }
    Some(match &target.access_token_file {
        Some(file) => {
            Credential::TokenFile(std::path::absolute(file).unwrap_or_else(|_| file.clone()))
        }
        None => Credential::GcloudPlugin,
    })
}

/// Writes the context for a RUNNING GKE cluster; returns the context name and the file.
pub fn write_for_cluster(
    credential: &Credential,
    target: &crate::gke::ClusterRef,
    cluster: &google_cloud_container_v1::model::Cluster,
) -> Result<(String, PathBuf), KubeconfigError> {
    let path = default_path().ok_or(KubeconfigError::NoPath)?;
    let name = crate::sim::cloud::context_name(&target.project, &target.location, &target.name);
    let ca = cluster
        .master_auth
        .as_ref()
        .map(|m| m.cluster_ca_certificate.clone())
        .unwrap_or_default();
    merge_context(&path, &name, &cluster.endpoint, &ca, credential)?;
    Ok((name, path))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
