//! Request bodies in Kubernetes' protobuf encoding, which kubectl's typed commands send
//! (`kubectl create serviceaccount`, `create role`, `create rolebinding`, `create token`,
//! `auth can-i`, `auth whoami`, `create secret`, `create configmap`): the `k8s\0` envelope (`runtime.Unknown`) and, inside it, the
//! object in its `generated.proto` form, read into the JSON every handler takes. Only the kinds
//! those commands send are known here, with the fields they set; any other kind is refused with
//! 415, saying to send JSON (as `kubectl apply -f` and `create -f` do).

use std::collections::BTreeMap;

use prost::Message;
use serde::Serialize;
use serde_json::Value;

use crate::kube::errors::ApiError;

pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";
const MAGIC: &[u8] = b"k8s\0";

#[derive(Clone, PartialEq, Message)]
struct TypeMeta {
    #[prost(string, optional, tag = "1")]
    api_version: Option<String>,
    #[prost(string, optional, tag = "2")]
    kind: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
struct Unknown {
    #[prost(message, optional, tag = "1")]
    type_meta: Option<TypeMeta>,
    #[prost(bytes = "vec", optional, tag = "2")]
    raw: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message, Serialize)]
#[serde(rename_all = "camelCase")]
struct ObjectMeta {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(string, optional, tag = "2")]
    generate_name: Option<String>,
    #[prost(string, optional, tag = "3")]
    namespace: Option<String>,
    #[prost(string, optional, tag = "6")]
    resource_version: Option<String>,
    #[prost(btree_map = "string, string", tag = "11")]
    labels: BTreeMap<String, String>,
    #[prost(btree_map = "string, string", tag = "12")]
    annotations: BTreeMap<String, String>,
}

#[derive(Clone, PartialEq, Message, Serialize)]
#[serde(rename_all = "camelCase")]
struct LocalObjectReference {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
}

#[derive(Clone, PartialEq, Message, Serialize)]
#[serde(rename_all = "camelCase")]
struct ServiceAccount {
    #[prost(message, optional, tag = "1")]
    metadata: Option<ObjectMeta>,
    #[prost(message, repeated, tag = "3")]
    image_pull_secrets: Vec<LocalObjectReference>,
    #[prost(bool, optional, tag = "4")]
    automount_service_account_token: Option<bool>,
}

#[derive(Clone, PartialEq, Message, Serialize)]
#[serde(rename_all = "camelCase")]
struct PolicyRule {
    #[prost(string, repeated, tag = "1")]
    verbs: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    api_groups: Vec<String>,
    #[prost(string, repeated, tag = "3")]
    resources: Vec<String>,
    #[prost(string, repeated, tag = "4")]
    resource_names: Vec<String>,
    #[prost(string, repeated, tag = "5")]
    #[serde(rename = "nonResourceURLs")]
    non_resource_urls: Vec<String>,
}

/// A Role or a ClusterRole.
#[derive(Clone, PartialEq, Message, Serialize)]
struct Role {
    #[prost(message, optional, tag = "1")]
    metadata: Option<ObjectMeta>,
    #[prost(message, repeated, tag = "2")]
    rules: Vec<PolicyRule>,
}

#[derive(Clone, PartialEq, Message, Serialize)]
#[serde(rename_all = "camelCase")]
struct Subject {
    #[prost(string, optional, tag = "1")]
    kind: Option<String>,
    #[prost(string, optional, tag = "2")]
    api_group: Option<String>,
    #[prost(string, optional, tag = "3")]
    name: Option<String>,
    #[prost(string, optional, tag = "4")]
    namespace: Option<String>,
}

#[derive(Clone, PartialEq, Message, Serialize)]
#[serde(rename_all = "camelCase")]
struct RoleRef {
    #[prost(string, optional, tag = "1")]
    api_group: Option<String>,
    #[prost(string, optional, tag = "2")]
    kind: Option<String>,
    #[prost(string, optional, tag = "3")]
    name: Option<String>,
}

/// A RoleBinding or a ClusterRoleBinding.
#[derive(Clone, PartialEq, Message, Serialize)]
#[serde(rename_all = "camelCase")]
struct RoleBinding {
    #[prost(message, optional, tag = "1")]
    metadata: Option<ObjectMeta>,
    #[prost(message, repeated, tag = "2")]
    subjects: Vec<Subject>,
    #[prost(message, optional, tag = "3")]
    role_ref: Option<RoleRef>,
}

#[derive(Clone, PartialEq, Message, Serialize)]
#[serde(rename_all = "camelCase")]
struct BoundObjectReference {
    #[prost(string, optional, tag = "1")]
    kind: Option<String>,
    #[prost(string, optional, tag = "2")]
    api_version: Option<String>,
    #[prost(string, optional, tag = "3")]
    name: Option<String>,
    #[prost(string, optional, tag = "4")]
    uid: Option<String>,
}

#[derive(Clone, PartialEq, Message, Serialize)]
#[serde(rename_all = "camelCase")]
struct TokenRequestSpec {
    #[prost(string, repeated, tag = "1")]
    audiences: Vec<String>,
    #[prost(message, optional, tag = "3")]
    bound_object_ref: Option<BoundObjectReference>,
    #[prost(int64, optional, tag = "4")]
    expiration_seconds: Option<i64>,
}

/// A Secret; its `data` is bytes, which JSON carries in base64.
#[derive(Clone, PartialEq, Message)]
struct Secret {
    #[prost(message, optional, tag = "1")]
    metadata: Option<ObjectMeta>,
    #[prost(btree_map = "string, bytes", tag = "2")]
    data: BTreeMap<String, Vec<u8>>,
    #[prost(string, optional, tag = "3")]
    type_: Option<String>,
    #[prost(btree_map = "string, string", tag = "4")]
    string_data: BTreeMap<String, String>,
    #[prost(bool, optional, tag = "5")]
    immutable: Option<bool>,
}

#[derive(Clone, PartialEq, Message)]
struct ConfigMap {
    #[prost(message, optional, tag = "1")]
    metadata: Option<ObjectMeta>,
    #[prost(btree_map = "string, string", tag = "2")]
    data: BTreeMap<String, String>,
    #[prost(btree_map = "string, bytes", tag = "3")]
    binary_data: BTreeMap<String, Vec<u8>>,
    #[prost(bool, optional, tag = "4")]
    immutable: Option<bool>,
}

fn base64_values(map: &BTreeMap<String, Vec<u8>>) -> Value {
    use base64::Engine;
    let encode = |v: &Vec<u8>| Value::String(base64::engine::general_purpose::STANDARD.encode(v));
    Value::Object(map.iter().map(|(k, v)| (k.clone(), encode(v))).collect())
}

fn secret_json(secret: Secret) -> Value {
    serde_json::json!({
        "metadata": secret.metadata,
        "data": base64_values(&secret.data),
        "type": secret.type_,
        "stringData": secret.string_data,
        "immutable": secret.immutable,
    })
}

fn config_map_json(config_map: ConfigMap) -> Value {
    serde_json::json!({
        "metadata": config_map.metadata,
        "data": config_map.data,
        "binaryData": base64_values(&config_map.binary_data),
        "immutable": config_map.immutable,
    })
}

/// A request whose body is metadata and a spec (TokenRequest, the reviews).
#[derive(Clone, PartialEq, Message, Serialize)]
struct WithSpec<S: Message + Default + Serialize + std::fmt::Debug> {
    #[prost(message, optional, tag = "1")]
    metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    spec: Option<S>,
}

#[derive(Clone, PartialEq, Message, Serialize)]
#[serde(rename_all = "camelCase")]
struct ResourceAttributes {
    #[prost(string, optional, tag = "1")]
    namespace: Option<String>,
    #[prost(string, optional, tag = "2")]
    verb: Option<String>,
    #[prost(string, optional, tag = "3")]
    group: Option<String>,
    #[prost(string, optional, tag = "4")]
    version: Option<String>,
    #[prost(string, optional, tag = "5")]
    resource: Option<String>,
    #[prost(string, optional, tag = "6")]
    subresource: Option<String>,
    #[prost(string, optional, tag = "7")]
    name: Option<String>,
}

#[derive(Clone, PartialEq, Message, Serialize)]
#[serde(rename_all = "camelCase")]
struct NonResourceAttributes {
    #[prost(string, optional, tag = "1")]
    path: Option<String>,
    #[prost(string, optional, tag = "2")]
    verb: Option<String>,
}

/// The spec of a SelfSubjectAccessReview, or of a SubjectAccessReview with its subject.
#[derive(Clone, PartialEq, Message, Serialize)]
#[serde(rename_all = "camelCase")]
struct AccessReviewSpec {
    #[prost(message, optional, tag = "1")]
    resource_attributes: Option<ResourceAttributes>,
    #[prost(message, optional, tag = "2")]
    non_resource_attributes: Option<NonResourceAttributes>,
    #[prost(string, optional, tag = "3")]
    user: Option<String>,
    #[prost(string, repeated, tag = "4")]
    groups: Vec<String>,
    #[prost(string, optional, tag = "6")]
    uid: Option<String>,
}

#[derive(Clone, PartialEq, Message, Serialize)]
struct RulesReviewSpec {
    #[prost(string, optional, tag = "1")]
    namespace: Option<String>,
}

/// A protobuf body read as JSON; any other body is returned as it is.
pub fn json_body(content_type: Option<&str>, body: bytes::Bytes) -> Result<bytes::Bytes, ApiError> {
    let is_protobuf = content_type
        .and_then(|c| c.split(';').next())
        .is_some_and(|c| c.trim() == CONTENT_TYPE);
    if !is_protobuf || body.is_empty() {
        return Ok(body);
    }
    let object = to_json(&body)?;
    Ok(bytes::Bytes::from(object.to_string()))
}

/// The object a protobuf body holds, as JSON with its `apiVersion` and `kind`.
pub fn to_json(body: &[u8]) -> Result<Value, ApiError> {
    let unreadable = |e: &dyn std::fmt::Display| {
        ApiError::bad_request(format!("the protobuf body cannot be read: {e}"))
    };
    let envelope = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| unreadable(&"it does not start with the k8s protobuf prefix"))?;
    let unknown = Unknown::decode(envelope).map_err(|e| unreadable(&e))?;
    let type_meta = unknown.type_meta.unwrap_or_default();
    let api_version = type_meta.api_version.unwrap_or_default();
    let kind = type_meta.kind.unwrap_or_default();
    let raw = unknown.raw.unwrap_or_default();
    fn read<T: Message + Default + Serialize>(raw: &[u8]) -> Result<Value, prost::DecodeError> {
        T::decode(raw).map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
    }
    let decoded = match kind.as_str() {
        "ServiceAccount" => read::<ServiceAccount>(&raw),
        "Role" | "ClusterRole" => read::<Role>(&raw),
        "RoleBinding" | "ClusterRoleBinding" => read::<RoleBinding>(&raw),
        "TokenRequest" => read::<WithSpec<TokenRequestSpec>>(&raw),
        "SelfSubjectAccessReview" | "SubjectAccessReview" => {
            read::<WithSpec<AccessReviewSpec>>(&raw)
        }
        "SelfSubjectRulesReview" => read::<WithSpec<RulesReviewSpec>>(&raw),
        "SelfSubjectReview" => read::<WithSpec<RulesReviewSpec>>(&raw),
        "Secret" => Secret::decode(raw.as_slice()).map(secret_json),
        "ConfigMap" => ConfigMap::decode(raw.as_slice()).map(config_map_json),
        _ => {
            return Err(ApiError::new(
                415,
                "UnsupportedMediaType",
                format!(
                    "the simulated API server reads protobuf bodies of the kinds kubectl's typed commands send, not {kind:?}: send it as application/json (kubectl apply -f or create -f do)"
                ),
            ));
        }
    };
    let mut object = decoded.map_err(|e| unreadable(&e))?;
    prune(&mut object);
    if let Some(map) = object.as_object_mut() {
        map.insert("apiVersion".into(), Value::String(api_version));
        map.insert("kind".into(), Value::String(kind));
    }
    Ok(object)
}

/// Drops the fields protobuf could not leave out (empty lists and maps, unset scalars), so the
/// object reads as its JSON form would.
fn prune(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for v in map.values_mut() {
                prune(v);
            }
            map.retain(|_, v| !is_empty(v));
        }
        Value::Array(items) => items.iter_mut().for_each(prune),
        _ => {}
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn envelope(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
        let unknown = Unknown {
            type_meta: Some(TypeMeta {
                api_version: Some(api_version.into()),
                kind: Some(kind.into()),
            }),
            raw: Some(raw),
        };
        let mut body = MAGIC.to_vec();
        body.extend(unknown.encode_to_vec());
        body
    }

    #[test]
    fn a_role_sent_as_protobuf_reads_as_its_json() {
        let role = Role {
            metadata: Some(ObjectMeta {
                name: Some("pod-reader".into()),
                ..ObjectMeta::default()
            }),
            rules: vec![PolicyRule {
                verbs: vec!["get".into(), "list".into()],
                api_groups: vec![String::new()],
                resources: vec!["pods".into()],
                ..PolicyRule::default()
            }],
        };
        let body = envelope("rbac.authorization.k8s.io/v1", "Role", role.encode_to_vec());
        assert_eq!(
            to_json(&body).unwrap(),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "pod-reader"},
                "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]})
        );
    }

    #[test]
    fn a_token_request_keeps_its_expiration_and_audiences() {
        let request = WithSpec {
            metadata: None,
            spec: Some(TokenRequestSpec {
                audiences: vec!["vault".into()],
                bound_object_ref: None,
                expiration_seconds: Some(7200),
            }),
        };
        let body = envelope(
            "authentication.k8s.io/v1",
            "TokenRequest",
            request.encode_to_vec(),
        );
        let object = to_json(&body).unwrap();
        assert_eq!(
            object["spec"],
            json!({"audiences": ["vault"], "expirationSeconds": 7200})
        );
    }

    #[test]
    fn a_secret_sent_as_protobuf_carries_its_data_in_base64() {
        let secret = Secret {
            metadata: Some(ObjectMeta {
                name: Some("db".into()),
                ..ObjectMeta::default()
            }),
            data: BTreeMap::from([("password".to_string(), b"hunter2".to_vec())]),
            type_: Some("Opaque".into()),
            ..Secret::default()
        };
        let body = envelope("v1", "Secret", secret.encode_to_vec());
        assert_eq!(
            to_json(&body).unwrap(),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
                "data": {"password": "aHVudGVyMg=="}, "type": "Opaque"})
        );
        let config_map = ConfigMap {
            metadata: None,
            data: BTreeMap::from([("mode".to_string(), "fast".to_string())]),
            binary_data: BTreeMap::from([("blob".to_string(), vec![0, 1])]),
            immutable: None,
        };
        let body = envelope("v1", "ConfigMap", config_map.encode_to_vec());
        let object = to_json(&body).unwrap();
        assert_eq!(object["data"], json!({"mode": "fast"}));
        assert_eq!(object["binaryData"], json!({"blob": "AAE="}));
    }

    #[test]
    fn other_kinds_and_garbage_are_refused_saying_what_to_send() {
        let body = envelope("apps/v1", "Deployment", Vec::new());
        let refused = to_json(&body).unwrap_err();
        assert_eq!(refused.code, 415);
        assert!(
            refused.message.contains("application/json"),
            "{}",
            refused.message
        );
        assert_eq!(to_json(b"{}").unwrap_err().code, 400);
        let json = bytes::Bytes::from_static(b"{\"a\":1}");
        assert_eq!(
            json_body(Some("application/json"), json.clone()).unwrap(),
            json
        );
    }
}
