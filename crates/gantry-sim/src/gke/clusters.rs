//! The registry of clusters and operations, and how GKE reports a cluster and its node pools.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine;
use jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::errors::GkeError;
use super::locations::Location;
use super::model::ClusterPlan;
use super::operations::{Operation, cluster_link};
use crate::kube::cluster::{ClusterRuntime, ClusterSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterStatus {
    Provisioning,
    Running,
    /// An operation changes the running cluster; its API server stays up.
    Reconciling,
    Stopping,
    Error,
}

impl ClusterStatus {
    pub fn name(self) -> &'static str {
        match self {
            ClusterStatus::Provisioning => "PROVISIONING",
            ClusterStatus::Running => "RUNNING",
            ClusterStatus::Reconciling => "RECONCILING",
            ClusterStatus::Stopping => "STOPPING",
            ClusterStatus::Error => "ERROR",
        }
    }

    /// Node pools follow their cluster, except the one an operation works on; while another
    /// pool changes, the rest keep RUNNING.
    fn pool_status(self) -> &'static str {
        match self {
            ClusterStatus::Reconciling => "RUNNING",
            other => other.name(),
        }
    }

    /// Whether the cluster's nodes exist (and so count in `currentNodeCount`).
    fn has_nodes(self) -> bool {
        matches!(
            self,
            ClusterStatus::Running | ClusterStatus::Reconciling | ClusterStatus::Stopping
        )
    }

    /// Whether the Kubernetes API server serves (from RUNNING until deletion starts).
    pub fn serves(self) -> bool {
        matches!(self, ClusterStatus::Running | ClusterStatus::Reconciling)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClusterKey {
    pub project: String,
    pub location: String,
    pub name: String,
}

impl ClusterKey {
    pub fn new(project: &str, location: &str, name: &str) -> Self {
        Self {
            project: project.to_string(),
            location: location.to_string(),
            name: name.to_string(),
        }
    }

    /// `projects/P/locations/L/clusters/C`, as GKE names a cluster in messages.
    pub fn path(&self) -> String {
        format!(
            "projects/{}/locations/{}/clusters/{}",
            self.project, self.location, self.name
        )
    }
}

#[derive(Debug)]
pub struct ClusterRecord {
    pub spec: ClusterSpec,
    pub location: Location,
    /// The cluster as requested, with defaults; output fields are added when it is reported.
    pub cluster: Map<String, Value>,
    pub status: ClusterStatus,
    pub status_message: String,
    pub create_time: Timestamp,
    pub runtime: Option<Arc<ClusterRuntime>>,
    /// The operation working on the cluster: GKE runs one at a time per cluster.
    pub busy_with: Option<String>,
    /// The node pool that operation works on and the status it reports meanwhile
    /// (PROVISIONING, RECONCILING or STOPPING).
    pub pool_work: Option<(String, &'static str)>,
    /// Instances the cluster autoscaler asked for that have not registered as nodes yet: they
    /// count against the project's quotas already.
    pub booting: Vec<Booting>,
    id: String,
}

/// One instance on its way to becoming a node.
#[derive(Debug, Clone, PartialEq)]
pub struct Booting {
    pub pool: String,
    pub zone: String,
    pub gpus: u64,
}

impl ClusterRecord {
    pub fn new(plan: ClusterPlan, operation: &str) -> Self {
        Self {
            spec: plan.spec,
            location: plan.location,
            cluster: plan.cluster,
            status: ClusterStatus::Provisioning,
            status_message: String::new(),
            create_time: Timestamp::now(),
            runtime: None,
            busy_with: Some(operation.to_string()),
            pool_work: None,
            booting: Vec::new(),
            id: format!(
                "{}{}",
                uuid::Uuid::new_v4().simple(),
                uuid::Uuid::new_v4().simple()
            ),
        }
    }

    pub fn key(&self) -> ClusterKey {
        ClusterKey::new(&self.spec.project, self.location.as_str(), &self.spec.name)
    }

    /// The nodes that exist: those the cluster's API server knows, else those its pools hold.
    fn node_count(&self) -> u32 {
        if let Some(runtime) = &self.runtime {
            return u32::try_from(runtime.node_count()).unwrap_or(u32::MAX);
        }
        self.spec
            .node_pools
            .iter()
            .map(|p| {
                p.nodes_per_zone
                    .saturating_mul(u32::try_from(p.zones.len()).unwrap_or(u32::MAX))
            })
            .sum()
    }
}

/// What a report needs besides the record: the API's own URL and the cluster CA.
pub struct ReportContext<'a> {
    pub base_url: &'a str,
    pub ca_pem: &'a str,
}

/// The cluster as GKE reports it, in canonical form.
pub fn render_cluster(record: &ClusterRecord, ctx: &ReportContext<'_>) -> Value {
    let mut cluster = record.cluster.clone();
    let spec = &record.spec;
    let self_link = cluster_link(ctx.base_url, &spec.project, &record.location, &spec.name);
    let pools: Vec<Value> = cluster
        .get("nodePools")
        .and_then(Value::as_array)
        .map(|pools| {
            pools
                .iter()
                .map(|p| render_pool(record, p, &self_link))
                .collect()
        })
        .unwrap_or_default();
    if let Some(first) = pools.first().and_then(|p| p.get("config")) {
        // The deprecated cluster-level nodeConfig mirrors the first pool's.
        cluster.insert("nodeConfig".into(), first.clone());
    }
    let set = |cluster: &mut Map<String, Value>, key: &str, value: Value| {
        cluster.insert(key.to_string(), value);
    };
    set(&mut cluster, "nodePools", Value::Array(pools));
    set(&mut cluster, "name", json!(spec.name));
    set(&mut cluster, "id", json!(record.id));
    // GKE fills the deprecated `zone` with the location, a region for regional clusters.
    set(&mut cluster, "zone", json!(record.location.as_str()));
    set(&mut cluster, "location", json!(record.location.as_str()));
    set(&mut cluster, "status", json!(record.status.name()));
    let fingerprint = label_fingerprint(cluster.get("resourceLabels"));
    set(&mut cluster, "labelFingerprint", json!(fingerprint));
    if !record.status_message.is_empty() {
        set(&mut cluster, "statusMessage", json!(record.status_message));
    }
    set(&mut cluster, "selfLink", json!(self_link));
    set(
        &mut cluster,
        "createTime",
        json!(
            record
                .create_time
                .strftime("%Y-%m-%dT%H:%M:%S+00:00")
                .to_string()
        ),
    );
    set(&mut cluster, "currentMasterVersion", json!(spec.version));
    // Always there, as on GKE: gcloud's cluster list compares it with the master's.
    set(&mut cluster, "currentNodeVersion", json!(spec.version));
    if record.status.has_nodes() {
        set(&mut cluster, "currentNodeCount", json!(record.node_count()));
    }
    if let Some(runtime) = &record.runtime {
        set(&mut cluster, "endpoint", json!(runtime.endpoint()));
        let ca = base64::engine::general_purpose::STANDARD.encode(ctx.ca_pem);
        let auth = cluster.entry("masterAuth").or_insert_with(|| json!({}));
        if let Some(auth) = auth.as_object_mut() {
            auth.insert("clusterCaCertificate".into(), json!(ca));
        }
    }
    fill_network_defaults(&mut cluster);
    Value::Object(cluster)
}

/// The fingerprint a SetLabels request must quote: GKE's for no labels is `a9dc16a7`; others are
/// a hash of the sorted labels, so any change of labels changes it.
pub fn label_fingerprint(labels: Option<&Value>) -> String {
    let labels: Vec<(&String, &Value)> = labels
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default();
    if labels.is_empty() {
        return "a9dc16a7".to_string();
    }
    let hash = labels
        .iter()
        .flat_map(|(k, v)| {
            let v = v.as_str().unwrap_or_default();
            k.bytes().chain([b'=']).chain(v.bytes()).chain([b'\n'])
        })
        .fold(2166136261u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(16777619)
        });
    format!("{hash:08x}")
}

/// What GKE reports for a cluster created without network settings.
fn fill_network_defaults(cluster: &mut Map<String, Value>) {
    let defaults = [
        ("network", "default"),
        ("subnetwork", "default"),
        ("clusterIpv4Cidr", "10.4.0.0/14"),
        ("servicesIpv4Cidr", "34.118.224.0/20"),
        ("loggingService", "logging.googleapis.com/kubernetes"),
        ("monitoringService", "monitoring.googleapis.com/kubernetes"),
    ];
    for (key, value) in defaults {
        cluster.entry(key).or_insert_with(|| json!(value));
    }
}

fn render_pool(record: &ClusterRecord, pool: &Value, cluster_link: &str) -> Value {
    let mut pool = pool.as_object().cloned().unwrap_or_default();
    let name = pool
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let zones: Vec<String> = pool
        .get("locations")
        .and_then(Value::as_array)
        .map(|z| {
            z.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let groups: Vec<String> = zones
        .iter()
        .map(|zone| {
            format!(
                "https://www.googleapis.com/compute/v1/projects/{}/zones/{zone}/instanceGroupManagers/{}-grp",
                record.spec.project,
                crate::kube::nodes::instance_group(&record.spec.name, &name, zone)
            )
        })
        .collect();
    // A pool whose creation failed keeps the failure as its statusMessage, and is in ERROR.
    let failed = pool.get("statusMessage").is_some_and(Value::is_string);
    let status = match &record.pool_work {
        Some((busy, status)) if *busy == name => status,
        _ if failed => "ERROR",
        _ => record.status.pool_status(),
    };
    pool.insert("status".into(), json!(status));
    pool.insert("version".into(), json!(record.spec.version));
    pool.insert(
        "selfLink".into(),
        json!(format!("{cluster_link}/nodePools/{name}")),
    );
    if record.status.has_nodes() {
        pool.insert("instanceGroupUrls".into(), json!(groups));
    }
    Value::Object(pool)
}

/// Everything the simulated GKE knows. Lives behind one mutex, never held across an await.
#[derive(Debug, Default)]
pub struct Registry {
    pub clusters: BTreeMap<ClusterKey, ClusterRecord>,
    pub operations: BTreeMap<String, Operation>,
}

impl Registry {
    /// Finds a cluster; location `-` means any location of the project, as in GKE.
    pub fn find(
        &self,
        project: &str,
        location: &str,
        name: &str,
    ) -> Result<&ClusterRecord, GkeError> {
        self.clusters
            .values()
            .find(|c| {
                c.spec.project == project
                    && (location == "-" || c.location.as_str() == location)
                    && c.spec.name == name
            })
            .ok_or_else(|| cluster_not_found(project, location, name))
    }

    pub fn find_mut(&mut self, key: &ClusterKey) -> Option<&mut ClusterRecord> {
        self.clusters.get_mut(key)
    }

    pub fn list(&self, project: &str, location: &str) -> impl Iterator<Item = &ClusterRecord> {
        self.clusters.values().filter(move |c| {
            c.spec.project == project && (location == "-" || c.location.as_str() == location)
        })
    }

    /// Refuses a change while another operation works on the cluster, as GKE does.
    pub fn check_idle(&self, record: &ClusterRecord) -> Result<(), GkeError> {
        let Some(busy) = &record.busy_with else {
            return Ok(());
        };
        let doing = self
            .operations
            .get(busy)
            .map_or("updating", |op| op.op_type.doing());
        Err(GkeError::failed_precondition(format!(
            "Operation {busy} is currently {doing} cluster {}. Please wait and try again once it \
             is done.",
            record.spec.name
        )))
    }

    pub fn operation(
        &self,
        project: &str,
        location: &str,
        name: &str,
    ) -> Result<&Operation, GkeError> {
        self.operations
            .get(name)
            .filter(|op| {
                op.project == project && (location == "-" || op.location.as_str() == location)
            })
            .ok_or_else(|| {
                GkeError::not_found(format!(
                    "Not found: projects/{project}/locations/{location}/operations/{name}."
                ))
            })
    }
}

pub fn cluster_not_found(project: &str, location: &str, name: &str) -> GkeError {
    GkeError::not_found(format!(
        "Not found: projects/{project}/locations/{location}/clusters/{name}.\nCould not find \
         [{name}] in [{location}]."
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::gke::model::plan_cluster;

    fn record(location: &str) -> ClusterRecord {
        let body = json!({"cluster": {"name": "c", "initialNodeCount": 2}});
        let plan = plan_cluster("p", Location::parse(location).unwrap(), body).unwrap();
        ClusterRecord::new(plan, "operation-1")
    }

    #[test]
    fn reports_provisioning_then_running() {
        let ctx = ReportContext {
            base_url: "http://h",
            ca_pem: "PEM",
        };
        let mut rec = record("us-central1");
        let json = render_cluster(&rec, &ctx);
        assert_eq!(json["status"], "PROVISIONING");
        assert_eq!(json["zone"], "us-central1");
        assert!(json.get("currentNodeCount").is_none());
        assert!(json.get("endpoint").is_none());
        assert_eq!(json["nodePools"][0]["status"], "PROVISIONING");
        assert_eq!(json["nodeConfig"], json["nodePools"][0]["config"]);
        assert_eq!(
            json["selfLink"],
            "http://h/v1/projects/p/locations/us-central1/clusters/c"
        );
        rec.status = ClusterStatus::Running;
        let json = render_cluster(&rec, &ctx);
        assert_eq!(json["currentNodeCount"], 6);
        assert_eq!(json["labelFingerprint"], "a9dc16a7");
        rec.status = ClusterStatus::Reconciling;
        rec.pool_work = Some(("default-pool".into(), "RECONCILING"));
        let json = render_cluster(&rec, &ctx);
        assert_eq!(json["status"], "RECONCILING");
        assert_eq!(json["nodePools"][0]["status"], "RECONCILING");
        assert_eq!(json["currentNodeCount"], 6);
        assert_eq!(
            json["nodePools"][0]["instanceGroupUrls"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
    }

    #[test]
    fn fingerprints_change_with_the_labels() {
        let a = label_fingerprint(Some(&json!({"team": "ml"})));
        let b = label_fingerprint(Some(&json!({"team": "ops"})));
        assert_ne!(a, b);
        assert_eq!(a.len(), 8);
        assert_eq!(label_fingerprint(Some(&json!({}))), "a9dc16a7");
        assert_eq!(a, label_fingerprint(Some(&json!({"team": "ml"}))));
    }

    #[test]
    fn finds_clusters_in_any_location() {
        let mut registry = Registry::default();
        let rec = record("us-central1-a");
        registry.clusters.insert(rec.key(), rec);
        assert!(registry.find("p", "-", "c").is_ok());
        assert!(registry.find("p", "us-central1-a", "c").is_ok());
        assert_eq!(
            registry.find("p", "us-east1", "c").unwrap_err().status,
            "NOT_FOUND"
        );
        assert_eq!(registry.list("p", "-").count(), 1);
        assert_eq!(registry.list("other", "-").count(), 0);
    }
}
