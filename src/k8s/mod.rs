//! The training Job on Kubernetes: manifests from the configuration (and the configuration from a
//! `--job-manifest` file), launch, retry and delete, watchers that send typed events, and a
//! multi-pod log tailer that resumes without losing or repeating a line and saves every line to
//! disk.
//!
//! Nothing here holds UI state: watchers and the tailer send events over channels; the caller
//! (the TUI's `App`, or a CLI command) folds them into whatever state it keeps.

pub mod age;
pub mod annotate;
pub mod attempts;
pub mod client;
pub mod cluster_info;
pub mod code;
pub mod delete;
pub mod fate;
pub mod gpus;
pub mod in_cluster;
pub mod labels;
pub mod launch;
pub mod lease;
pub mod logs;
pub mod manifest;
pub mod pod_summary;
pub mod rbac;
pub mod recover;
pub mod run;
pub mod status;
pub mod usage;
pub mod watch;

pub use attempts::{current_attempt, list_attempts};
pub use delete::{Deleted, delete};
pub use launch::{Launched, launch, retry};

/// Why a Job action could not be done; each says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum K8sError {
    #[error(transparent)]
    Manifest(#[from] manifest::ManifestError),
    #[error(transparent)]
    Code(#[from] crate::code::CodeError),
    #[error(
        "the code of attempt {attempt} is gone (its ConfigMap {configmap} is not there, or not its own): launch again with --code DIR"
    )]
    CodeGone { attempt: String, configmap: String },
    #[error(
        "attempt {attempt} ran its image's own code (it records no gantry.dev/code): there is nothing to write"
    )]
    NoCode { attempt: String },
    #[error("{action}: {source}")]
    Api {
        action: String,
        #[source]
        source: kube::Error,
    },
    #[error(
        "attempt {name} is still {state}: wait for it to end, or delete it with `gantry delete attempt {name}`"
    )]
    StillActive { name: String, state: &'static str },
    #[error(
        "attempt {name} was started a moment ago by another Gantry (a retry or a recovery): see it with `gantry status`"
    )]
    AttemptTaken { name: String },
    #[error("the training Job {job} has no attempt yet: start one with `gantry launch`")]
    NothingToRetry { job: String },
    #[error("there is no Job {name} in namespace {namespace}")]
    NotFound { name: String, namespace: String },
    #[error(
        "{kind} {name} was not made by Gantry for {job} (no app.kubernetes.io/managed-by=gantry label): not touching it"
    )]
    NotManaged {
        kind: &'static str,
        name: String,
        job: String,
    },
}

impl K8sError {
    pub(crate) fn api(action: impl Into<String>) -> impl FnOnce(kube::Error) -> Self {
        let action = action.into();
        move |source| Self::Api { action, source }
    }
}

/// The HTTP status of an API error, if the server answered one.
pub fn status_code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}
