//! Why a watcher command could not be done; each says what to do.

use crate::k8s::K8sError;

#[derive(Debug, thiserror::Error)]
pub enum WatcherError {
    #[error(transparent)]
    Cluster(#[from] K8sError),
    /// Something the operator must change first (an image, a key file, the config).
    #[error("{0}")]
    Input(String),
    /// The cluster kept changing under the command: running it again is enough.
    #[error("{0}")]
    Busy(String),
}

impl WatcherError {
    pub(crate) fn api(action: impl Into<String>) -> impl FnOnce(kube::Error) -> Self {
        let make = K8sError::api(action);
        move |source| WatcherError::Cluster(make(source))
    }

    /// 2 for what the operator must fix, 1 when the cluster said no.
    pub fn exit_code(&self) -> i32 {
        match self {
            WatcherError::Input(_) => 2,
            WatcherError::Cluster(_) | WatcherError::Busy(_) => 1,
        }
    }
}
