//! Writing the cluster's context into the user's kubeconfig, as `gcloud container clusters
//! get-credentials` does: context `gke_<project>_<location>_<cluster>`, the cluster's CA, and a
//! user that fetches tokens itself (gke-gcloud-auth-plugin), or reads Gantry's token file. No
//! token is ever copied into the file.
//!
//! The merge edits the file's text rather than rewriting the document (see the `edit`
//! module): our three items (the cluster, the context and the user, all named after the
//! context) replace the ones of the same name where they stand, or are appended to their lists
//! in the lists' own indentation style, and `current-context` is set. Every other byte — other
//! contexts, comments, key order, quoting, blank lines, CRLF line endings — is kept as it was.
//! The new text is written atomically (a temporary file renamed over the old one) with mode
//! 0600; a symlinked kubeconfig is written where the link points.
//!
//! A missing, empty or comments-only file (comments kept) gets a fresh kubeconfig laid out as
//! kubectl writes it.
//!
//! What the editor cannot change without touching other bytes is refused, never reformatted:
//! nothing is written, and the error names the file and suggests `--no-kubeconfig` (or adding
//! the context with gcloud). Rewriting the whole document instead would silently drop the
//! user's comments and layout, the very thing this module promises to keep, so there is no
//! such fallback. Refused are: invalid YAML (including tab indentation and duplicate keys),
//! more than one document, a top level that is not a mapping or a list that is not a list
//! ([`KubeconfigError::Parse`]); JSON or any flow mapping at the top, text the lossless parser
//! does not read, items it cannot line up with `serde_norway`'s, and any edit whose result fails
//! the checks in `edit` ([`KubeconfigError::Unsupported`]). Handled in place: both list
//! indentation styles, comments, any quoting, anchors and aliases elsewhere in the file, CRLF
//! line endings, a missing final line break (one is added), flow-style lists inside a block
//! file (`clusters: [...]`, appended to in flow style) and empty lists (`clusters: null`, as
//! kubectl writes them, or `[]`, which become block lists). A comment on such an empty list's
//! line, or inside an old item of ours, goes with it.

mod edit;
mod entries;
mod lock;

use std::path::{Path, PathBuf};

use crate::private_file::write_private;

use edit::EditError;
use entries::Entries;

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
    #[error("the kubeconfig {path} is not valid ({message}); fix it or pass --no-kubeconfig")]
    Parse { path: PathBuf, message: String },
    #[error(
        "the kubeconfig {path} was left as it was: Gantry cannot add its context to it without changing other entries ({reason}); add the context with `gcloud container clusters get-credentials`, or pass --no-kubeconfig"
    )]
    Unsupported { path: PathBuf, reason: String },
    #[error("cannot write the kubeconfig {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the kubeconfig {path} was left as it was: another program is writing it ({lock} exists); try again, or remove {lock} if no kubectl or gcloud is running"
    )]
    Locked { path: PathBuf, lock: PathBuf },
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

/// Adds or replaces the context (and its cluster and user entries) and makes it current,
/// keeping every other byte of the file.
pub fn merge_context(
    path: &Path,
    name: &str,
    server: &str,
    ca_base64: &str,
    credential: &Credential,
) -> Result<(), KubeconfigError> {
    // Held from before the read until after the rename, as kubectl holds it: on the path as
    // named (a symlink's own name), where kubectl looks for it.
    let _lock = lock::Lock::take(path).map_err(|e| match e {
        lock::LockError::Held(lock) => KubeconfigError::Locked {
            path: path.to_path_buf(),
            lock,
        },
        lock::LockError::Io(source) => KubeconfigError::Write {
            path: path.to_path_buf(),
            source,
        },
    })?;
    // A symlinked kubeconfig (kept with dotfiles, say) is edited where it points, not replaced
    // by a file of its own.
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let resolved = if is_link {
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    } else {
        path.to_path_buf()
    };
    let path = resolved.as_path();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(KubeconfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let ours = Entries::new(name, server, ca_base64, credential);
    let merged = edit::merge(&text, &ours).map_err(|e| match e {
        EditError::Invalid(message) => KubeconfigError::Parse {
            path: path.to_path_buf(),
            message,
        },
        EditError::Unsupported(reason) => KubeconfigError::Unsupported {
            path: path.to_path_buf(),
            reason,
        },
    })?;
    write_private(path, merged.as_bytes()).map_err(|source| KubeconfigError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The credential kubectl should use: the token file Gantry reads, if it reads one, else the
/// gcloud plugin.
pub fn credential_for(access_token_file: Option<&Path>) -> Credential {
    match access_token_file {
        Some(file) => {
            Credential::TokenFile(std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf()))
        }
        None => Credential::GcloudPlugin,
    }
}

/// Writes the context for a RUNNING GKE cluster; returns the context name and the file.
pub fn write_for_cluster(
    credential: &Credential,
    target: &crate::gke::ClusterRef,
    cluster: &google_cloud_container_v1::model::Cluster,
) -> Result<(String, PathBuf), KubeconfigError> {
    let path = default_path().ok_or(KubeconfigError::NoPath)?;
    let name = crate::gke::target::context_name(&target.project, &target.location, &target.name);
    let ca = cluster
        .master_auth
        .as_ref()
        .map(|m| m.cluster_ca_certificate.clone())
        .unwrap_or_default();
    merge_context(&path, &name, &cluster.endpoint, &ca, credential)?;
    Ok((name, path))
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
