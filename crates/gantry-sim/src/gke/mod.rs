//! The simulated GKE Container API v1 (REST/JSON over plain HTTP on loopback), faithful enough
//! that the official `google-cloud-container-v1` client and gcloud use it unmodified: clusters
//! (create, get, list, delete, update, setResourceLabels) in the `locations` and the older `zones`
//! URL forms, node pools (list, get, create, delete, update, setSize, setAutoscaling), operations
//! (get, list, cancel) and `serverConfig`. A cluster provisions through GKE-like stages, and its
//! Kubernetes API server (a `ClusterRuntime`) runs from the end of the control plane stage until
//! the cluster is deleted; changes to a running cluster are operations during which it is
//! RECONCILING and its Kubernetes nodes follow its node pools. Under the `preempt` fault its Spot
//! nodes are reclaimed and their instances recreated (`preemption`).

mod autoscaler;
mod autoscaling;
mod capacity;
mod cluster_requests;
mod clusters;
mod errors;
mod handlers;
mod iam;
mod lifecycle;
mod locations;
mod model;
mod node_work;
mod operations;
mod pool_requests;
mod pool_update;
mod pools;
mod preemption;
mod proto_json;
mod reconcile;
mod routes;
mod schema;
mod updates;
mod versions;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub use errors::{GkeError, GoogleErrors};

use crate::kube::cluster::{ClusterRuntime, ClusterSpec};
use crate::{SimError, SimShared};
use clusters::Registry;

/// A cluster whose Kubernetes API server serves (status RUNNING or RECONCILING), with its address.
#[derive(Debug, Clone, PartialEq)]
pub struct RunningCluster {
    pub project: String,
    pub location: String,
    pub name: String,
    /// `127.0.0.1:PORT`, as GKE's `endpoint` (HTTPS, certificate signed by the simulator's CA).
    pub endpoint: String,
    pub created_at: jiff::Timestamp,
}

#[derive(Debug)]
pub struct GkeApi {
    shared: SimShared,
    registry: Mutex<Registry>,
    /// `http://127.0.0.1:PORT` once serving: selfLink and targetLink are built from it.
    base_url: RwLock<String>,
    running: watch::Sender<Vec<RunningCluster>>,
    /// Cancelled when serving stops: every operation ends and every cluster shuts down.
    stop: CancellationToken,
}

impl GkeApi {
    pub fn new(shared: SimShared) -> Arc<Self> {
        Arc::new(Self {
            shared,
            registry: Mutex::new(Registry::default()),
            base_url: RwLock::new("http://127.0.0.1:0".to_string()),
            running: watch::Sender::new(Vec::new()),
            stop: CancellationToken::new(),
        })
    }

    /// Serves over plain HTTP on 127.0.0.1:port (0: the OS picks) until `stop` is cancelled, then
    /// shuts every cluster's API server down. Returns the bound port.
    pub async fn serve(
        self: &Arc<Self>,
        port: u16,
        stop: CancellationToken,
    ) -> std::io::Result<u16> {
        let listener =
            tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).await?;
        let port = listener.local_addr()?.port();
        *self.base_url.write().unwrap_or_else(|p| p.into_inner()) =
            format!("http://127.0.0.1:{port}");
        let router = routes::router(self.clone());
        let shutdown = stop.clone();
        tokio::spawn(async move {
            let served = axum::serve(listener, router)
                .with_graceful_shutdown(async move { shutdown.cancelled().await })
                .await;
            if let Err(e) = served {
                tracing::warn!(error = %e, "the simulated GKE API stopped");
            }
        });
        let api = self.clone();
        tokio::spawn(async move {
            stop.cancelled().await;
            api.shutdown();
        });
        Ok(port)
    }

    /// Creates a cluster that is RUNNING at once, with a CREATE_CLUSTER operation already DONE.
    /// Faults do not apply: this is the cluster `gantry sim --cluster` starts with.
    pub async fn create_running(self: &Arc<Self>, spec: ClusterSpec) -> Result<(), SimError> {
        let request = model::request_from_spec(&spec);
        self.create_running_from(&spec.project, &spec.location, request)
            .await
    }

    /// As `create_running`, from a `CreateClusterRequest` body (node pools with autoscaling, say).
    pub async fn create_running_from(
        self: &Arc<Self>,
        project: &str,
        location: &str,
        request: serde_json::Value,
    ) -> Result<(), SimError> {
        let location = locations::Location::parse(location).map_err(to_sim_error)?;
        let plan = model::plan_cluster(project, location, request).map_err(to_sim_error)?;
        let (key, operation) = handlers::register_create(self, plan).map_err(to_sim_error)?;
        lifecycle::provision(self.clone(), key, operation, None, lifecycle::Pace::Instant)
            .await
            .map_err(to_sim_error)
    }

    /// The clusters whose API server serves, updated whenever one becomes RUNNING or stops
    /// serving (when its deletion starts, or it fails). A RECONCILING cluster still serves.
    pub fn running(&self) -> watch::Receiver<Vec<RunningCluster>> {
        self.running.subscribe()
    }

    /// The Kubernetes side of a cluster whose control plane is up.
    pub fn runtime(
        &self,
        project: &str,
        location: &str,
        name: &str,
    ) -> Option<Arc<ClusterRuntime>> {
        self.registry()
            .find(project, location, name)
            .ok()
            .and_then(|c| c.runtime.clone())
    }

    fn registry(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn base_url(&self) -> String {
        self.base_url
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Recomputes the RUNNING list and tells watchers if it changed. Call without the registry lock.
    fn publish_running(&self) {
        let current: Vec<RunningCluster> = self
            .registry()
            .clusters
            .values()
            .filter(|c| c.status.serves())
            .filter_map(|c| {
                Some(RunningCluster {
                    project: c.spec.project.clone(),
                    location: c.location.as_str().to_string(),
                    name: c.spec.name.clone(),
                    endpoint: c.runtime.as_ref()?.endpoint(),
                    created_at: c.create_time,
                })
            })
            .collect();
        self.running.send_if_modified(|old| {
            let changed = *old != current;
            if changed {
                *old = current;
            }
            changed
        });
    }

    /// Ends every operation and shuts every cluster's API server down.
    pub(crate) fn shutdown(&self) {
        self.stop.cancel();
        let runtimes: Vec<Arc<ClusterRuntime>> = self
            .registry()
            .clusters
            .values_mut()
            .filter_map(|c| c.runtime.take())
            .collect();
        for runtime in runtimes {
            runtime.shutdown();
        }
        self.running.send_replace(Vec::new());
    }
}

fn to_sim_error(e: GkeError) -> SimError {
    SimError::Other(format!("GKE {}: {}", e.status, e.message))
}
