//! Just enough of the proto3 JSON mapping of google.container.v1 to read what any client sends and
//! to answer the way GKE does.
//!
//! Requests are normalised into one canonical form the rest of the simulator works on: camelCase
//! keys, enums as names, integers as JSON numbers. Google's front end accepts snake_case keys,
//! enums as names or numbers and int64 as strings or numbers, and the official Rust client sends
//! enums as numbers and int64 as strings, so all of those must be read. Responses are encoded from
//! the canonical form: int64 as strings (as proto JSON does), enums as names, or as numbers when
//! the client asks with `$alt=json;enum-encoding=int`.
//!
//! Only fields whose JSON type needs care are described; every other field passes through with
//! its keys camelCased.

use serde_json::{Map, Value};

use super::errors::GkeError;

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

pub const CLUSTER_STATUS: EnumType = EnumType {
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
pub const NODE_POOL_STATUS: EnumType = EnumType {
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
pub const OPERATION_STATUS: EnumType = EnumType {
    proto: "google.container.v1.Operation.Status",
    values: &[
        (0, "STATUS_UNSPECIFIED"),
        (1, "PENDING"),
        (2, "RUNNING"),
        (3, "DONE"),
        (4, "ABORTING"),
    ],
};
pub const OPERATION_TYPE: EnumType = EnumType {
    proto: "google.container.v1.Operation.Type",
    values: &[
        (0, "TYPE_UNSPECIFIED"),
        (1, "CREATE_CLUSTER"),
        (2, "DELETE_CLUSTER"),
    ],
};
pub const RELEASE_CHANNEL: EnumType = EnumType {
    proto: "google.container.v1.ReleaseChannel.Channel",
    values: &[
        (0, "UNSPECIFIED"),
        (1, "RAPID"),
        (2, "REGULAR"),
        (3, "STABLE"),
        (4, "EXTENDED"),
    ],
};
pub const TAINT_EFFECT: EnumType = EnumType {
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
pub const NODE_CONFIG: &[Field] = &[
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
pub const LIST_CLUSTERS: &[Field] = &[f("clusters", Kind::Message(CLUSTER))];
pub const LIST_NODE_POOLS: &[Field] = &[f("nodePools", Kind::Message(NODE_POOL))];
pub const LIST_OPERATIONS: &[Field] = &[f("operations", Kind::Message(OPERATION))];
pub const SERVER_CONFIG: &[Field] = &[f(
    "channels",
    Kind::Message(&[f("channel", Kind::Enum(&RELEASE_CHANNEL))]),
)];

/// Map fields that may turn up in messages not described above; their keys stay as sent.
const MAP_NAMES: &[&str] = &["labels", "resourceLabels", "metadata", "sysctls", "tags"];

/// Reads a request body of the given message type into the canonical form.
pub fn normalise(value: Value, message: &'static [Field]) -> Result<Value, GkeError> {
    Ok(normalise_kind(value, Kind::Message(message), "")?.unwrap_or(Value::Object(Map::new())))
}

/// Encodes a canonical value of the given message type the way GKE answers.
pub fn encode(mut value: Value, message: &'static [Field], enums_as_numbers: bool) -> Value {
    encode_kind(&mut value, Kind::Message(message), enums_as_numbers);
    value
}

/// `node_config` → `nodeConfig`; camelCase keys are left as they are.
pub fn camel_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper_next = false;
    for c in key.chars() {
        if c == '_' && !out.is_empty() {
            upper_next = true;
        } else if upper_next {
            out.extend(c.to_uppercase());
            upper_next = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `nodeConfig` → `node_config`, for error messages, which Google words in proto field names.
pub fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn invalid_value(path: &str, type_name: &str, value: &Value) -> GkeError {
    GkeError::invalid(format!("Invalid value at '{path}' ({type_name}), {value}"))
}

/// None means the field is absent: proto JSON reads `null` as the default value.
fn normalise_kind(value: Value, kind: Kind, path: &str) -> Result<Option<Value>, GkeError> {
    let value = match value {
        Value::Null => return Ok(None),
        Value::Array(items) if !matches!(kind, Kind::Map) => {
            let items = items
                .into_iter()
                .enumerate()
                .map(|(i, v)| normalise_kind(v, kind, &format!("{path}[{i}]")))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Some(Value::Array(items.into_iter().flatten().collect())));
        }
        other => other,
    };
    let normalised = match kind {
        Kind::Message(fields) => match value {
            Value::Object(map) => Value::Object(normalise_message(map, fields, path)?),
            other => return Err(invalid_value(path, "an object", &other)),
        },
        Kind::Any => match value {
            Value::Object(map) => Value::Object(normalise_message(map, &[], path)?),
            other => other,
        },
        Kind::Enum(enum_type) => Value::String(normalise_enum(value, enum_type, path)?.into()),
        Kind::Int32 => Value::from(normalise_int(
            value,
            path,
            "TYPE_INT32",
            i32::MIN.into(),
            i32::MAX.into(),
        )?),
        Kind::Int64 => Value::from(normalise_int(
            value,
            path,
            "TYPE_INT64",
            i64::MIN,
            i64::MAX,
        )?),
        Kind::Map => value,
    };
    Ok(Some(normalised))
}

fn normalise_message(
    map: Map<String, Value>,
    fields: &'static [Field],
    path: &str,
) -> Result<Map<String, Value>, GkeError> {
    let mut out = Map::new();
    for (key, value) in map {
        let name = camel_case(&key);
        let kind = field_kind(fields, &name);
        let child = if path.is_empty() {
            snake_case(&name)
        } else {
            format!("{path}.{}", snake_case(&name))
        };
        if let Some(value) = normalise_kind(value, kind, &child)?
            && out.insert(name, value).is_some()
        {
            return Err(GkeError::invalid(format!(
                "Invalid JSON payload received. Multiple values for field '{child}'."
            )));
        }
    }
    Ok(out)
}

fn field_kind(fields: &'static [Field], name: &str) -> Kind {
    match fields.iter().find(|f| f.name == name) {
        Some(field) => field.kind,
        None if MAP_NAMES.contains(&name) => Kind::Map,
        None => Kind::Any,
    }
}

fn normalise_enum(
    value: Value,
    enum_type: &EnumType,
    path: &str,
) -> Result<&'static str, GkeError> {
    let known = match &value {
        Value::String(name) => enum_type
            .values
            .iter()
            .find(|(_, s)| s == name)
            .map(|(_, s)| *s),
        Value::Number(n) => n.as_i64().and_then(|n| enum_type.name_of(n)),
        _ => None,
    };
    known.ok_or_else(|| {
        invalid_value(
            path,
            &format!("type.googleapis.com/{}", enum_type.proto),
            &value,
        )
    })
}

fn normalise_int(
    value: Value,
    path: &str,
    type_name: &str,
    min: i64,
    max: i64,
) -> Result<i64, GkeError> {
    let parsed = match &value {
        Value::Number(n) => n.as_i64().or_else(|| {
            // Proto JSON accepts 3.0 for an integer field, not 3.5.
            n.as_f64()
                .filter(|x| x.fract() == 0.0 && x.abs() < 9.0e15)
                .map(|x| x as i64)
        }),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    parsed
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| invalid_value(path, type_name, &value))
}

fn encode_kind(value: &mut Value, kind: Kind, enums_as_numbers: bool) {
    match (value, kind) {
        (Value::Array(items), _) => {
            for item in items {
                encode_kind(item, kind, enums_as_numbers);
            }
        }
        (Value::Object(map), Kind::Message(fields)) => {
            for field in fields {
                if let Some(v) = map.get_mut(field.name) {
                    encode_kind(v, field.kind, enums_as_numbers);
                }
            }
        }
        (v @ Value::Number(_), Kind::Int64) => *v = Value::String(v.to_string()),
        (v @ Value::String(_), Kind::Enum(enum_type)) if enums_as_numbers => {
            if let Some(n) = v.as_str().and_then(|s| enum_type.number_of(s)) {
                *v = Value::from(n);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use serde_json::json;

    use super::*;

    #[test]
    fn recases_keys() {
        assert_eq!(camel_case("node_config"), "nodeConfig");
        assert_eq!(
            camel_case("gpu_driver_installation_config"),
            "gpuDriverInstallationConfig"
        );
        assert_eq!(camel_case("diskSizeGb"), "diskSizeGb");
        assert_eq!(snake_case("diskSizeGb"), "disk_size_gb");
    }

    #[test]
    fn normalises_snake_case_numbers_and_enum_numbers() {
        let sent = json!({"cluster": {
            "name": "c",
            "initial_node_count": "3",
            "release_channel": {"channel": 1},
            "resource_labels": {"team_name": "ml"},
            "node_config": {
                "machine_type": "n1-standard-4",
                "disk_size_gb": 50,
                "labels": {"pool_kind": "gpu"},
                "accelerators": [{"accelerator_count": "2", "accelerator_type": "nvidia-tesla-t4",
                    "gpu_driver_installation_config": {"gpu_driver_version": "LATEST"}}],
                "taints": [{"key": "k", "value": "v", "effect": 3}],
                "shielded_instance_config": {"enable_secure_boot": true}
            },
            "description": null
        }});
        let got = normalise(sent, CREATE_CLUSTER_REQUEST).unwrap();
        assert_eq!(
            got,
            json!({"cluster": {
                "name": "c",
                "initialNodeCount": 3,
                "releaseChannel": {"channel": "RAPID"},
                "resourceLabels": {"team_name": "ml"},
                "nodeConfig": {
                    "machineType": "n1-standard-4",
                    "diskSizeGb": 50,
                    "labels": {"pool_kind": "gpu"},
                    "accelerators": [{"acceleratorCount": 2, "acceleratorType": "nvidia-tesla-t4",
                        "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}],
                    "taints": [{"key": "k", "value": "v", "effect": "NO_EXECUTE"}],
                    "shieldedInstanceConfig": {"enableSecureBoot": true}
                }
            }})
        );
    }

    #[test]
    fn explains_bad_values_in_proto_terms() {
        let err = normalise(
            json!({"cluster": {"releaseChannel": {"channel": "FAST"}}}),
            CREATE_CLUSTER_REQUEST,
        )
        .unwrap_err();
        assert_eq!(err.status, "INVALID_ARGUMENT");
        assert!(
            err.message.contains("cluster.release_channel.channel"),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("ReleaseChannel.Channel"),
            "{}",
            err.message
        );
        let err = normalise(
            json!({"cluster": {"initialNodeCount": "three"}}),
            CREATE_CLUSTER_REQUEST,
        )
        .unwrap_err();
        assert!(err.message.contains("TYPE_INT32"), "{}", err.message);
        let err = normalise(
            json!({"cluster": {"initialNodeCount": 1.5}}),
            CREATE_CLUSTER_REQUEST,
        );
        assert!(err.is_err());
        let err = normalise(
            json!({"cluster": {"node_config": {}, "nodeConfig": {}}}),
            CREATE_CLUSTER_REQUEST,
        );
        assert!(err.is_err());
    }

    #[test]
    fn encodes_int64_as_strings_and_enums_on_request() {
        let cluster = json!({"status": "RUNNING", "currentNodeCount": 3,
            "releaseChannel": {"channel": "REGULAR"},
            "nodePools": [{"status": "RUNNING", "config": {"accelerators": [{"acceleratorCount": 1}]}}]});
        let named = encode(cluster.clone(), CLUSTER, false);
        assert_eq!(named["status"], "RUNNING");
        assert_eq!(named["currentNodeCount"], 3);
        assert_eq!(
            named["nodePools"][0]["config"]["accelerators"][0]["acceleratorCount"],
            "1"
        );
        let numbered = encode(cluster, CLUSTER, true);
        assert_eq!(numbered["status"], 2);
        assert_eq!(numbered["releaseChannel"]["channel"], 2);
        assert_eq!(numbered["nodePools"][0]["status"], 2);
    }
}
