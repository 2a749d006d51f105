//! The embedded simulated cloud: a GKE Container API (REST/JSON over HTTP) and, for each cluster
//! it creates, a Kubernetes API server (HTTPS) with a Job controller, a scheduler and kubelet
//! stand-in, and a simulated training workload. Clients talk to it over loopback with the same
//! wire protocols as to Google; only the endpoint and the credential differ.

pub mod auth;
pub mod clock;
pub mod cloud;
pub mod faults;
pub mod gke;
pub mod hostile;
pub mod http_faults;
pub mod kube;
pub mod machines;
pub mod metadata;
mod state_files;
#[cfg(test)]
mod test_http;
#[cfg(test)]
mod test_support;
pub mod tls;

use std::sync::Arc;

pub use cloud::{SimCloud, SimOptions};

/// What every server of one simulated cloud shares.
#[derive(Debug, Clone)]
pub struct SimShared {
    pub clock: clock::Clock,
    pub faults: Arc<faults::Faults>,
    pub auth: Arc<auth::TokenAuthority>,
    pub ca: Arc<tls::CertificateAuthority>,
    /// `--replay-dir`, resolved: where `SIM_REPLAY` files are read from.
    pub replay_dir: Option<Arc<std::path::Path>>,
    /// `--run-image`, each executable found: the images the kubelet runs as local processes.
    pub run_images: Arc<kube::process::RunImages>,
}

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("simulator I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    #[error("{0}")]
    Other(String),
}
