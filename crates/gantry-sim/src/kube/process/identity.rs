//! Who a process pod is to the APIs it calls: the token of its Kubernetes service account,
//! projected where `kube`'s and client-go's in-cluster configuration read it, and the Google
//! service account the node's metadata server speaks for.

use std::time::Duration;

use serde_json::Value;

use crate::kube::cluster::ClusterState;
use crate::kube::meta;
use crate::kube::resources::Kind;
use crate::kube::tokens::{PodRef, TokenOptions};

/// Where a container finds its service account's token, CA and namespace (every client's
/// in-cluster configuration reads exactly this directory).
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The annotation that binds a Kubernetes service account to a Google one (Workload Identity).
const WORKLOAD_IDENTITY: &str = "iam.gke.io/gcp-service-account";

/// A token projected into a pod, and when it stops working (if it does).
#[derive(Clone, PartialEq, Eq)]
pub struct ProjectedToken {
    pub token: String,
    pub expires_at: Option<jiff::Timestamp>,
}

impl std::fmt::Debug for ProjectedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectedToken")
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// The Google identity the metadata server serves to one pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoogleIdentity {
    pub project: String,
    pub project_number: u64,
    pub email: String,
}

impl ClusterState {
    /// A token for the pod's service account, bound to the pod, as the kubelet asks the
    /// TokenRequest API for one to project into it (`audience`: the projection's, empty for the
    /// API server's own; `lifetime`: its `expirationSeconds`). The one place a pod's
    /// Kubernetes credential comes from; Err(the kubelet's words) when none can be had.
    pub fn service_account_token(
        &self,
        pod: &Value,
        audience: &str,
        lifetime: Duration,
    ) -> Result<ProjectedToken, String> {
        let options = TokenOptions {
            audiences: if audience.is_empty() {
                Vec::new()
            } else {
                vec![audience.to_string()]
            },
            bound_pod: Some(PodRef::of(pod)),
        };
        self.issue_token(
            meta::namespace(pod),
            service_account_of(pod),
            lifetime,
            &options,
        )
        .map(|issued| ProjectedToken {
            token: issued.token,
            expires_at: Some(issued.expires_at),
        })
        .map_err(|e| format!("failed to fetch token: {}", e.message))
    }

    /// The Google service account a pod acts as through its node's metadata server: the one
    /// its Kubernetes service account is bound to by Workload Identity (the
    /// `iam.gke.io/gcp-service-account` annotation), else the node's, the project's Compute
    /// Engine default service account as GKE's default node pools have. Its token is the one
    /// the simulated Google APIs accept.
    pub fn google_identity(&self, pod: &Value) -> GoogleIdentity {
        let project = self.spec.project.clone();
        let project_number = project_number(&project);
        let bound = self
            .store
            .get(
                Kind::ServiceAccount,
                meta::namespace(pod),
                service_account_of(pod),
            )
            .and_then(|sa| meta::annotation(&sa, WORKLOAD_IDENTITY).map(str::to_string));
        GoogleIdentity {
            email: bound.unwrap_or_else(|| {
                format!("{project_number}-compute@developer.gserviceaccount.com")
            }),
            project,
            project_number,
        }
    }
}

fn service_account_of(pod: &Value) -> &str {
    pod.pointer("/spec/serviceAccountName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("default")
}

/// A project's number: stable for its id, twelve digits as Google's are.
pub fn project_number(project: &str) -> u64 {
    // FNV-1a: the same number in every run, in every process.
    let hash = project.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    100_000_000_000 + hash % 900_000_000_000
}
