//! ConfigMaps as the API server validates them (`pkg/apis/core/validation.ValidateConfigMap`):
//! every key of `data` and `binaryData` a config key, no key in both, and the values together
//! (`binaryData` decoded) at most 1 MiB, `MaxSecretSize` as for a Secret.

use serde_json::Value;

use super::errors::ApiError;
use super::meta;
use super::resources::ResourceType;
use super::secrets::{MAX_SIZE, config_key_problem, decoded};

/// Admits a ConfigMap about to be stored, new or replacing another.
pub fn admit(resource: &ResourceType, obj: &mut Value) -> Result<(), ApiError> {
    let name = meta::name(obj).to_string();
    let mut causes = Vec::new();
    let mut size = 0;
    let binary = obj["binaryData"].as_object();
    for (key, value) in obj["data"].as_object().into_iter().flatten() {
        if let Some(why) = config_key_problem(key) {
            causes.push((
                format!("data[{key}]"),
                format!("Invalid value: \"{key}\": {why}"),
            ));
        }
        if binary.is_some_and(|b| b.contains_key(key)) {
            causes.push((
                format!("data[{key}]"),
                format!("Invalid value: \"{key}\": duplicate of key present in binaryData"),
            ));
        }
        size += value.as_str().map_or(0, str::len);
    }
    for (key, value) in binary.into_iter().flatten() {
        if let Some(why) = config_key_problem(key) {
            causes.push((
                format!("binaryData[{key}]"),
                format!("Invalid value: \"{key}\": {why}"),
            ));
        }
        size += decoded(value).len();
    }
    if size > MAX_SIZE {
        // The whole object's field, as the API server writes it: `[]: Too long: …`.
        causes.push((
            "[]".to_string(),
            format!("Too long: may not be more than {MAX_SIZE} bytes"),
        ));
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(resource, &name, &causes))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::kube::resources::Kind;
    use base64::Engine;
    use serde_json::json;

    fn encoded(len: usize) -> String {
        base64::engine::general_purpose::STANDARD.encode(vec![0u8; len])
    }

    #[test]
    fn a_mebibyte_of_binary_data_is_taken_and_a_byte_more_refused() {
        let resource = Kind::ConfigMap.resource();
        let mut fits = json!({"metadata": {"name": "c"},
            "binaryData": {"code.tar": encoded(MAX_SIZE - 2)}, "data": {"a": "xy"}});
        admit(resource, &mut fits).unwrap();
        let mut over = json!({"metadata": {"name": "c"},
            "binaryData": {"code.tar": encoded(MAX_SIZE - 1)}, "data": {"a": "xy"}});
        let err = admit(resource, &mut over).unwrap_err();
        assert_eq!(err.code, 422);
        assert!(err.message.contains("Too long"), "{}", err.message);
    }

    #[test]
    fn a_key_with_a_slash_or_in_both_maps_is_refused_naming_it() {
        let resource = Kind::ConfigMap.resource();
        let mut slash = json!({"metadata": {"name": "c"}, "data": {"src/train.py": "x"}});
        let err = admit(resource, &mut slash).unwrap_err();
        assert!(
            err.message.contains("data[src/train.py]"),
            "{}",
            err.message
        );
        let mut both = json!({"metadata": {"name": "c"}, "data": {"k": "x"},
            "binaryData": {"k": encoded(1)}});
        let err = admit(resource, &mut both).unwrap_err();
        assert!(err.message.contains("duplicate of key"), "{}", err.message);
    }
}
