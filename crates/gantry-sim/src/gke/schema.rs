//! The parts of the google.container.v1 messages whose JSON needs care: enums (their numbering,
//! from the proto), int32 and int64 fields, and proto maps. `proto_json` reads and writes JSON by
//! these tables; every field not described passes through with its keys camelCased.

#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Message(&'static [Field]),
    Enum(&'static EnumType),
    Int32,
    Int64,
    /// A proto map (labels, metadata): its keys are the user's and are never recased.
    Map,
    /// A field not described here: keys camelCased, values kept.
    Any,
}

#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
}

const fn f(name: &'static str, kind: Kind) -> Field {
    Field { name, kind }
}

#[derive(Debug)]
pub struct EnumType {
    /// The proto type, as Google names it in "Invalid value" errors.
    pub proto: &'static str,
    pub values: &'static [(i64, &'static str)],
}

impl EnumType {
    pub fn name_of(&self, number: i64) -> Option<&'static str> {
        self.values
            .iter()
            .find(|(n, _)| *n == number)
            .map(|(_, s)| *s)
    }

    pub fn number_of(&self, name: &str) -> Option<i64> {
        self.values
            .iter()
            .find(|(_, s)| *s == name)
            .map(|(n, _)| *n)
    }
}

const CLUSTER_STATUS: EnumType = EnumType {
    proto: "google.container.v1.Cluster.Status",
    values: &[
        (0, "STATUS_UNSPECIFIED"),
        (1, "PROVISIONING"),
        (2, "RUNNING"),
        (3, "RECONCILING"),
        (4, "STOPPING"),
        (5, "ERROR"),
        (6, "DEGRADED"),
    ],
};
const NODE_POOL_STATUS: EnumType = EnumType {
    proto: "google.container.v1.NodePool.Status",
    values: &[
        (0, "STATUS_UNSPECIFIED"),
        (1, "PROVISIONING"),
        (2, "RUNNING"),
        (3, "RUNNING_WITH_ERROR"),
        (4, "RECONCILING"),
        (5, "STOPPING"),
        (6, "ERROR"),
    ],
};
const OPERATION_STATUS: EnumType = EnumType {
    proto: "google.container.v1.Operation.Status",
    values: &[
        (0, "STATUS_UNSPECIFIED"),
        (1, "PENDING"),
        (2, "RUNNING"),
        (3, "DONE"),
        (4, "ABORTING"),
    ],
};
const OPERATION_TYPE: EnumType = EnumType {
    proto: "google.container.v1.Operation.Type",
    values: &[
        (0, "TYPE_UNSPECIFIED"),
        (1, "CREATE_CLUSTER"),
        (2, "DELETE_CLUSTER"),
        (3, "UPGRADE_MASTER"),
        (4, "UPGRADE_NODES"),
        (5, "REPAIR_CLUSTER"),
        (6, "UPDATE_CLUSTER"),
        (7, "CREATE_NODE_POOL"),
        (8, "DELETE_NODE_POOL"),
        (9, "SET_NODE_POOL_MANAGEMENT"),
        (10, "AUTO_REPAIR_NODES"),
        (11, "AUTO_UPGRADE_NODES"),
        (12, "SET_LABELS"),
        (13, "SET_MASTER_AUTH"),
        (14, "SET_NODE_POOL_SIZE"),
        (15, "SET_NETWORK_POLICY"),
        (16, "SET_MAINTENANCE_POLICY"),
        (17, "RESIZE_CLUSTER"),
        (18, "FLEET_FEATURE_UPGRADE"),
    ],
};
const RELEASE_CHANNEL: EnumType = EnumType {
    proto: "google.container.v1.ReleaseChannel.Channel",
    values: &[
        (0, "UNSPECIFIED"),
        (1, "RAPID"),
        (2, "REGULAR"),
        (3, "STABLE"),
        (4, "EXTENDED"),
    ],
};
const TAINT_EFFECT: EnumType = EnumType {
    proto: "google.container.v1.NodeTaint.Effect",
    values: &[
        (0, "EFFECT_UNSPECIFIED"),
        (1, "NO_SCHEDULE"),
        (2, "PREFER_NO_SCHEDULE"),
        (3, "NO_EXECUTE"),
    ],
};
const GPU_DRIVER_VERSION: EnumType = EnumType {
    proto: "google.container.v1.GPUDriverInstallationConfig.GPUDriverVersion",
    values: &[
        (0, "GPU_DRIVER_VERSION_UNSPECIFIED"),
        (1, "INSTALLATION_DISABLED"),
        (2, "DEFAULT"),
        (3, "LATEST"),
    ],
};
const GPU_SHARING_STRATEGY: EnumType = EnumType {
    proto: "google.container.v1.GPUSharingConfig.GPUSharingStrategy",
    values: &[
        (0, "GPU_SHARING_STRATEGY_UNSPECIFIED"),
        (1, "TIME_SHARING"),
        (2, "MPS"),
    ],
};
const LOCATION_POLICY: EnumType = EnumType {
    proto: "google.container.v1.NodePoolAutoscaling.LocationPolicy",
    values: &[
        (0, "LOCATION_POLICY_UNSPECIFIED"),
        (1, "BALANCED"),
        (2, "ANY"),
    ],
};

const MAX_PODS: &[Field] = &[f("maxPodsPerNode", Kind::Int64)];
const RELEASE_CHANNEL_MSG: &[Field] = &[f("channel", Kind::Enum(&RELEASE_CHANNEL))];
const TAINT: &[Field] = &[f("effect", Kind::Enum(&TAINT_EFFECT))];
const ACCELERATOR: &[Field] = &[
    f("acceleratorCount", Kind::Int64),
    f(
        "gpuDriverInstallationConfig",
        Kind::Message(&[f("gpuDriverVersion", Kind::Enum(&GPU_DRIVER_VERSION))]),
    ),
    f(
        "gpuSharingConfig",
        Kind::Message(&[
            f("maxSharedClientsPerGpu", Kind::Int64),
            f("gpuSharingStrategy", Kind::Enum(&GPU_SHARING_STRATEGY)),
        ]),
    ),
];
const NODE_CONFIG: &[Field] = &[
    f("diskSizeGb", Kind::Int32),
    f("localSsdCount", Kind::Int32),
    f("accelerators", Kind::Message(ACCELERATOR)),
    f("taints", Kind::Message(TAINT)),
    f("labels", Kind::Map),
    f("metadata", Kind::Map),
    f("resourceLabels", Kind::Map),
];
const AUTOSCALING: &[Field] = &[
    f("minNodeCount", Kind::Int32),
    f("maxNodeCount", Kind::Int32),
    f("totalMinNodeCount", Kind::Int32),
    f("totalMaxNodeCount", Kind::Int32),
    f("locationPolicy", Kind::Enum(&LOCATION_POLICY)),
];
pub const NODE_POOL: &[Field] = &[
    f("config", Kind::Message(NODE_CONFIG)),
    f("initialNodeCount", Kind::Int32),
    f("autoscaling", Kind::Message(AUTOSCALING)),
    f("status", Kind::Enum(&NODE_POOL_STATUS)),
    f("maxPodsConstraint", Kind::Message(MAX_PODS)),
    f("podIpv4CidrSize", Kind::Int32),
];
pub const CLUSTER: &[Field] = &[
    f("initialNodeCount", Kind::Int32),
    f("nodeConfig", Kind::Message(NODE_CONFIG)),
    f("nodePools", Kind::Message(NODE_POOL)),
    f("releaseChannel", Kind::Message(RELEASE_CHANNEL_MSG)),
    f("resourceLabels", Kind::Map),
    f("status", Kind::Enum(&CLUSTER_STATUS)),
    f("currentNodeCount", Kind::Int32),
    f("nodeIpv4CidrSize", Kind::Int32),
    f("defaultMaxPodsConstraint", Kind::Message(MAX_PODS)),
];
pub const CREATE_CLUSTER_REQUEST: &[Field] = &[f("cluster", Kind::Message(CLUSTER))];
const METRIC: &[Field] = &[f("intValue", Kind::Int64)];
const PROGRESS_STAGE: &[Field] = &[
    f("status", Kind::Enum(&OPERATION_STATUS)),
    f("metrics", Kind::Message(METRIC)),
];
const PROGRESS: &[Field] = &[
    f("status", Kind::Enum(&OPERATION_STATUS)),
    f("metrics", Kind::Message(METRIC)),
    f("stages", Kind::Message(PROGRESS_STAGE)),
];
pub const OPERATION: &[Field] = &[
    f("operationType", Kind::Enum(&OPERATION_TYPE)),
    f("status", Kind::Enum(&OPERATION_STATUS)),
    f("progress", Kind::Message(PROGRESS)),
];
pub const SET_NODE_POOL_SIZE_REQUEST: &[Field] = &[f("nodeCount", Kind::Int32)];
pub const SET_NODE_POOL_AUTOSCALING_REQUEST: &[Field] =
    &[f("autoscaling", Kind::Message(AUTOSCALING))];
pub const CREATE_NODE_POOL_REQUEST: &[Field] = &[f("nodePool", Kind::Message(NODE_POOL))];
/// `NodeLabels` and `ResourceLabels`: a message around a map.
const LABELS_MESSAGE: &[Field] = &[f("labels", Kind::Map)];
pub const UPDATE_NODE_POOL_REQUEST: &[Field] = &[
    f("diskSizeGb", Kind::Int64),
    f("accelerators", Kind::Message(ACCELERATOR)),
    f(
        "taints",
        Kind::Message(&[f("taints", Kind::Message(TAINT))]),
    ),
    f("labels", Kind::Message(LABELS_MESSAGE)),
    f("resourceLabels", Kind::Message(LABELS_MESSAGE)),
];
const CLUSTER_UPDATE: &[Field] = &[f("desiredNodePoolAutoscaling", Kind::Message(AUTOSCALING))];
pub const UPDATE_CLUSTER_REQUEST: &[Field] = &[f("update", Kind::Message(CLUSTER_UPDATE))];
pub const SET_LABELS_REQUEST: &[Field] = &[f("resourceLabels", Kind::Map)];
pub const LIST_CLUSTERS: &[Field] = &[f("clusters", Kind::Message(CLUSTER))];
pub const LIST_NODE_POOLS: &[Field] = &[f("nodePools", Kind::Message(NODE_POOL))];
pub const LIST_OPERATIONS: &[Field] = &[f("operations", Kind::Message(OPERATION))];
pub const SERVER_CONFIG: &[Field] = &[f(
    "channels",
    Kind::Message(&[f("channel", Kind::Enum(&RELEASE_CHANNEL))]),
)];

/// Map fields that may turn up in messages not described above; their keys stay as sent.
pub const MAP_NAMES: &[&str] = &["labels", "resourceLabels", "metadata", "sysctls", "tags"];
