//! The column definitions of each kind's table, with the descriptions kube-apiserver v1.32
//! sends (they come from the API's field documentation), in `printers.go` order.

use serde_json::{Value, json};

use crate::kube::resources::Kind;

pub(super) struct Column {
    pub(super) name: &'static str,
    pub(super) kind: &'static str,
    pub(super) format: &'static str,
    pub(super) description: &'static str,
    pub(super) priority: u8,
}

pub(super) const fn col(name: &'static str, description: &'static str) -> Column {
    Column {
        name,
        kind: "string",
        format: "",
        description,
        priority: 0,
    }
}

pub(super) const fn wide(name: &'static str, description: &'static str) -> Column {
    Column {
        name,
        kind: "string",
        format: "",
        description,
        priority: 1,
    }
}

pub(super) const NAME: Column = Column {
    name: "Name",
    kind: "string",
    format: "name",
    description: NAME_DESC,
    priority: 0,
};
pub(super) const AGE: Column = col("Age", CREATION_DESC);

const NAME_DESC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const CREATION_DESC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
pub(super) const CONTAINERS_DESC: &str = "Names of each container in the template.";
pub(super) const IMAGES_DESC: &str = "Images referenced by each container in the template.";
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

const SECRET_COLUMNS: &[Column] = &[
    NAME,
    col(
        "Type",
        "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
    ),
    col(
        "Data",
        "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
    ),
    AGE,
];

const LEASE_COLUMNS: &[Column] = &[
    NAME,
    col(
        "Holder",
        "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.",
    ),
    AGE,
];

/// The default table convertor's columns (`k8s.io/apiserver/pkg/registry/rest/table.go`), for
/// kinds without a printer (Roles, ClusterRoles).
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
        Kind::Secret => SECRET_COLUMNS,
        Kind::Lease => LEASE_COLUMNS,
        Kind::ServiceAccount => super::rbac_columns::SERVICE_ACCOUNT_COLUMNS,
        Kind::Deployment => super::apps_columns::DEPLOYMENT_COLUMNS,
        Kind::ReplicaSet => super::apps_columns::REPLICA_SET_COLUMNS,
        Kind::RoleBinding => super::rbac_columns::ROLE_BINDING_COLUMNS,
        Kind::ClusterRoleBinding => super::rbac_columns::CLUSTER_ROLE_BINDING_COLUMNS,
        _ => DEFAULT_COLUMNS,
    }
}

pub(super) fn column_definitions(kind: Kind) -> Value {
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
