//! GKE operations: long-running work on a cluster (creating or deleting it, changing its node
//! pools, upgrading its control plane), its stages and progress metrics, and how GKE reports it.

use jiff::Timestamp;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::locations::Location;
use crate::clock::rfc3339_nanos;

/// One stage of an operation: its progress metric name, what `detail` says meanwhile, how long it
/// takes in simulated seconds, and in how many steps its metric counts up.
#[derive(Debug)]
pub struct Stage {
    pub name: &'static str,
    pub detail: &'static str,
    pub secs: f64,
    pub steps: i64,
}

/// About 4½ minutes in all, as a small GKE cluster takes.
pub const CREATE_STAGES: &[Stage] = &[
    Stage {
        name: "CLUSTER_CONFIGURING",
        detail: "Cluster is being configured",
        secs: 40.0,
        steps: 8,
    },
    Stage {
        name: "CLUSTER_DEPLOYING",
        detail: "Cluster is being deployed",
        secs: 110.0,
        steps: 12,
    },
    Stage {
        name: "NODE_POOLS_DEPLOYING",
        detail: "Node pools are being created",
        secs: 70.0,
        steps: 6,
    },
    Stage {
        name: "CLUSTER_HEALTHCHECKING",
        detail: "Cluster is being health-checked (master is healthy)",
        secs: 50.0,
        steps: 2,
    },
];
/// The stage at the end of which the control plane (the Kubernetes API server) is up.
pub const CONTROL_PLANE_STAGE: usize = 1;
/// The stage a create fails at under the quota and create-error faults: creating instance groups.
pub const FAILING_STAGE: usize = 1;

/// About 2½ minutes, as GKE takes to delete a small cluster.
pub const DELETE_STAGES: &[Stage] = &[
    Stage {
        name: "NODE_POOLS_DELETING",
        detail: "Node pools are being deleted",
        secs: 70.0,
        steps: 6,
    },
    Stage {
        name: "CLUSTER_DELETING",
        detail: "Cluster is being deleted",
        secs: 80.0,
        steps: 8,
    },
];

/// Operation types as google.container.v1.Operation.Type names them. Labels and autoscaling
/// changes are UPDATE_CLUSTER (SET_LABELS is documented as unused); node pool updates are
/// UPGRADE_NODES, which GKE uses for "most forms of updates to node pools".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpType {
    CreateCluster,
    DeleteCluster,
    UpgradeMaster,
    UpgradeNodes,
    UpdateCluster,
    CreateNodePool,
    DeleteNodePool,
    SetNodePoolSize,
}

impl OpType {
    pub fn name(self) -> &'static str {
        match self {
            OpType::CreateCluster => "CREATE_CLUSTER",
            OpType::DeleteCluster => "DELETE_CLUSTER",
            OpType::UpgradeMaster => "UPGRADE_MASTER",
            OpType::UpgradeNodes => "UPGRADE_NODES",
            OpType::UpdateCluster => "UPDATE_CLUSTER",
            OpType::CreateNodePool => "CREATE_NODE_POOL",
            OpType::DeleteNodePool => "DELETE_NODE_POOL",
            OpType::SetNodePoolSize => "SET_NODE_POOL_SIZE",
        }
    }

    /// The stages a create or delete goes through; other operations are given theirs.
    pub fn stages(self) -> &'static [Stage] {
        match self {
            OpType::CreateCluster => CREATE_STAGES,
            OpType::DeleteCluster => DELETE_STAGES,
            _ => &[],
        }
    }

    /// How GKE refuses a request while this operation runs: "Operation X is currently {doing}
    /// cluster C. Please wait and try again once it is done."
    pub fn doing(self) -> &'static str {
        match self {
            OpType::CreateCluster => "creating",
            OpType::DeleteCluster => "deleting",
            OpType::UpgradeMaster => "upgrading",
            OpType::UpgradeNodes => "upgrading a node pool for",
            OpType::UpdateCluster => "updating",
            OpType::CreateNodePool => "creating a node pool for",
            OpType::DeleteNodePool => "deleting a node pool for",
            OpType::SetNodePoolSize => "resizing a node pool for",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpStatus {
    Pending,
    Running,
    Done,
}

impl OpStatus {
    pub fn name(self) -> &'static str {
        match self {
            OpStatus::Pending => "PENDING",
            OpStatus::Running => "RUNNING",
            OpStatus::Done => "DONE",
        }
    }
}

#[derive(Debug, Clone)]
struct StageProgress {
    name: &'static str,
    detail: String,
    total: i64,
    done: i64,
    status: OpStatus,
}

#[derive(Debug)]
pub struct Operation {
    pub name: String,
    pub project: String,
    pub location: Location,
    pub op_type: OpType,
    /// The cluster the operation works on.
    pub cluster: String,
    /// The node pool it works on, if one: its link is then the operation's targetLink.
    pub pool: Option<String>,
    pub status: OpStatus,
    stages: Vec<StageProgress>,
    detail: String,
    start_time: Timestamp,
    end_time: Option<Timestamp>,
    /// google.rpc.Status code and message of a failed operation.
    pub error: Option<(i32, String)>,
    /// Cancelled by a `:cancel` request or when the simulator stops.
    pub cancel: CancellationToken,
}

impl Operation {
    pub fn new(
        project: &str,
        location: Location,
        op_type: OpType,
        cluster: &str,
        cancel: CancellationToken,
    ) -> Self {
        let start_time = Timestamp::now();
        let name = format!(
            "operation-{}-{}",
            start_time.as_millisecond(),
            uuid::Uuid::new_v4()
        );
        Self {
            name,
            project: project.to_string(),
            location,
            op_type,
            cluster: cluster.to_string(),
            pool: None,
            status: OpStatus::Pending,
            stages: op_type
                .stages()
                .iter()
                .map(|stage| StageProgress {
                    name: stage.name,
                    detail: stage.detail.to_string(),
                    total: stage.steps,
                    done: 0,
                    status: OpStatus::Pending,
                })
                .collect(),
            detail: String::new(),
            start_time,
            end_time: None,
            error: None,
            cancel,
        }
    }

    /// The operation works on this node pool.
    pub fn on_pool(mut self, pool: &str) -> Self {
        self.pool = Some(pool.to_string());
        self
    }

    /// Gives the operation one stage of `total` steps (its only one, unless called again).
    pub fn with_stage(mut self, name: &'static str, detail: String, total: i64) -> Self {
        self.stages.push(StageProgress {
            name,
            detail,
            total: total.max(1),
            done: 0,
            status: OpStatus::Pending,
        });
        self
    }

    pub fn is_done(&self) -> bool {
        self.status == OpStatus::Done
    }

    pub fn begin_stage(&mut self, index: usize) {
        self.status = OpStatus::Running;
        if let Some(progress) = self.stages.get_mut(index) {
            progress.status = OpStatus::Running;
            self.detail = progress.detail.clone();
        }
    }

    pub fn step(&mut self, index: usize) {
        if let Some(progress) = self.stages.get_mut(index) {
            progress.done = (progress.done + 1).min(progress.total);
        }
    }

    pub fn finish_stage(&mut self, index: usize) {
        if let Some(progress) = self.stages.get_mut(index) {
            progress.done = progress.total;
            progress.status = OpStatus::Done;
        }
    }

    /// Ends the operation; a failed one keeps its stages and detail where they stopped.
    pub fn finish(&mut self, error: Option<(i32, String)>) {
        if error.is_none() {
            for index in 0..self.stages.len() {
                self.finish_stage(index);
            }
            // gcloud shows a DONE operation's detail as a warning, so GKE leaves it empty.
            self.detail.clear();
        }
        self.status = OpStatus::Done;
        self.end_time = Some(Timestamp::now());
        self.error = error;
    }

    /// The operation in canonical form (enums as names, int64 as numbers), its free text
    /// poisoned under the `hostile-strings` fault.
    pub fn render_with(&self, base_url: &str, hostile: bool) -> Value {
        let mut op = self.render_plain(base_url);
        if hostile {
            crate::hostile::poison_at(&mut op, &["detail"], false);
            crate::hostile::poison_at(&mut op, &["statusMessage"], false);
            crate::hostile::poison_at(&mut op, &["error", "message"], false);
        }
        op
    }

    fn render_plain(&self, base_url: &str) -> Value {
        let mut op = Map::new();
        op.insert("name".into(), json!(self.name));
        op.insert("zone".into(), json!(self.location.as_str()));
        op.insert("location".into(), json!(self.location.as_str()));
        op.insert("operationType".into(), json!(self.op_type.name()));
        op.insert("status".into(), json!(self.status.name()));
        if !self.detail.is_empty() {
            op.insert("detail".into(), json!(self.detail));
        }
        op.insert("selfLink".into(), json!(self.self_link(base_url)));
        let cluster = cluster_link(base_url, &self.project, &self.location, &self.cluster);
        let target = match &self.pool {
            Some(pool) => format!("{cluster}/nodePools/{pool}"),
            None => cluster,
        };
        op.insert("targetLink".into(), json!(target));
        op.insert("startTime".into(), json!(rfc3339_nanos(self.start_time)));
        if let Some(end) = self.end_time {
            op.insert("endTime".into(), json!(rfc3339_nanos(end)));
        }
        if let Some((code, message)) = &self.error {
            op.insert("statusMessage".into(), json!(message));
            op.insert("error".into(), json!({"code": code, "message": message}));
        }
        op.insert("progress".into(), self.progress());
        Value::Object(op)
    }

    fn self_link(&self, base_url: &str) -> String {
        format!(
            "{}/operations/{}",
            location_link(base_url, &self.project, &self.location),
            self.name
        )
    }

    fn progress(&self) -> Value {
        let stages: Vec<Value> = self
            .stages
            .iter()
            .map(|p| {
                json!({
                    "name": p.name,
                    "status": p.status.name(),
                    "metrics": stage_metrics(p),
                })
            })
            .collect();
        let metrics: Vec<Value> = self
            .stages
            .iter()
            .filter(|p| p.status != OpStatus::Pending)
            .flat_map(stage_metrics)
            .collect();
        json!({"status": self.status.name(), "metrics": metrics, "stages": stages})
    }
}

/// GKE counts each stage as a metric and its `_TOTAL`.
fn stage_metrics(progress: &StageProgress) -> Vec<Value> {
    vec![
        json!({"name": progress.name, "intValue": progress.done}),
        json!({"name": format!("{}_TOTAL", progress.name), "intValue": progress.total}),
    ]
}

/// `…/v1/projects/P/zones/Z` for a zone, `…/v1/projects/P/locations/R` for a region, as GKE links.
pub fn location_link(base_url: &str, project: &str, location: &Location) -> String {
    let collection = if location.is_zone() {
        "zones"
    } else {
        "locations"
    };
    format!(
        "{base_url}/v1/projects/{project}/{collection}/{}",
        location.as_str()
    )
}

pub fn cluster_link(base_url: &str, project: &str, location: &Location, cluster: &str) -> String {
    format!(
        "{}/clusters/{cluster}",
        location_link(base_url, project, location)
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn op() -> Operation {
        let location = Location::parse("us-central1-a").unwrap();
        Operation::new(
            "p",
            location,
            OpType::CreateCluster,
            "c",
            CancellationToken::new(),
        )
    }

    #[test]
    fn progress_follows_the_stages() {
        let mut op = op();
        assert!(op.name.starts_with("operation-"));
        op.begin_stage(0);
        op.step(0);
        let json = op.render_with("http://h", false);
        assert_eq!(json["status"], "RUNNING");
        assert_eq!(json["detail"], CREATE_STAGES[0].detail);
        assert_eq!(json["progress"]["stages"][0]["status"], "RUNNING");
        assert_eq!(json["progress"]["stages"][1]["status"], "PENDING");
        assert_eq!(
            json["progress"]["metrics"][0],
            json!({"name": "CLUSTER_CONFIGURING", "intValue": 1})
        );
        assert_eq!(
            json["targetLink"],
            "http://h/v1/projects/p/zones/us-central1-a/clusters/c"
        );
        op.finish(None);
        let json = op.render_with("http://h", false);
        assert_eq!(json["status"], "DONE");
        assert!(json.get("detail").is_none());
        assert!(json["endTime"].is_string());
        assert!(
            json["progress"]["stages"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["status"] == "DONE")
        );
    }

    #[test]
    fn failures_carry_a_status() {
        let mut op = op();
        op.begin_stage(0);
        op.finish(Some((8, "quota".into())));
        let json = op.render_with("http://h", false);
        assert_eq!(json["error"], json!({"code": 8, "message": "quota"}));
        assert_eq!(json["statusMessage"], "quota");
        assert_eq!(json["progress"]["stages"][1]["status"], "PENDING");
    }

    #[test]
    fn node_pool_operations_target_their_pool() {
        let location = Location::parse("us-central1").unwrap();
        let mut op = Operation::new(
            "p",
            location,
            OpType::SetNodePoolSize,
            "c",
            CancellationToken::new(),
        )
        .on_pool("gpu")
        .with_stage("NODE_POOL_RESIZING", "Resizing".into(), 3);
        op.begin_stage(0);
        op.step(0);
        let json = op.render_with("http://h", false);
        assert_eq!(json["operationType"], "SET_NODE_POOL_SIZE");
        assert_eq!(
            json["targetLink"],
            "http://h/v1/projects/p/locations/us-central1/clusters/c/nodePools/gpu"
        );
        assert_eq!(json["detail"], "Resizing");
        assert_eq!(
            json["progress"]["metrics"],
            json!([{"name": "NODE_POOL_RESIZING", "intValue": 1},
                   {"name": "NODE_POOL_RESIZING_TOTAL", "intValue": 3}])
        );
    }
}
