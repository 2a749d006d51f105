//! What the API server does to an object before storing it: name generation, decoding against the
//! real schema (unknown fields refused under `fieldValidation=Strict`), defaults and validation.

use serde_json::{Map, Value, json};

use super::errors::ApiError;
use super::meta;
use super::names;
use super::resources::{Kind, ResourceType};
use super::store::Store;

/// How unknown fields are treated, from the request's `fieldValidation` parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FieldValidation {
    Ignore,
    Warn,
    Strict,
}

impl FieldValidation {
    pub fn parse(v: Option<&str>) -> Self {
        match v {
            Some("Strict") => Self::Strict,
            Some("Ignore") => Self::Ignore,
            _ => Self::Warn,
        }
    }
}

/// Unknown-field warnings to send back as `Warning` headers.
pub type Warnings = Vec<String>;

/// Decodes `obj` as the kind's real type and reports the fields that type does not have.
pub fn check_schema(
    resource: &ResourceType,
    obj: &Value,
    validation: FieldValidation,
) -> Result<Warnings, ApiError> {
    let decoded = match resource.kind {
        Kind::Pod => roundtrip::<k8s_openapi::api::core::v1::Pod>(obj),
        Kind::Job => roundtrip::<k8s_openapi::api::batch::v1::Job>(obj),
        Kind::Service => roundtrip::<k8s_openapi::api::core::v1::Service>(obj),
        Kind::Namespace => roundtrip::<k8s_openapi::api::core::v1::Namespace>(obj),
        Kind::Node => roundtrip::<k8s_openapi::api::core::v1::Node>(obj),
        Kind::Event => roundtrip::<k8s_openapi::api::core::v1::Event>(obj),
        Kind::ConfigMap => roundtrip::<k8s_openapi::api::core::v1::ConfigMap>(obj),
        Kind::Secret => roundtrip::<k8s_openapi::api::core::v1::Secret>(obj),
        Kind::Lease => roundtrip::<k8s_openapi::api::coordination::v1::Lease>(obj),
        kind => super::schemas::roundtrip_kind(kind, obj),
    };
    let back = decoded.map_err(|e| {
        ApiError::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: {e}",
            kind = resource.kind_name,
            version = resource.version
        ))
    })?;
    if validation == FieldValidation::Ignore {
        return Ok(Vec::new());
    }
    let mut unknown = Vec::new();
    unknown_fields(obj, &back, "", &mut unknown);
    if unknown.is_empty() {
        return Ok(Vec::new());
    }
    match validation {
        FieldValidation::Strict => Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            unknown
                .iter()
                .map(|f| format!("unknown field \"{f}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        _ => Ok(unknown
            .into_iter()
            .map(|f| format!("unknown field \"{f}\""))
            .collect()),
    }
}

pub(super) fn roundtrip<T: serde::de::DeserializeOwned + serde::Serialize>(
    obj: &Value,
) -> Result<Value, String> {
    let typed: T = serde_json::from_value(obj.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

fn unknown_fields(input: &Value, known: &Value, path: &str, out: &mut Vec<String>) {
    match (input, known) {
        (Value::Object(i), Value::Object(k)) => {
            for (key, value) in i {
                let sub = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match k.get(key) {
                    Some(kv) => unknown_fields(value, kv, &sub, out),
                    None if value.is_null() => {}
                    // Empty objects and lists round-trip to nothing for some optional fields.
                    None if value.as_object().is_some_and(Map::is_empty)
                        || value.as_array().is_some_and(Vec::is_empty) => {}
                    None => out.push(sub),
                }
            }
        }
        (Value::Array(i), Value::Array(k)) => {
            for (n, (iv, kv)) in i.iter().zip(k).enumerate() {
                unknown_fields(iv, kv, &format!("{path}[{n}]"), out);
            }
        }
        _ => {}
    }
}

/// Fills in what the server owns on create: name from generateName, namespace, uid, timestamps.
pub fn stamp_new(
    resource: &ResourceType,
    obj: &mut Value,
    namespace: Option<&str>,
) -> Result<(), ApiError> {
    if !obj.is_object() {
        return Err(ApiError::bad_request("the body is not a JSON object"));
    }
    obj["apiVersion"] = json!(resource.api_version());
    obj["kind"] = json!(resource.kind_name);
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    let metadata = &mut obj["metadata"];
    if metadata
        .get("name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        match metadata.get("generateName").and_then(Value::as_str) {
            Some(prefix) if !prefix.is_empty() => {
                metadata["name"] = json!(format!("{prefix}{}", meta::random_suffix(5)));
            }
            _ => {
                return Err(ApiError::invalid(
                    resource,
                    "",
                    &[(
                        "metadata.name".into(),
                        "Required value: name or generateName is required".into(),
                    )],
                ));
            }
        }
    }
    if resource.namespaced {
        let requested = namespace.unwrap_or("default");
        match metadata.get("namespace").and_then(Value::as_str) {
            Some(ns) if !ns.is_empty() && ns != requested => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => metadata["namespace"] = json!(requested),
        }
    } else if let Some(m) = metadata.as_object_mut() {
        m.remove("namespace");
    }
    let name = metadata["name"].as_str().unwrap_or_default().to_string();
    let problems = names::object_name(resource.kind, &name);
    if !problems.is_empty() {
        let causes: Vec<(String, String)> = problems
            .iter()
            .map(|p| {
                (
                    "metadata.name".to_string(),
                    format!("Invalid value: \"{name}\": {p}"),
                )
            })
            .collect();
        return Err(ApiError::invalid(resource, &name, &causes));
    }
    if let Some(m) = metadata.as_object_mut() {
        m.insert("uid".into(), json!(meta::new_uid()));
        m.insert("creationTimestamp".into(), json!(meta::now()));
        m.remove("resourceVersion");
        m.remove("deletionTimestamp");
        m.remove("selfLink");
        if resource.kind == Kind::Job {
            m.insert("generation".into(), json!(1));
        }
    }
    Ok(())
}

/// The namespace must exist and not be going away.
pub fn check_namespace(
    store: &Store,
    resource: &ResourceType,
    namespace: &str,
) -> Result<(), ApiError> {
    if !resource.namespaced {
        return Ok(());
    }
    match store.get(Kind::Namespace, "", namespace) {
        None => Err(ApiError {
            details: json!({"name": namespace, "kind": "namespaces"}),
            ..ApiError::new(
                404,
                "NotFound",
                format!("namespaces \"{namespace}\" not found"),
            )
        }),
        Some(ns) if meta::is_deleting(&ns) => Err(ApiError::new(
            403,
            "Forbidden",
            format!(
                "unable to create new content in namespace {namespace} because it is being terminated"
            ),
        )),
        Some(_) => Ok(()),
    }
}

/// What the kind's strategy validates on every update (`ValidateUpdate`), on the object about to
/// be stored: a Lease, a Secret and a ConfigMap are checked again.
pub fn admit_update(resource: &ResourceType, obj: &mut Value) -> Result<(), ApiError> {
    match resource.kind {
        Kind::Lease => super::lease::admit(resource, obj),
        Kind::Secret => super::secrets::admit(resource, obj),
        Kind::ConfigMap => super::configmaps::admit(resource, obj),
        _ => Ok(()),
    }
}

pub use super::defaults::apply_defaults;
