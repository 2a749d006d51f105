//! GKE operations: the long-running CREATE_CLUSTER and DELETE_CLUSTER work, its stages and progress
//! metrics, and how GKE reports it.

use jiff::Timestamp;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::locations::Location;
use crate::sim::clock::rfc3339_nanos;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpType {
    CreateCluster,
    DeleteCluster,
}

impl OpType {
    pub fn name(self) -> &'static str {
        match self {
            OpType::CreateCluster => "CREATE_CLUSTER",
            OpType::DeleteCluster => "DELETE_CLUSTER",
        }
    }

    pub fn stages(self) -> &'static [Stage] {
        match self {
            OpType::CreateCluster => CREATE_STAGES,
            OpType::DeleteCluster => DELETE_STAGES,
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
    stage: &'static Stage,
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
            status: OpStatus::Pending,
            stages: op_type
                .stages()
                .iter()
                .map(|stage| StageProgress {
                    stage,
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

    pub fn is_done(&self) -> bool {
        self.status == OpStatus::Done
    }

    pub fn begin_stage(&mut self, index: usize) {
        self.status = OpStatus::Running;
        if let Some(progress) = self.stages.get_mut(index) {
            progress.status = OpStatus::Running;
            self.detail = progress.stage.detail.to_string();
        }
    }

    pub fn step(&mut self, index: usize) {
        if let Some(progress) = self.stages.get_mut(index) {
            progress.done = (progress.done + 1).min(progress.stage.steps);
        }
    }

    pub fn finish_stage(&mut self, index: usize) {
        if let Some(progress) = self.stages.get_mut(index) {
            progress.done = progress.stage.steps;
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

    /// The operation in canonical form (enums as names, int64 as numbers).
    pub fn render(&self, base_url: &str) -> Value {
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
        op.insert(
            "targetLink".into(),
            json!(cluster_link(
                base_url,
                &self.project,
                &self.location,
                &self.cluster
            )),
        );
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
                    "name": p.stage.name,
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
        json!({"name": progress.stage.name, "intValue": progress.done}),
        json!({"name": format!("{}_TOTAL", progress.stage.name), "intValue": progress.stage.steps}),
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
        let json = op.render("http://h");
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
        let json = op.render("http://h");
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
        let json = op.render("http://h");
        assert_eq!(json["error"], json!({"code": 8, "message": "quota"}));
        assert_eq!(json["statusMessage"], "quota");
        assert_eq!(json["progress"]["stages"][1]["status"], "PENDING");
    }
}
