//! Secrets as the API server keeps them: `stringData` is write-only, merged into `data` (base64,
//! its values winning) on every create and update as the v1 conversion does, a Secret without a
//! `type` is `Opaque`, its keys are config keys, and all its data is at most 1 MiB
//! (`pkg/apis/core/validation.ValidateSecret`).

use base64::Engine;
use serde_json::{Map, Value, json};

use super::errors::ApiError;
use super::meta;
use super::resources::ResourceType;

/// `core.MaxSecretSize`.
pub(super) const MAX_SIZE: usize = 1024 * 1024;

/// Admits a Secret about to be stored, new or replacing another.
pub fn admit(resource: &ResourceType, obj: &mut Value) -> Result<(), ApiError> {
    let name = meta::name(obj).to_string();
    if let Some(Value::Object(string_data)) =
        obj.as_object_mut().and_then(|o| o.remove("stringData"))
    {
        if !obj["data"].is_object() {
            obj["data"] = json!({});
        }
        for (key, value) in string_data {
            let text = value.as_str().unwrap_or_default();
            obj["data"][key] = json!(base64::engine::general_purpose::STANDARD.encode(text));
        }
    }
    if obj
        .get("type")
        .is_none_or(|t| t.as_str().is_none_or(str::is_empty))
    {
        obj["type"] = json!("Opaque");
    }
    let mut causes = Vec::new();
    let mut size = 0;
    for (key, value) in obj["data"].as_object().into_iter().flatten() {
        if let Some(why) = config_key_problem(key) {
            causes.push((
                format!("data[{key}]"),
                format!("Invalid value: \"{key}\": {why}"),
            ));
        }
        size += decoded_len(value);
    }
    if size > MAX_SIZE {
        causes.push((
            "data".to_string(),
            format!("Too long: may not be more than {MAX_SIZE} bytes"),
        ));
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(resource, &name, &causes))
    }
}

/// A Secret's or ConfigMap's value, decoded (`data` is base64; the schema check has already
/// refused what is not).
pub fn decoded(value: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(value.as_str().unwrap_or_default())
        .unwrap_or_default()
}

fn decoded_len(value: &Value) -> usize {
    decoded(value).len()
}

/// `IsConfigMapKey`: what is wrong with `key` as a key of a Secret or ConfigMap.
pub(super) fn config_key_problem(key: &str) -> Option<String> {
    const RULE: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
    if key.len() > 253 {
        return Some("must be no more than 253 characters".into());
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if key.is_empty() || !key.chars().all(allowed) {
        return Some(RULE.into());
    }
    match key {
        "." => Some("must not be '.'".into()),
        ".." => Some("must not be '..'".into()),
        _ if key.starts_with("..") => Some("must not start with '..'".into()),
        _ => None,
    }
}

/// The number of keys `kubectl get secrets` shows as DATA.
pub fn key_count(secret: &Value) -> usize {
    secret["data"].as_object().map_or(0, Map::len)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::kube::resources::Kind;

    #[test]
    fn string_data_is_merged_into_data_and_wins() {
        let mut secret = json!({"metadata": {"name": "s"},
            "data": {"a": "b2xk", "keep": "eA=="}, "stringData": {"a": "new", "b": "two"}});
        admit(Kind::Secret.resource(), &mut secret).unwrap();
        assert_eq!(secret.get("stringData"), None);
        assert_eq!(secret["type"], "Opaque");
        assert_eq!(decoded(&secret["data"]["a"]), b"new");
        assert_eq!(decoded(&secret["data"]["b"]), b"two");
        assert_eq!(decoded(&secret["data"]["keep"]), b"x");
        assert_eq!(key_count(&secret), 3);
    }

    #[test]
    fn a_key_that_is_not_a_config_key_is_refused_naming_it() {
        let mut secret = json!({"metadata": {"name": "s"}, "stringData": {"a/b": "x"}});
        let err = admit(Kind::Secret.resource(), &mut secret).unwrap_err();
        assert_eq!(err.code, 422);
        assert!(err.message.contains("data[a/b]"), "{}", err.message);
    }

    #[test]
    fn more_than_a_mebibyte_is_refused() {
        let big = "x".repeat(MAX_SIZE + 1);
        let mut secret = json!({"metadata": {"name": "s"}, "stringData": {"big": big}});
        let err = admit(Kind::Secret.resource(), &mut secret).unwrap_err();
        assert!(err.message.contains("Too long"), "{}", err.message);
    }
}
