//! The simulated GKE API, driven by the official `google-cloud-container-v1` client (and by raw
//! JSON for what that client never sends) over loopback.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// The seed's request and the `zones` URL form use fields GKE has deprecated but still serves.
#![allow(deprecated)]

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use gantry::sim::SimShared;
use gantry::sim::auth::TokenAuthority;
use gantry::sim::clock::Clock;
use gantry::sim::faults::{Fault, Faults};
use gantry::sim::gke::GkeApi;
use gantry::sim::kube::cluster::ClusterSpec;
use gantry::sim::tls::CertificateAuthority;
use google_cloud_auth::credentials::{
    CacheableResource, Credentials, CredentialsProvider, EntityTag,
};
use google_cloud_auth::errors::CredentialsError;
use google_cloud_container_v1::client::ClusterManager;
use google_cloud_container_v1::model::{
    AcceleratorConfig, Cluster, NodeConfig, NodePool, NodeTaint, Operation, ReleaseChannel,
    cluster, node_taint, operation, release_channel,
};
use google_cloud_gax::error::rpc::Code;
use http::{Extensions, HeaderMap, HeaderValue};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const PROJECT: &str = "demo-project";
const ZONE: &str = "us-central1-a";
const SEED_SCOPES: [&str; 4] = [
    "https://www.googleapis.com/auth/compute",
    "https://www.googleapis.com/auth/devstorage.read_only",
    "https://www.googleapis.com/auth/logging.write",
    "https://www.googleapis.com/auth/monitoring",
];
/// Only a guard against a hung test; nothing asserts how long anything takes.
const PATIENCE: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(5);

#[derive(Debug)]
struct Bearer(String);

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

struct Sim {
    api: Arc<GkeApi>,
    shared: SimShared,
    url: String,
    stop: CancellationToken,
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Sim {
    /// A simulated GKE whose delays are `scale` times GKE's (0.001: a create in about 0.3 s).
    async fn start(scale: f64) -> Self {
        let shared = SimShared {
            clock: Clock::new(scale),
            faults: Arc::new(Faults::default()),
            auth: TokenAuthority::new(None).unwrap(),
            ca: Arc::new(CertificateAuthority::generate().unwrap()),
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

    async fn client(&self) -> ClusterManager {
        self.client_with_token(&self.shared.auth.current()).await
    }

    async fn client_with_token(&self, token: &str) -> ClusterManager {
        ClusterManager::builder()
            .with_endpoint(&self.url)
            .with_credentials(Credentials::from(Bearer(token.to_string())))
            .build()
            .await
            .unwrap()
    }

    fn http(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        reqwest::Client::new()
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(self.shared.auth.current())
    }
}

fn parent(location: &str) -> String {
    format!("projects/{PROJECT}/locations/{location}")
}

fn cluster_name(location: &str, name: &str) -> String {
    format!("{}/clusters/{name}", parent(location))
}

/// The seed's cluster: the deprecated cluster-level node count and config, 3 × n1-standard-1.
fn seed_cluster(name: &str) -> Cluster {
    Cluster::new()
        .set_name(name)
        .set_initial_node_count(3)
        .set_node_config(
            NodeConfig::new()
                .set_machine_type("n1-standard-1")
                .set_oauth_scopes(SEED_SCOPES),
        )
}

async fn create(client: &ClusterManager, location: &str, cluster: Cluster) -> Operation {
    client
        .create_cluster()
        .set_parent(parent(location))
        .set_cluster(cluster)
        .send()
        .await
        .unwrap()
}

async fn get(client: &ClusterManager, location: &str, name: &str) -> Cluster {
    client
        .get_cluster()
        .set_name(cluster_name(location, name))
        .send()
        .await
        .unwrap()
}

/// Polls an operation until DONE, returning every state seen on the way.
async fn wait_done(client: &ClusterManager, op: &Operation) -> Vec<Operation> {
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

fn code(e: &google_cloud_gax::error::Error) -> (Option<u16>, Option<Code>) {
    (e.http_status_code(), e.status().map(|s| s.code))
}

/// The stage each polled state was running, as indexes into the final list of stages.
fn stage_order(seen: &[Operation]) -> Vec<usize> {
    seen.iter()
        .filter_map(|op| {
            let stages = &op.progress.as_ref()?.stages;
            stages
                .iter()
                .position(|s| s.status == operation::Status::Running)
        })
        .collect()
}

#[tokio::test]
async fn seed_cluster_provisions_to_running() {
    let sim = Sim::start(0.001).await;
    let client = sim.client().await;
    let op = create(&client, ZONE, seed_cluster("gantry")).await;
    assert_eq!(op.operation_type, operation::Type::CreateCluster);
    assert_ne!(op.status, operation::Status::Done);
    assert_eq!(op.location, ZONE);
    assert!(
        op.target_link
            .ends_with("/zones/us-central1-a/clusters/gantry"),
        "{}",
        op.target_link
    );
    assert!(op.self_link.starts_with(&sim.url), "{}", op.self_link);

    let seen = wait_done(&client, &op).await;
    let order = stage_order(&seen);
    assert!(
        order.windows(2).all(|w| w[0] <= w[1]),
        "stages out of order: {order:?}"
    );
    let last = seen.last().unwrap();
    assert!(last.error.is_none(), "{:?}", last.error);
    assert!(!last.end_time.is_empty());
    let stages = &last.progress.as_ref().unwrap().stages;
    assert_eq!(
        stages.first().map(|s| s.name.as_str()),
        Some("CLUSTER_CONFIGURING")
    );
    assert!(stages.iter().all(|s| s.status == operation::Status::Done));
    // Each state in progress says what is happening; a DONE one says nothing (gcloud would warn).
    let details: Vec<&str> = seen.iter().map(|op| op.detail.as_str()).collect();
    let (done, in_progress) = details.split_last().unwrap();
    assert!(
        in_progress.iter().all(|d| !d.is_empty()) && done.is_empty(),
        "{details:?}"
    );

    let running = get(&client, ZONE, "gantry").await;
    assert_eq!(running.status, cluster::Status::Running);
    assert!(
        running.endpoint.starts_with("127.0.0.1:"),
        "{}",
        running.endpoint
    );
    let ca = running
        .master_auth
        .as_ref()
        .unwrap()
        .cluster_ca_certificate
        .clone();
    let ca = base64::engine::general_purpose::STANDARD
        .decode(ca)
        .unwrap();
    assert_eq!(String::from_utf8(ca).unwrap(), sim.shared.ca.pem());
    assert_eq!(running.current_node_count, 3);
    assert_eq!(running.zone, ZONE);
    assert_eq!(running.locations, [ZONE]);
    assert_eq!(
        running.current_master_version,
        running.initial_cluster_version
    );
    assert!(!running.create_time.is_empty());
    assert_eq!(
        running.release_channel.as_ref().map(|r| r.channel.clone()),
        Some(release_channel::Channel::Regular)
    );
    assert_eq!(
        running.self_link,
        format!(
            "{}/v1/projects/{PROJECT}/zones/{ZONE}/clusters/gantry",
            sim.url
        )
    );

    let pool = &running.node_pools[0];
    assert_eq!(pool.name, "default-pool");
    assert_eq!(pool.initial_node_count, 3);
    let config = pool.config.as_ref().unwrap();
    assert_eq!(config.machine_type, "n1-standard-1");
    assert_eq!(config.oauth_scopes, SEED_SCOPES);
    assert_eq!(running.node_config.as_ref(), Some(config));

    let runtime = sim.api.runtime(PROJECT, ZONE, "gantry").expect("a runtime");
    assert_eq!(runtime.endpoint(), running.endpoint);
    let listed = sim.api.running().borrow().clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].name.as_str(), listed[0].endpoint.as_str()),
        ("gantry", running.endpoint.as_str())
    );
}

#[tokio::test]
async fn lists_recreates_and_deletes() {
    let sim = Sim::start(0.001).await;
    let client = sim.client().await;
    wait_done(&client, &create(&client, ZONE, seed_cluster("one")).await).await;

    let again = client
        .create_cluster()
        .set_parent(parent(ZONE))
        .set_cluster(seed_cluster("one"))
        .send()
        .await;
    assert_eq!(
        code(&again.unwrap_err()),
        (Some(409), Some(Code::AlreadyExists))
    );

    let all = client
        .list_clusters()
        .set_parent(parent("-"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        all.clusters
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["one"]
    );
    let elsewhere = client
        .list_clusters()
        .set_parent(parent("europe-west4"))
        .send()
        .await
        .unwrap();
    assert!(elsewhere.clusters.is_empty());
    let pools = client
        .list_node_pools()
        .set_parent(cluster_name(ZONE, "one"))
        .send()
        .await
        .unwrap();
    assert_eq!(pools.node_pools.len(), 1);
    let pool = client
        .get_node_pool()
        .set_name(format!(
            "{}/nodePools/default-pool",
            cluster_name(ZONE, "one")
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(
        pool.status,
        google_cloud_container_v1::model::node_pool::Status::Running
    );
    assert!(
        pool.self_link
            .ends_with("/clusters/one/nodePools/default-pool")
    );

    let delete = client
        .delete_cluster()
        .set_name(cluster_name(ZONE, "one"))
        .send()
        .await
        .unwrap();
    assert_eq!(delete.operation_type, operation::Type::DeleteCluster);
    assert!(sim.api.running().borrow().is_empty());
    let seen = wait_done(&client, &delete).await;
    assert!(seen.last().unwrap().error.is_none());
    let gone = client
        .get_cluster()
        .set_name(cluster_name(ZONE, "one"))
        .send()
        .await;
    assert_eq!(code(&gone.unwrap_err()), (Some(404), Some(Code::NotFound)));
    assert!(sim.api.runtime(PROJECT, ZONE, "one").is_none());

    let ops = client
        .list_operations()
        .set_parent(parent(ZONE))
        .send()
        .await
        .unwrap();
    let types: Vec<_> = ops
        .operations
        .iter()
        .map(|o| o.operation_type.clone())
        .collect();
    assert!(
        types.contains(&operation::Type::CreateCluster)
            && types.contains(&operation::Type::DeleteCluster)
    );
}

#[tokio::test]
async fn rejects_bad_requests_as_gke_does() {
    let sim = Sim::start(0.001).await;
    let client = sim.client().await;
    let pool = |config: NodeConfig, nodes: i32| {
        NodePool::new()
            .set_name("p")
            .set_initial_node_count(nodes)
            .set_config(config)
    };
    let gpu = NodeConfig::new()
        .set_machine_type("n1-standard-4")
        .set_accelerators([AcceleratorConfig::new()
            .set_accelerator_type("nvidia-gtx-1080")
            .set_accelerator_count(1)]);
    let bad = [
        (ZONE, seed_cluster("Bad_Name")),
        (ZONE, seed_cluster(&"a".repeat(41))),
        (
            ZONE,
            Cluster::new().set_name("zero").set_initial_node_count(0),
        ),
        (
            ZONE,
            Cluster::new()
                .set_name("neg")
                .set_node_pools([pool(NodeConfig::new(), -1)]),
        ),
        (
            ZONE,
            Cluster::new()
                .set_name("m")
                .set_node_pools([pool(NodeConfig::new().set_machine_type("n9-huge"), 1)]),
        ),
        (
            ZONE,
            Cluster::new()
                .set_name("gpu")
                .set_node_pools([pool(gpu, 1)]),
        ),
        ("mars-north", seed_cluster("bad-location")),
    ];
    for (location, cluster) in bad {
        let name = cluster.name.clone();
        let err = client
            .create_cluster()
            .set_parent(parent(location))
            .set_cluster(cluster)
            .send()
            .await
            .unwrap_err();
        assert_eq!(
            code(&err),
            (Some(400), Some(Code::InvalidArgument)),
            "{name}: {err}"
        );
    }
    let missing = client
        .get_cluster()
        .set_name(cluster_name(ZONE, "nope"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&missing), (Some(404), Some(Code::NotFound)));
    let missing = client
        .get_operation()
        .set_name(format!("{}/operations/operation-0-nope", parent(ZONE)))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&missing), (Some(404), Some(Code::NotFound)));
}

#[tokio::test]
async fn refuses_wrong_tokens_and_denied_permissions() {
    let sim = Sim::start(0.001).await;
    let stranger = sim.client_with_token("ya29.not-the-token").await;
    let err = stranger
        .list_clusters()
        .set_parent(parent("-"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&err), (Some(401), Some(Code::Unauthenticated)));

    sim.shared.faults.set(Fault::GkePermissionDenied);
    let client = sim.client().await;
    let err = client
        .list_clusters()
        .set_parent(parent("-"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&err), (Some(403), Some(Code::PermissionDenied)));
    assert!(
        err.status()
            .unwrap()
            .message
            .contains("container.clusters.list")
    );
}

async fn create_failing(fault: Fault) -> (Sim, Operation, Cluster) {
    let sim = Sim::start(0.001).await;
    sim.shared.faults.set(fault);
    let client = sim.client().await;
    let seen = wait_done(
        &client,
        &create(&client, ZONE, seed_cluster("doomed")).await,
    )
    .await;
    let cluster = get(&client, ZONE, "doomed").await;
    (sim, seen.last().cloned().unwrap(), cluster)
}

#[tokio::test]
async fn quota_fault_ends_in_error_and_the_cluster_can_be_deleted() {
    let (sim, op, cluster) = create_failing(Fault::GkeQuota).await;
    let error = op.error.as_ref().unwrap();
    assert_eq!(error.code, 8);
    assert!(
        error.message.starts_with(
            "Insufficient regional quota to satisfy request: resource \"CPUS\": request requires '3.0' and is short '1.0'"
        ),
        "{}",
        error.message
    );
    assert_eq!(cluster.status, cluster::Status::Error);
    assert_eq!(cluster.status_message, error.message);
    assert!(cluster.endpoint.is_empty());
    assert!(sim.api.running().borrow().is_empty());

    let client = sim.client().await;
    let delete = client
        .delete_cluster()
        .set_name(cluster_name(ZONE, "doomed"))
        .send()
        .await
        .unwrap();
    wait_done(&client, &delete).await;
    let gone = client
        .get_cluster()
        .set_name(cluster_name(ZONE, "doomed"))
        .send()
        .await;
    assert_eq!(code(&gone.unwrap_err()).1, Some(Code::NotFound));
}

#[tokio::test]
async fn create_error_fault_ends_in_error() {
    let (_sim, op, cluster) =
        create_failing(Fault::GkeCreateError("the zone ran out of luck".into())).await;
    let error = op.error.as_ref().unwrap();
    assert_eq!(
        (error.code, error.message.as_str()),
        (13, "the zone ran out of luck")
    );
    assert_eq!(op.status_message, "the zone ran out of luck");
    assert_eq!(cluster.status, cluster::Status::Error);
    assert_eq!(cluster.status_message, "the zone ran out of luck");
}

#[tokio::test]
async fn cancel_and_busy_clusters() {
    // At GKE's own pace nothing finishes during the test, so every state below is stable.
    let sim = Sim::start(1.0).await;
    let client = sim.client().await;
    let op = create(&client, ZONE, seed_cluster("slow")).await;
    let busy = client
        .delete_cluster()
        .set_name(cluster_name(ZONE, "slow"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&busy), (Some(400), Some(Code::FailedPrecondition)));
    assert!(busy.status().unwrap().message.contains(&op.name));

    let op_name = format!("{}/operations/{}", parent(ZONE), op.name);
    client
        .cancel_operation()
        .set_name(&op_name)
        .send()
        .await
        .unwrap();
    let cancelled = client
        .get_operation()
        .set_name(&op_name)
        .send()
        .await
        .unwrap();
    assert_eq!(cancelled.status, operation::Status::Done);
    assert_eq!(cancelled.error.as_ref().map(|e| e.code), Some(1));
    assert_eq!(
        get(&client, ZONE, "slow").await.status,
        cluster::Status::Error
    );
    let again = client
        .cancel_operation()
        .set_name(&op_name)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&again).1, Some(Code::FailedPrecondition));

    let delete = client
        .delete_cluster()
        .set_name(cluster_name(ZONE, "slow"))
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status, operation::Status::Running);
    assert_eq!(
        get(&client, ZONE, "slow").await.status,
        cluster::Status::Stopping
    );
    let twice = client
        .delete_cluster()
        .set_name(cluster_name(ZONE, "slow"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&twice), (Some(400), Some(Code::FailedPrecondition)));
    let recreate = client
        .create_cluster()
        .set_parent(parent(ZONE))
        .set_cluster(seed_cluster("slow"))
        .send()
        .await;
    assert_eq!(code(&recreate.unwrap_err()).1, Some(Code::AlreadyExists));
}

#[tokio::test]
async fn regional_clusters_span_three_zones() {
    let sim = Sim::start(0.001).await;
    let client = sim.client().await;
    let gpu = NodeConfig::new()
        .set_machine_type("n1-standard-8")
        .set_spot(true)
        .set_accelerators([AcceleratorConfig::new()
            .set_accelerator_type("nvidia-tesla-t4")
            .set_accelerator_count(2)])
        .set_taints([NodeTaint::new()
            .set_key("nvidia.com/gpu")
            .set_value("present")
            .set_effect(node_taint::Effect::NoSchedule)]);
    let cluster = Cluster::new()
        .set_name("regional")
        .set_release_channel(ReleaseChannel::new().set_channel(release_channel::Channel::Rapid))
        .set_node_pools([NodePool::new()
            .set_name("gpus")
            .set_initial_node_count(2)
            .set_config(gpu)]);
    let op = create(&client, "us-central1", cluster).await;
    wait_done(&client, &op).await;
    let running = get(&client, "us-central1", "regional").await;
    assert_eq!(running.current_node_count, 6);
    assert_eq!(
        running.locations,
        ["us-central1-a", "us-central1-b", "us-central1-c"]
    );
    assert_eq!(
        running.release_channel.unwrap().channel,
        release_channel::Channel::Rapid
    );
    let config = running.node_pools[0].config.clone().unwrap();
    assert_eq!(config.accelerators[0].accelerator_count, 2);
    assert_eq!(config.taints[0].effect, node_taint::Effect::NoSchedule);
    assert!(config.spot);
    let spec = sim
        .api
        .runtime(PROJECT, "us-central1", "regional")
        .unwrap()
        .state()
        .spec
        .clone();
    assert_eq!(
        spec.node_pools[0].accelerator,
        Some(("nvidia-tesla-t4".to_string(), 2))
    );
    assert_eq!(spec.node_pools[0].taints[0].2, "NoSchedule");
}

#[tokio::test]
async fn zones_form_snake_case_and_enum_numbers() {
    // At GKE's pace the cluster stays PROVISIONING throughout.
    let sim = Sim::start(1.0).await;
    let zone = "us-central1-b";
    let body = json!({"cluster": {
        "name": "raw",
        "release_channel": {"channel": 3},
        "node_pools": [{"name": "pool", "initial_node_count": "2", "config": {
            "machine_type": "n1-standard-4",
            "labels": {"team_name": "ml"},
            "accelerators": [{"accelerator_type": "nvidia-tesla-t4", "accelerator_count": "1",
                "gpu_driver_installation_config": {"gpu_driver_version": 3}}]}}]
    }});
    let clusters = format!("/v1/projects/{PROJECT}/zones/{zone}/clusters");
    let response = sim
        .http(reqwest::Method::POST, &clusters)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let op: Value = response.json().await.unwrap();
    assert_eq!(op["operationType"], "CREATE_CLUSTER");
    assert_eq!(op["zone"], zone);

    let path = format!("{clusters}/raw");
    let cluster: Value = sim
        .http(reqwest::Method::GET, &path)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(cluster["releaseChannel"], json!({"channel": "STABLE"}));
    assert_eq!(cluster["status"], "PROVISIONING");
    let config = &cluster["nodePools"][0]["config"];
    assert_eq!(config["labels"], json!({"team_name": "ml"}));
    assert_eq!(config["accelerators"][0]["acceleratorCount"], "1");
    assert_eq!(
        config["accelerators"][0]["gpuDriverInstallationConfig"]["gpuDriverVersion"],
        "LATEST"
    );
    assert_eq!(cluster["nodePools"][0]["initialNodeCount"], 2);

    // What the official client adds to every request: int enums, empty deprecated fields.
    let numbered = format!("{path}?projectId=&zone=&clusterId=&%24alt=json%3Benum-encoding%3Dint");
    let cluster: Value = sim
        .http(reqwest::Method::GET, &numbered)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(cluster["releaseChannel"]["channel"], 3);
    assert_eq!(cluster["status"], 1);

    let client = sim.client().await;
    let by_zone = client
        .get_cluster()
        .set_project_id(PROJECT)
        .set_zone(zone)
        .set_cluster_id("raw")
        .send()
        .await
        .unwrap();
    assert_eq!(by_zone.name, "raw");
    let listed = client
        .list_clusters()
        .set_project_id(PROJECT)
        .set_zone(zone)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.clusters.len(), 1);
    let op_name = op["name"].as_str().unwrap();
    let by_zone = client
        .get_operation()
        .set_project_id(PROJECT)
        .set_zone(zone)
        .set_operation_id(op_name)
        .send()
        .await
        .unwrap();
    assert_eq!(by_zone.name, op_name);

    let unknown = sim
        .http(reqwest::Method::GET, "/v1/projects/p/regions/r/clusters")
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let error: Value = unknown.json().await.unwrap();
    assert_eq!(error["error"]["status"], "NOT_FOUND");
}

#[tokio::test]
async fn create_running_skips_the_wait() {
    let sim = Sim::start(1.0).await;
    let mut running = sim.api.running();
    sim.api
        .create_running(ClusterSpec::seed(PROJECT, ZONE, "seeded"))
        .await
        .unwrap();
    assert!(running.has_changed().unwrap());
    let listed = running.borrow_and_update().clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].project.as_str(), listed[0].location.as_str()),
        (PROJECT, ZONE)
    );

    let client = sim.client().await;
    let cluster = get(&client, ZONE, "seeded").await;
    assert_eq!(cluster.status, cluster::Status::Running);
    assert_eq!(cluster.endpoint, listed[0].endpoint);
    assert_eq!(cluster.current_node_count, 3);
    let ops = client
        .list_operations()
        .set_parent(parent("-"))
        .send()
        .await
        .unwrap();
    assert_eq!(ops.operations.len(), 1);
    assert_eq!(ops.operations[0].status, operation::Status::Done);
    assert!(
        sim.api
            .create_running(ClusterSpec::seed(PROJECT, ZONE, "seeded"))
            .await
            .is_err()
    );

    sim.stop.cancel();
    running.changed().await.unwrap();
    assert!(running.borrow().is_empty());
}
