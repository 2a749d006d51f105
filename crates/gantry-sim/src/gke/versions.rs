//! The GKE versions the simulator offers, how a request's `initialClusterVersion` resolves to one,
//! and the `serverConfig` resource that lists them (gcloud reads it before creating a cluster).

use serde_json::{Value, json};

use super::errors::GkeError;
use crate::kube::cluster::DEFAULT_VERSION;

/// Versions offered besides the default (the version simulated clusters run unless asked).
const OTHER_VERSIONS: &[&str] = &[
    "1.33.5-gke.1201000",
    "1.32.9-gke.1108000",
    "1.31.13-gke.1023000",
];

/// The default first, then the others newest first.
fn versions() -> Vec<&'static str> {
    let others = OTHER_VERSIONS
        .iter()
        .copied()
        .filter(|v| *v != DEFAULT_VERSION);
    std::iter::once(DEFAULT_VERSION).chain(others).collect()
}

/// Resolves `initialClusterVersion` as GKE does: empty, `latest` or `-` mean the default; a minor
/// (`1.32`) or patch (`1.32.9`) prefix picks the newest match; a full version must be offered.
pub fn resolve(requested: &str) -> Result<&'static str, GkeError> {
    let requested = requested.trim();
    if requested.is_empty() || requested == "latest" || requested == "-" {
        return Ok(DEFAULT_VERSION);
    }
    let versions = versions();
    versions
        .iter()
        .copied()
        .find(|v| {
            *v == requested
                || v.starts_with(&format!("{requested}."))
                || v.starts_with(&format!("{requested}-"))
        })
        .ok_or_else(|| {
            GkeError::invalid(format!(
                "Master version \"{requested}\" is unsupported. Valid versions: {}.",
                versions.join(", ")
            ))
        })
}

/// The `serverConfig` of any location, in canonical form (enums as names).
pub fn server_config() -> Value {
    let versions = versions();
    let channels: Vec<Value> = ["RAPID", "REGULAR", "STABLE"]
        .iter()
        .map(|channel| {
            json!({"channel": channel, "defaultVersion": DEFAULT_VERSION, "validVersions": versions})
        })
        .collect();
    json!({
        "defaultClusterVersion": DEFAULT_VERSION,
        "validMasterVersions": versions,
        "validNodeVersions": versions,
        "defaultImageType": "COS_CONTAINERD",
        "validImageTypes": ["COS_CONTAINERD", "UBUNTU_CONTAINERD"],
        "channels": channels,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn resolves_aliases_and_prefixes() {
        assert_eq!(resolve("").unwrap(), DEFAULT_VERSION);
        assert_eq!(resolve("latest").unwrap(), DEFAULT_VERSION);
        assert_eq!(resolve("1.33").unwrap(), "1.33.5-gke.1201000");
        assert_eq!(resolve("1.32.9").unwrap(), "1.32.9-gke.1108000");
        assert_eq!(versions().first().copied(), Some(DEFAULT_VERSION));
        let unique: std::collections::BTreeSet<_> = versions().into_iter().collect();
        assert_eq!(unique.len(), versions().len());
        assert_eq!(
            resolve("1.31.13-gke.1023000").unwrap(),
            "1.31.13-gke.1023000"
        );
        assert_eq!(resolve("1.3").unwrap_err().status, "INVALID_ARGUMENT");
        assert!(resolve("1.20.0").is_err());
    }
}
