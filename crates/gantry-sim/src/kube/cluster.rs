//! One simulated cluster: its object store, its logs, its controllers and its HTTPS API server,
//! alive from when GKE finishes provisioning it until it is deleted.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::logbook::LogBook;
use super::store::Store;
use super::{api, controllers, nodes};
use crate::{SimError, SimShared};

/// A node pool as the cluster's nodes see it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodePoolSpec {
    pub name: String,
    pub machine_type: String,
    /// Nodes in each zone the pool spans (GKE's `initialNodeCount` is per zone).
    pub nodes_per_zone: u32,
    pub zones: Vec<String>,
    /// Accelerator type and count per node, attached or built into the machine type.
    pub accelerator: Option<(String, u32)>,
    pub labels: BTreeMap<String, String>,
    /// Taints as (key, value, effect).
    pub taints: Vec<(String, String, String)>,
    pub spot: bool,
    pub disk_size_gb: u32,
    /// Boot disk type (`pd-balanced`, `pd-ssd`, ...).
    pub disk_type: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClusterSpec {
    pub project: String,
    pub location: String,
    pub name: String,
    /// Kubernetes version the control plane and nodes run, e.g. `1.33.5-gke.1201000`.
    pub version: String,
    pub node_pools: Vec<NodePoolSpec>,
}

impl ClusterSpec {
    /// The seed's cluster: 3 × n1-standard-1 in one zone.
    pub fn seed(project: &str, location: &str, name: &str) -> Self {
        Self {
            project: project.into(),
            location: location.into(),
            name: name.into(),
            version: DEFAULT_VERSION.into(),
            node_pools: vec![NodePoolSpec {
                name: "default-pool".into(),
                machine_type: "n1-standard-1".into(),
                nodes_per_zone: 3,
                zones: vec![location.into()],
                accelerator: None,
                labels: BTreeMap::new(),
                taints: Vec::new(),
                spot: false,
                disk_size_gb: 100,
                disk_type: "pd-balanced".into(),
            }],
        }
    }
}

/// GKE's regular channel default. The minor matters: gcloud's kubectl dispatcher picks the
/// kubectl binary that matches the server's minor version.
pub const DEFAULT_VERSION: &str = "1.32.9-gke.1108000";

/// What handlers and controllers of one cluster share.
#[derive(Debug)]
pub struct ClusterState {
    /// The cluster as GKE created it. Node pools change later through GKE's operations, which
    /// add, drain and relabel nodes themselves (`nodes`, `drain`): read pools from the nodes.
    pub spec: ClusterSpec,
    pub store: Arc<Store>,
    pub logs: Arc<LogBook>,
    pub events: super::events::Recorder,
    pub scheduler: super::scheduler::Scheduler,
    /// Signs and checks the cluster's ServiceAccount tokens.
    pub tokens: super::tokens::TokenIssuer,
    /// How many pods each owner (a Job's uid) has had, so a workload knows it is the Nth.
    pub pod_ordinals: std::sync::Mutex<std::collections::HashMap<String, u64>>,
    /// The pods run as local processes (`--run-image`): their addresses.
    pub processes: super::process::ProcessPods,
    pub shared: SimShared,
    pub stop: CancellationToken,
}

#[derive(Debug)]
pub struct ClusterRuntime {
    state: Arc<ClusterState>,
    port: u16,
    availability: tokio::sync::watch::Receiver<super::server::Availability>,
}

impl ClusterRuntime {
    /// Starts the cluster's API server on `port` (0: the OS picks) with its nodes and controllers.
    pub async fn start(spec: ClusterSpec, shared: SimShared, port: u16) -> Result<Self, SimError> {
        let tokens = super::tokens::TokenIssuer::new(&spec)?;
        let state = Arc::new(ClusterState {
            store: Store::new(),
            tokens,
            logs: Arc::new(LogBook::default()),
            events: Default::default(),
            scheduler: Default::default(),
            pod_ordinals: Default::default(),
            processes: Default::default(),
            shared: shared.clone(),
            stop: CancellationToken::new(),
            spec,
        });
        nodes::seed(&state);
        super::rbac::bootstrap::seed(&state);
        let faults = shared.faults.clone();
        state.store.set_rewrite(Box::new(move |kind, obj| {
            if faults.hostile_strings() {
                super::hostile_fields::poison_object(kind, obj);
            }
        }));
        controllers::start(&state);
        let tls = shared.ca.server_config()?;
        let router = api::router(state.clone());
        let (port, availability) =
            super::server::start(port, tls, router, shared.faults.clone(), state.stop.clone())
                .await?;
        state
            .processes
            .set_api_server(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
        Ok(Self {
            state,
            port,
            availability,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:PORT`, as GKE's `endpoint` field gives a bare address.
    pub fn endpoint(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Whether the API server is up (it goes down and comes back under the `restart` fault).
    pub fn availability(&self) -> tokio::sync::watch::Receiver<super::server::Availability> {
        self.availability.clone()
    }

    /// How many nodes the API server knows (GKE's `currentNodeCount`).
    pub fn node_count(&self) -> usize {
        self.state.store.count(super::resources::Kind::Node)
    }

    pub fn state(&self) -> &Arc<ClusterState> {
        &self.state
    }

    /// Stops the API server and every controller; the cluster's objects and logs are gone, and
    /// so are its process pods' directories (their processes are killed as their tasks stop).
    pub fn shutdown(&self) {
        self.state.stop.cancel();
        self.state.processes.remove_directories();
    }
}

impl Drop for ClusterRuntime {
    fn drop(&mut self) {
        self.shutdown();
    }
}
