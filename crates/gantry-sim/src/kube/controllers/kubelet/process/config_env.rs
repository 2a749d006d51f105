//! A container's own environment as the kubelet builds it (`kubelet_pods.go`,
//! `makeEnvironmentVariables`): `envFrom` sources in order, then `env`, a later name replacing
//! an earlier one, each value's `$(VAR)` expanded against what came before; values from
//! Secrets, ConfigMaps and the downward API; every value under a mount path rewritten to its
//! volume's directory (`launch::Mounts`). A Secret, ConfigMap or key that is required and
//! missing stops the container from being created (`CreateContainerConfigError`, with the
//! kubelet's message).

use serde_json::Value;

use super::launch::{Environment, Mounts};
use crate::kube::controllers::kubelet::env::field_path;
use crate::kube::resources::Kind;
use crate::kube::secrets::decoded;
use crate::kube::store::Store;

/// Adds the container's `envFrom` and `env` to `env` (what the image and runtime set);
/// Err(the kubelet's message) when a required source is missing.
pub fn add_container_env(
    env: &mut Environment,
    container: &Value,
    pod: &Value,
    store: &Store,
    mounts: &Mounts,
) -> Result<(), String> {
    let ns = pod
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default");
    for source in container["envFrom"].as_array().into_iter().flatten() {
        let prefix = source["prefix"].as_str().unwrap_or_default();
        let (kind, reference) = if source["secretRef"].is_object() {
            (Kind::Secret, &source["secretRef"])
        } else {
            (Kind::ConfigMap, &source["configMapRef"])
        };
        let name = reference["name"].as_str().unwrap_or_default();
        let Some(object) = store.get(kind, ns, name) else {
            if reference["optional"] == true {
                continue;
            }
            return Err(not_found(kind, name));
        };
        for (key, value) in values_of(kind, &object) {
            // Keys that are not variable names are skipped, as the kubelet skips them.
            if is_env_name(&key) {
                env.set(&format!("{prefix}{key}"), mounts.rewrite(&value));
            }
        }
    }
    for var in container["env"].as_array().into_iter().flatten() {
        let Some(name) = var["name"].as_str() else {
            continue;
        };
        let value = if let Some(value) = var["value"].as_str() {
            mounts.rewrite(&env.expand(value))
        } else if let Some(from) = var.get("valueFrom") {
            match value_from(from, pod, ns, store)? {
                Some(value) => mounts.rewrite(&value),
                // An optional key that is missing: the variable is not set at all.
                None => continue,
            }
        } else {
            String::new()
        };
        env.set(name, value);
    }
    Ok(())
}

fn value_from(
    from: &Value,
    pod: &Value,
    ns: &str,
    store: &Store,
) -> Result<Option<String>, String> {
    if let Some(path) = from.pointer("/fieldRef/fieldPath").and_then(Value::as_str) {
        return Ok(Some(field_path(pod, path)));
    }
    let (kind, selector) = if from["secretKeyRef"].is_object() {
        (Kind::Secret, &from["secretKeyRef"])
    } else if from["configMapKeyRef"].is_object() {
        (Kind::ConfigMap, &from["configMapKeyRef"])
    } else {
        // resourceFieldRef and anything newer: not simulated.
        return Ok(Some(String::new()));
    };
    let name = selector["name"].as_str().unwrap_or_default();
    let key = selector["key"].as_str().unwrap_or_default();
    let optional = selector["optional"] == true;
    let Some(object) = store.get(kind, ns, name) else {
        return if optional {
            Ok(None)
        } else {
            Err(not_found(kind, name))
        };
    };
    match values_of(kind, &object).into_iter().find(|(k, _)| k == key) {
        Some((_, value)) => Ok(Some(value)),
        None if optional => Ok(None),
        None => Err(format!(
            "couldn't find key {key} in {} {ns}/{name}",
            kind.resource().kind_name
        )),
    }
}

fn not_found(kind: Kind, name: &str) -> String {
    format!("{} \"{name}\" not found", kind.resource().singular)
}

/// Every key of a Secret (decoded) or ConfigMap (`data`, then `binaryData` decoded), as text.
fn values_of(kind: Kind, object: &Value) -> Vec<(String, String)> {
    let text = |v: &[u8]| String::from_utf8_lossy(v).into_owned();
    let mut out = Vec::new();
    for (key, value) in object["data"].as_object().into_iter().flatten() {
        let value = match kind {
            Kind::Secret => text(&decoded(value)),
            _ => value.as_str().unwrap_or_default().to_string(),
        };
        out.push((key.clone(), value));
    }
    if kind == Kind::ConfigMap {
        for (key, value) in object["binaryData"].as_object().into_iter().flatten() {
            out.push((key.clone(), text(&decoded(value))));
        }
    }
    out
}

/// A C identifier, as `IsEnvVarName` effectively needs for a process to read it.
fn is_env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn store() -> std::sync::Arc<Store> {
        let store = Store::new();
        store
            .create(
                Kind::Secret,
                json!({"metadata": {"name": "creds", "namespace": "default"},
                    "data": {"password": "aHVudGVyMg==", "user": "YWRh"}}),
            )
            .unwrap();
        store
            .create(
                Kind::ConfigMap,
                json!({"metadata": {"name": "cfg", "namespace": "default"},
                    "data": {"MODE": "fast", "bad key": "x"}, "binaryData": {"BLOB": "aGk="}}),
            )
            .unwrap();
        store
    }

    fn pod() -> Value {
        json!({"metadata": {"name": "p", "namespace": "default"}, "status": {"podIP": "127.9.9.9"}})
    }

    fn env_for(container: Value) -> Result<Vec<(String, String)>, String> {
        let mut env = Environment::default();
        env.set("PATH", "/bin".into());
        add_container_env(&mut env, &container, &pod(), &store(), &Mounts::default())?;
        Ok(env.into_vars())
    }

    #[test]
    fn values_come_from_secrets_config_maps_and_the_pod_and_expand_earlier_ones() {
        let vars = env_for(json!({
            "envFrom": [{"configMapRef": {"name": "cfg"}, "prefix": "CFG_"}],
            "env": [
                {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}},
                {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": "URL", "value": "http://$(IP):80/$(CFG_MODE)"},
                {"name": "NOPE", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "nope", "optional": true}}},
            ]
        }))
        .unwrap();
        let get = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("CFG_MODE"), Some("fast"));
        assert_eq!(get("CFG_BLOB"), Some("hi"));
        assert_eq!(get("CFG_bad key"), None);
        assert_eq!(get("PASSWORD"), Some("hunter2"));
        assert_eq!(get("URL"), Some("http://127.9.9.9:80/fast"));
        assert_eq!(get("NOPE"), None);
    }

    #[test]
    fn a_value_from_a_config_map_under_a_mount_path_names_the_volumes_directory() {
        let store = store();
        store
            .update(Kind::ConfigMap, "default", "cfg", |c| {
                c["data"]["CONFIG"] = json!("/etc/app/app.yaml");
            })
            .unwrap();
        let mounts = Mounts::new(vec![("/etc/app".into(), "/tmp/pod/volumes/app".into())]);
        let container = json!({"env": [{"name": "CONFIG",
            "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "CONFIG"}}}]});
        let mut env = Environment::default();
        add_container_env(&mut env, &container, &pod(), &store, &mounts).unwrap();
        assert_eq!(env.get("CONFIG"), Some("/tmp/pod/volumes/app/app.yaml"));
    }

    #[test]
    fn a_missing_required_key_or_source_is_the_kubelets_config_error() {
        let err = env_for(json!({"env": [{"name": "X",
            "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}}]}))
        .unwrap_err();
        assert_eq!(err, "couldn't find key token in Secret default/creds");
        let err = env_for(json!({"env": [{"name": "X",
            "valueFrom": {"configMapKeyRef": {"name": "absent", "key": "k"}}}]}))
        .unwrap_err();
        assert_eq!(err, "configmap \"absent\" not found");
        let err = env_for(json!({"envFrom": [{"secretRef": {"name": "absent"}}]})).unwrap_err();
        assert_eq!(err, "secret \"absent\" not found");
        assert!(
            env_for(json!({"envFrom": [{"secretRef": {"name": "absent", "optional": true}}]}))
                .is_ok()
        );
    }
}
