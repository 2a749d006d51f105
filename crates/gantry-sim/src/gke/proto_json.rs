//! Just enough of the proto3 JSON mapping to read what any client sends and to answer the way GKE
//! does.
//!
//! Requests are normalised into one canonical form the rest of the simulator works on: camelCase
//! keys, enums as names, integers as JSON numbers. Google's front end accepts snake_case keys,
//! enums as names or numbers and int64 as strings or numbers, and the official Rust client sends
//! enums as numbers and int64 as strings, so all of those must be read. Responses are encoded from
//! the canonical form: int64 as strings (as proto JSON does), enums as names, or as numbers when
//! the client asks with `$alt=json;enum-encoding=int`.

use serde_json::{Map, Value};

use super::errors::GkeError;
use super::schema::{EnumType, Field, Kind, MAP_NAMES};

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
    use crate::gke::schema::{CLUSTER, CREATE_CLUSTER_REQUEST};

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
