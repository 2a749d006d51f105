//! A process pod's volumes, each a directory of the pod's own directory, filled as the kubelet
//! fills them: a Secret's or ConfigMap's keys (all, or the `items` chosen, at their `path` with
//! their `mode`, else `defaultMode`, 0644 by default), `binaryData` too, downward-API fields,
//! projected sources together, a service account token, and `emptyDir` empty. A `hostPath` is
//! the machine's own path. Any other source is an empty directory. A required Secret, ConfigMap
//! or key that is missing fails the mount with the kubelet's `FailedMount` message.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::kube::cluster::ClusterState;
use crate::kube::controllers::kubelet::env::field_path;
use crate::kube::meta;
use crate::kube::process::SERVICE_ACCOUNT_DIR;
use crate::kube::resources::Kind;
use crate::kube::secrets::decoded;

/// `SecretVolumeSourceDefaultMode` and the like: 0644.
const DEFAULT_MODE: u32 = 0o644;
/// The volume the ServiceAccount admission plugin gives a pod that mounts no token itself.
pub const SERVICE_ACCOUNT_VOLUME: &str = "kube-api-access";
/// `expirationSeconds` of that volume's token, as the admission plugin sets it.
const SERVICE_ACCOUNT_TOKEN_SECONDS: u64 = 3607;
/// The ConfigMap every namespace has with the cluster's CA (`kube-root-ca.crt`).
const ROOT_CA: &str = "kube-root-ca.crt";

/// A projected service account token: where it is written, for whom and for how long.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenFile {
    pub path: PathBuf,
    pub audience: String,
    pub lifetime: Duration,
    /// When the token written last stops working, if it does.
    pub expires_at: Option<jiff::Timestamp>,
}

/// The pod's volumes: each one's directory, and the tokens to keep fresh.
#[derive(Debug, Default)]
pub struct Volumes {
    pub dirs: HashMap<String, PathBuf>,
    pub tokens: Vec<TokenFile>,
}

/// One file of a volume: its path inside it, its bytes, its mode.
pub type File = (String, Vec<u8>, u32);

/// Writes every volume of `pod` under `root`; Err(the kubelet's FailedMount message).
pub fn write_all(state: &ClusterState, pod: &Value, root: &Path) -> Result<Volumes, String> {
    let mut volumes = Volumes::default();
    for volume in pod_volumes(pod) {
        let name = volume["name"].as_str().unwrap_or_default().to_string();
        if let Some(host) = volume.pointer("/hostPath/path").and_then(Value::as_str) {
            volumes.dirs.insert(name, PathBuf::from(host));
            continue;
        }
        let dir = root.join("volumes").join(&name);
        std::fs::create_dir_all(&dir).map_err(|e| failed(&name, &e.to_string()))?;
        let mut files = Vec::new();
        let mut tokens = Vec::new();
        fill(state, pod, &volume, &mut files, &mut tokens).map_err(|why| failed(&name, &why))?;
        for (path, bytes, mode) in &files {
            write_file(&dir, path, bytes, *mode).map_err(|why| failed(&name, &why))?;
        }
        for (path, audience, lifetime) in tokens {
            let mut token = TokenFile {
                path: dir.join(safe_relative(&path).map_err(|why| failed(&name, &why))?),
                audience,
                lifetime,
                expires_at: None,
            };
            token.expires_at =
                write_token(state, pod, &token).map_err(|why| failed(&name, &why))?;
            volumes.tokens.push(token);
        }
        volumes.dirs.insert(name, dir);
    }
    Ok(volumes)
}

/// The pod's volumes, with the ServiceAccount admission plugin's `kube-api-access` added when
/// the pod mounts nothing at the token's directory and does not opt out.
fn pod_volumes(pod: &Value) -> Vec<Value> {
    let mut volumes: Vec<Value> = pod
        .pointer("/spec/volumes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if wants_service_account_volume(pod) {
        volumes.push(json!({"name": SERVICE_ACCOUNT_VOLUME, "projected": {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"path": "token",
                "expirationSeconds": SERVICE_ACCOUNT_TOKEN_SECONDS}},
            {"configMap": {"name": ROOT_CA, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ]}}));
    }
    volumes
}

/// Whether the kubelet mounts `kube-api-access` at the token's directory in every container.
pub fn wants_service_account_volume(pod: &Value) -> bool {
    let opted_out = pod.pointer("/spec/automountServiceAccountToken") == Some(&json!(false));
    let mounted_by_spec = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|c| c["volumeMounts"].as_array().into_iter().flatten())
        .any(|m| m["mountPath"].as_str() == Some(SERVICE_ACCOUNT_DIR));
    !opted_out && !mounted_by_spec
}

/// The files one volume holds (a ConfigMap's, a Secret's, a projection's: path, bytes, mode),
/// as `write_all` writes them; Err(why the mount fails).
pub fn files_of(state: &ClusterState, pod: &Value, volume: &Value) -> Result<Vec<File>, String> {
    let (mut files, mut tokens) = (Vec::new(), Vec::new());
    fill(state, pod, volume, &mut files, &mut tokens)?;
    Ok(files)
}

fn failed(volume: &str, why: &str) -> String {
    format!("MountVolume.SetUp failed for volume \"{volume}\" : {why}")
}

/// The files of one volume (or projected source) and its tokens (path, audience, lifetime).
fn fill(
    state: &ClusterState,
    pod: &Value,
    source: &Value,
    files: &mut Vec<File>,
    tokens: &mut Vec<(String, String, Duration)>,
) -> Result<(), String> {
    let ns = meta::namespace(pod);
    let default_mode = source
        .as_object()
        .and_then(|o| o.values().find_map(|s| s["defaultMode"].as_u64()))
        .map_or(DEFAULT_MODE, |m| m as u32);
    if let Some(secret) = source.get("secret") {
        let name = secret["secretName"]
            .as_str()
            .or(secret["name"].as_str())
            .unwrap_or_default();
        keyed(state, Kind::Secret, ns, name, secret, default_mode, files)?;
    } else if let Some(config_map) = source.get("configMap") {
        let name = config_map["name"].as_str().unwrap_or_default();
        keyed(
            state,
            Kind::ConfigMap,
            ns,
            name,
            config_map,
            default_mode,
            files,
        )?;
    } else if let Some(downward) = source.get("downwardAPI") {
        for item in downward["items"].as_array().into_iter().flatten() {
            let path = item["path"].as_str().unwrap_or_default().to_string();
            let field = item.pointer("/fieldRef/fieldPath").and_then(Value::as_str);
            let value = field.map(|f| field_path(pod, f)).unwrap_or_default();
            files.push((path, value.into_bytes(), mode_of(item, default_mode)));
        }
    } else if let Some(token) = source.get("serviceAccountToken") {
        let seconds = token["expirationSeconds"].as_u64().unwrap_or(3600);
        tokens.push((
            token["path"].as_str().unwrap_or("token").to_string(),
            token["audience"].as_str().unwrap_or_default().to_string(),
            Duration::from_secs(seconds),
        ));
    } else if let Some(projected) = source.get("projected") {
        for part in projected["sources"].as_array().into_iter().flatten() {
            let mut part = part.clone();
            // A projection's sources take the projection's defaultMode.
            for (_, inner) in part.as_object_mut().into_iter().flatten() {
                if inner.is_object() && inner.get("defaultMode").is_none() {
                    inner["defaultMode"] = json!(default_mode);
                }
            }
            fill(state, pod, &part, files, tokens)?;
        }
    }
    Ok(())
}

/// A Secret's or ConfigMap's keys as files: all of them, or the `items` asked for.
fn keyed(
    state: &ClusterState,
    kind: Kind,
    ns: &str,
    name: &str,
    source: &Value,
    default_mode: u32,
    files: &mut Vec<File>,
) -> Result<(), String> {
    let optional = source["optional"] == true;
    let object = match state.store.get(kind, ns, name) {
        Some(object) => (*object).clone(),
        None if kind == Kind::ConfigMap && name == ROOT_CA => {
            json!({"data": {"ca.crt": state.shared.ca.pem()}})
        }
        None if optional => return Ok(()),
        None => return Err(format!("{} \"{name}\" not found", kind.resource().singular)),
    };
    let mut values: Vec<(String, Vec<u8>)> = Vec::new();
    for (key, value) in object["data"].as_object().into_iter().flatten() {
        let bytes = match kind {
            Kind::Secret => decoded(value),
            _ => value.as_str().unwrap_or_default().as_bytes().to_vec(),
        };
        values.push((key.clone(), bytes));
    }
    for (key, value) in object["binaryData"].as_object().into_iter().flatten() {
        values.push((key.clone(), decoded(value)));
    }
    let items = source["items"].as_array().filter(|i| !i.is_empty());
    let Some(items) = items else {
        files.extend(values.into_iter().map(|(k, v)| (k, v, default_mode)));
        return Ok(());
    };
    for item in items {
        let key = item["key"].as_str().unwrap_or_default();
        let Some((_, bytes)) = values.iter().find(|(k, _)| k == key) else {
            if optional {
                continue;
            }
            return Err(match kind {
                Kind::Secret => format!("references non-existent secret key: {key}"),
                _ => format!("configmap references non-existent config key: {key}"),
            });
        };
        let path = item["path"].as_str().unwrap_or(key).to_string();
        files.push((path, bytes.clone(), mode_of(item, default_mode)));
    }
    Ok(())
}

fn mode_of(item: &Value, default_mode: u32) -> u32 {
    item["mode"].as_u64().map_or(default_mode, |m| m as u32)
}

/// A path inside a volume: relative, with no `..` (the API refuses others; so does this).
fn safe_relative(path: &str) -> Result<PathBuf, String> {
    let relative = Path::new(path);
    let inside = !path.is_empty()
        && relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if inside {
        Ok(relative.to_path_buf())
    } else {
        Err(format!(
            "the path {path:?} must be relative and may not contain '..'"
        ))
    }
}

fn write_file(dir: &Path, path: &str, bytes: &[u8], mode: u32) -> Result<(), String> {
    write_at(&dir.join(safe_relative(path)?), bytes, mode)
}

fn write_at(target: &Path, bytes: &[u8], mode: u32) -> Result<(), String> {
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    std::fs::write(target, bytes).map_err(|e| e.to_string())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(target, std::fs::Permissions::from_mode(mode & 0o777))
            .map_err(|e| e.to_string())?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    Ok(())
}

/// Writes (again) a projected token, whole or not at all: only its owner may read it, whatever
/// the volume's mode. When it expires, if it does.
pub fn write_token(
    state: &ClusterState,
    pod: &Value,
    token: &TokenFile,
) -> Result<Option<jiff::Timestamp>, String> {
    let issued = state.service_account_token(pod, &token.audience, token.lifetime)?;
    let partial = token.path.with_extension("new");
    write_at(&partial, issued.token.as_bytes(), 0o600)?;
    std::fs::rename(&partial, &token.path).map_err(|e| e.to_string())?;
    Ok(issued.expires_at)
}
