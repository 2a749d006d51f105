//! Who a process pod is to the APIs it calls: the token of its Kubernetes service account,
//! projected where `kube`'s and client-go's in-cluster configuration read it, and the Google
//! service account the node's metadata server speaks for.

use std::time::Duration;

use serde_json::Value;

use crate::kube::cluster::ClusterState;

/// Where a container finds its service account's token, CA and namespace (every client's
/// in-cluster configuration reads exactly this directory).
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// A token projected into a pod, and when it stops working (None: when the cloud's token
/// rotates).
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
    /// A token for the pod's service account, as the kubelet asks the TokenRequest API for one
    /// to project into it (`audience`: the projection's, empty for the API server's own;
    /// `lifetime`: its `expirationSeconds`). The one place a pod's Kubernetes credential comes
    /// from; Err(why) when none can be had.
    pub fn service_account_token(
        &self,
        pod: &Value,
        audience: &str,
        lifetime: Duration,
    ) -> Result<ProjectedToken, String> {
        let _ = (pod, audience, lifetime);
        // Until service accounts have tokens of their own: the bearer token every API of the
        // simulated cloud accepts, which the kubelet projects again whenever it rotates.
        Ok(ProjectedToken {
            token: self.shared.auth.current(),
            expires_at: None,
        })
    }

    /// The Google service account a pod acts as through its node's metadata server: the
    /// node's, the project's Compute Engine default service account, as GKE's default node
    /// pools have. Its token is the one the simulated Google APIs accept.
    pub fn google_identity(&self, pod: &Value) -> GoogleIdentity {
        let _ = pod;
        let project = self.spec.project.clone();
        let project_number = project_number(&project);
        GoogleIdentity {
            email: format!("{project_number}-compute@developer.gserviceaccount.com"),
            project,
            project_number,
        }
    }
}

/// A project's number: stable for its id, twelve digits as Google's are.
pub fn project_number(project: &str) -> u64 {
    // FNV-1a: the same number in every run, in every process.
    let hash = project.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    100_000_000_000 + hash % 900_000_000_000
}
