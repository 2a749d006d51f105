//! The GKE versions the simulator offers, how a request's `initialClusterVersion` resolves to one,
//! and the `serverConfig` resource that lists them (gcloud reads it before creating a cluster).

use serde_json::{Value, json};

use super::errors::GkeError;
use crate::sim::kube::cluster::DEFAULT_VERSION;

/// Newest first; the first is the default, as it is the REGULAR channel's default on GKE.
const VERSIONS: &[&str] = &[DEFAULT_VERSION, "1.32.9-gke.1108000", "1.31.13-gke.1023000"];

/// Resolves `initialClusterVersion` as GKE does: empty, `latest` or `-` mean the default; a minor
/// (`1.32`) or patch (`1.32.9`) prefix picks the newest match; a full version must be offered.
pub fn resolve(requested: &str) -> Result<&'static str, GkeError> {
    let requested = requested.trim();
    if requested.is_empty() || requested == "latest" || requested == "-" {
        return Ok(DEFAULT_VERSION);
    }
    VERSIONS
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
                VERSIONS.join(", ")
            ))
        })
}

/// The `serverConfig` of any location, in canonical form (enums as names).
pub fn server_config() -> Value {
    let channels: Vec<Value> = ["RAPID", "REGULAR", "STABLE"]
        .iter()
        .map(|channel| {
            json!({"channel": channel, "defaultVersion": DEFAULT_VERSION, "validVersions": VERSIONS})
        })
        .collect();
    json!({
        "defaultClusterVersion": DEFAULT_VERSION,
        "validMasterVersions": VERSIONS,
        "validNodeVersions": VERSIONS,
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
        assert_eq!(resolve("1.32").unwrap(), "1.32.9-gke.1108000");
        assert_eq!(resolve("1.32.9").unwrap(), "1.32.9-gke.1108000");
        assert_eq!(
            resolve("1.31.13-gke.1023000").unwrap(),
            "1.31.13-gke.1023000"
        );
        assert_eq!(resolve("1.3").unwrap_err().status, "INVALID_ARGUMENT");
        assert!(resolve("1.20.0").is_err());
    }
}
