//! Shared by the simulated GKE API's tests: a simulated GKE on loopback, the official client
//! with a bearer token, the seed's cluster, and waiting for operations.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]
// The seed's request and the `zones` URL form use fields GKE has deprecated but still serves.
#![allow(deprecated)]

use std::sync::Arc;
use std::time::Duration;

use gantry::sim::SimShared;
use gantry::sim::auth::TokenAuthority;
use gantry::sim::clock::Clock;
use gantry::sim::faults::Faults;
use gantry::sim::gke::GkeApi;
use gantry::sim::tls::CertificateAuthority;
use google_cloud_auth::credentials::{
    CacheableResource, Credentials, CredentialsProvider, EntityTag,
};
use google_cloud_auth::errors::CredentialsError;
use google_cloud_container_v1::client::ClusterManager;
use google_cloud_container_v1::model::{Cluster, NodeConfig, Operation, operation};
use google_cloud_gax::error::rpc::Code;
use http::{Extensions, HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;

pub const PROJECT: &str = "demo-project";
pub const ZONE: &str = "us-central1-a";
pub const SEED_SCOPES: [&str; 4] = [
    "https://www.googleapis.com/auth/compute",
    "https://www.googleapis.com/auth/devstorage.read_only",
    "https://www.googleapis.com/auth/logging.write",
    "https://www.googleapis.com/auth/monitoring",
];
/// Only a guard against a hung test; nothing asserts how long anything takes.
pub const PATIENCE: Duration = Duration::from_secs(60);
pub const POLL: Duration = Duration::from_millis(5);

#[derive(Debug)]
pub struct Bearer(pub String);

impl CredentialsProvider for Bearer {
    async fn headers(
        &self,
        _: Extensions,
    ) -> Result<CacheableResource<HeaderMap>, CredentialsError> {
        let mut data = HeaderMap::new();
        let value = HeaderValue::from_str(&format!("Bearer {}", self.0)).unwrap();
        data.insert(http::header::AUTHORIZATION, value);
        Ok(CacheableResource::New {
            entity_tag: EntityTag::new(),
            data,
        })
    }

    async fn universe_domain(&self) -> Option<String> {
        None
    }
}

pub struct Sim {
    pub api: Arc<GkeApi>,
    pub shared: SimShared,
    pub url: String,
    pub stop: CancellationToken,
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Sim {
    /// A simulated GKE whose delays are `scale` times GKE's (0.001: a create in about 0.3 s).
    pub async fn start(scale: f64) -> Self {
        let shared = SimShared {
            clock: Clock::new(scale),
            faults: Arc::new(Faults::default()),
            auth: TokenAuthority::new(None).unwrap(),
            ca: Arc::new(CertificateAuthority::generate().unwrap()),
            replay_dir: None,
            run_images: Default::default(),
        };
        let api = GkeApi::new(shared.clone());
        let stop = CancellationToken::new();
        let port = api.serve(0, stop.clone()).await.unwrap();
        Self {
            api,
            shared,
            url: format!("http://127.0.0.1:{port}"),
            stop,
        }
    }

    pub async fn client(&self) -> ClusterManager {
        self.client_with_token(&self.shared.auth.current()).await
    }

    pub async fn client_with_token(&self, token: &str) -> ClusterManager {
        ClusterManager::builder()
            .with_endpoint(&self.url)
            .with_credentials(Credentials::from(Bearer(token.to_string())))
            .build()
            .await
            .unwrap()
    }

    pub fn http(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        reqwest::Client::new()
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(self.shared.auth.current())
    }
}

pub fn parent(location: &str) -> String {
    format!("projects/{PROJECT}/locations/{location}")
}

pub fn cluster_name(location: &str, name: &str) -> String {
    format!("{}/clusters/{name}", parent(location))
}

/// The seed's cluster: the deprecated cluster-level node count and config, 3 × n1-standard-1.
pub fn seed_cluster(name: &str) -> Cluster {
    Cluster::new()
        .set_name(name)
        .set_initial_node_count(3)
        .set_node_config(
            NodeConfig::new()
                .set_machine_type("n1-standard-1")
                .set_oauth_scopes(SEED_SCOPES),
        )
}

pub async fn create(client: &ClusterManager, location: &str, cluster: Cluster) -> Operation {
    client
        .create_cluster()
        .set_parent(parent(location))
        .set_cluster(cluster)
        .send()
        .await
        .unwrap()
}

pub async fn get(client: &ClusterManager, location: &str, name: &str) -> Cluster {
    client
        .get_cluster()
        .set_name(cluster_name(location, name))
        .send()
        .await
        .unwrap()
}

/// Polls an operation until DONE, returning every state seen on the way.
pub async fn wait_done(client: &ClusterManager, op: &Operation) -> Vec<Operation> {
    let name = format!("{}/operations/{}", parent(&op.location), op.name);
    let poll = async {
        let mut seen = Vec::new();
        loop {
            let now = client.get_operation().set_name(&name).send().await.unwrap();
            let done = now.status == operation::Status::Done;
            seen.push(now);
            if done {
                return seen;
            }
            tokio::time::sleep(POLL).await;
        }
    };
    tokio::time::timeout(PATIENCE, poll)
        .await
        .expect("the operation never finished")
}

pub fn code(e: &google_cloud_gax::error::Error) -> (Option<u16>, Option<Code>) {
    (e.http_status_code(), e.status().map(|s| s.code))
}

/// The stage each polled state was running, as indexes into the final list of stages.
pub fn stage_order(seen: &[Operation]) -> Vec<usize> {
    seen.iter()
        .filter_map(|op| {
            let stages = &op.progress.as_ref()?.stages;
            stages
                .iter()
                .position(|s| s.status == operation::Status::Running)
        })
        .collect()
}
