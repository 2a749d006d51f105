//! Server-side printing: the `meta.k8s.io/v1` Table that kube-apiserver v1.32 returns when
//! kubectl asks for `as=Table` (`kubectl get`, `get -o wide`, `get -w`).
//!
//! The columns and cell formats follow `pkg/printers/internalversion/printers.go`; the
//! apiserver always generates the wide table and kubectl hides the priority-1 columns
//! unless `-o wide` is given. Kinds without a printer get the default convertor's
//! `Name`, `Created At` columns.

use http::HeaderMap;
use jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::Params;
use crate::k8s::age::human_duration;
use crate::sim::kube::resources::{Kind, ResourceType};
use crate::sim::kube::store::Obj;

const TABLE_GROUP: &str = "meta.k8s.io";
const TABLE_API_VERSION: &str = "meta.k8s.io/v1";

/// Whether the Accept header asks for `as=Table` (meta.k8s.io v1 or v1beta1).
///
/// Like the apiserver's content negotiation, the first acceptable clause (highest `q`
/// first, header order otherwise) decides: a JSON clause without `as` means a plain
/// object, a clause naming a Table means a Table, clauses we cannot serve are skipped.
pub fn wants_table(headers: &HeaderMap) -> bool {
    let mut clauses: Vec<(f64, MediaRange)> = headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(MediaRange::parse)
        .filter(|(q, _)| *q > 0.0)
        .collect();
    // Stable: equal weights keep the header's order.
    clauses.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, clause) in clauses {
        if !clause.is_json() {
            continue;
        }
        match clause.param("as") {
            None => return false,
            Some("Table") => {
                let group_ok = clause.param("g") == Some(TABLE_GROUP);
                let version_ok = matches!(clause.param("v"), Some("v1" | "v1beta1"));
                if group_ok && version_ok {
                    return true;
                }
            }
            Some(_) => {}
        }
    }
    false
}

/// One clause of an Accept header: `type/subtype;key=value;...`.
struct MediaRange {
    essence: String,
    params: Vec<(String, String)>,
}

impl MediaRange {
    fn parse(clause: &str) -> Option<(f64, Self)> {
        let mut parts = clause.split(';');
        let essence = parts.next()?.trim().to_ascii_lowercase();
        if essence.is_empty() {
            return None;
        }
        let mut q = 1.0;
        let mut params = Vec::new();
        for part in parts {
            let Some((key, value)) = part.split_once('=') else {
                continue;
            };
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim().trim_matches('"').to_string();
            if key == "q" {
                q = value.parse().unwrap_or(1.0);
            } else {
                params.push((key, value));
            }
        }
        Some((q, Self { essence, params }))
    }

    fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Media types this server can answer: JSON, and the wildcards that allow it.
    fn is_json(&self) -> bool {
        matches!(
            self.essence.as_str(),
            "application/json" | "application/*" | "*/*"
        )
    }
}

/// A Table of `items` (all columns, wide ones with priority 1), metadata.resourceVersion = rv;
/// honours params["includeObject"] (None|Metadata (default)|Object).
pub fn table(resource: &ResourceType, items: &[Obj], rv: u64, params: &Params) -> Value {
    let now = Timestamp::now();
    let include = IncludeObject::from_params(params);
    let rows: Vec<Value> = items
        .iter()
        .map(|obj| row(resource, obj, now, include))
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": TABLE_API_VERSION,
        "metadata": {"resourceVersion": rv.to_string()},
        "columnDefinitions": column_definitions(resource.kind),
        "rows": rows,
    })
}

/// One watch event's object: a Table with one row for `obj`; `with_columns` false sends an
/// empty columnDefinitions list (kubectl reuses the previous ones).
pub fn watch_row(
    resource: &ResourceType,
    obj: &Value,
    with_columns: bool,
    params: &Params,
) -> Value {
    let now = Timestamp::now();
    let include = IncludeObject::from_params(params);
    let columns = if with_columns {
        column_definitions(resource.kind)
    } else {
        Value::Array(Vec::new())
    };
    let mut metadata = Map::new();
    if let Some(rv) = obj
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .filter(|rv| !rv.is_empty())
    {
        metadata.insert("resourceVersion".into(), Value::String(rv.to_string()));
    }
    json!({
        "kind": "Table",
        "apiVersion": TABLE_API_VERSION,
        "metadata": metadata,
        "columnDefinitions": columns,
        "rows": [row(resource, obj, now, include)],
    })
}

/// `includeObject` of metav1.TableOptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IncludeObject {
    None,
    Metadata,
    Object,
}

impl IncludeObject {
    fn from_params(params: &Params) -> Self {
        match params.get("includeObject").map(String::as_str) {
            Some("None") => Self::None,
            Some("Object") => Self::Object,
            _ => Self::Metadata,
        }
    }
}

fn row(resource: &ResourceType, obj: &Value, now: Timestamp, include: IncludeObject) -> Value {
    let (cells, conditions) = cells(resource.kind, obj, now);
    let object = match include {
        IncludeObject::None => Value::Null,
        IncludeObject::Metadata => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": TABLE_API_VERSION,
            "metadata": match obj.get("metadata") {
                Some(m) if m.is_object() => m.clone(),
                _ => json!({}),
            },
        }),
        IncludeObject::Object => full_object(resource, obj),
    };
    let mut row = Map::new();
    row.insert("cells".into(), Value::Array(cells));
    if let Some(conditions) = conditions {
        row.insert("conditions".into(), conditions);
    }
    row.insert("object".into(), object);
    Value::Object(row)
}

/// The stored object, with its type meta filled in if a writer left it out.
fn full_object(resource: &ResourceType, obj: &Value) -> Value {
    let mut full = obj.clone();
    if let Some(map) = full.as_object_mut() {
        if !map.get("kind").is_some_and(Value::is_string) {
            map.insert("kind".into(), Value::String(resource.kind_name.to_string()));
        }
        if !map.get("apiVersion").is_some_and(Value::is_string) {
            map.insert("apiVersion".into(), Value::String(resource.api_version()));
        }
    }
    full
}

// ---------------------------------------------------------------------------------------
// Column definitions

struct Column {
    name: &'static str,
    kind: &'static str,
    format: &'static str,
    description: &'static str,
    priority: u8,
}

const fn col(name: &'static str, description: &'static str) -> Column {
    Column {
        name,
        kind: "string",
        format: "",
        description,
        priority: 0,
    }
}

const fn wide(name: &'static str, description: &'static str) -> Column {
    Column {
        name,
        kind: "string",
        format: "",
        description,
        priority: 1,
    }
}

const NAME: Column = Column {
    name: "Name",
    kind: "string",
    format: "name",
    description: NAME_DESC,
    priority: 0,
};
const AGE: Column = col("Age", CREATION_DESC);

const NAME_DESC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const CREATION_DESC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const CONTAINERS_DESC: &str = "Names of each container in the template.";
const IMAGES_DESC: &str = "Images referenced by each container in the template.";
const NODE_ADDRESSES_DESC: &str = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses";

const POD_COLUMNS: &[Column] = &[
    NAME,
    col(
        "Ready",
        "The aggregate readiness state of this pod for accepting traffic.",
    ),
    col(
        "Status",
        "The aggregate status of the containers in this pod.",
    ),
    col(
        "Restarts",
        "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
    ),
    AGE,
    wide(
        "IP",
        "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
    ),
    wide(
        "Node",
        "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod.",
    ),
    wide(
        "Nominated Node",
        "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node.",
    ),
    wide(
        "Readiness Gates",
        "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates",
    ),
];

const JOB_COLUMNS: &[Column] = &[
    NAME,
    col("Status", "Status of the job."),
    col(
        "Completions",
        "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.",
    ),
    col("Duration", "Time required to complete the job."),
    AGE,
    wide("Containers", CONTAINERS_DESC),
    wide("Images", IMAGES_DESC),
    wide(
        "Selector",
        "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
    ),
];

const SERVICE_COLUMNS: &[Column] = &[
    NAME,
    col(
        "Type",
        "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer.",
    ),
    col(
        "Cluster-IP",
        "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail.",
    ),
    col(
        "External-IP",
        "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service. These IPs are not managed by Kubernetes.",
    ),
    col(
        "Port(s)",
        "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
    ),
    AGE,
    wide(
        "Selector",
        "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify.",
    ),
];

const NODE_COLUMNS: &[Column] = &[
    NAME,
    col("Status", "The status of the node"),
    col("Roles", "The roles of the node"),
    AGE,
    col("Version", "Kubelet Version reported by the node."),
    wide("Internal-IP", NODE_ADDRESSES_DESC),
    wide("External-IP", NODE_ADDRESSES_DESC),
    wide(
        "OS-Image",
        "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
    ),
    wide(
        "Kernel-Version",
        "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
    ),
    wide(
        "Container-Runtime",
        "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
    ),
];

const EVENT_COLUMNS: &[Column] = &[
    col(
        "Last Seen",
        "The time at which the most recent occurrence of this event was recorded.",
    ),
    col(
        "Type",
        "Type of this event (Normal, Warning), new types could be added in the future",
    ),
    col(
        "Reason",
        "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    ),
    col(
        "Object",
        "regarding contains the object this Event is about. In most cases it's an Object reporting controller implements, e.g. ReplicaSetController implements ReplicaSets and this event is emitted because it acts on some changes in a ReplicaSet object.",
    ),
    wide(
        "Subobject",
        "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].",
    ),
    wide(
        "Source",
        "The component reporting this event. Should be a short machine understandable string.",
    ),
    col(
        "Message",
        "A human-readable description of the status of this operation.",
    ),
    wide(
        "First Seen",
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
    ),
    wide("Count", "The number of times this event has occurred."),
    Column {
        priority: 1,
        ..NAME
    },
];

const NAMESPACE_COLUMNS: &[Column] = &[NAME, col("Status", "The status of the namespace"), AGE];

const CONFIGMAP_COLUMNS: &[Column] = &[
    NAME,
    col(
        "Data",
        "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field.",
    ),
    AGE,
];

/// The default table convertor's columns (`k8s.io/apiserver/pkg/registry/rest/table.go`), for
/// kinds without a printer. Every served kind has one today, so only the tests reach it.
#[allow(dead_code)]
const DEFAULT_COLUMNS: &[Column] = &[
    NAME,
    Column {
        name: "Created At",
        kind: "date",
        format: "",
        description: CREATION_DESC,
        priority: 0,
    },
];

fn columns_of(kind: Kind) -> &'static [Column] {
    match kind {
        Kind::Pod => POD_COLUMNS,
        Kind::Job => JOB_COLUMNS,
        Kind::Service => SERVICE_COLUMNS,
        Kind::Node => NODE_COLUMNS,
        Kind::Event => EVENT_COLUMNS,
        Kind::Namespace => NAMESPACE_COLUMNS,
        Kind::ConfigMap => CONFIGMAP_COLUMNS,
    }
}

fn column_definitions(kind: Kind) -> Value {
    Value::Array(
        columns_of(kind)
            .iter()
            .map(|c| {
                json!({
                    "name": c.name,
                    "type": c.kind,
                    "format": c.format,
                    "description": c.description,
                    "priority": c.priority,
                })
            })
            .collect(),
    )
}

// ---------------------------------------------------------------------------------------
// Cells

fn cells(kind: Kind, obj: &Value, now: Timestamp) -> (Vec<Value>, Option<Value>) {
    match kind {
        Kind::Pod => pod_cells(obj, now),
        Kind::Job => (job_cells(obj, now), None),
        Kind::Service => (service_cells(obj, now), None),
        Kind::Node => (node_cells(obj, now), None),
        Kind::Event => (event_cells(obj, now), None),
        Kind::Namespace => (namespace_cells(obj, now), None),
        Kind::ConfigMap => (configmap_cells(obj, now), None),
    }
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn s(v: impl Into<String>) -> Value {
    Value::String(v.into())
}

fn or_placeholder(v: &str, placeholder: &str) -> String {
    if v.is_empty() {
        placeholder.to_string()
    } else {
        v.to_string()
    }
}

fn timestamp(v: &Value) -> Option<Timestamp> {
    v.as_str().and_then(|t| t.parse::<Timestamp>().ok())
}

/// `duration.HumanDuration(now - ts)`, including its tolerance for small clock skew.
fn since(now: Timestamp, ts: Timestamp) -> String {
    let secs = now.duration_since(ts).as_secs();
    if secs < -1 {
        "<invalid>".to_string()
    } else {
        human_duration(secs)
    }
}

/// `translateTimestampSince`: `<unknown>` for a zero (absent) time.
fn age_of(now: Timestamp, v: &Value) -> String {
    timestamp(v).map_or_else(|| "<unknown>".to_string(), |t| since(now, t))
}

fn creation_age(obj: &Value, now: Timestamp) -> String {
    age_of(now, &obj["metadata"]["creationTimestamp"])
}

fn name_of(obj: &Value) -> String {
    text(&obj["metadata"]["name"]).to_string()
}

/// Whether `conditions` has a condition of `kind` whose status is True (the first of that
/// type decides, as in the printers' helpers).
fn condition_true(conditions: &Value, kind: &str) -> bool {
    items(conditions)
        .iter()
        .find(|c| text(&c["type"]) == kind)
        .is_some_and(|c| text(&c["status"]) == "True")
}

fn any_condition_true(conditions: &Value, kind: &str) -> bool {
    items(conditions)
        .iter()
        .any(|c| text(&c["type"]) == kind && text(&c["status"]) == "True")
}

// --- Pods ------------------------------------------------------------------------------

/// `printPod`: Name, Ready, Status, Restarts, Age, IP, Node, Nominated Node, Readiness Gates.
fn pod_cells(pod: &Value, now: Timestamp) -> (Vec<Value>, Option<Value>) {
    let spec = &pod["spec"];
    let status = &pod["status"];
    let phase = text(&status["phase"]);
    let status_reason = text(&status["reason"]);
    let mut reason = if status_reason.is_empty() {
        phase
    } else {
        status_reason
    }
    .to_string();

    if items(&status["conditions"])
        .iter()
        .any(|c| text(&c["type"]) == "PodScheduled" && text(&c["reason"]) == "SchedulingGated")
    {
        reason = "SchedulingGated".to_string();
    }

    let row_conditions = match phase {
        "Succeeded" => Some(json!([{
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }])),
        "Failed" => Some(json!([{
            "type": "Completed",
            "status": "True",
            "reason": "Failed",
            "message": "The pod failed.",
        }])),
        _ => None,
    };

    let init_specs = items(&spec["initContainers"]);
    let is_restartable = |name: &str| {
        init_specs
            .iter()
            .find(|c| text(&c["name"]) == name)
            .is_some_and(|c| text(&c["restartPolicy"]) == "Always")
    };
    let total = items(&spec["containers"]).len()
        + init_specs
            .iter()
            .filter(|c| text(&c["restartPolicy"]) == "Always")
            .count();
    let mut ready = 0usize;
    let mut restarts: i64 = 0;
    let mut restartable_restarts: i64 = 0;
    let mut last_restart: Option<Timestamp> = None;
    let mut last_restartable_restart: Option<Timestamp> = None;

    let mut initializing = false;
    for (i, c) in items(&status["initContainerStatuses"]).iter().enumerate() {
        let count = int(&c["restartCount"]);
        let finished = timestamp(&c["lastState"]["terminated"]["finishedAt"]);
        restarts += count;
        last_restart = later(last_restart, finished);
        let restartable = is_restartable(text(&c["name"]));
        if restartable {
            restartable_restarts += count;
            last_restartable_restart = later(last_restartable_restart, finished);
        }
        let terminated = &c["state"]["terminated"];
        let waiting = &c["state"]["waiting"];
        if terminated.is_object() && int(&terminated["exitCode"]) == 0 {
            continue;
        }
        if restartable && c["started"].as_bool() == Some(true) {
            if c["ready"].as_bool() == Some(true) {
                ready += 1;
            }
            continue;
        }
        if terminated.is_object() {
            let why = text(&terminated["reason"]);
            reason = if !why.is_empty() {
                format!("Init:{why}")
            } else if int(&terminated["signal"]) != 0 {
                format!("Init:Signal:{}", int(&terminated["signal"]))
            } else {
                format!("Init:ExitCode:{}", int(&terminated["exitCode"]))
            };
        } else if waiting.is_object()
            && !text(&waiting["reason"]).is_empty()
            && text(&waiting["reason"]) != "PodInitializing"
        {
            reason = format!("Init:{}", text(&waiting["reason"]));
        } else {
            reason = format!("Init:{i}/{}", init_specs.len());
        }
        initializing = true;
        break;
    }

    if !initializing || condition_true(&status["conditions"], "Initialized") {
        restarts = restartable_restarts;
        last_restart = last_restartable_restart;
        let mut has_running = false;
        for c in items(&status["containerStatuses"]).iter().rev() {
            restarts += int(&c["restartCount"]);
            last_restart = later(
                last_restart,
                timestamp(&c["lastState"]["terminated"]["finishedAt"]),
            );
            let terminated = &c["state"]["terminated"];
            let waiting = &c["state"]["waiting"];
            if waiting.is_object() && !text(&waiting["reason"]).is_empty() {
                reason = text(&waiting["reason"]).to_string();
            } else if terminated.is_object() && !text(&terminated["reason"]).is_empty() {
                reason = text(&terminated["reason"]).to_string();
            } else if terminated.is_object() {
                reason = if int(&terminated["signal"]) != 0 {
                    format!("Signal:{}", int(&terminated["signal"]))
                } else {
                    format!("ExitCode:{}", int(&terminated["exitCode"]))
                };
            } else if c["ready"].as_bool() == Some(true) && c["state"]["running"].is_object() {
                has_running = true;
                ready += 1;
            }
        }
        // A pod whose last-listed container completed while another still runs is not "Completed".
        if reason == "Completed" && has_running {
            reason = if any_condition_true(&status["conditions"], "Ready") {
                "Running".to_string()
            } else {
                "NotReady".to_string()
            };
        }
    }

    let deleting = pod["metadata"]
        .get("deletionTimestamp")
        .is_some_and(|v| !v.is_null());
    if deleting && status_reason == "NodeLost" {
        reason = "Unknown".to_string();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        reason = "Terminating".to_string();
    }

    let restarts_cell = match last_restart {
        Some(t) if restarts != 0 => format!("{restarts} ({} ago)", since(now, t)),
        _ => restarts.to_string(),
    };

    let mut ip = status
        .pointer("/podIPs/0/ip")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if ip.is_empty() && !status["podIPs"].is_array() {
        ip = text(&status["podIP"]);
    }
    let gates = items(&spec["readinessGates"]);
    let readiness_gates = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let true_count = gates
            .iter()
            .filter(|g| condition_true(&status["conditions"], text(&g["conditionType"])))
            .count();
        format!("{true_count}/{}", gates.len())
    };

    let cells = vec![
        s(name_of(pod)),
        s(format!("{ready}/{total}")),
        s(reason),
        s(restarts_cell),
        s(creation_age(pod, now)),
        s(or_placeholder(ip, "<none>")),
        s(or_placeholder(text(&spec["nodeName"]), "<none>")),
        s(or_placeholder(text(&status["nominatedNodeName"]), "<none>")),
        s(readiness_gates),
    ];
    (cells, row_conditions)
}

fn later(current: Option<Timestamp>, candidate: Option<Timestamp>) -> Option<Timestamp> {
    match (current, candidate) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

// --- Jobs ------------------------------------------------------------------------------

/// `printJob`: Name, Status, Completions, Duration, Age, Containers, Images, Selector.
fn job_cells(job: &Value, now: Timestamp) -> Vec<Value> {
    let spec = &job["spec"];
    let status = &job["status"];
    let succeeded = int(&status["succeeded"]);
    let completions = match spec["completions"].as_i64() {
        Some(n) => format!("{succeeded}/{n}"),
        None => {
            let parallelism = spec["parallelism"].as_i64().unwrap_or(0);
            if parallelism > 1 {
                format!("{succeeded}/1 of {parallelism}")
            } else {
                format!("{succeeded}/1")
            }
        }
    };
    let duration = match (
        timestamp(&status["startTime"]),
        timestamp(&status["completionTime"]),
    ) {
        (None, _) => String::new(),
        (Some(start), None) => since(now, start),
        (Some(start), Some(end)) => since(end, start),
    };
    let conditions = &status["conditions"];
    let deleting = job["metadata"]
        .get("deletionTimestamp")
        .is_some_and(|v| !v.is_null());
    let job_status = if condition_true(conditions, "Complete") {
        "Complete"
    } else if condition_true(conditions, "Failed") {
        "Failed"
    } else if deleting {
        "Terminating"
    } else if condition_true(conditions, "Suspended") {
        "Suspended"
    } else if condition_true(conditions, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let containers = items(&spec["template"]["spec"]["containers"]);
    let names: Vec<&str> = containers.iter().map(|c| text(&c["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(&c["image"])).collect();
    vec![
        s(name_of(job)),
        s(job_status),
        s(completions),
        s(duration),
        s(creation_age(job, now)),
        s(names.join(",")),
        s(images.join(",")),
        s(format_label_selector(&spec["selector"])),
    ]
}

/// `metav1.FormatLabelSelector`: requirements sorted by key, `<none>` when empty.
fn format_label_selector(selector: &Value) -> String {
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector["matchLabels"].as_object() {
        for (k, v) in labels {
            requirements.push((k.clone(), format!("{k}={}", text(v))));
        }
    }
    for expr in items(&selector["matchExpressions"]) {
        let key = text(&expr["key"]);
        let mut values: Vec<&str> = items(&expr["values"]).iter().map(text).collect();
        values.sort_unstable();
        let rendered = match text(&expr["operator"]) {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            _ => return "<error>".to_string(),
        };
        requirements.push((key.to_string(), rendered));
    }
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    let joined = requirements
        .into_iter()
        .map(|(_, r)| r)
        .collect::<Vec<_>>()
        .join(",");
    or_placeholder(&joined, "<none>")
}

/// `labels.FormatLabels`: `k=v` sorted by key, `<none>` when empty.
fn format_labels(labels: &Value) -> String {
    let mut pairs: Vec<(&String, &str)> = labels
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k, text(v))).collect())
        .unwrap_or_default();
    pairs.sort();
    let joined = pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    or_placeholder(&joined, "<none>")
}

// --- Services --------------------------------------------------------------------------

/// `printService`: Name, Type, Cluster-IP, External-IP, Port(s), Age, Selector.
fn service_cells(svc: &Value, now: Timestamp) -> Vec<Value> {
    let spec = &svc["spec"];
    let svc_type = match text(&spec["type"]) {
        "" => "ClusterIP",
        t => t,
    };
    let cluster_ip = spec
        .pointer("/clusterIPs/0")
        .and_then(Value::as_str)
        .filter(|ip| !ip.is_empty())
        .or_else(|| spec["clusterIP"].as_str().filter(|ip| !ip.is_empty()))
        .unwrap_or("<none>");
    let ports = items(&spec["ports"])
        .iter()
        .map(|p| {
            let protocol = match text(&p["protocol"]) {
                "" => "TCP",
                proto => proto,
            };
            let node_port = int(&p["nodePort"]);
            if node_port > 0 {
                format!("{}:{node_port}/{protocol}", int(&p["port"]))
            } else {
                format!("{}/{protocol}", int(&p["port"]))
            }
        })
        .collect::<Vec<_>>()
        .join(",");
    vec![
        s(name_of(svc)),
        s(svc_type),
        s(cluster_ip),
        s(service_external_ip(svc, svc_type)),
        s(or_placeholder(&ports, "<none>")),
        s(creation_age(svc, now)),
        s(format_labels(&spec["selector"])),
    ]
}

/// `getServiceExternalIP` (wide, so load-balancer addresses are not truncated).
fn service_external_ip(svc: &Value, svc_type: &str) -> String {
    let external: Vec<&str> = items(&svc["spec"]["externalIPs"])
        .iter()
        .map(text)
        .collect();
    match svc_type {
        "ClusterIP" | "NodePort" => {
            if external.is_empty() {
                "<none>".to_string()
            } else {
                external.join(",")
            }
        }
        "LoadBalancer" => {
            let mut results: Vec<&str> = items(&svc["status"]["loadBalancer"]["ingress"])
                .iter()
                .filter_map(|i| {
                    [text(&i["ip"]), text(&i["hostname"])]
                        .into_iter()
                        .find(|a| !a.is_empty())
                })
                .collect();
            results.extend(external);
            if results.is_empty() {
                "<pending>".to_string()
            } else {
                results.join(",")
            }
        }
        "ExternalName" => text(&svc["spec"]["externalName"]).to_string(),
        _ => "<unknown>".to_string(),
    }
}

// --- Nodes -----------------------------------------------------------------------------

/// `printNode`: Name, Status, Roles, Age, Version, Internal-IP, External-IP, OS-Image,
/// Kernel-Version, Container-Runtime.
fn node_cells(node: &Value, now: Timestamp) -> Vec<Value> {
    let status = &node["status"];
    let mut states: Vec<String> = Vec::new();
    if let Some(ready) = items(&status["conditions"])
        .iter()
        .rev()
        .find(|c| text(&c["type"]) == "Ready")
    {
        states.push(
            if text(&ready["status"]) == "True" {
                "Ready"
            } else {
                "NotReady"
            }
            .to_string(),
        );
    }
    if states.is_empty() {
        states.push("Unknown".to_string());
    }
    if node["spec"]["unschedulable"].as_bool() == Some(true) {
        states.push("SchedulingDisabled".to_string());
    }

    let mut roles: Vec<String> = node["metadata"]["labels"]
        .as_object()
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| {
                    if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                        (!role.is_empty()).then(|| role.to_string())
                    } else if k == "kubernetes.io/role" {
                        Some(text(v).to_string()).filter(|r| !r.is_empty())
                    } else {
                        None
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    roles.sort();
    roles.dedup();

    let address = |kind: &str| {
        items(&status["addresses"])
            .iter()
            .find(|a| text(&a["type"]) == kind)
            .map_or_else(|| "<none>".to_string(), |a| text(&a["address"]).to_string())
    };
    let info = &status["nodeInfo"];
    vec![
        s(name_of(node)),
        s(states.join(",")),
        s(or_placeholder(&roles.join(","), "<none>")),
        s(creation_age(node, now)),
        s(text(&info["kubeletVersion"])),
        s(address("InternalIP")),
        s(address("ExternalIP")),
        s(or_placeholder(text(&info["osImage"]), "<unknown>")),
        s(or_placeholder(text(&info["kernelVersion"]), "<unknown>")),
        s(or_placeholder(
            text(&info["containerRuntimeVersion"]),
            "<unknown>",
        )),
    ]
}

// --- Events ----------------------------------------------------------------------------

/// `printEvent` (wide): Last Seen, Type, Reason, Object, Subobject, Source, Message,
/// First Seen, Count, Name.
fn event_cells(ev: &Value, now: Timestamp) -> Vec<Value> {
    let first_seen = match timestamp(&ev["firstTimestamp"]) {
        Some(t) => since(now, t),
        None => age_of(now, &ev["eventTime"]),
    };
    let mut last_seen = match timestamp(&ev["lastTimestamp"]) {
        Some(t) => since(now, t),
        None => first_seen.clone(),
    };
    let mut count = int(&ev["count"]);
    if ev["series"].is_object() {
        last_seen = age_of(now, &ev["series"]["lastObservedTime"]);
        count = int(&ev["series"]["count"]);
    } else if count == 0 {
        count = 1;
    }
    let involved = &ev["involvedObject"];
    let kind = text(&involved["kind"]).to_lowercase();
    let target = match text(&involved["name"]) {
        "" => kind,
        name => format!("{kind}/{name}"),
    };
    let first_non_empty = |a: &Value, b: &Value| -> String {
        let a = text(a);
        if a.is_empty() {
            text(b).to_string()
        } else {
            a.to_string()
        }
    };
    let component = first_non_empty(&ev["source"]["component"], &ev["reportingComponent"]);
    let instance = first_non_empty(&ev["source"]["host"], &ev["reportingInstance"]);
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    vec![
        s(last_seen),
        s(text(&ev["type"])),
        s(text(&ev["reason"])),
        s(target),
        s(text(&involved["fieldPath"])),
        s(source),
        s(text(&ev["message"]).trim()),
        s(first_seen),
        Value::from(count),
        s(name_of(ev)),
    ]
}

// --- Namespaces, ConfigMaps, defaults --------------------------------------------------

fn namespace_cells(ns: &Value, now: Timestamp) -> Vec<Value> {
    vec![
        s(name_of(ns)),
        s(text(&ns["status"]["phase"])),
        s(creation_age(ns, now)),
    ]
}

fn configmap_cells(cm: &Value, now: Timestamp) -> Vec<Value> {
    let keys = |v: &Value| v.as_object().map_or(0, Map::len);
    let data = keys(&cm["data"]) + keys(&cm["binaryData"]);
    vec![
        s(name_of(cm)),
        Value::from(data as i64),
        s(creation_age(cm, now)),
    ]
}

/// The default convertor's cells: name and creation time in RFC 3339 (UTC).
#[allow(dead_code)]
fn default_cells(obj: &Value) -> Vec<Value> {
    let created = timestamp(&obj["metadata"]["creationTimestamp"]).map_or_else(
        || "0001-01-01T00:00:00Z".to_string(),
        |t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    );
    vec![s(name_of(obj)), s(created)]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use http::HeaderValue;
    use jiff::SignedDuration;

    use super::*;

    fn now() -> Timestamp {
        "2025-06-01T12:00:00Z".parse().unwrap()
    }

    fn ago(secs: i64) -> String {
        (now() - SignedDuration::from_secs(secs))
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string()
    }

    fn pod(status: Value) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p1", "namespace": "default", "uid": "u1",
                         "resourceVersion": "101", "creationTimestamp": ago(302),
                         "labels": {"app": "x"}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "main", "image": "busybox"}]},
            "status": status,
        })
    }

    fn pod_row(p: &Value) -> Vec<String> {
        let (cells, _) = pod_cells(p, now());
        cells
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect()
    }

    fn status_of(p: &Value) -> String {
        pod_row(p)[2].clone()
    }

    fn terminated(reason: &str, code: i64) -> Value {
        json!({"phase": if code == 0 { "Succeeded" } else { "Failed" },
               "containerStatuses": [{"name": "main", "ready": false, "restartCount": 0,
                   "state": {"terminated": {"reason": reason, "exitCode": code,
                                            "finishedAt": ago(10)}}}]})
    }

    #[test]
    fn pod_running() {
        let p = pod(json!({
            "phase": "Running",
            "podIP": "10.244.0.5",
            "podIPs": [{"ip": "10.244.0.5"}],
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0,
                                   "state": {"running": {"startedAt": ago(300)}}}],
        }));
        assert_eq!(
            pod_row(&p),
            [
                "p1",
                "1/1",
                "Running",
                "0",
                "5m2s",
                "10.244.0.5",
                "node-1",
                "<none>",
                "<none>"
            ]
        );
        assert!(pod_cells(&p, now()).1.is_none());
    }

    #[test]
    fn pod_waiting_reasons() {
        let waiting = |reason: &str| {
            pod(json!({
                "phase": "Pending",
                "containerStatuses": [{"name": "main", "ready": false, "restartCount": 0,
                                       "state": {"waiting": {"reason": reason}}}],
            }))
        };
        let creating = waiting("ContainerCreating");
        assert_eq!(pod_row(&creating)[1], "0/1");
        assert_eq!(status_of(&creating), "ContainerCreating");
        assert_eq!(status_of(&waiting("ImagePullBackOff")), "ImagePullBackOff");
        // No statuses yet: the phase.
        let pending = pod(json!({"phase": "Pending"}));
        assert_eq!(pod_row(&pending)[1..4], ["0/1", "Pending", "0"]);
    }

    #[test]
    fn pod_terminated_reasons() {
        let done = pod(terminated("Completed", 0));
        assert_eq!(status_of(&done), "Completed");
        let conditions = pod_cells(&done, now()).1.unwrap();
        assert_eq!(conditions[0]["type"], "Completed");
        assert_eq!(conditions[0]["status"], "True");
        assert_eq!(conditions[0]["reason"], "Succeeded");

        let error = pod(terminated("Error", 1));
        assert_eq!(status_of(&error), "Error");
        assert_eq!(pod_cells(&error, now()).1.unwrap()[0]["reason"], "Failed");

        assert_eq!(status_of(&pod(terminated("OOMKilled", 137))), "OOMKilled");
        assert_eq!(status_of(&pod(terminated("", 3))), "ExitCode:3");
        let mut signalled = terminated("", 0);
        signalled["containerStatuses"][0]["state"]["terminated"]["signal"] = json!(9);
        assert_eq!(status_of(&pod(signalled)), "Signal:9");
    }

    #[test]
    fn pod_terminating() {
        let mut p = pod(json!({
            "phase": "Running",
            "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0,
                                   "state": {"running": {"startedAt": ago(300)}}}],
        }));
        p["metadata"]["deletionTimestamp"] = json!(ago(1));
        assert_eq!(status_of(&p), "Terminating");
        // A finished pod being deleted keeps its final status.
        let mut done = pod(terminated("Completed", 0));
        done["metadata"]["deletionTimestamp"] = json!(ago(1));
        assert_eq!(status_of(&done), "Completed");
    }

    #[test]
    fn pod_restarts_with_last_restart_age() {
        let p = pod(json!({
            "phase": "Running",
            "containerStatuses": [{"name": "main", "ready": false, "restartCount": 2,
                "lastState": {"terminated": {"reason": "Error", "exitCode": 1, "finishedAt": ago(15 * 60)}},
                "state": {"waiting": {"reason": "CrashLoopBackOff"}}}],
        }));
        let row = pod_row(&p);
        assert_eq!(row[2], "CrashLoopBackOff");
        assert_eq!(row[3], "2 (15m ago)");
    }

    #[test]
    fn pod_init_containers() {
        let mut p = pod(json!({
            "phase": "Pending",
            "initContainerStatuses": [
                {"name": "init-a", "ready": false, "restartCount": 0,
                 "state": {"terminated": {"reason": "Completed", "exitCode": 0}}},
                {"name": "init-b", "ready": false, "restartCount": 0,
                 "state": {"running": {"startedAt": ago(5)}}},
            ],
            "containerStatuses": [{"name": "main", "ready": false, "restartCount": 0,
                                   "state": {"waiting": {"reason": "PodInitializing"}}}],
        }));
        p["spec"]["initContainers"] = json!([{"name": "init-a"}, {"name": "init-b"}]);
        assert_eq!(status_of(&p), "Init:1/2");
        p["status"]["initContainerStatuses"][1]["state"] =
            json!({"terminated": {"reason": "Error", "exitCode": 2}});
        assert_eq!(status_of(&p), "Init:Error");
        p["status"]["initContainerStatuses"][1]["state"] =
            json!({"waiting": {"reason": "ImagePullBackOff"}});
        assert_eq!(status_of(&p), "Init:ImagePullBackOff");
    }

    fn job(status: Value, completions: Option<i64>, parallelism: i64) -> Value {
        let mut spec = json!({
            "parallelism": parallelism,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "abc"}},
            "template": {"spec": {"containers": [{"name": "pi", "image": "perl:5.34"}]}},
        });
        if let Some(n) = completions {
            spec["completions"] = json!(n);
        }
        json!({"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "pi", "namespace": "default", "creationTimestamp": ago(3600)},
               "spec": spec, "status": status})
    }

    fn job_row(j: &Value) -> Vec<String> {
        job_cells(j, now())
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn job_running() {
        let j = job(json!({"startTime": ago(95), "active": 1}), Some(1), 1);
        assert_eq!(
            job_row(&j),
            [
                "pi",
                "Running",
                "0/1",
                "95s",
                "60m",
                "pi",
                "perl:5.34",
                "batch.kubernetes.io/controller-uid=abc"
            ]
        );
        // Not started yet: no duration.
        assert_eq!(job_row(&job(json!({}), Some(3), 1))[2..4], ["0/3", ""]);
    }

    #[test]
    fn job_complete_and_failed() {
        let complete = job(
            json!({"startTime": ago(600), "completionTime": ago(450), "succeeded": 1,
                   "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                                  {"type": "Complete", "status": "True"}]}),
            Some(1),
            1,
        );
        assert_eq!(job_row(&complete)[1..4], ["Complete", "1/1", "2m30s"]);

        let failed = job(
            json!({"startTime": ago(600), "failed": 4,
                   "conditions": [{"type": "FailureTarget", "status": "True"},
                                  {"type": "Failed", "status": "True"}]}),
            Some(1),
            1,
        );
        assert_eq!(job_row(&failed)[1], "Failed");

        let target = job(
            json!({"startTime": ago(600), "conditions": [{"type": "FailureTarget", "status": "True"}]}),
            Some(1),
            1,
        );
        assert_eq!(job_row(&target)[1], "FailureTarget");

        let mut deleting = job(json!({"startTime": ago(60)}), Some(1), 1);
        deleting["metadata"]["deletionTimestamp"] = json!(ago(1));
        assert_eq!(job_row(&deleting)[1], "Terminating");

        let suspended = job(
            json!({"conditions": [{"type": "Suspended", "status": "True"}]}),
            Some(1),
            1,
        );
        assert_eq!(job_row(&suspended)[1], "Suspended");
    }

    #[test]
    fn job_completions_without_spec_completions() {
        assert_eq!(job_row(&job(json!({"succeeded": 0}), None, 1))[2], "0/1");
        assert_eq!(
            job_row(&job(json!({"succeeded": 1}), None, 3))[2],
            "1/1 of 3"
        );
    }

    #[test]
    fn label_selector_formatting() {
        let sel = json!({"matchLabels": {"b": "2", "a": "1"},
                         "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]},
                                              {"key": "d", "operator": "DoesNotExist"}]});
        assert_eq!(format_label_selector(&sel), "a=1,b=2,c in (x,y),!d");
        assert_eq!(format_label_selector(&Value::Null), "<none>");
    }

    #[test]
    fn node_rows() {
        let node = json!({
            "metadata": {"name": "gke-node-1", "creationTimestamp": ago(3 * 86400),
                         "labels": {"kubernetes.io/hostname": "gke-node-1"}},
            "spec": {},
            "status": {
                "conditions": [{"type": "MemoryPressure", "status": "False"},
                               {"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "10.128.0.2"}],
                "nodeInfo": {"kubeletVersion": "v1.32.4-gke.1", "osImage": "Container-Optimized OS",
                             "kernelVersion": "6.1.0", "containerRuntimeVersion": "containerd://1.7.24"},
            },
        });
        let cells = node_cells(&node, now());
        assert_eq!(
            cells,
            vec![
                json!("gke-node-1"),
                json!("Ready"),
                json!("<none>"),
                json!("3d"),
                json!("v1.32.4-gke.1"),
                json!("10.128.0.2"),
                json!("<none>"),
                json!("Container-Optimized OS"),
                json!("6.1.0"),
                json!("containerd://1.7.24"),
            ]
        );

        let mut cordoned = node.clone();
        cordoned["spec"]["unschedulable"] = json!(true);
        cordoned["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] = json!("");
        cordoned["status"]["conditions"][1]["status"] = json!("Unknown");
        let cells = node_cells(&cordoned, now());
        assert_eq!(cells[1], "NotReady,SchedulingDisabled");
        assert_eq!(cells[2], "control-plane");

        let bare = json!({"metadata": {"name": "n"}});
        let cells = node_cells(&bare, now());
        assert_eq!(cells[1], "Unknown");
        assert_eq!(cells[3], "<unknown>");
        assert_eq!(cells[7], "<unknown>");
    }

    #[test]
    fn service_rows() {
        let svc = json!({
            "metadata": {"name": "web", "creationTimestamp": ago(45 * 60)},
            "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                     "ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}],
                     "selector": {"app": "web", "tier": "front"}},
        });
        assert_eq!(
            service_cells(&svc, now()),
            vec![
                json!("web"),
                json!("ClusterIP"),
                json!("10.96.0.10"),
                json!("<none>"),
                json!("80/TCP"),
                json!("45m"),
                json!("app=web,tier=front")
            ]
        );

        let headless = json!({"metadata": {"name": "h"},
                              "spec": {"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"]}});
        let cells = service_cells(&headless, now());
        assert_eq!(cells[2], "None");
        assert_eq!(cells[4], "<none>");
        assert_eq!(cells[6], "<none>");

        let node_port = json!({"metadata": {"name": "np"},
            "spec": {"type": "NodePort", "clusterIPs": ["10.96.1.1"],
                     "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"},
                               {"port": 53, "protocol": "UDP"}]}});
        assert_eq!(service_cells(&node_port, now())[4], "80:30080/TCP,53/UDP");

        let lb = json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer"}});
        assert_eq!(service_cells(&lb, now())[3], "<pending>");
    }

    #[test]
    fn event_rows() {
        let ev = json!({
            "metadata": {"name": "p1.17f", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "p1", "fieldPath": "spec.containers{main}"},
            "reason": "Pulled", "type": "Normal", "message": "Successfully pulled image \"busybox\"\n",
            "source": {"component": "kubelet", "host": "node-1"},
            "firstTimestamp": ago(600), "lastTimestamp": ago(30), "count": 3,
        });
        assert_eq!(
            event_cells(&ev, now()),
            vec![
                json!("30s"),
                json!("Normal"),
                json!("Pulled"),
                json!("pod/p1"),
                json!("spec.containers{main}"),
                json!("kubelet, node-1"),
                json!("Successfully pulled image \"busybox\""),
                json!("10m"),
                json!(3),
                json!("p1.17f")
            ]
        );

        let new_style = json!({
            "metadata": {"name": "e2"},
            "involvedObject": {"kind": "Job", "name": "pi"},
            "eventTime": "2025-06-01T11:59:00.000000Z",
            "reportingComponent": "job-controller",
        });
        let cells = event_cells(&new_style, now());
        assert_eq!(cells[0], "60s");
        assert_eq!(cells[3], "job/pi");
        assert_eq!(cells[5], "job-controller");
        assert_eq!(cells[8], 1);
    }

    #[test]
    fn namespace_and_configmap_rows() {
        let ns = json!({"metadata": {"name": "default", "creationTimestamp": ago(10)},
                        "status": {"phase": "Active"}});
        assert_eq!(
            namespace_cells(&ns, now()),
            vec![json!("default"), json!("Active"), json!("10s")]
        );
        let cm = json!({"metadata": {"name": "cfg"}, "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}});
        assert_eq!(configmap_cells(&cm, now())[1], 3);
        assert_eq!(configmap_cells(&cm, now())[2], "<unknown>");
        assert_eq!(
            default_cells(&json!({"metadata": {"name": "x"}}))[1],
            "0001-01-01T00:00:00Z"
        );
    }

    #[test]
    fn wants_table_on_kubectl_header_only() {
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_static(
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
            ),
        );
        assert!(wants_table(&headers));

        let mut plain = HeaderMap::new();
        plain.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json"),
        );
        assert!(!wants_table(&plain));
        plain.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json, */*"),
        );
        assert!(!wants_table(&plain));
        assert!(!wants_table(&HeaderMap::new()));

        let mut beta = HeaderMap::new();
        beta.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json; as=Table; v=v1beta1; g=meta.k8s.io"),
        );
        assert!(wants_table(&beta));
    }

    #[test]
    fn table_shape_and_include_object() {
        let resource = Kind::Pod.resource();
        let p: Obj = Arc::new(pod(json!({"phase": "Running"})));
        let t = table(resource, std::slice::from_ref(&p), 12345, &Params::new());
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(t["metadata"]["resourceVersion"], "12345");
        let columns = t["columnDefinitions"].as_array().unwrap();
        assert_eq!(columns.len(), 9);
        assert_eq!(columns[0]["format"], "name");
        assert_eq!(columns[4]["name"], "Age");
        assert_eq!(columns[5]["priority"], 1);
        assert_eq!(columns[3]["priority"], 0);
        let row = &t["rows"][0];
        assert_eq!(row["cells"].as_array().unwrap().len(), 9);
        assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(row["object"]["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(row["object"]["metadata"]["labels"]["app"], "x");
        assert!(row["object"].get("spec").is_none());

        let mut params = Params::new();
        params.insert("includeObject".into(), "Object".into());
        let t = table(resource, std::slice::from_ref(&p), 1, &params);
        assert_eq!(t["rows"][0]["object"]["kind"], "Pod");
        assert_eq!(t["rows"][0]["object"]["spec"]["nodeName"], "node-1");

        params.insert("includeObject".into(), "None".into());
        let t = table(resource, std::slice::from_ref(&p), 1, &params);
        assert!(t["rows"][0]["object"].is_null());

        let empty = table(resource, &[], 7, &Params::new());
        assert_eq!(empty["rows"], json!([]));

        let w = watch_row(resource, &p, false, &Params::new());
        assert_eq!(w["columnDefinitions"], json!([]));
        assert_eq!(w["metadata"]["resourceVersion"], "101");
        assert_eq!(w["rows"].as_array().unwrap().len(), 1);
        let w = watch_row(resource, &p, true, &Params::new());
        assert_eq!(w["columnDefinitions"].as_array().unwrap().len(), 9);

        for kind in [
            Kind::Job,
            Kind::Service,
            Kind::Node,
            Kind::Event,
            Kind::Namespace,
            Kind::ConfigMap,
        ] {
            let t = table(
                kind.resource(),
                &[Arc::new(json!({"metadata": {"name": "x"}}))],
                1,
                &Params::new(),
            );
            assert_eq!(
                t["rows"][0]["cells"].as_array().unwrap().len(),
                t["columnDefinitions"].as_array().unwrap().len(),
                "{kind:?}"
            );
        }
    }
}
